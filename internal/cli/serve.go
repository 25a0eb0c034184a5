package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/engine"
	"github.com/dryfire-dev/dryfire/internal/hostport"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

type serveOptions struct {
	caseName       string
	stdio          bool
	http           string
	python         string
	record         string
	seed           int64
	seedSet        bool
	actor          string
	inOrder        bool
	flushEvents    bool
	sessionTimeout time.Duration
	maxSessions    int
	maxEvidence    int
	maxWorlds      int  // --max-session-worlds
	perSession     bool // --world-per-session
	// A recording proxy: the real tools (an MCP command after --, or one
	// of the URLs) answer, and what they answer is merged into the suite
	// when serve stops.
	upCommand []string
	upURL     string
	upSSE     string
	upHTTP    string
}

func newServeCommand(e *env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve PATH (--stdio | --http ADDR) [flags] [-- COMMAND...]",
		Short: "Serve a suite's mocks or world to any agent over MCP and HTTP",
		Long: `Serve the tools of the suite at PATH to an agent dryfire does not run
itself, answered by the suite's mocks exactly as in dryfire run: the same
rules, the same text, unmatched calls answered with an error result that
names the closest rule. A world suite serves its world instead: each
operation is a tool, and the world's own routes answer too.

--stdio speaks MCP on standard input and output, for a client that starts
dryfire as its MCP server; everything else goes to standard error. --http
serves on ADDR:
` + engine.RouteHelp() + `MCP serves both protocol eras: 2025-11-25 and earlier (initialize, a
session per client) and 2026-07-28 (stateless).

Mock state: each MCP session (each client of --stdio, each initialized
session over HTTP) has its own sequence positions; calls without a session
(HTTP tool calls, 2026-07-28 requests) share one state, which POST /reset
puts back to the start. --case serves one case's mocks instead of the
suite's. A world is one instance, shared by every session and call; --case
starts it from that drill's setup, --seed and --actor override.

Model requests are answered by content: each by the recorded interaction
whose request equals it, in any order, so several clients can replay one
conversation at once (--in-order matches the Nth request with the Nth
interaction, as dryfire run does). --record as for run: with no cassette,
mode once records one, written when serve stops; its note and hints name
this serve command, and dryfire run never records over it. Streams are
replayed in one write (the same bytes; --flush-events sends them event by
event). A scripted case's (agent.provider: script) requests are answered
by its script instead, in whichever API they come: no cassette, no
--record.

Sessions (world suites, --http): POST /sessions, OpenEnv's WebSocket /ws
and, with --world-per-session, each MCP session opened at /mcp get a world
of their own (the drill of --case, else the suite's first; its own clock,
evidence and verdict) under /sessions/ID/, with OpenEnv's reset, step and
state (POST /sessions/ID/reset, POST /sessions/ID/step, GET
/sessions/ID/state; the verdict's score is the reward); at most
--max-session-worlds at once.

Nothing is kept per call, so memory stays flat however long it runs;
idle MCP sessions over HTTP end after --session-timeout.

ADDR is a port (7777) or HOST:PORT; a bare port or one without a host
binds 127.0.0.1, and port 0 picks a free port (the address is printed).
Any other host, 0.0.0.0 included, has to be given explicitly and makes the
mocks (and any impl: code) callable from other machines: a warning says
so. Requests whose Host is not a loopback name, or that come from a
browser page not on localhost (Origin), are refused with 403 (DNS
rebinding protection).

dryfire serve runs until Ctrl-C or SIGTERM (with --stdio, also until
standard input closes), then stops gracefully.

In front of real tools (an MCP server's command after --, or
--upstream-url, --upstream-sse or --upstream-http), serve is a recording
proxy: every tool call is answered by them instead of the mocks, the
agent is shown their tools, and when serve stops what they answered is
merged into the suite (into the case's own mocks with --case) exactly as
dryfire record-tools merges it.

Exit status: 0 stopped; 2 a spec or usage error (an unknown case, too);
3 the address cannot be listened on, or a recorded cassette could not be
written.`,
		Example: `  dryfire serve support.dryfire.yaml --http 7777
  dryfire serve support.dryfire.yaml --http 127.0.0.1:0    # a free port
  dryfire serve support.dryfire.yaml --case 'gold refund' --stdio
  dryfire serve support.dryfire.yaml --case 'gold refund' --http 7777
  dryfire serve desk.dryfire.yaml --http 7777 --seed 7 --actor supervisor
  dryfire serve desk.dryfire.yaml --http 7777 --world-per-session
  dryfire serve desk.dryfire.yaml --http 7777 --max-session-worlds 200
  dryfire serve support.dryfire.yaml --http 0.0.0.0:7777   # other machines too
  dryfire serve shop.dryfire.yaml --http 7777 --python .venv/bin/python
  dryfire serve notes.dryfire.yaml --stdio -- ./my-mcp-server   # record it
  dryfire serve s.dryfire.yaml --http 7777 --upstream-url http://h:3001/mcp
  dryfire serve s.dryfire.yaml --http 7777 --upstream-sse http://h:3001/sse
  dryfire serve s.dryfire.yaml --http 7777 --upstream-http http://h:8080`,
		Args: func(cmd *cobra.Command, args []string) error {
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				if len(args) == dash {
					return usageErr("nothing after --: give the MCP server's command, e.g. -- npx -y @modelcontextprotocol/server-memory")
				}
				return onePath(cmd, args[:dash])
			}
			return onePath(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seedSet = cmd.Flags().Changed("seed")
			if dash := cmd.ArgsLenAtDash(); dash >= 0 {
				o.upCommand = args[dash:]
			}
			return runServe(cmd.Context(), e, o, args[0])
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.BoolVar(&o.stdio, "stdio", false, "speak MCP on standard input and output")
	f.StringVar(&o.http, "http", "", "serve MCP and HTTP tools on `ADDR`: a port (binds 127.0.0.1), HOST:PORT or :PORT, e.g. --http 7777; port 0 picks a free one")
	f.StringVar(&o.caseName, "case", "", "serve the case named `NAME`: its mocks (they replace the suite's for each tool it names) or its drill's setup, and with --http its cassette on the model routes, e.g. --case 'gold refund'")
	f.StringVar(&o.record, "record", "", "with --case: when model calls are recorded, `MODE` none, once, new or all as for run; default none when CI is set, else once")
	f.BoolVar(&o.inOrder, "in-order", false, "with --case: match the Nth model request with the Nth recorded interaction, as run does, instead of each by its content")
	f.BoolVar(&o.flushEvents, "flush-events", false, "with --case: replay streams event by event, flushing after each, instead of in one write")
	f.Int64Var(&o.seed, "seed", 0, "world suites: the world's seed `N` (over the case's seed: and the world's)")
	f.StringVar(&o.actor, "actor", "", "world suites: the actor `NAME` of calls that do not name one (MCP, /tools, /ops without actorId); default the case's, else the world's first")
	f.DurationVar(&o.sessionTimeout, "session-timeout", dryfire.DefaultSessionTimeout, "end an MCP session over HTTP after `DURATION` without a request from its client (0: never)")
	f.IntVar(&o.maxEvidence, "max-evidence", 20000, "keep the newest `N` evidence entries of a world (GET /world/evidence counts the older ones as dropped; 0: all)")
	f.IntVar(&o.maxSessions, "max-sessions", dryfire.DefaultMaxSessions, "keep at most `N` MCP sessions over HTTP open: one more ends the session idle the longest")
	f.IntVar(&o.maxWorlds, "max-session-worlds", engine.DefaultMaxSessionWorlds, "world suites over HTTP: at most `N` sessions with a world of their own at once (POST /sessions, /ws, --world-per-session); one more is refused with 429 TOO_MANY_SESSIONS")
	f.BoolVar(&o.perSession, "world-per-session", false, "world suites over HTTP: each MCP session opened at /mcp gets a world of its own (a session, its id in the Dryfire-Session-Id header), instead of sharing the server's")
	f.StringVar(&o.upURL, "upstream-url", "", "be a recording proxy of the MCP server at `URL` (streamable HTTP): see above")
	f.StringVar(&o.upSSE, "upstream-sse", "", "be a recording proxy of the MCP server at `URL` over HTTP+SSE (the 2024-11-05 protocol)")
	f.StringVar(&o.upHTTP, "upstream-http", "", "be a recording proxy of the plain HTTP tools at base `URL` (GET URL/tools, POST URL/tools/NAME)")
	addLoadFlags(cmd, e, &o.python)
	return cmd
}

// onePath is the Args check of serve: exactly one suite.
func onePath(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usageErr("serve needs a suite file, e.g. %s support.dryfire.yaml --http 7777", cmd.CommandPath())
	case 1:
		return nil
	}
	return usageErr("serve takes one suite file, got %d arguments", len(args))
}

