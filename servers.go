package dryfire

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
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
func (m *ModelEndpoint) Stats() (played, recorded, live int) {
	o := m.e.End()
	return o.Played, o.Recorded, o.Sent
}

// Finish writes the cassette when something was recorded, and says
// whether it wrote.
func (m *ModelEndpoint) Finish() (bool, error) { return m.e.Save() }

// ServeOptions choose what Project.ToolServer serves; nil means the
// defaults of every field.
type ServeOptions struct {
	// Case serves that case's mocks (they replace the suite's rules for
	// each tool they name), or for a world suite that drill's setup (its
	// scenario, actor, seed and overrides); empty serves the suite's own
	// rules, or its world with the suite's default scenario.
	Case string
	// Model serves the model routes (/v1/...); nil answers them 404.
	// Project.ModelEndpoint makes one from a case's cassette.
	Model http.Handler
	// Seed, for a world suite, is the world's seed (over the case's and
	// the world's own).
	Seed *int64
	// Actor, for a world suite, is who calls the operations when a call
	// does not say (MCP, /tools, /ops without actorId); empty: the case's
	// actor, else the world's first.
	Actor string
	// NoRecords keeps no record of calls, for a long-running server whose
	// memory would otherwise grow with every call (ToolServer's record is
	// for runs that check it).
	NoRecords bool
	// SessionTimeout ends an idle MCP session over HTTP; 0 means
	// DefaultSessionTimeout (30 minutes), negative never.
	SessionTimeout time.Duration
	// MaxSessions bounds the MCP sessions over HTTP open at once: one more
	// ends the session idle the longest. 0 means DefaultMaxSessions;
	// negative, no bound.
	MaxSessions int
	// MaxEvidence, for a world suite, keeps at most that many of the
	// newest evidence entries and emitted events (GET /world/evidence
	// counts the others as dropped); 0 keeps everything.
	MaxEvidence int
	// RecordTools, when set, makes the server a recording proxy: every
	// tool call is answered by the real tools it names (Command, URL or
	// HTTP; its Run is not used) instead of the mocks, the agent is shown
	// their tools, and ToolServer.FinishRecording merges what they
	// answered into the suite (into the case's own mocks with Case) as
	// RecordTools does. Not for world suites.
	RecordTools *RecordToolsOptions
}

// DefaultMaxSessions is how many MCP sessions over HTTP a server keeps
// open at once, unless ServeOptions.MaxSessions says otherwise.
const DefaultMaxSessions = 1000

// DefaultSessionTimeout is how long an MCP session over HTTP may stay idle
// before the server ends it, unless ServeOptions.SessionTimeout says
// otherwise.
const DefaultSessionTimeout = 30 * time.Minute

// ToolServer returns a server for the tools of the project's one suite:
// a project of several suites or an unknown case is an error. For a world
// suite it serves one world instance (shared by every MCP session and
// HTTP call), with the /ops and /world routes. Close the project when done
// serving: impl: rules run in its passthrough helper.
func (p *Project) ToolServer(opts *ServeOptions) (*ToolServer, error) {
	opts = cmp.Or(opts, &ServeOptions{})
	s, c, err := p.oneCase(opts.Case)
	if err != nil {
		return nil, err
	}
	cp := plan.New(s, p.worlds[s], nil).Case(c)
	so := toolserver.ScopeOptions{Plan: cp, Impl: p.impl, NoRecords: opts.NoRecords, SessionTimeout: opts.SessionTimeout, MaxSessions: opts.MaxSessions}
	var rec *serveRecording
	if opts.RecordTools != nil {
		if s.World != "" {
			return nil, fmt.Errorf("%s is a world suite: its tools are the world's operations, and recording tools writes mock rules", s.File)
		}
		var err error
		if rec, err = p.dialRecording(context.Background(), s, c, opts.RecordTools); err != nil {
			return nil, err
		}
		so.Plan = cp.WithTools(rec.up.Tools())
		so.Upstream = rec.up.For(s.File, rec.caseName)
	}
	if s.World != "" {
		in, err := serveWorld(cp, opts)
		if err != nil {
			return nil, err
		}
		so.World = in
	} else if opts.Actor != "" {
		return nil, fmt.Errorf("%s has no world: an actor (%q) is for world suites", s.File, opts.Actor)
	}
	o := toolserver.Options{Model: opts.Model, ModelRoutes: wire.Paths}
	if opts.Model == nil {
		o.NoModelHint = "dryfire serve --http serves one with --case NAME: that case's cassette"
	}
	t := &ToolServer{s: toolserver.New(toolserver.NewScope(so), o), rec: rec}
	if c != nil && c.User != nil {
		t.notes = append(t.notes, fmt.Sprintf("%s: warning: case %q has user: (a conversation), which serve does not play: it answers the case's tools and model calls for whatever agent connects, and that agent says its own messages; dryfire run plays the user, to the built-in loop or to an agent.command program", c.User.Pos, c.Name))
	}
	return t, nil
}

