package dryfire

import (
	"context"
	"io"
	"net/http"
	"slices"

	"github.com/dryfire-dev/dryfire/internal/mcpbridge"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// ToolServer serves a suite's tools to agents dryfire does not run
// itself, over MCP and plain HTTP, answered by the suite's mocks or its
// world (see `dryfire serve`). It is an http.Handler; ServeStdio serves
// MCP over standard input and output instead.
type ToolServer struct {
	s     *toolserver.Server
	rec   *serveRecording // with ServeOptions.RecordTools
	notes []string        // the server's own, after its scope's
}

// ServeHTTP serves MCP on /mcp, the tools on /tools and /tools/{name},
// /reset, a world's /ops and /world routes, and the model routes (/v1/...)
// when ServeOptions.Model is set.
func (t *ToolServer) ServeHTTP(w http.ResponseWriter, r *http.Request) { t.s.ServeHTTP(w, r) }

// ServeStdio serves MCP over in and out (one JSON-RPC message a line)
// until in ends or ctx is done.
func (t *ToolServer) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	return t.s.Root().ServeStdio(ctx, in, out)
}

// Notes are remarks about what is served, for the person who started it
// (for example, that a case's impl: rules are never recorded).
func (t *ToolServer) Notes() []string { return slices.Concat(t.s.Root().Notes(), t.notes) }

// World is the world a world suite's server serves; nil for a suite of
// mocks.
func (t *ToolServer) World() *ServedWorld {
	in := t.s.Root().World()
	if in == nil {
		return nil
	}
	sw := &ServedWorld{Name: in.World().Name, Seed: in.Seed(), Actor: in.Actor()}
	w := in.World()
	for _, name := range w.PackageList {
		if ph := w.Packages[name].HTTP; ph != nil {
			sw.APIs = append(sw.APIs, ServedAPI{Package: name, Path: toolserver.HTTPPath(name), Env: ph.Env, Routes: len(ph.Routes)})
		}
	}
	return sw
}

// CloseSessions ends every MCP session, standalone streams included: call
// it when shutting down, so that an http.Server's Shutdown does not wait
// for streams that never end.
func (t *ToolServer) CloseSessions() { t.s.CloseSessions() }

// ServedWorld says which world a ToolServer serves.
type ServedWorld struct {
	Name  string
	Seed  int64
	Actor string // who calls when a call does not say; empty: none
	// APIs are the packages served behind their own HTTP routes.
	APIs []ServedAPI
}

// ServedAPI is a world package's own HTTP API: its base path on the
// server, and the variable its agent reads the base URL from (empty:
// none declared).
type ServedAPI struct {
	Package, Path, Env string
	Routes             int
}

// ModelEndpoint is the model record/replay endpoint of one case: POST
// /v1/chat/completions, /v1/responses and /v1/messages answered from the
// case's cassette (see `dryfire serve --case`). It is an http.Handler;
// Finish writes what it recorded.
type ModelEndpoint struct{ e *modelserver.Endpoint }

// ServeHTTP answers one model request.
func (m *ModelEndpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) { m.e.ServeHTTP(w, r) }

// File is the case's cassette.
func (m *ModelEndpoint) File() string { return m.e.File() }

// Mode is the record mode the endpoint runs in.
func (m *ModelEndpoint) Mode() RecordMode { return RecordMode(m.e.Mode()) }

// Scripted reports whether the case's script answers (its suite's
// agent.provider is script): no cassette is read or written.
func (m *ModelEndpoint) Scripted() bool { return m.e.Scripted() }

// Replaying reports whether a recording is being replayed (else every call
// is recorded).
func (m *ModelEndpoint) Replaying() bool { return m.e.Replaying() }

// ByContent reports whether requests are matched to the recording by
// their content, in any order (else in order).
func (m *ModelEndpoint) ByContent() bool { return m.e.ByContent() }

// Stats counts the calls replayed, recorded, and sent to a live API.
func (m *ModelEndpoint) Stats() (played, recorded, live int) { return m.e.Stats() }

