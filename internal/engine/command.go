package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/mcpbridge"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// What the command line needs of the servers beneath the public package,
// which has no use for it.

// RouteHelp lists the routes of dryfire serve --http (its help), from the
// tool server's route table and the model APIs' paths.
func RouteHelp() string {
	width := 0
	for _, r := range toolserver.Routes() {
		width = max(width, len(r.Path))
	}
	for _, p := range wire.Paths {
		width = max(width, len(p))
	}
	var b strings.Builder
	line := func(method, path, doc string) { fmt.Fprintf(&b, "  %-4s %-*s  %s\n", method, width, path, doc) }
	tools := func(world bool) {
		for _, r := range toolserver.Routes() {
			if r.World == world {
				line(r.Method, r.Path, r.Doc)
			}
		}
	}
	tools(false)
	b.WriteString("With --case, also the model endpoint, from that case's cassette\n(OPENAI_BASE_URL=http://ADDR/v1, ANTHROPIC_BASE_URL=http://ADDR,\nGOOGLE_GEMINI_BASE_URL=http://ADDR):\n")
	for _, p := range wire.Paths {
		line(http.MethodPost, p, wire.PathDoc(p))
	}
	b.WriteString("A world suite adds:\n")
	tools(true)
	return b.String()
}

// BridgeMCP relays an MCP client speaking stdio (in, out) to the
// streamable HTTP MCP endpoint at url (`dryfire mcp-bridge`).
func BridgeMCP(ctx context.Context, url string, in io.Reader, out io.Writer) error {
	return (&mcpbridge.Bridge{URL: url}).Run(ctx, in, out)
}
