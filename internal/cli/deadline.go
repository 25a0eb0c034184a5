package cli

import (
	"io"
	"net/http"
	"time"
)

// Timeouts of serve's connections: a client that trickles a body, or
// keeps an idle connection open, does not hold it (and a file
// descriptor) for ever. Response streams (an MCP GET stream, SSE
// answers) are not bounded: only reading the request is.
const (
	bodyReadTimeout = 60 * time.Second
	idleTimeout     = 2 * time.Minute
)

// bodyDeadline bounds reading each request's body to d from the moment
// the handler starts; the deadline is lifted once the body has been read,
// so a long answer stream is not cut.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			h.ServeHTTP(w, r)
			return
		}
		// net/http's own writer sets deadlines itself; a wrapped one
		// through a ResponseController (which allocates).
		rd, ok := w.(readDeadliner)
		if !ok {
			rd = http.NewResponseController(w)
		}
		if rd.SetReadDeadline(time.Now().Add(d)) == nil {
			r.Body = &deadlineBody{ReadCloser: r.Body, rc: rd}
		}
		h.ServeHTTP(w, r)
	})
}

type readDeadliner interface {
	SetReadDeadline(time.Time) error
}

type deadlineBody struct {
	io.ReadCloser
	rc   readDeadliner
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