func runServe(ctx context.Context, e *env, o serveOptions, path string) error {
	// serve's log (its standard error) never shows a secret of the
	// environment: an upstream's error may quote a key.
	logged := *e
	logged.stderr = redact.Writer(e.stderr, redact.New(redact.FromEnviron(e.environ())))
	e = &logged
	if o.stdio == (o.http != "") {
		return usageErr("serve needs one of --stdio or --http ADDR, e.g. --http 7777")
	}
	var addr string
	var loopback bool
	if o.http != "" {
		var err error
		if addr, loopback, err = hostport.Listen(o.http); err != nil {
			return usageErr("--http: %v", err)
		}
	}
	record := dryfire.RecordMode(o.record)
	if _, err := dryfire.ParseRecordMode(o.record); err != nil && o.record != "" {
		return usageErr("--record %q: want none, once, new or all", o.record)
	}
	if o.maxEvidence < 0 {
		return usageErr("--max-evidence %d: want 0 or more (0: all)", o.maxEvidence)
	}
	if o.maxSessions < 1 {
		return usageErr("--max-sessions %d: want 1 or more", o.maxSessions)
	}
	if o.maxWorlds < 1 {
		return usageErr("--max-session-worlds %d: want 1 or more", o.maxWorlds)
	}
	if o.sessionTimeout < 0 {
		return usageErr("--session-timeout %s: want a duration of 0 or more (0: never)", o.sessionTimeout)
	}
	rt, err := upstreamOptions(o.upCommand, o.upURL, o.upSSE, o.upHTTP, "--upstream-")
	if err != nil {
		return err
	}
	p, err := loadWith(e, loadOptions(e, o.python), []string{path}, ": not serving", rt == nil)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	idle := o.sessionTimeout
	if idle == 0 {
		idle = -1 // never
	}
	so := &dryfire.ServeOptions{Case: o.caseName, Actor: o.actor, NoRecords: true, SessionTimeout: idle, MaxSessions: o.maxSessions, MaxEvidence: o.maxEvidence}
	if rt != nil {
		rt.Run = &dryfire.RunOptions{Env: e.environ()}
		so.RecordTools = rt
	}
	if o.seedSet {
		so.Seed = &o.seed
	}
	// The model endpoint, a case's cassette over HTTP, is made once the
	// case is known to exist.
	var modelH http.Handler
	if o.caseName != "" && o.http != "" {
		so.Model = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { modelH.ServeHTTP(w, r) })
	}
	srv, err := p.ToolServer(so)
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	var model *dryfire.ModelEndpoint
	var modelErr error
	if so.Model != nil {
		// The cassette's note and every hint name this command: a case
		// recorded for another agent is recorded again by serve, not by
		// dryfire run (whose built-in loop would replace its recording).
		rerecord := func(mode dryfire.RecordMode) string {
			return "dryfire serve " + termtext.ShellQuote(path) + " --case " + termtext.ShellQuote(o.caseName) + " --http " + termtext.ShellQuote(o.http) + " --record " + string(mode)
		}
		model, modelErr = p.ModelEndpoint(o.caseName, &dryfire.ModelOptions{Record: record, Env: e.environ(), InOrder: o.inOrder, FlushEvents: o.flushEvents, NoRecords: true, Rerecord: rerecord})
		if modelErr == nil && model.Scripted() && o.record != "" {
			return usageErr("--record %s: case %q is scripted (agent.provider: script): its script answers every model call, and nothing is recorded", o.record, o.caseName)
		}
		if modelErr != nil {
			modelH = engine.RefuseModel(modelErr)
		} else {
			modelH = model
		}
	}
	for _, n := range srv.Notes() {
		fmt.Fprintln(e.stderr, n)
	}
	what := p.Files[0]
	if o.caseName != "" {
		what += fmt.Sprintf(" (case %q)", o.caseName)
	}
	if up, n, ok := srv.Recording(); ok {
		fmt.Fprintf(e.stderr, "recording the tools of %s (%s listed): merged into %s when serve stops\n", termtext.Printable(up), termtext.Count(n, "tool"), p.Files[0])
	}
	var sessions *engine.Sessions
	switch {
	case o.http != "" && srv.World() != nil && rt == nil:
		so := engine.SessionsOptions{Suite: path, Case: o.caseName, Actor: o.actor, Record: o.record, Env: e.environ(), Max: o.maxWorlds, Idle: idle, PerMCPSession: o.perSession}
		if o.seedSet {
			so.Seed = &o.seed
		}
		if sessions, err = engine.NewSessions(so); err != nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("sessions: %w", err)}
		}
		defer sessions.Close()
	case o.perSession:
		return usageErr("--world-per-session gives MCP sessions worlds of their own: it needs a world suite (world:) served with --http, and no upstream")
	}
	if o.stdio {
		fmt.Fprintf(e.stderr, "serving %s over stdio (MCP)\n", what)
		if err = srv.ServeStdio(ctx, e.stdin, e.stdout); err != nil {
			err = &exitError{code: exitInfra, err: fmt.Errorf("serving over stdio: %w", err)}
		}
	} else {
		err = serveHTTP(ctx, e, srv, sessions, what, addr, loopback, model, modelErr)
	}
	if calls, f := srv.FinishRecording(); f != nil {
		up, _, _ := srv.Recording()
		fmt.Fprintf(e.stderr, "recorded %s to %s\n", termtext.Count(calls, "call"), termtext.Printable(up))
		bad := recordedFileLines(e.stderr, *f, false, false)
		for _, w := range f.Warnings {
			fmt.Fprintln(e.stderr, termtext.Printable(w))
		}
		if bad && err == nil {
			err = &exitError{code: exitFailed}
		}
	}
	return err
}