// oneCase is the project's one suite and its case of that name (nil for
// "").
func (p *Project) oneCase(name string) (*spec.Suite, *spec.Case, error) {
	if p.checkOnly {
		return nil, nil, errCheckOnly
	}
	if len(p.suites) != 1 {
		return nil, nil, fmt.Errorf("serving tools needs one suite file, and %d were loaded (%s); name one file", len(p.suites), strings.Join(p.Files, ", "))
	}
	s := p.suites[0]
	if name == "" {
		return s, nil, nil
	}
	names := make([]string, s.Len())
	for i := range names {
		names[i] = s.CaseName(i)
		if names[i] == name {
			full, err := s.Decode(s.CaseAt(i))
			return s, full, err
		}
	}
	return nil, nil, fmt.Errorf("%s has no case %q%s", s.File, name, suggest.DidYouMean(name, names))
}

// serveWorld starts the world a world suite serves: the drill of case c
// (nil: the suite's default scenario), with the seed the run would give it
// (opts.Seed, else the case's, else the world's) and opts.Actor.
func serveWorld(cp *plan.Case, opts *ServeOptions) (*world.Instance, error) {
	sw := cp.Suite.World
	if sw == nil {
		return nil, fmt.Errorf("%s: its world was not loaded", cp.Suite.Spec.File)
	}
	d := cp.Drill(opts.Seed)
	if opts.Actor != "" {
		if sw.World.Actors[opts.Actor] == nil {
			return nil, fmt.Errorf("world %s has no actor %q%s", sw.World.Name, opts.Actor, suggest.DidYouMean(opts.Actor, sw.World.ActorList))
		}
		d.Actor = opts.Actor
	}
	in, err := sw.World.New(d)
	if err != nil {
		return nil, err
	}
	in.SetEvidenceLimit(opts.MaxEvidence)
	return in, nil
}

// ModelOptions configure Project.ModelEndpoint; nil means the defaults of
// every field.
type ModelOptions struct {
	// Record says when model calls are replayed and when recorded; empty
	// means RecordNone when CI is set in Env, else RecordOnce.
	Record RecordMode
	// Env is the environment keys, base URLs, CI and secrets are read
	// from; nil means os.Environ().
	Env []string
	// InOrder matches the Nth request with the Nth recorded interaction,
	// as a run does, instead of each request by its content, in any
	// order (the default here: several clients may replay one
	// conversation at once).
	InOrder bool
	// FlushEvents replays a stream event by event, flushing after each,
	// instead of in one write (the same bytes).
	FlushEvents bool
	// NoRecords keeps no list of the calls answered (a long-running
	// server).
	NoRecords bool
	// Rerecord, when set, is the command that records the case again in
	// a mode, for the messages and the cassette's note (dryfire serve's
	// own command line); nil: the dryfire run command. A cassette whose
	// note names a dryfire serve command is not overwritten by dryfire run.
	Rerecord func(RecordMode) string
}

// ModelEndpoint returns the model endpoint of a case of the project's one
// suite, on its cassette (cassettes/SUITE/CASE.json beside the suite, as
// `dryfire run` uses it). Its errors are those of a cassette that cannot
// be used in this mode (missing in mode none, unreadable, another case's).
func (p *Project) ModelEndpoint(caseName string, o *ModelOptions) (*ModelEndpoint, error) {
	o = cmp.Or(o, &ModelOptions{})
	s, c, err := p.oneCase(caseName)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("a model endpoint serves the cassette of one case: name it")
	}
	cp := plan.New(s, p.worlds[s], nil).Case(c)
	mo := modelserver.Options{
		Config: cassette.Config{File: cp.Cassette(), SuiteFile: s.File, Root: s.ProjectRoot(), Case: c.Name, Mode: cassette.Mode(o.Record),
			Passthrough: cp.UsesImpl, Match: s.MatchRules(c), ByContent: !o.InOrder},
		Env: o.Env, CoalesceStreams: !o.FlushEvents, NoRecords: o.NoRecords,
		Faults: runner.ModelFaults(c), Scripted: s.Scripted(c), Script: s.ScriptOf(c),
	}
	// Live calls go where the suite's agent says, as in a run.
	mo.BaseURLs = map[string]string{wire.BaseURLEnv(s.Agent.Provider): s.Agent.BaseURL}
	if o.Rerecord != nil {
		mo.Rerecord = func(m cassette.Mode) string { return o.Rerecord(RecordMode(m)) }
		mo.RecordedBy = "dryfire serve"
	}
	e, err := modelserver.New(mo)
	if err != nil {
		return nil, err
	}
	return &ModelEndpoint{e: e}, nil
}

// DefaultConcurrency is how many cases Project.Run runs at once unless
// RunOptions.Concurrency says otherwise.
const DefaultConcurrency = 8
