package runner

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// A taken agent.port says so, on Windows too (its WSAEADDRINUSE is not
// syscall.EADDRINUSE to errors.Is; scripts/ci.d/70-wine.sh runs this).
func TestStartHostSaysThePortIsTaken(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	h, err := startHost(port, "agent.port")
	if err == nil {
		h.close()
		t.Fatal("startHost on a taken port: no error")
	}
	if want := fmt.Sprintf("agent.port %d: the port is taken (", port); !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error %q\nwant it to start %q", err, want)
	}
}
