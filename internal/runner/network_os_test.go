package runner

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// Off Linux (runtime.GOOS given as a parameter) a jailed mode asked for
// is a clear error naming the OS, and the CI default a note: the program
// runs open, never silently. On Linux the decision is left to the kernel.
func TestNetworkOffLinux(t *testing.T) {
	for _, goos := range []string{"darwin", "windows", "freebsd"} {
		for _, mode := range []string{spec.NetworkIsolated, spec.NetworkSandboxed, spec.NetworkReport} {
			note, err := osNetwork(mode, false, goos)
			want := "agent.network is " + mode + ", but it is not supported on " + goos + ": network namespaces and the sandbox (bubblewrap) are Linux's; use network: open there, or run on Linux"
			if note != "" || err == nil || err.Error() != want {
				t.Errorf("%s on %s: note %q, error %v; want the error %q", mode, goos, note, err, want)
			}
		}
		note, err := osNetwork(spec.NetworkIsolated, true, goos)
		want := "network: not isolated, although CI is set (it is not supported on " + goos + ": network namespaces and the sandbox (bubblewrap) are Linux's; use network: open there, or run on Linux); agent.network: open says that is intended"
		if err != nil || note != want {
			t.Errorf("the CI default on %s: note %q, error %v; want the note %q", goos, note, err, want)
		}
		if note, err := osNetwork(spec.NetworkOpen, false, goos); note != "" || err != nil {
			t.Errorf("open on %s: note %q, error %v", goos, note, err)
		}
	}
	for _, mode := range []string{spec.NetworkIsolated, spec.NetworkSandboxed, spec.NetworkReport, spec.NetworkOpen} {
		for _, dflt := range []bool{false, true} {
			if note, err := osNetwork(mode, dflt, "linux"); note != "" || err != nil {
				t.Errorf("%s (default %v) on linux: note %q, error %v", mode, dflt, note, err)
			}
		}
	}
}
