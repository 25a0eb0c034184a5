// Package netjail runs agent programs in a network of their own: a Linux
// network namespace where only loopback exists, every address is local
// (so a connection anywhere is refused at once instead of hanging), and
// one listener answers, dryfire's, on the port the program was told.
// What else the program tries — connections, datagrams, name lookups —
// is seen on the namespace's loopback and reported.
//
// It needs the kernel's network namespaces and the right to make one
// (root, or CAP_SYS_ADMIN); Available says why not, where it cannot.
package netjail

import (
	"cmp"
	"fmt"
	"net"
	"slices"
	"strconv"
)

// Confinement is what every jail's program is kept from besides the
// network (confine_linux.go, seccomp_linux.go), for a sandboxed case's
// note.
const Confinement = "no capabilities, no_new_privs, a seccomp filter, its own PID, UTS, IPC and cgroup namespaces; /proc/sys and /sys read-only, a minimal /dev"

// OSSupport says whether goos (a runtime.GOOS) has what a jail needs:
// nil on Linux; elsewhere the error that isolated, sandboxed and report
// get there.
func OSSupport(goos string) error {
	if goos == "linux" {
		return nil
	}
	return fmt.Errorf("it is not supported on %s: network namespaces and the sandbox (bubblewrap) are Linux's; use network: open there, or run on Linux", goos)
}

// Attempt is what a program tried to reach, with how often.
type Attempt struct {
	// Kind is "tcp" (a connection), "udp" (a datagram) or "dns" (a name
	// lookup sent to a name server).
	Kind    string `json:"kind"`
	Address string `json:"address"`        // the address tried (for dns, the name server's)
	Port    int    `json:"port"`           // the port tried
	Name    string `json:"name,omitempty"` // dns: the name looked up
	Count   int    `json:"count"`          // how many packets tried it
}

// String is the attempt for people: "tcp 93.184.216.34:443 (1)", the
// count last.
func (a Attempt) String() string {
	where := net.JoinHostPort(a.Address, strconv.Itoa(a.Port))
	if a.Kind == "dns" {
		return fmt.Sprintf("dns lookup of %s via %s (%d)", a.Name, where, a.Count)
	}
	return fmt.Sprintf("%s %s (%d)", a.Kind, where, a.Count)
}

// tally counts attempts by what they tried; sorted gives them in a fixed
// order, whatever order the packets came in.
type tally map[Attempt]int

func (t tally) sorted() []Attempt {
	out := make([]Attempt, 0, len(t))
	for a, n := range t {
		a.Count = n
		out = append(out, a)
	}
	slices.SortFunc(out, func(x, y Attempt) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name), cmp.Compare(x.Address, y.Address), cmp.Compare(x.Port, y.Port))
	})
	return out
}

// Options say how a jail treats what its programs try. nil: isolated.
type Options struct {
	// Pass lets connections and name lookups through (and reports them).
	Pass bool
	// Resolver is where passed DNS queries go, host:port; "": the name
	// server the program asked.
	Resolver string
	// Sandbox confines the filesystem too (see confine_linux.go): read
	// only but the program's workspace (its DRYFIRE_WORKSPACE) and a
	// private /tmp; homes, /run, /tmp hidden but Read.
	Sandbox bool
	// Read are directories a sandboxed program may still read where they
	// are hidden (the project's directory).
	Read []string
	// Write are directories a sandboxed program may write besides its
	// workspace (a coding CLI's private home, made by dryfire).
	Write []string
}
