// Package runner runs the cases of loaded suites: each case in isolation
// (its own mock state and model), several at a time, with results in
// suite and case order whatever the scheduling.
package runner

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"regexp"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/report"
)

// NoteNeverRecorded is the note of a case that runs passthrough code.
const NoteNeverRecorded = "this case runs passthrough code (impl), so it is never recorded into a cassette"

// NoAgentReason is why a run skips the drills of a world suite without
// agent: (the SDKs' suites): their agent is a test's own function.
const NoAgentReason = "its agent is the test's own function: run it with runDrills / run_drills, or give the suite an agent"

// DefaultConcurrency is how many cases run at once unless told otherwise.
const DefaultConcurrency = 8

// Options control a run.
type Options struct {
	Concurrency int            // cases at once; <1 means DefaultConcurrency
	Filter      *regexp.Regexp // run only cases whose name matches
	// Only, when set, runs only the cases it accepts (after Filter), by
	// suite file and case name.
	Only func(suite, name string) bool
	// FailFast starts no case after one that failed or erred; those not
	// started are skipped (failFastReason).
	FailFast bool
	Impl     mock.Impl // passthrough code; nil: impl unavailable
	// Progress, when set, hears about each case as it starts and ends.
	// Calls are serialised; index is the case's place in the report.
	Progress Progress
	// Record says when model calls are recorded into cassettes and when
	// replayed; empty means cassette.DefaultMode (None when CI is set,
	// else Once).
	Record cassette.Mode
	// Env is the environment (KEY=VALUE) keys, base URLs, CI and the
	// secrets to redact are read from; nil means os.Environ(). An
	// agent.command program runs in it, with its keys and base URLs
	// replaced by dryfire's (agentEnv).
	Env []string
	// Live carries the requests that go to a real API; nil means a
	// transport of the run's own. Never used in None mode.
	Live http.RoundTripper
	// Seed, when set, is the seed of every drill (world suites), over the
	// case's and the world's.
	Seed *int64
	// Builds, when set, gives a drill the build (and seed) it runs from
	// instead of the suite's world: how a stored report is reproduced.
	Builds func(suite, name string) (build string, seed int64, ok bool)
	// Command, when set, is the agent of every case: the program runs as
	// an agent.command program would (the same environment, tools and
	// model endpoint), whatever agent the suite names. How a stored
	// report is reproduced with another agent (dryfire reproduce -- COMMAND).
	Command []string
	// CommandDir is the working directory of Command; empty means the
	// suite's directory, as for agent.command.
	CommandDir string
	// KeepWorkspaces keeps the workspace directories of cases that did
	// not pass (the report says where), instead of removing them.
	KeepWorkspaces bool
	// Clock, when set, is the start time agent.command programs read
	// (over agent.clock's, in its zone; UTC without one).
	Clock *time.Time
	// MCPBridge, when set, is the command that bridges MCP over stdio to
	// a URL given after it (dryfire mcp-bridge): agent.command programs
	// get it, with their case's MCP URL, as DRYFIRE_MCP_COMMAND and
	// DRYFIRE_MCP_ARGV.
	MCPBridge []string
	// Port, when above 0, is the loopback port the agent.command
	// programs' endpoints are served on, over agent.port's.
	Port int
	// Network, when set, is the network of every agent.command program
	// (isolated or open), over agent.network's (see network.go).
	Network string
	// Trials, when above 0, is how often every case runs, over the
	// trials: of cases and suites; each trial is isolated and has its own
	// cassette (TrialCassette).
	Trials int
	// PassThreshold is the fraction of its trials a case must pass to
	// pass; 0 means 1 (every trial).
	PassThreshold float64
	// Shard, when set, runs only that part of the selected cases; the
	// report says which (report.Shard), for merging.
	Shard *Shard
	// Journal, when set, keeps every case as it finishes (journal.go);
	// a journal resumed gives the cases it holds finished instead of
	// running them again.
	Journal *Journal
	// Batch, when set, runs only the cases with its ids among the
	// selected ones; the report says which part of the run they are
	// (report.Shard with Batch), for merging. Not with Shard.
	Batch *Batch
	// Upstream, when set, answers every case's tool calls instead of its
	// mocks, and its tools are the ones the agent is shown: real tools
	// behind a recording proxy (dryfire record-tools).
	Upstream Upstream
	// Sink, when set, gets each case's result in report order, as soon as
	// it and every case before it are done (calls serialised, with
	// Progress's): how the reports are written while the run goes on.
	Sink func(index int, c *report.Case)
	// Lean keeps no case's result: the report has no cases, only the
	// summary, the totals and the shard. The results go to Sink only, so
	// that the memory of a run does not grow with its cases.
	Lean bool
	// Worlds are the worlds of the world suites run (world.LoadFiles'):
	// what their drills start from.
	Worlds world.Worlds
	// Coverage counts what the cases exercised of their suites' mock
	// rules, sequence entries and worlds (report.Coverage, coverage.go).
	Coverage bool
	// Mutate tries each passing case's checks against its transcript
	// mutated (report.CaseMutation, mutate.go).
	Mutate bool

	point *pointRun // a fault sweep's point (sweep.go); nil otherwise
	// standIn, in a Prove run, is the script that stands in for each
	// case's agent (nil: the case is not run, for want of a reference).
	standIn func(j job) []*spec.Turn
}

