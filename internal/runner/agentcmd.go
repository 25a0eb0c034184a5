package runner

// Existing agents as cases (agent.command). For each case dryfire runs the
// suite's program with its surroundings replaced: the case's tools over
// MCP and HTTP (in a world suite, the drill's own world: its operations,
// /ops and the control routes), and the case's model endpoint (record and
// replay, one cassette per case), all on one loopback server for the run,
// each case under its own prefix /cases/ID/, so that concurrent cases
// never share state. What the program does there becomes the case's
// transcript, and in a world suite its drill's evidence.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// DefaultCommandTimeout bounds the run of an agent.command program in one
// case, unless agent.timeout_s says otherwise.
const DefaultCommandTimeout = 120 * time.Second

// StderrLines is how many of the last lines a program wrote on standard
// error a case that did not pass keeps.
const StderrLines = 20

// maxOutput bounds what a program's standard output may hold; the rest
// is dropped, with a note.
const maxOutput = 16 << 20

// maxInputEnv is the largest input also given in DRYFIRE_INPUT: Linux
// refuses an environment string of 128 KiB or more.
const maxInputEnv = 128<<10 - len("DRYFIRE_INPUT=") - 1

// Variables dryfire sets for an agent.command program.
const (
	EnvMCPURL   = "DRYFIRE_MCP_URL"
	EnvToolsURL = "DRYFIRE_TOOLS_URL"
	EnvOpsURL   = "DRYFIRE_OPS_URL"   // world suites
	EnvWorldURL = "DRYFIRE_WORLD_URL" // world suites
	EnvCase     = "DRYFIRE_CASE"
	EnvInput    = "DRYFIRE_INPUT"
	// The case's tools over MCP on stdio: a command line (shell-quoted)
	// and the same as a JSON array, for a client that starts its MCP
	// server itself.
	EnvMCPCommand = "DRYFIRE_MCP_COMMAND"
	EnvMCPArgv    = "DRYFIRE_MCP_ARGV"
)

// host serves the running agent.command cases of one run (or the drills
// of an engine): each case's scope under PREFIX/ID/, which mounts the
// case's model endpoint under PREFIX/ID/v1/ with its tools, on one
// loopback listener of its own (startHost) or on the engine's.
type host struct {
	srv    *toolserver.Server
	prefix string // "/cases/"
	base   string // http://127.0.0.1:PORT
	port   int    // PORT

	hs   *http.Server // nil when another server serves the host
	done chan struct{}
}

// newHost returns a host serving scopes under prefix, not listening yet.
func newHost(prefix string) *host {
	h := &host{prefix: prefix}
	h.srv = toolserver.New(nil, toolserver.Options{ModelRoutes: modelserver.Paths, Prefix: prefix})
	return h
}

// startHost listens on a free loopback port and serves.
func startHost() (*host, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("agent.command: dryfire could not listen on a loopback port for the agents' tools and models: %w", err)
	}
	h := newHost("/cases/")
	h.base, h.done = "http://"+ln.Addr().String(), make(chan struct{})
	h.port = ln.Addr().(*net.TCPAddr).Port
	h.hs = &http.Server{Handler: http.HandlerFunc(h.route), ReadHeaderTimeout: 30 * time.Second}
	go func() {
		defer close(h.done)
		h.hs.Serve(ln)
	}()
	return h, nil
}

// close ends every MCP session and connection, and the listener.
func (h *host) close() {
	h.srv.CloseSessions()
	if h.hs != nil {
		h.hs.Close()
		<-h.done
	}
}

// route serves a request, after one alias: POST PREFIX/ID/messages is
// PREFIX/ID/v1/messages. ANTHROPIC_BASE_URL is the host root for the
// official Anthropic SDKs, which add /v1/messages, but the Vercel AI SDK's
// @ai-sdk/anthropic reads the same variable as a base that already holds
// /v1 and adds only /messages: both reach the endpoint unchanged.
func (h *host) route(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, h.prefix); ok {
		if id, sub, _ := strings.Cut(rest, "/"); sub == "messages" {
			r.URL.Path, r.URL.RawPath = h.prefix+id+"/v1/messages", ""
		}
	}
	h.srv.ServeHTTP(w, r)
}

