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
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
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
	h.srv = toolserver.New(nil, toolserver.Options{ModelRoutes: wire.Paths, Prefix: prefix})
	return h
}

// addrInUse reports whether a listen failed for a port taken: EADDRINUSE,
// or on Windows WSAEADDRINUSE, which errors.Is does not take for it.
func addrInUse(err error) bool {
	const wsaeaddrinuse syscall.Errno = 10048
	var errno syscall.Errno
	return errors.Is(err, syscall.EADDRINUSE) || runtime.GOOS == "windows" && errors.As(err, &errno) && errno == wsaeaddrinuse
}

// startHost listens on a loopback port, port (0: a free one), and
// serves. asked says who asked for the port, for the error when it is
// taken.
func startHost(port int, asked string) (*host, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	switch {
	case err != nil && port != 0 && addrInUse(err):
		return nil, fmt.Errorf("%s %d: the port is taken (%w): stop what listens there, or choose another port (agent.port, dryfire run --port)", asked, port, err)
	case err != nil && port != 0:
		return nil, fmt.Errorf("%s %d: dryfire could not listen there for the agents' tools and models: %w", asked, port, err)
	case err != nil:
		return nil, fmt.Errorf("agent.command: dryfire could not listen on a loopback port for the agents' tools and models: %w", err)
	}
	h := newHost("/cases/")
	h.base, h.done = "http://"+ln.Addr().String(), make(chan struct{})
	h.port = ln.Addr().(*net.TCPAddr).Port
	h.hs = &http.Server{Handler: h.srv, ReadHeaderTimeout: 30 * time.Second, ConnContext: toolserver.ConnContext, Protocols: modelserver.Protocols()}
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

// caseModel is the model side of one case: its endpoint, the count of
// model calls (for max_turns and for the turn of each tool call).
type caseModel struct {
	ep     *modelserver.Endpoint // nil when it could not be made
	refuse http.Handler          // answers every model call when ep is nil
	max    int
	faults int // declared faults: requests allowed past max

	arrived atomic.Int64 // calls of the conversation begun (admit), in order
	over    atomic.Int64 // calls refused past max
	refused atomic.Int64 // calls refused because ep is nil
}

func (m *caseModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m.ep != nil {
		m.ep.ServeHTTP(w, r) // its Recorder admits each call (startCommand)
		return
	}
	if api, route := wire.RouteOf(r.URL.Path); route && api.Turn() && r.Method == http.MethodPost {
		if err := m.admit(); err != nil {
			modelserver.Refuse(err).ServeHTTP(w, r)
			return
		}
		m.refused.Add(1)
	}
	m.refuse.ServeHTTP(w, r)
}

// admit counts a call of the conversation as the Recorder takes it (a
// side call or a token count is none): past max_turns it is refused.
func (m *caseModel) admit() error {
	if n := m.arrived.Add(1); n > int64(m.max+m.faults) {
		m.over.Add(1)
		return &maxTurnsError{max: m.max, asked: n - int64(m.faults)}
	}
	return nil
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
// Side calls and token counts, which admit does not count, are skipped.
func turns(calls []model.Called) func(int) int {
	ok := []int{0}
	for _, c := range calls {
		if n := ok[len(ok)-1]; c.Side == "" && wire.API(c.API).Turn() {
			if c.Status/100 == 2 {
				n++
			}
			ok = append(ok, n)
		}
	}
	return func(k int) int { return ok[min(max(k, 0), len(ok)-1)] }
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
	// fail ends the case, erred before its program ran.
	fail := func(err error, infra bool) report.Case {
		cc.abandon()
		cc.ws.finish(&c)
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), infra
		return done(c, drill, start)
	}
	if impl != nil {
		impl.setDir(ws.path())
	}
	var cr *cliRun // agent.cli
	var write []string
	if j.suite.Agent.CLI != "" {
		if cr, err = prepareCLI(ctx, j, cc.url, ws.path()); err != nil {
			return fail(err, false)
		}
		defer cr.close()
		write = []string{cr.home}
	}
	mode, dflt := networkOf(&j.suite.Agent, opts, lv.getenv)
	jail, note, err := lv.host.openJail(mode, dflt, programDir(j, opts), write, cc.sc)
	if err != nil {
		return fail(err, true)
	}
	if note != "" {
		cc.c.Notes = append(cc.c.Notes, note)
	}
	var tk *talk
	if j.c.User != nil {
		user, err := newSimUser(j, lv, &cc.c.Notes)
		if err != nil {
			return fail(err, true)
		}
		if drill != nil {
			user.act = func(ctx context.Context, c tool.Call, req world.Request) { cc.sc.CallWorld(ctx, c, req) }
		}
		cc.user = user
		tk = &talk{user: user, turn: func() int { return int(cc.m.arrived.Load()) }}
	}
	res := runProgram(ctx, j, opts, lv, cc.url, ws, jail, tk, cr)
	if res.err == nil {
		cc.commands = runCommandChecks(ctx, j, opts, lv, ws, mode, dflt, cc.sc)
	}
	c = cc.finish(ctx, res)
	if u := cr.untested(); u != "" && (c.Status == report.Failed || c.Status == report.Errored) {
		c.Reason += "; " + u
	}
	if jail != nil {
		networkFindings(&c, mode, res.attempts, jail.Confined())
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
	ws        *caseWorkspace                    // the program's workspace; nil when it has none
	lv        *live                             // the run's: judge checks ask their model through it
	user      *simUser                          // the case's simulated user; nil without user:
	commands  map[*spec.Check]*check.CommandRun // how its command checks ran
	// sweeping: a fault sweep's point, which leads the agent another way
	// than its script's every turn (no turn is then held unserved).
	sweeping bool
	// ownModel: the agent may not ask the case's model at all (a served
	// session's): no turn of its script is held unserved either.
	ownModel bool
}

// startCommand serves a case's tools (its world's operations in a world
// suite) and model endpoint on h. When that fails, the case comes back
// finished (an error) and cc is nil.
func startCommand(j job, opts Options, lv *live, h *host, c report.Case, start time.Time, drill *world.Instance) (cc *commandCase, _ report.Case) {
	eo, c, err := endpointOptions(j, lv, c)
	eo.Transcript = true // the program's own tools, read off the model wire
	eo.SideCalls = spec.SideCallsOf(&j.suite.Agent)
	if err != nil {
		c.Status, c.Reason = report.Errored, err.Error()
		endDrill(&c, drill)
		return nil, done(c, drill, start)
	}
	// A request a declared fault answers is no turn: max_turns lets as
	// many more through.
	m := &caseModel{max: j.plan.Limits.MaxTurns, faults: len(j.c.ModelFaults)}
	eo.Admit = m.admit
	if eo.Scripted {
		eo.ToolNames = toolNames(j, h.base+h.prefix+j.id)
	}
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
		Fault:    opts.point.fault(),
	})
	c.Notes = append(c.Notes, sc.Notes()...)
	if err := h.srv.Add(sc); err != nil {
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
		endDrill(&c, drill)
		return nil, done(c, drill, start)
	}
	return &commandCase{j: j, h: h, sc: sc, m: m, ep: ep, epErr: epErr, drill: drill, url: h.base + h.prefix + j.id, c: c, start: start, keepEmpty: true, lv: lv, sweeping: opts.point != nil}, c
}