// workers is how many cases run at once (Concurrency).
func (o *Options) workers() int { return cmp.Or(max(o.Concurrency, 0), DefaultConcurrency) }

// Upstream is real tools a run's cases call instead of their mocks.
type Upstream interface {
	Tools() []plan.Tool
	// For answers the calls of one case, by suite file and case name.
	For(suite, name string) tool.Answerer
}

// Progress receives run events.
type Progress interface {
	Start(total int)
	CaseStarted(index int, suite, name string)
	CaseDone(index int, c *report.Case)
}

// UnsupportedError is a suite the runner cannot run at all.
type UnsupportedError struct {
	Pos yamlpos.Pos
	Msg string
}

func (e *UnsupportedError) Error() string { return e.Pos.String() + ": " + e.Msg }

type job struct {
	suite    *spec.Suite
	plan     *plan.Case // the case's rules, tools, drill, passthrough
	c        *spec.Case
	cassette string    // the case's cassette file (real providers, agent.command)
	id       string    // the case's scope under /cases/ (agent.command)
	trial    int       // the trial (1-based) of a case run several times; 0: once
	trials   int       // how often the case runs, when more than once
	plant    *planting // an injection drill\'s payload (inject.go); nil otherwise
	// script is the turns a stand-in agent's script model answers with
	// (Prove), on the built-in loop whatever the suite's agent; nil: none.
	script []*spec.Turn
}

// interruptedReason is the reason of a case the run never started.
const interruptedReason = "interrupted before it started"

// failFastReason is why a case after a failure is skipped (FailFast).
const failFastReason = "not run: an earlier case did not pass (--fail-fast)"

// Run runs every selected case and returns the report. It returns an
// error, and runs nothing, when a suite cannot be run by this build.
//
// Cases start in report order; once ctx is done, the cases not yet
// started are reported as skipped.
func Run(ctx context.Context, suites []*spec.Suite, opts Options) (*report.Report, error) {
	jobs, err := newJobList(suites, &opts)
	if err != nil {
		return nil, err
	}
	shard, err := partOf(jobs, opts)
	if err != nil {
		return nil, err
	}
	if err := startJournal(jobs, opts); err != nil {
		return nil, err
	}
	lv, err := prepareLive(jobs, opts)
	if err != nil {
		return nil, err
	}
	if opts.Coverage {
		lv.cov = &coverage{suites: map[string]*suiteCoverage{}}
	}
	lv.mutate = opts.Mutate
	if t, ok := lv.transport.(*http.Transport); ok && opts.Live == nil {
		defer t.CloseIdleConnections()
	}
	if needsHost(jobs) {
		port, asked, err := hostPort(jobs, opts)
		if err != nil {
			return nil, err
		}
		h, err := startHost(port, asked)
		if err != nil {
			return nil, err
		}
		defer h.close()
		lv.host = h
	}
	return runPool(ctx, jobs, opts, lv, shard), nil
}

// partOf is the part of the run a shard or a batch is (its jobs cut to
// it), or nil for a whole run.
func partOf(jobs *jobList, opts Options) (*report.Shard, error) {
	switch {
	case opts.Shard != nil && opts.Batch != nil:
		return nil, errors.New("a run is a shard or a batch, not both")
	case opts.Shard != nil:
		return shardJobs(jobs, opts.Shard, opts)
	case opts.Batch != nil:
		return batchJobs(jobs, opts.Batch, opts)
	}
	return nil, nil
}