// caseModel is the model side of one case: its endpoint, the count of
// model calls (for max_turns and for the turn of each tool call).
type caseModel struct {
	ep     *modelserver.Endpoint // nil when it could not be made
	refuse http.Handler          // answers every model call when ep is nil
	max    int
	faults int // declared faults: requests allowed past max

	arrived atomic.Int64 // model calls begun, in arrival order
	over    atomic.Int64 // calls refused past max
	refused atomic.Int64 // calls refused because ep is nil
}

func (m *caseModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, route := modelserver.Routes[r.URL.Path]
	if route && r.Method == http.MethodPost {
		if n := m.arrived.Add(1); n > int64(m.max+m.faults) {
			m.over.Add(1)
			modelserver.Refuse(&maxTurnsError{max: m.max, asked: n - int64(m.faults)}).ServeHTTP(w, r)
			return
		}
		if m.ep == nil {
			m.refused.Add(1)
		}
	}
	if m.ep == nil {
		m.refuse.ServeHTTP(w, r)
		return
	}
	m.ep.ServeHTTP(w, r)
}

// maxTurnsError is a model call past the case's max_turns, refused.
type maxTurnsError struct {
	max   int
	asked int64
}

func (e *maxTurnsError) Error() string {
	return fmt.Sprintf("max_turns (%d) reached: the agent asked for model call %d, which dryfire refused", e.max, e.asked)
}

// turns maps the stamp of a tool call (the model calls begun when it
// started) to its turn: the model calls among those that were answered
// with a success. A call made before any model call is in turn 0; a call
// made after the Nth model call and before the next, in turn N.
func turns(calls []modelserver.Call) func(int) int {
	ok := make([]int, len(calls)+1)
	for i, c := range calls {
		ok[i+1] = ok[i]
		if c.Status/100 == 2 {
			ok[i+1]++
		}
	}
	return func(k int) int { return ok[min(max(k, 0), len(calls))] }
}

// runCommand runs one case whose agent is a program. In a world suite,
// drill is the case's world: served as the case's tools (its operations
// over MCP and /tools, with /ops and the control routes), judged at the
// end as the built-in loop's drills are.
func runCommand(ctx context.Context, j job, opts Options, lv *live, c report.Case, start time.Time, drill *world.Instance) report.Case {
	impl := implIn(opts.Impl, j)
	if impl != nil {
		opts.Impl = impl
		defer impl.close()
	}
	cc, c := startCommand(j, opts, lv, lv.host, c, start, drill)
	if cc == nil {
		return c
	}
	ws, err := openWorkspace(j, lv, opts.KeepWorkspaces)
	if err != nil {
		cc.abandon()
		c.Status, c.Reason = report.Errored, err.Error()
		return done(c, drill, start)
	}
	cc.ws = ws
	if impl != nil {
		impl.setDir(ws.path())
	}
	mode, dflt := networkOf(&j.suite.Agent, opts, lv.getenv)
	jail, note, err := lv.host.openJail(mode, dflt)
	if err != nil {
		cc.abandon()
		cc.ws.finish(&c)
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
		return done(c, drill, start)
	}
	if note != "" {
		cc.c.Notes = append(cc.c.Notes, note)
	}
	var tk *talk
	if j.c.User != nil {
		user, err := newSimUser(j, lv, &cc.c.Notes)
		if err != nil {
			cc.abandon()
			cc.ws.finish(&c)
			c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
			return done(c, drill, start)
		}
		cc.user = user
		tk = &talk{user: user, turn: func() int { return int(cc.m.arrived.Load()) }}
	}
	res := runProgram(ctx, j, opts, lv, cc.url, ws, jail, tk)
	c = cc.finish(ctx, res)
	if jail != nil {
		networkFindings(&c, mode, res.attempts)
	}
	return c
}

// commandCase is a case whose agent runs outside the built-in loop,
// between its start and its finish: its scope and model endpoint served
// on a host.
type commandCase struct {
	j     job
	h     *host
	sc    *toolserver.Scope
	m     *caseModel
	ep    *modelserver.Endpoint // nil when it could not be made (epErr)
	epErr error
	drill *world.Instance
	url   string // where the case is served: BASE/PREFIX/ID
	c     report.Case
	start time.Time
	// keepEmpty writes the cassette of a run that recorded no model call
	// too (agent.command cases); a Host's drills leave none.
	keepEmpty bool
	ws        *caseWorkspace // the program's workspace; nil when it has none
	lv        *live          // the run's: judge checks ask their model through it
	user      *simUser       // the case's simulated user; nil without user:
}