// endpointOptions are the options of case j's model endpoint: its
// script's, when it is scripted (no cassette: one found at its place is
// left alone, and said so), else its cassette's.
func endpointOptions(j job, lv *live, c report.Case) (modelserver.Options, report.Case, error) {
	if j.suite.Scripted(j.c) {
		if file := j.plan.Cassette(); file != "" && cassette.CheckPath(j.suite.ProjectRoot(), file) == nil {
			if _, err := os.Stat(file); err == nil {
				c.Notes = append(c.Notes, fmt.Sprintf("%s is not read: this case is scripted (its script answers every model call, and no cassette is read or written)", file))
			}
		}
		return modelserver.Options{Config: cassette.Config{SuiteFile: j.suite.File, Case: j.c.Name}, Scripted: true, Script: j.suite.ScriptOf(j.c), Faults: ModelFaults(j.c)}, c, nil
	}
	a := &j.suite.Agent
	passthrough := j.plan.UsesImpl
	if passthrough {
		c.Notes = append(c.Notes, NoteNeverRecorded)
	} else {
		c.Cassette = j.cassette
	}
	eo, err := recordedOptions(j, lv, j.cassette, a.Provider, a.BaseURL)
	eo.Provider = "" // the program's calls may be of any API
	eo.Passthrough, eo.Match, eo.DropUser, eo.Faults = passthrough, cliMatch(a, j.suite.MatchRules(j.c)), !hasModelUser(j.c), ModelFaults(j.c)
	if j.suite.NoAgent {
		// The agent is a test's own function: running its test records it.
		name := j.c.Name
		eo.Rerecord, eo.RecordedBy, err = func(mode cassette.Mode) string {
			return fmt.Sprintf("run the test of drill %q again with record mode %s (the record option of runDrills / run_drills, or dryfire engine --record %s) and the provider's key set", name, mode, mode)
		}, "", nil
	}
	return eo, c, err
}