// startJournal opens the run's journal, if any, on what it runs.
func startJournal(jobs *jobList, opts Options) error {
	j := opts.Journal
	if j == nil {
		return nil
	}
	if j.resume && opts.Coverage {
		return errors.New("a resumed run does not count coverage (the cases of the journal ran before it): run it without --coverage")
	}
	hash, err := suitesHash(jobs, opts)
	if err != nil {
		return err
	}
	return j.start(hash, jobs.n)
}

// trialRuns are the results of a case's trials until its last is done.
type trialRuns struct {
	runs    []report.Case
	left    int  // trials not done
	started bool // Progress heard of the case
	unran   bool // a trial did not run whole (interrupted, --fail-fast)
}

func base(j job) report.Case {
	return report.Case{
		Suite:     j.suite.File,
		Name:      j.c.Name,
		Input:     j.c.Input,
		Checks:    []report.Check{},
		ToolCalls: []report.ToolCall{},
		Notes:     []string{},
	}
}

// runDecoded runs the case of j, decoded first when the suite kept it as
// a stub (spec.Options.Lazy): the decoded case lives as long as its run.
func runDecoded(ctx context.Context, j job, opts Options, lv *live) report.Case {
	if j.c.Lazy() {
		full, err := j.suite.Decode(j.c)
		if err != nil {
			c := base(j)
			c.Status, c.Reason = report.Errored, "decoding the case: "+err.Error()
			return c
		}
		j.c = full
		// The cassette file (j.cassette) was found from the stub.
		j.plan = j.plan.Suite.Case(full)
		if opts.Upstream != nil {
			j.plan = j.plan.WithTools(opts.Upstream.Tools())
		}
	}
	return runCase(ctx, j, opts, lv)
}

func runCase(ctx context.Context, j job, opts Options, lv *live) report.Case {
	start := time.Now()
	c := base(j)
	if opts.standIn != nil && !j.c.Skip {
		if j.script = opts.standIn(j); j.script == nil {
			c.Status, c.Reason = report.Skipped, noReference // (the reason is Prove's to say)
			return c
		}
	} else if skipped(j, &c) {
		return c
	}
	// A drill's world, whoever the agent is: the built-in loop or a
	// program (agent.command) gets one instance with the same setup.
	var drill *world.Instance
	if j.plan.Suite.World != nil {
		in, err := newDrill(j, opts)
		if err != nil {
			c.Status, c.Reason = report.Errored, err.Error()
			c.Verdict = c.Status
			c.DurationMS = float64(time.Since(start).Microseconds()) / 1000
			return c
		}
		drill = in
	}
	if len(j.suite.Agent.Command) > 0 && j.script == nil {
		return runCommand(ctx, j, opts, lv, c, start, drill)
	}
	return runLoop(ctx, j, opts, lv, c, start, drill)
}

// skipped says whether the case is not run (skip:, or a world suite
// without agent), with why in c.
func skipped(j job, c *report.Case) bool {
	switch {
	case j.c.Skip:
		c.Status, c.Reason = report.Skipped, cmp.Or(j.c.SkipReason, "skip: true")
	case j.suite.NoAgent:
		c.Status, c.Reason = report.Skipped, NoAgentReason
	default:
		return false
	}
	return true
}