// startCommand serves a case's tools (its world's operations in a world
// suite) and model endpoint on h. When that fails, the case comes back
// finished (an error) and cc is nil.
func startCommand(j job, opts Options, lv *live, h *host, c report.Case, start time.Time, drill *world.Instance) (cc *commandCase, _ report.Case) {
	a := &j.suite.Agent
	passthrough := j.plan.UsesImpl
	if passthrough {
		c.Notes = append(c.Notes, NoteNeverRecorded)
	} else {
		c.Cassette = j.cassette
	}
	eo := modelserver.Options{
		File:        j.cassette,
		SuiteFile:   j.suite.File,
		Case:        j.c.Name,
		Mode:        lv.mode,
		Env:         lv.env,
		Transport:   lv.transport,
		Passthrough: passthrough,
		Match:       j.suite.MatchRules(j.c),
		Faults:      ModelFaults(j.c),
		Trials:      j.trials,
	}
	if j.suite.NoAgent {
		// The agent is a test's own function: running its test records it.
		name := j.c.Name
		eo.Rerecord = func(mode cassette.Mode) string {
			return fmt.Sprintf("run the test of drill %q again with record mode %s (the record option of runDrills / run_drills, or dryfire engine --record %s) and the provider's key set", name, mode, mode)
		}
	}
	if a.BaseURL != "" {
		if a.Provider == spec.ProviderAnthropic {
			eo.AnthropicBaseURL = a.BaseURL
		} else {
			eo.OpenAIBaseURL = a.BaseURL
		}
	}
	// A request a declared fault answers is no turn: max_turns lets as
	// many more through.
	m := &caseModel{max: j.c.EffectiveMaxTurns(a), faults: len(j.c.ModelFaults)}
	ep, epErr := modelserver.New(eo)
	if epErr != nil {
		// The program may not call the model at all: the case fails
		// for the missing cassette only when it does.
		m.refuse = modelserver.Refuse(epErr)
	} else {
		m.ep = ep
	}
	var up tool.Answerer
	if opts.Upstream != nil {
		up = opts.Upstream.For(j.suite.File, j.c.Name)
	}
	sc := toolserver.NewScope(toolserver.ScopeOptions{
		ID:       j.id,
		Plan:     j.plan,
		Impl:     opts.Impl,
		World:    drill,
		Model:    m,
		Turn:     func() int { return int(m.arrived.Load()) },
		Upstream: up,
	})
	c.Notes = append(c.Notes, sc.Notes()...)
	if err := h.srv.Add(sc); err != nil {
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
		endDrill(&c, drill)
		return nil, done(c, drill, start)
	}
	return &commandCase{j: j, h: h, sc: sc, m: m, ep: ep, epErr: epErr, drill: drill, url: h.base + h.prefix + j.id, c: c, start: start, keepEmpty: true, lv: lv}, c
}

// stop stops serving the case.
func (cc *commandCase) stop() {
	cc.h.srv.Remove(cc.j.id)
}

// abandon ends the case without judging it or writing its cassette.
func (cc *commandCase) abandon() {
	cc.stop()
	if cc.drill != nil {
		cc.drill.End()
	}
}

