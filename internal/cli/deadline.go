package cli

import (
	"net/http"
	"time"
)

// Timeouts of serve's connections: a client that trickles a body, or
// keeps an idle connection open, does not hold it (and a file
// descriptor) for ever. Response streams (an MCP GET stream, SSE
// answers) are not bounded: only reading the request is.
//
// bodyReadTimeout is the server's ReadTimeout: net/http bounds reading
// each request, its body included, from its start, and lifts the bound
// itself once the body has been read (when it starts watching the
// connection for the next request), so a long answer is not cut; it
// costs a request nothing over the deadline net/http sets anyway.
const (
	bodyReadTimeout = 60 * time.Second
	idleTimeout     = 2 * time.Minute
)

// httpServer is serve's server of h, reading each request within read
// (bodyReadTimeout).
func httpServer(h http.Handler, read time.Duration) *http.Server {
	// HTTP/2 over plain TCP too (h2c): the AWS SDK for JavaScript's
	// Bedrock client speaks it to an http:// endpoint.
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, ReadTimeout: read, IdleTimeout: idleTimeout, Protocols: p}
}