// runLoop runs a case in the built-in loop: the model (scripted, or real
// through the case's cassette), the tools (the mocks, the drill's world
// or the upstream's), the simulated user; then concludes it.
func runLoop(ctx context.Context, j job, opts Options, lv *live, c report.Case, start time.Time, drill *world.Instance) report.Case {
	m, ep, err := loopModel(j, lv, &c)
	if err != nil {
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
		endDrill(&c, drill)
		return done(c, drill, start)
	}
	sess := tool.NewRecorder(caseAnswerer(j, opts, drill), tool.RecorderOptions{Calls: scriptCalls(j), Fault: opts.point.fault()})
	user, err := newSimUser(j, lv, &c.Notes)
	if err != nil {
		c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
		endDrill(&c, drill)
		return done(c, drill, start)
	}
	var au agent.User
	if user != nil {
		user.act, au = userActs(sess, drill), user
	}
	tr, err := agent.Run(ctx, m, sess, agent.Config{
		User:     au,
		Model:    j.suite.Agent.Model,
		System:   j.suite.Agent.System,
		Input:    j.c.Input,
		Tools:    j.plan.ModelTools,
		Params:   j.suite.Agent.Params,
		MaxTurns: j.plan.Limits.MaxTurns,
	})
	c.Output, c.Turns, c.Usage = tr.Output, tr.Turns, report.Usage(tr.Usage)
	c.Notes = append(c.Notes, tr.Notes...)
	r := ran{recs: sess.Records(), drill: drill, user: user, conv: tr.Conversation}
	opts.point.modelError(err)
	r.err, r.infra = loopError(err)
	if err := sess.Over(); err != nil {
		r.err, r.infra = err, false
	}
	if sc, ok := m.(*model.Script); ok && r.err == nil && opts.point == nil && j.script == nil {
		// (A sweep's point leads the agent another way than every turn.)
		if turns := sc.Unserved(); len(turns) > 0 {
			r.err, r.failed = &model.UnservedError{Turns: turns, Served: sc.Served()}, true
		}
	}
	if ep != nil {
		o := ep.End()
		r.model, r.out = ep, &o
		reportFaults(&c, j.c.ModelFaults, o.Faults)
	}
	conclude(ctx, j, &c, r, &grader{ctx: ctx, lv: lv})
	return done(c, drill, start)
}

// loopModel is the built-in loop's model for a case: the script, or the
// real model behind the case's cassette (none when the case runs
// passthrough code: such a case is never recorded).
func loopModel(j job, lv *live, c *report.Case) (model.Model, *modelserver.Endpoint, error) {
	passthrough := j.plan.UsesImpl
	if passthrough {
		c.Notes = append(c.Notes, NoteNeverRecorded)
	}
	if j.script != nil {
		return model.NewScript(j.script), nil, nil
	}
	if j.suite.Agent.Provider == provider.Script {
		return model.NewScript(j.suite.ScriptOf(j.c)), nil, nil
	}
	if !passthrough {
		c.Cassette = j.cassette
	}
	return realModel(j, passthrough, lv)
}

// scriptCalls is how many tool calls a scripted case's model makes; 0 for
// a real model's.
func scriptCalls(j job) int {
	n, turns := 0, j.script
	if turns == nil && j.suite.Agent.Provider == provider.Script {
		turns = j.suite.ScriptOf(j.c)
	}
	for _, t := range turns {
		n += len(t.ToolCalls)
	}
	return n
}

// caseAnswerer answers the case's tool calls: the upstream's real tools
// (record-tools), else the drill's world, else the case's mocks.
func caseAnswerer(j job, opts Options, drill *world.Instance) tool.Answerer {
	if opts.Upstream != nil {
		return opts.Upstream.For(j.suite.File, j.c.Name)
	}
	if drill != nil {
		return drill
	}
	ms := mock.NewSession(j.plan.Rules, opts.Impl)
	ms.Label = j.c.Name
	return ms
}

// loopError is how the built-in loop's error ends the case: infra unless
// the agent ran out of turns or of script; a cancelled run is
// "interrupted".
func loopError(err error) (error, bool) {
	if err == nil {
		return nil, false
	}
	var mt *agent.MaxTurnsError
	var se *model.ErrScriptExhausted
	infra := !errors.As(err, &mt) && !errors.As(err, &se)
	if errors.Is(err, context.Canceled) {
		err = errors.New("interrupted")
	}
	return err, infra
}

// toolCall is a recorded call as the report shows it; its arguments are
// appended to buf (returned), which they share with the case's other calls.
func toolCall(r *tool.Record, buf []byte) (report.ToolCall, []byte) {
	start := len(buf)
	buf = canonical.Append(buf, r.Args)
	where := ""
	if r.Own {
		where = WhereOwn
	}
	return report.ToolCall{
		Where:    where,
		Actor:    r.Actor,
		Turn:     r.Turn,
		ID:       r.ID,
		Tool:     r.Name,
		Args:     buf[start:len(buf):len(buf)],
		Outcome:  r.Result.Outcome,
		Rule:     r.Result.Rule,
		IsError:  r.Result.IsError,
		Result:   r.Result.Content,
		NearMiss: r.Result.NearMiss,
		Asked:    r.Result.Asked,
	}, buf
}

// WhereOwn is a report's ToolCall.Where of a call the agent ran itself.
const WhereOwn = "own"

// canonical is value.Canonical's form, appended.
var canonical value.Form