// finish judges the case from how its agent's run ended, writes its
// cassette when the run finished, and stops serving it.
func (cc *commandCase) finish(ctx context.Context, res programResult) report.Case {
	defer cc.stop()
	j, c, ep, m, drill := cc.j, cc.c, cc.ep, cc.m, cc.drill
	c.Output = res.output
	if res.cut {
		c.Notes = append(c.Notes, fmt.Sprintf("the agent printed more than %d MiB on standard output; the output is cut there", maxOutput>>20))
	}
	if res.note != "" {
		c.Notes = append(c.Notes, res.note)
	}

	var mcalls []modelserver.Call
	if ep != nil {
		mcalls = ep.Calls()
		c.Turns, c.Usage = ep.Turns(), ep.Usage()
		reportFaults(&c, j.c.ModelFaults, ep.Faults())
	}
	turnOf := turns(mcalls)
	recs := cc.sc.Records()
	for i := range recs {
		recs[i].Turn = turnOf(recs[i].Turn)
	}
	r := ran{recs: recs, drill: drill, err: res.err, infra: res.infra, failed: res.failed, workspace: cc.ws.path()}
	if m.over.Load() > 0 {
		r.err, r.infra, r.failed = &maxTurnsError{max: m.max, asked: int64(m.max) + 1}, false, false
	}
	if ep != nil {
		r.readCassette(ep, &c)
	}
	// What went wrong around the program comes first: it is why the
	// program failed, when it did.
	if cc.epErr != nil && m.refused.Load() > 0 {
		r.broken = cc.epErr
	}
	if cc.user != nil {
		conv := res.conv
		for i := range conv {
			conv[i].ModelTurn = turnOf(conv[i].ModelTurn)
		}
		cc.user.notes = &c.Notes
		save := ctx.Err() == nil && r.replay == nil && !(r.err != nil && r.infra)
		if p := cc.user.finish(&c, conv, save); p != nil && r.replay == nil {
			r.replay = p
		}
	}
	judge(j, &c, r, &grader{ctx: ctx, lv: cc.lv})
	// The cassette is written for a run that finished: not one that was
	// interrupted, nor one whose program failed (a non-zero exit, a
	// timeout, a call past max_turns, a test's agent that threw: its
	// recording may be cut short).
	// A test's drill that recorded nothing leaves no cassette behind (most
	// make no model call).
	if _, recorded, _ := stats(ep); cc.keepEmpty || recorded > 0 {
		cc.save(ctx, &c, r)
	}
	if c.Status != report.Passed && res.stderr != "" {
		c.Stderr = res.stderr
	}
	cc.ws.finish(&c)
	return done(c, drill, cc.start)
}

// stats are the endpoint's counts; none without an endpoint.
func stats(ep *modelserver.Endpoint) (played, recorded, live int) {
	if ep == nil {
		return 0, 0, 0
	}
	return ep.Stats()
}

// save writes the case's cassette, when its run finished.
func (cc *commandCase) save(ctx context.Context, c *report.Case, r ran) {
	if cc.ep != nil && r.replay == nil && ctx.Err() == nil && c.Status != report.Errored && !r.failed {
		writeCassette(cc.ep, c)
	}
}

// programResult is how a program's run in one case ended.
type programResult struct {
	output string
	cut    bool   // the output went past maxOutput
	stderr string // the last StderrLines lines of standard error
	err    error  // why the run failed, or nil
	infra  bool   // err is the surroundings': it could not start, or was interrupted
	failed bool   // err fails the case instead of erring it: a test's own agent threw
	note   string // a note for the case (a clock libfaketime could not set)
	// attempts are what the program tried past dryfire in its isolated
	// network.
	attempts []netjail.Attempt
	// conv is the conversation of a case with user:, each reply's
	// ModelTurn as a count of model calls begun.
	conv []agent.Exchange
}

// talk is a case's simulated user and how many model calls its program
// has begun, for a conversation (nil for a case of one input).
type talk struct {
	user *simUser
	turn func() int
}

