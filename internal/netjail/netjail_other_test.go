//go:build !linux

package netjail

import (
	"runtime"
	"strings"
	"testing"
)

// Off Linux no jail is made, and the error names the OS (compiled for
// darwin and windows by scripts/ci.d/10-cross.sh).
func TestNoJailOffLinux(t *testing.T) {
	want := "it is not supported on " + runtime.GOOS + ": "
	if err := Available(); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Available: %v, want %q…", err, want)
	}
	if j, err := New(0, nil); j != nil || err == nil {
		t.Errorf("New: %v, %v", j, err)
	}
}
