package toolserver

import (
	"context"
	"fmt"
	"net"
	"net/http"
)

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
