//go:build linux

package netjail

// The seccomp filter every confined program runs under (issue 36), given
// to bubblewrap (--seccomp FD), which installs it on the program and on
// its own pid 1 after no_new_privs, just before exec. A list of refusals
// over a default of allow, as Flatpak's (bubblewrap's own user) is: the
// program runs what it likes (Python, Node, a shell, compilers), but
// not the calls that act on the kernel or the machine. Most of these
// need a capability the program holds no more; the filter is the second
// wall for those, and the only one for the calls that need none (bpf,
// perf_event_open, userfaultfd, keyctl, io_uring, a user namespace).
// Built by github.com/elastic/go-seccomp-bpf (pure Go, Linux's syscall
// tables), for amd64 and arm64; why: docs/decisions.md, "Seccomp". The
// policy and its building are in seccomp_policy_test.go; the filter each
// architecture gets is committed beside this file (seccomp_amd64.bpf,
// seccomp_arm64.bpf) and embedded, so that the binary does not link the
// library, whose init builds the syscall tables of every architecture in
// every command (165 KB; `dryfire --version` 3.07 M → 5.49 M
// instructions). TestSeccompFilterEmbedded builds it again and compares
// (arm64's under qemu-aarch64 where the machine has it); after a change
// of the policy: go test ./internal/netjail -run TestSeccompFilterEmbedded -update-seccomp

import (
	"embed"
	"fmt"
	"os"
	"runtime"
)

//go:embed seccomp_amd64.bpf seccomp_arm64.bpf
var filters embed.FS

// seccompFilter is the filter for this machine's architecture, as the
// array of struct sock_filter bwrap's --seccomp reads.
func seccompFilter() ([]byte, error) { return filterFor(runtime.GOARCH) }

func filterFor(goarch string) ([]byte, error) {
	// A 32-bit dryfire on a 64-bit kernel would filter (kill) every
	// 64-bit program: only the two tables there are.
	if goarch != "amd64" && goarch != "arm64" {
		return nil, fmt.Errorf("the sandbox's seccomp filter has no system call table for %s (it has amd64's and arm64's): run dryfire for one of those, or use network: open", goarch)
	}
	return filters.ReadFile("seccomp_" + goarch + ".bpf")
}

// filterFile is a pipe holding the filter, for bwrap's --seccomp: the
// read end, to hand the program as an extra file and close once it has
// started.
func filterFile() (*os.File, error) {
	b, err := seccompFilter()
	if err != nil {
		return nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer w.Close()
	if _, err := w.Write(b); err != nil { // far below a pipe's 64 KiB
		r.Close()
		return nil, err
	}
	return r, nil
}