// toolNames maps the names a model is shown case j's tools by (its
// tools', its world's operations') to theirs; url is where the case is
// served (BASE/PREFIX/ID), whose MCP server's URL crewai names them after.
func toolNames(j job, url string) *tool.Names {
	names := make([]string, len(j.plan.ModelTools))
	for i, t := range j.plan.ModelTools {
		names[i] = t.Name
	}
	n := tool.NewNames(names, j.suite.ToolAliases())
	n.Server(url + "/mcp")
	return n
}

// sideNote lists the side calls dryfire answered itself (model's
// sidecalls.go), "" when there were none.
func sideNote(calls []model.Called) string {
	var l []string
	for i, c := range calls {
		if c.Side != "" {
			l = append(l, fmt.Sprintf("model call %d (%s)", i+1, c.Side))
		}
	}
	if len(l) == 0 {
		return ""
	}
	return "side calls answered by dryfire, no turn of the case: " + strings.Join(l, ", ")
}

// scriptTurns are a scripted case's served turns as the report shows them.
func scriptTurns(as []model.ScriptAnswer) []report.ScriptTurn {
	out := make([]report.ScriptTurn, len(as))
	for i, a := range as {
		out[i] = report.ScriptTurn{Request: a.Request, Turn: a.Turn, API: string(a.API), Streamed: a.Streamed, LastMessage: a.LastMessage, Refused: a.Err != nil}
	}
	return out
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
		c.Notes = append(c.Notes, fmt.Sprintf("the agent printed more than %d MiB on standard output; the output is cut there", program.MaxOutput>>20))
	}
	if res.note != "" {
		c.Notes = append(c.Notes, res.note)
	}

	var o model.Outcome
	if ep != nil {
		o = ep.End()
		c.Turns, c.Usage = o.Turns, report.Usage(o.Usage)
		reportFaults(&c, j.c.ModelFaults, o.Faults)
	}
	turnOf := turns(o.Calls)
	recs := cc.sc.Records()
	c.MCP = cc.sc.MCPUses()
	for i := range recs {
		recs[i].Turn = turnOf(recs[i].Turn)
	}
	names := toolNames(j, cc.url)
	recs = transcript(recs, o.Seen, names)
	r := ran{recs: recs, drill: drill, err: res.err, infra: res.infra, failed: res.failed, workspace: cc.ws.path(), program: true, keepEmpty: cc.keepEmpty, commands: cc.commands}
	if m.over.Load() > 0 {
		r.err, r.infra, r.failed = &maxTurnsError{max: m.max, asked: int64(m.max) + 1}, false, false
	}
	if err := cc.sc.Over(); err != nil {
		r.err, r.infra, r.failed = err, false, false
	}
	notes, differs := offeredNotes(j, &o, names)
	c.Notes = append(c.Notes, notes...)
	if n := sideNote(o.Calls); n != "" {
		c.Notes = append(c.Notes, n)
	}
	if differs && j.suite.Agent.OfferedTools == "strict" && r.err == nil {
		r.err, r.failed = errOffered, true
	}
	if o.Scripted {
		c.Script = scriptTurns(o.Served)
		if o.Script != nil {
			// The program most likely failed for the refusal: the
			// script's error is the case's.
			r.err, r.infra, r.failed = o.Script, false, false
		} else if r.err == nil && !cc.sweeping && !cc.ownModel && o.Unserved != nil {
			r.err, r.failed = o.Unserved, true
		}
	} else if ep != nil {
		r.model, r.out = ep, &o
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
		r.user, r.conv = cc.user, conv
	}
	conclude(ctx, j, &c, r, &grader{ctx: ctx, lv: cc.lv})
	if c.Status != report.Passed && res.stderr != "" {
		c.Stderr = res.stderr
	}
	cc.ws.finish(&c)
	return done(c, drill, cc.start)
}