// Finish writes the cassette when something was recorded, and says
// whether it wrote.
func (m *ModelEndpoint) Finish() (bool, error) { return m.e.Finish() }

// JSON renders the report as `dryfire run --json` writes it: indented
// JSON with a trailing newline.
func (r *Report) JSON() ([]byte, error) { return report.IndentedJSON(r) }

// WriteJSON writes what JSON renders to w, one case at a time: the
// report's text is never in memory whole.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Cases == nil {
		data, err := r.JSON()
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	head := *r
	head.Cases = nil
	return report.WriteListJSON(w, &head, "cases", len(r.Cases), func(i int) any { return &r.Cases[i] })
}

// HTML renders the report as one self-contained HTML page (no network):
// the summary, filters and every case's details.
func (r *Report) HTML() ([]byte, error) { return internalReport(r).HTML() }

// JUnit renders the report as JUnit XML.
func (r *Report) JUnit() ([]byte, error) { return internalReport(r).JUnit() }

// TextPrinter prints progress and results for people; it implements
// Progress.
type TextPrinter struct{ t *report.Text }

// TextOptions shape a TextPrinter.
type TextOptions struct {
	// Terminal: keep a status line redrawn in place and print only cases
	// that did not pass; otherwise print one line per case, in order.
	Terminal bool
	Color    bool
	// Verbose prints details for passing cases too.
	Verbose bool
	// Width is the terminal's width in columns; zero means 80.
	Width int
}

// NewTextPrinter returns a printer writing to w.
func NewTextPrinter(w io.Writer, opts TextOptions) *TextPrinter {
	return &TextPrinter{t: report.NewText(w, report.TextOptions(opts))}
}

// Start implements Progress.
func (p *TextPrinter) Start(total int) { p.t.Start(total) }

// CaseStarted implements Progress.
func (p *TextPrinter) CaseStarted(index int, suite, name string) { p.t.CaseStarted(index, suite, name) }

// CaseDone implements Progress.
func (p *TextPrinter) CaseDone(index int, c *CaseResult) { p.t.CaseDone(index, internalCase(c)) }

// Finish prints the summary line, always last.
func (p *TextPrinter) Finish(r *Report) {
	if r.totals != nil {
		p.t.FinishTotals(r.totals)
		return
	}
	p.t.Finish(internalReport(r))
}

// Route is one route of a ToolServer, as its 404 answer and `dryfire serve
// --help` list it.
type Route struct {
	// Method is GET (which answers HEAD too) or POST; empty for /mcp,
	// which answers POST, GET and DELETE.
	Method string
	// Path is relative to the server's root: {name} stands for the rest
	// of the path.
	Path string
	// Doc says what it answers, in a few words.
	Doc string
	// Serves says which servers have it: "" every one, "world" a world
	// suite's, "model" one with a model endpoint (ServeOptions.Model).
	Serves string
}

// ToolServerRoutes are the routes a ToolServer may serve, in the order it
// matches them.
func ToolServerRoutes() []Route {
	var out []Route
	for _, r := range toolserver.Routes() {
		rt := Route{Method: r.Method, Path: r.Path, Doc: r.Doc}
		if r.World {
			rt.Serves = "world"
		}
		out = append(out, rt)
	}
	for _, p := range modelserver.Paths {
		out = append(out, Route{Method: http.MethodPost, Path: p, Doc: modelserver.PathDoc(p), Serves: "model"})
	}
	return out
}

// BridgeMCP relays an MCP client speaking stdio (in, out) to the
// streamable HTTP MCP endpoint at url (`dryfire mcp-bridge`), until in
// ends and every request sent has its answer, or ctx ends. A request the
// endpoint cannot be reached for is answered with a JSON-RPC error; only
// a failure to read in or write out ends it with an error.
func BridgeMCP(ctx context.Context, url string, in io.Reader, out io.Writer) error {
	b := &mcpbridge.Bridge{URL: url}
	return b.Run(ctx, in, out)
}