// shutdownGrace is how long a stopping server waits for calls in flight.
const shutdownGrace = 5 * time.Second

func serveHTTP(ctx context.Context, e *env, srv *dryfire.ToolServer, sessions *engine.Sessions, what, addr string, loopback bool, model *dryfire.ModelEndpoint, modelErr error) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: exitInfra, err: fmt.Errorf("cannot listen on %s: %w", addr, unwrapOp(err))}
	}
	// The address as asked for, with the port the system chose for 0;
	// announced as a URL that answers (127.0.0.1 for 0.0.0.0).
	bound := ln.Addr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if _, port, err := net.SplitHostPort(bound); err == nil {
			bound = net.JoinHostPort(host, port)
		}
	}
	real := hostport.Announce(addr, ln.Addr())
	if !loopback {
		fmt.Fprintf(e.stderr, "dryfire: warning: listening on %s, which other machines can reach: anyone who can connect can call the mocks (and the code behind impl: rules)\n", bound)
	}
	if bound != real {
		fmt.Fprintf(e.stderr, "dryfire: %s is every address of this machine: here it answers at http://%s; from another machine, at this machine's address with the same port\n", bound, real)
	}
	routes := "MCP /mcp, tools /tools"
	if srv.World() != nil {
		routes += ", operations /ops, control /world"
	}
	fmt.Fprintf(e.stderr, "serving %s on http://%s: %s\n", what, real, routes)
	if w := srv.World(); w != nil {
		fmt.Fprintf(e.stderr, "world %s, seed %d, actor %s\n", w.Name, w.Seed, cmp.Or(w.Actor, "(none)"))
		for _, api := range w.APIs {
			fmt.Fprintf(e.stderr, "package %s: its own HTTP API (%s) at http://%s%s\n", api.Package, termtext.Count(api.Routes, "route"), real, api.Path)
			if api.Env != "" {
				fmt.Fprintf(e.stderr, "  %s=http://%s%s\n", api.Env, real, api.Path)
			}
		}
	}
	switch {
	case model != nil && model.Scripted():
		fmt.Fprintf(e.stderr, "model endpoint: answered by the case's script (each turn once, the first whose when: holds; no cassette)\n")
	case model != nil:
		how := "replaying " + model.File()
		switch {
		case !model.Replaying():
			how = fmt.Sprintf("recording into %s (--record %s; written when serve stops)", model.File(), model.Mode())
		case model.Mode() == dryfire.RecordNew:
			how += " in order, recording what it does not answer into it (--record new; written when serve stops)"
		case model.ByContent():
			how += " (each request by its content, in any order)"
		default:
			how += " (in order)"
		}
		fmt.Fprintf(e.stderr, "model endpoint: %s\n", how)
	case modelErr != nil:
		fmt.Fprintf(e.stderr, "dryfire: warning: the model endpoint answers every request with this error: %v\n", modelErr)
	}
	if model != nil || modelErr != nil {
		fmt.Fprintf(e.stderr, "  OPENAI_BASE_URL=http://%s/v1\n  ANTHROPIC_BASE_URL=http://%s\n", real, real)
	}
	var h http.Handler = srv
	if sessions != nil {
		sessions.SetBase("http://" + real)
		h = sessions.Handler(srv)
		mcp := "MCP sessions at /mcp share the server's world"
		if sessions.PerMCPSession() {
			mcp = "each MCP session at /mcp has its own"
		}
		fmt.Fprintf(e.stderr, "sessions, each a world of its own (drill %q): POST /sessions, then /sessions/ID/reset, step, state; OpenEnv's WebSocket /ws; %s\n", sessions.Drill(), mcp)
	}
	hs := httpServer(h, bodyReadTimeout)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return &exitError{code: exitInfra, err: fmt.Errorf("serving on %s: %w", real, err)}
	case <-ctx.Done():
	}
	// Stop: no new connections; MCP sessions end (their open streams
	// with them); calls in flight get shutdownGrace to finish.
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	srv.CloseSessions()
	if err := <-shut; err != nil {
		hs.Close()
		fmt.Fprintf(e.stderr, "dryfire: calls still running after %s were cut off\n", shutdownGrace)
	}
	fmt.Fprintf(e.stderr, "stopped serving %s\n", what)
	// The cassette is written when something was recorded: a serve that
	// no agent asked anything of leaves no empty cassette behind.
	if model == nil {
		return nil
	}
	if _, recorded, _ := model.Stats(); recorded > 0 {
		wrote, err := model.Finish()
		if err != nil {
			return &exitError{code: exitInfra, err: err}
		}
		if wrote {
			fmt.Fprintf(e.stderr, "recorded %s into %s\n", termtext.Count(recorded, "model call"), model.File())
		}
	}
	return nil
}

// unwrapOp drops the "listen tcp ADDR:" prefix the caller already says.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
