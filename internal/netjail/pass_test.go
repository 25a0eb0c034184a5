//go:build linux

package netjail

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// fakeResolver answers every A query with 127.0.0.1 and every other
// query with no answer, on a UDP port of the machine's own network.
func fakeResolver(t *testing.T) string {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			q := buf[:n]
			end := 12
			for end < n && q[end] != 0 {
				end += int(q[end]) + 1
			}
			end += 5 // the root label, type, class
			if n < 12 || end > n {
				continue
			}
			ans := append([]byte(nil), q[:end]...)
			binary.BigEndian.PutUint16(ans[2:], 0x8180) // an answer, recursion available
			binary.BigEndian.PutUint16(ans[8:], 0)
			binary.BigEndian.PutUint16(ans[10:], 0)
			if binary.BigEndian.Uint16(q[end-4:]) == 1 { // A
				binary.BigEndian.PutUint16(ans[6:], 1)
				ans = append(ans, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, 127, 0, 0, 1)
			} else {
				binary.BigEndian.PutUint16(ans[6:], 0)
			}
			c.WriteTo(ans, from)
		}
	}()
	return c.LocalAddr().String()
}

// With Pass, a program in the namespace reaches past dryfire as it
// would outside: another local port, the same by a name the resolver
// answers; a connection refused outside is reset inside. Each is
// reported as under isolation.
func TestPass(t *testing.T) {
	jailOrSkip(t)
	needPython(t)
	other, err := net.Listen("tcp", "127.0.0.1:0") // outside, reached through dryfire
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	go http.Serve(other, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("other " + r.Host)) }))
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := closed.Addr().(*net.TCPAddr).Port
	closed.Close()

	j, err := New(0, &Options{Pass: true, Resolver: fakeResolver(t)})
	if err != nil {
		t.Fatal(err)
	}
	port := j.Listener().Addr().(*net.TCPAddr).Port
	script := `
import socket, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%[1]d/").read().decode())
print(urllib.request.urlopen("http://127.0.0.1:%[2]d/").read().decode())
print(urllib.request.urlopen("http://svc.example.test:%[2]d/").read().decode())
try:
    s = socket.create_connection(("127.0.0.1", %[3]d), timeout=10)
    s.sendall(b"x")
    print("read", s.recv(10))
except OSError as e:
    print("closed", type(e).__name__)
`
	got, attempts := pythonInJail(t, j, fmt.Sprintf(script, port, other.Addr().(*net.TCPAddr).Port, closedPort))
	otherPort := strconv.Itoa(other.Addr().(*net.TCPAddr).Port)
	want := "dryfire\nother 127.0.0.1:" + otherPort + "\nother svc.example.test:" + otherPort + "\n"
	if !strings.HasPrefix(got, want) || !(strings.HasSuffix(got, "closed ConnectionResetError\n") || strings.HasSuffix(got, "read b''\n")) {
		t.Errorf("the program printed:\n%s\nwant:\n%s(closed ConnectionResetError or read b'')", got, want)
	}
	var tcp []string
	names := map[string]bool{}
	for _, a := range attempts {
		switch a.Kind {
		case "dns":
			names[a.Name] = true
		case "tcp":
			tcp = append(tcp, a.String())
		default:
			t.Errorf("attempt %v", a)
		}
	}
	wantTCP := fmt.Sprintf("tcp 127.0.0.1:%d (1)\ntcp 127.0.0.1:%s (2)", closedPort, otherPort)
	if closedPort > other.Addr().(*net.TCPAddr).Port {
		wantTCP = fmt.Sprintf("tcp 127.0.0.1:%s (2)\ntcp 127.0.0.1:%d (1)", otherPort, closedPort)
	}
	if strings.Join(tcp, "\n") != wantTCP {
		t.Errorf("tcp attempts:\n%s\nwant:\n%s", strings.Join(tcp, "\n"), wantTCP)
	}
	if !names["svc.example.test"] {
		t.Errorf("the lookup of svc.example.test is not among the attempts %v", attempts)
	}
}

// The cost of a passing namespace: made (the BPF program loaded and
// attached), served on, and closed.
func BenchmarkPass(b *testing.B) {
	if err := Available(); err != nil {
		b.Skip(err)
	}
	for b.Loop() {
		j, err := New(0, &Options{Pass: true})
		if err != nil {
			b.Fatal(err)
		}
		j.Close()
	}
}