// runProgram runs the suite's program for one case, in the suite's
// directory (or Options.CommandDir, or its workspace when ws is not nil),
// with the case's URLs at prefix.
//
// With jail, the program runs in that network namespace (and the jail is
// closed when it has exited, its attempts in the result).
func runProgram(ctx context.Context, j job, opts Options, lv *live, prefix string, ws *caseWorkspace, jail *netjail.Jail, tk *talk) programResult {
	a := &j.suite.Agent
	timeout := DefaultCommandTimeout
	if a.TimeoutS > 0 {
		timeout = time.Duration(a.TimeoutS * float64(time.Second))
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	dir := filepath.Dir(j.suite.File)
	if opts.CommandDir != "" {
		dir = opts.CommandDir
	}
	args := ws.command(dir, a.Command)
	cmd := exec.CommandContext(cctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = agentEnv(lv.env, prefix, j.c, j.suite.World != "", httpEnv(prefix, j.suite)...)
	if len(opts.MCPBridge) > 0 {
		cmd.Env = append(cmd.Env, bridgeEnv(opts.MCPBridge, prefix+"/mcp")...)
	}
	if ws != nil {
		cmd.Dir = ws.dir
		cmd.Env = append(cmd.Env, EnvWorkspace+"="+ws.dir)
	}
	var clockNote string
	if clk := clockOf(a, opts); clk != nil {
		var vars []string
		vars, clockNote = clockEnv(clk, cmd.Env, lv.getenv)
		cmd.Env = append(cmd.Env, vars...)
	}
	stdout := &capped{max: maxOutput}
	stderr := &tail{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var stdin io.WriteCloser
	var lines *lineWriter
	if tk != nil {
		cmd.Env = append(cmd.Env, EnvConversation+"=jsonl")
		lines = newLineWriter(maxOutput, 2*spec.MaxUserTurns+2)
		cmd.Stdout = lines
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return programResult{err: err, infra: true}
		}
	} else {
		cmd.Stdin = strings.NewReader(j.c.Input)
	}
	// The program and whatever it starts are one process group, killed
	// whole on a timeout, on Ctrl-C, and when the program has exited
	// (what it left running).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var err, convErr error
	var conv []agent.Exchange
	if jail != nil {
		err = jail.Start(cmd)
	} else {
		err = cmd.Start()
	}
	if err == nil && tk != nil {
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		conv, convErr = converse(cctx, stdin, lines, exited, tk.user, j.c.Input, tk.turn)
		<-exited
		err = waitErr
	} else if err == nil {
		err = cmd.Wait()
	}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var attempts []netjail.Attempt
	if jail != nil {
		attempts = jail.Close()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited 0; what it left running held its output open
	}
	r := programResult{output: trimNewline(stdout.String()), cut: stdout.cut, stderr: stderr.String(), note: clockNote, attempts: attempts, conv: conv}
	if tk != nil {
		r.output = conv[len(conv)-1].Reply
		if r.output == "" && len(conv) > 1 {
			r.output = conv[len(conv)-2].Reply
		}
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case ctx.Err() != nil:
		r.err, r.infra = errors.New("interrupted"), true
	case cctx.Err() != nil:
		r.err = fmt.Errorf("the agent did not finish within %s s (agent.timeout_s), and was killed", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64))
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.err = fmt.Errorf("the agent was killed by signal %s", ws.Signal())
		} else {
			r.err = fmt.Errorf("the agent exited with status %d", exit.ExitCode())
		}
	default:
		r.err = fmt.Errorf("the agent could not start: %s: %w", strings.Join(quoteArgs(a.Command), " "), err)
		r.infra = true
	}
	if r.err == nil && convErr != nil {
		var ue *userError
		r.err, r.infra = convErr, errors.As(convErr, &ue)
	}
	return r
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`") {
			s = strconv.Quote(s)
		}
		out[i] = s
	}
	return out
}

// dryfireEnv are the variables dryfire sets for a program; the run's own
// values of them never reach it.
var dryfireEnv = []string{
	"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	EnvMCPURL, EnvToolsURL, EnvOpsURL, EnvWorldURL, EnvCase, EnvInput, EnvWorkspace, EnvNow,
	EnvMCPCommand, EnvMCPArgv, EnvConversation,
}

// bridgeEnv are DRYFIRE_MCP_COMMAND and DRYFIRE_MCP_ARGV: the bridge
// command with the case's MCP URL after it.
func bridgeEnv(bridge []string, url string) []string {
	argv := append(slices.Clip(bridge), url)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = shellQuote(a)
	}
	js, _ := json.Marshal(argv)
	return []string{EnvMCPCommand + "=" + strings.Join(words, " "), EnvMCPArgv + "=" + string(js)}
}

// shellQuote quotes s for a POSIX shell (and Python's shlex.split), only
// when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// bindingEnv are the variables that lead an agent to one case served at
// prefix, in a fixed order: the base URLs pointing at the case's
// endpoint, dummy keys (the endpoint adds the real ones to the calls it
// records), the case's tool URLs (in a world suite, /ops and /world too),
// its name and input (unless too long for an environment).
func bindingEnv(prefix string, c *spec.Case, world bool) [][2]string {
	out := [][2]string{
		{"OPENAI_BASE_URL", prefix + "/v1"},
		{"ANTHROPIC_BASE_URL", prefix},
		{"OPENAI_API_KEY", modelserver.DummyKey},
		{"ANTHROPIC_API_KEY", modelserver.DummyKey},
		{EnvMCPURL, prefix + "/mcp"},
		{EnvToolsURL, prefix + "/tools"},
	}
	if world {
		out = append(out, [2]string{EnvOpsURL, prefix + "/ops"}, [2]string{EnvWorldURL, prefix + "/world"})
	}
	out = append(out, [2]string{EnvCase, c.Name})
	if len(c.Input) <= maxInputEnv {
		out = append(out, [2]string{EnvInput, c.Input})
	}
	return out
}

// agentEnv is the environment of a program in one case: the run's, with
// dryfire's variables (bindingEnv) replaced, and loopback kept away from
// any proxy.
// extra are more variables of dryfire's (a world's package APIs), which
// replace the run's own values too.
func agentEnv(env []string, prefix string, c *spec.Case, world bool, extra ...[2]string) []string {
	out := make([]string, 0, len(env)+len(dryfireEnv)+2)
	var noProxy, noProxyLower string
	proxied := false
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case isDryfireEnv(k) || strings.HasPrefix(k, EnvHTTPURLPrefix) || isExtra(k, extra):
			continue
		case k == "NO_PROXY":
			noProxy = v
			continue
		case k == "no_proxy":
			noProxyLower = v
			continue
		case strings.EqualFold(k, "HTTP_PROXY") || strings.EqualFold(k, "HTTPS_PROXY") || strings.EqualFold(k, "ALL_PROXY"):
			proxied = proxied || v != ""
		}
		out = append(out, kv)
	}
	for _, kv := range append(bindingEnv(prefix, c, world), extra...) {
		out = append(out, kv[0]+"="+kv[1])
	}
	if proxied {
		noProxy = joinList(noProxy, "127.0.0.1,localhost")
		noProxyLower = joinList(noProxyLower, "127.0.0.1,localhost")
	}
	if noProxy != "" {
		out = append(out, "NO_PROXY="+noProxy)
	}
	if noProxyLower != "" {
		out = append(out, "no_proxy="+noProxyLower)
	}
	return out
}

func isExtra(k string, extra [][2]string) bool {
	for _, kv := range extra {
		if kv[0] == k {
			return true
		}
	}
	return false
}

func isDryfireEnv(k string) bool {
	for _, d := range dryfireEnv {
		if k == d {
			return true
		}
	}
	return false
}

func joinList(list, more string) string {
	if list == "" {
		return more
	}
	return list + "," + more
}

// trimNewline drops one line end at the end of s: what print and
// console.log add.
func trimNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}

// capped keeps the first max bytes written to it.
type capped struct {
	max int
	buf bytes.Buffer
	cut bool
}

func (w *capped) Write(p []byte) (int, error) {
	room := w.max - w.buf.Len()
	if len(p) > room {
		w.cut = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	w.buf.Write(p)
	return len(p), nil
}

func (w *capped) String() string { return w.buf.String() }

// tail keeps the end of what is written to it: its last StderrLines
// lines, each cut to maxTailLine bytes.
type tail struct {
	buf []byte
}

const (
	maxTailLine = 2000
	maxTailBuf  = 64 << 10
)

func (w *tail) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*maxTailBuf {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-maxTailBuf:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	s := strings.TrimRight(string(w.buf), "\r\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > StderrLines {
		lines = lines[len(lines)-StderrLines:]
	}
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxTailLine {
			l = l[:maxTailLine] + "…"
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

// commandKeyMissing says which key a case of an agent.command suite that
// will call the live model lacks, "" when none: the key of the provider's
// API when it names one whose calls go to the public API; with no
// provider, a key of either API, unless a base URL says calls go
// elsewhere (a local server takes none).
func commandKeyMissing(a *spec.Agent, getenv func(string) string) string {
	usable := func(p, base string) bool {
		cred := model.Resolve(p, base, getenv)
		return p == spec.ProviderOpenAICompatible || cred.Key != "" || !cred.Public
	}
	if a.Provider != "" {
		if usable(a.Provider, a.BaseURL) {
			return ""
		}
		return model.KeyEnv(a.Provider)
	}
	if usable(spec.ProviderOpenAI, "") || usable(spec.ProviderAnthropic, "") {
		return ""
	}
	return model.KeyEnv(spec.ProviderOpenAI) + " or " + model.KeyEnv(spec.ProviderAnthropic)
}
