package toolserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
)

// ListenAddr reads an address to listen on, as `dryfire serve --http`
// takes it: a bare port ("7777") or an address without a host (":7777")
// binds 127.0.0.1, so that nothing is reachable from another machine
// unless asked for; anything else is used as given. Port 0 picks a free
// port. loopback reports whether the address is loopback only (localhost
// or a loopback IP); any other host, 0.0.0.0 and [::] included, deserves
// a warning.
func ListenAddr(addr string) (hostport string, loopback bool, err error) {
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

// AnnounceAddr is the HOST:PORT to tell clients of a listener bound to
// bound as asked: the port bound, and the host asked, except an
// unspecified one (0.0.0.0, [::]: every address of the machine), for
// which it is the loopback address of its family. A client that
// connected to 0.0.0.0 or [::] would send that as its Host, which is not
// a loopback name, and Allowed would answer 403; from another machine,
// use this machine's address with the port (a request that reached a
// non-loopback address is not held to loopback names).
func AnnounceAddr(asked string, bound net.Addr) string {
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

// Unspecified says the address (HOST:PORT) listens on every address.
func Unspecified(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsUnspecified()
}

// Bound is ln whose connections reach only sc's routes (nil: no case's):
// a case's own listener, the one in its network namespace, served by a
// Server whose http.Server has ConnContext. A request of such a
// connection for another case's routes (or the root's) is answered 403:
// one case's program cannot make calls in another's record.
func Bound(ln net.Listener, sc *Scope) net.Listener { return &boundListener{ln, sc} }

type boundListener struct {
	net.Listener
	sc *Scope
}

func (l *boundListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &boundConn{c, l.sc}, nil
}

type boundConn struct {
	net.Conn
	sc *Scope
}

type boundKey struct{}

// ConnContext is an http.Server's ConnContext for a Server that serves
// Bound listeners: their requests carry the scope they may reach.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if b, ok := c.(*boundConn); ok {
		return context.WithValue(ctx, boundKey{}, b)
	}
	return ctx
}

// reaches says whether r may reach sc, answering 403 when not: a request
// of a Bound connection reaches only its own scope (whatever the other
// is, served or not).
func (s *Server) reaches(w http.ResponseWriter, r *http.Request, sc *Scope) bool {
	b, ok := r.Context().Value(boundKey{}).(*boundConn)
	if !ok || b.sc == sc && sc != nil {
		return true
	}
	own := "none"
	if b.sc != nil {
		own = fmt.Sprintf("case %q's, %s%s/", b.sc.label, s.prefix, b.sc.ID())
	}
	writeError(w, http.StatusForbidden, "forbidden", fmt.Sprintf("%s %s is not this case's: a case's program reaches only its own routes (through its network namespace); its own are %s", r.Method, r.URL.Path, own))
	return false
}
