package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/mcpbridge"
	"github.com/dryfire-dev/dryfire/internal/openapi"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
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

// ParseClock reads run's --clock as a suite's agent.clock.now takes it.
func ParseClock(s string) (time.Time, error) { return spec.ParseClock(s) }

// ImportOpenAPI makes a world package from an OpenAPI document
// (`dryfire world import`): nil, with the diagnostics, when it cannot.
func ImportOpenAPI(file string, data []byte, pkg, env, source string) (*openapi.Result, yamlpos.Diagnostics) {
	return openapi.Import(file, data, openapi.Options{Package: pkg, Env: env, Source: source})
}

// CheckWorld loads a world file as a suite naming it would, with paths
// inside root: its diagnostics and how many HTTP routes its package pkg
// declares; ok is false when it does not load.
func CheckWorld(file, root, pkg string) (routes int, ok bool, ds yamlpos.Diagnostics) {
	w, ds := world.Load(file, &world.LoadOptions{Root: root})
	if w == nil {
		return 0, false, ds
	}
	if ph := w.Packages[pkg].HTTP; ph != nil {
		routes = len(ph.Routes)
	}
	return routes, true, ds
}

// CheckSuite reads data as the suite file file, without loading what it
// names: its agent's command, as words; ok is false when it does not
// parse (`dryfire init --agent-command` reads back what it writes).
func CheckSuite(file string, data []byte) (command []string, ok bool, ds yamlpos.Diagnostics) {
	s, ds := spec.Parse(file, data, nil)
	if s == nil || ds.HasErrors() {
		return nil, false, ds
	}
	return s.Agent.Command, true, ds
}
