// Package hostport reads the addresses dryfire's servers listen on
// (`serve --http`, `engine --listen`) and says which one to tell clients.
package hostport

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Listen reads an address to listen on, as `dryfire serve --http`
// takes it: a bare port ("7777") or an address without a host (":7777")
// binds 127.0.0.1, so that nothing is reachable from another machine
// unless asked for; anything else is used as given. Port 0 picks a free
// port. loopback reports whether the address is loopback only (localhost
// or a loopback IP); any other host, 0.0.0.0 and [::] included, deserves
// a warning.
func Listen(addr string) (hostport string, loopback bool, err error) {
	if addr == "" {
		return "", false, fmt.Errorf("no address; want a port (7777), HOST:PORT (127.0.0.1:7777) or :PORT")
	}
	if isPort(addr) {
		return "127.0.0.1:" + addr, true, nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || !isPort(port) {
		return "", false, fmt.Errorf("%q is not an address; want a port (7777), HOST:PORT (127.0.0.1:7777) or :PORT", addr)
	}
	if host == "" {
		return "127.0.0.1:" + port, true, nil
	}
	if strings.EqualFold(host, "localhost") {
		return net.JoinHostPort(host, port), true, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return net.JoinHostPort(host, port), false, nil // a host name: whatever it resolves to
	}
	return net.JoinHostPort(host, port), ip.IsLoopback(), nil
}

func isPort(s string) bool {
	if s == "" || len(s) > 5 {
		return false
	}
	n, err := strconv.Atoi(s)
	return err == nil && n >= 0 && n <= 65535 && s[0] != '+' && s[0] != '-'
}

// Announce is the HOST:PORT to tell clients of a listener bound to
// bound as asked: the port bound, and the host asked, except an
// unspecified one (0.0.0.0, [::]: every address of the machine), for
// which it is the loopback address of its family. A client that
// connected to 0.0.0.0 or [::] would send that as its Host, which is not
// a loopback name, and the servers' Host check would answer 403; from another machine,
// use this machine's address with the port (a request that reached a
// non-loopback address is not held to loopback names).
func Announce(asked string, bound net.Addr) string {
	_, port, err := net.SplitHostPort(bound.String())
	if err != nil {
		return bound.String()
	}
	host, _, err := net.SplitHostPort(asked)
	if err != nil || host == "" {
		host = "127.0.0.1"
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if ip.Is6() && !ip.Is4In6() {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}
