// Package runner runs the cases of loaded suites: each case in isolation
// (its own mock state and model), several at a time, with results in
// suite and case order whatever the scheduling.
package runner

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
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

	point *pointRun // a fault sweep's point (sweep.go); nil otherwise
}

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
	cassette string // the case's cassette file (real providers, agent.command)
	id       string // the case's scope under /cases/ (agent.command)
	trial    int    // the trial (1-based) of a case run several times; 0: once
	trials   int    // how often the case runs, when more than once
}

// live is what the cases of one run share to reach real models.
type live struct {
	mode      cassette.Mode
	getenv    func(string) string
	secrets   []string
	red       redact.Redactor   // of secrets, applied to each case's report
	transport http.RoundTripper // nil in None mode
	env       []string          // the run's environment
	host      *host             // serves agent.command cases; nil when there are none
	templates *templates        // workspace templates, scanned once
	cov       *coverage         // Options.Coverage; nil: not counted
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
	var shard *report.Shard
	if opts.Shard != nil {
		if shard, err = shardJobs(jobs, opts.Shard, opts); err != nil {
			return nil, err
		}
	}
	lv, err := prepareLive(jobs, opts)
	if err != nil {
		return nil, err
	}
	if opts.Coverage {
		lv.cov = newCoverage()
	}
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
	n := opts.Concurrency
	if n < 1 {
		n = DefaultConcurrency
	}
	rep := &report.Report{}
	if !opts.Lean {
		rep.Cases = make([]report.Case, jobs.n)
	}
	// Each case's trials are jobs of their own; a case is started with
	// its first trial and done with its last, as one result. The results
	// of a case's trials are kept until its last is done.
	inTrials := map[int]*trialRuns{}
	runsOf := func(ci, n int) *trialRuns {
		t := inTrials[ci]
		if t == nil {
			t = &trialRuns{runs: make([]report.Case, n), left: n}
			inTrials[ci] = t
		}
		return t
	}
	var mu sync.Mutex // serialises Progress and Sink calls, the trial counts and the results in order
	more := sync.NewCond(&mu)
	progress := func(f func()) {
		if opts.Progress != nil {
			f()
		}
	}
	// Done cases are handed on in report order: to the totals, the shard's
	// infra list, the Sink. A case done before those ahead of it waits in
	// pending; a case more than window places ahead of the first not done
	// does not start (with a Sink), so that pending stays small.
	tot := &report.Totals{}
	pending := map[int]*report.Case{}
	emitted := 0
	emit := func(ci int, c *report.Case) {
		pending[ci] = c
		for {
			c, ok := pending[emitted]
			if !ok {
				break
			}
			delete(pending, emitted)
			tot.Add(c)
			if shard != nil {
				if c.Status == report.Errored && c.Infra {
					shard.Infra = append(shard.Infra, shard.Positions[emitted])
				}
				shard.Live += c.Live
			}
			if opts.Sink != nil {
				opts.Sink(emitted, c)
			}
			emitted++
		}
		more.Broadcast()
	}
	const window = 1024
	progress(func() { opts.Progress.Start(jobs.n) })
	// Workers take the next job by index: no dispatcher goroutine, no
	// hand-off per case.
	var next atomic.Int64
	var failed atomic.Bool // FailFast: a case did not pass
	var wg sync.WaitGroup
	for range min(n, jobs.jobs) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := new(report.Case) // each result, until it is folded (one allocation a worker)
			for {
				i := int(next.Add(1)) - 1
				if i >= jobs.jobs {
					return
				}
				ci, r := jobs.caseOf(i)
				if opts.Sink != nil || opts.Lean {
					mu.Lock()
					for ci >= emitted+window {
						more.Wait()
					}
					mu.Unlock()
				}
				j := jobs.job(i)
				switch {
				case ctx.Err() != nil:
					*res = base(j)
					res.Status, res.Reason = report.Skipped, interruptedReason
				case opts.FailFast && failed.Load():
					*res = base(j)
					res.Status, res.Reason = report.Skipped, failFastReason
				default:
					mu.Lock()
					first := true
					if r.n > 1 {
						t := runsOf(ci, r.n)
						first, t.started = !t.started, true
					}
					if first {
						progress(func() { opts.Progress.CaseStarted(ci, j.suite.File, j.c.Name) })
					}
					mu.Unlock()
					*res = runDecoded(ctx, j, opts, lv)
					if st := res.Status; st == report.Failed || st == report.Errored {
						failed.Store(true)
					}
				}
				lv.red.Walk(res)
				mu.Lock()
				var folded report.Case
				last := r.n == 1
				if last {
					folded = *res
				} else {
					t := runsOf(ci, r.n)
					t.runs[i-r.first] = *res
					if t.left--; t.left == 0 {
						last = true
						folded = foldCase(t.runs, opts.PassThreshold)
						delete(inTrials, ci)
					}
				}
				if last {
					var c *report.Case
					if opts.Lean {
						c = new(report.Case)
						*c = folded
					} else {
						rep.Cases[ci] = folded
						c = &rep.Cases[ci]
					}
					progress(func() { opts.Progress.CaseDone(ci, c) })
					emit(ci, c)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep.Summary = tot.Summary
	rep.Totals = tot
	rep.Shard = shard
	if lv.cov != nil {
		rep.Coverage = lv.cov.report()
		tot.Coverage = rep.Coverage
	}
	return rep, nil
}

// trialRuns are the results of a case's trials until its last is done.
type trialRuns struct {
	runs    []report.Case
	left    int  // trials not done
	started bool // Progress heard of the case
}

// needsHost says whether a case to run is an agent.command program's,
// which a host serves.
// hostPort is the port of the run's host: Options.Port, else the
// agent.port its agent.command suites name (all the same one), else 0 (a
// free port); asked says which, for an error.
func hostPort(jobs *jobList, opts Options) (port int, asked string, err error) {
	if opts.Port > 0 {
		return opts.Port, "dryfire run --port", nil
	}
	var at yamlpos.Pos
	for _, rs := range jobs.suites {
		a := &rs.s.Agent
		if len(a.Command) == 0 || a.Port == 0 {
			continue
		}
		if port != 0 && a.Port != port {
			return 0, "", fmt.Errorf("agent.port: the suites ask for two ports, %d (%s) and %d (%s): one run serves every agent program on one port; give them the same one, or run them apart, or pass dryfire run --port", port, at, a.Port, a.PortPos)
		}
		port, at = a.Port, a.PortPos
	}
	return port, "agent.port", nil
}

func needsHost(jobs *jobList) bool {
	command := false
	for _, rs := range jobs.suites {
		command = command || len(rs.s.Agent.Command) > 0
	}
	for ci := range jobs.n {
		if !command {
			break
		}
		if rs, _ := jobs.at(ci); len(rs.s.Agent.Command) > 0 && !jobs.skipped(ci) {
			return true
		}
	}
	return false
}

// withCommand is a copy of the suite whose agent is the program command
// (Options.Command): the suite's cases, checks and world, another agent.
// The provider stays: script (the cases' scripts answer the program's
// model calls), or the API the program calls.
func withCommand(s *spec.Suite, command []string) *spec.Suite {
	cp := *s
	cp.Agent.Command = command
	cp.ScriptDrills = cp.ScriptDrills || cp.NoAgent
	cp.NoAgent = false
	return &cp
}

func supported(s *spec.Suite) error {
	if s.NoAgent {
		return nil // its drills are skipped
	}
	if len(s.Agent.Command) > 0 {
		switch s.Agent.Provider {
		case "", provider.Script, provider.Anthropic, provider.OpenAI, provider.OpenAIResponses, provider.OpenAICompatible, provider.Gemini:
			return nil
		}
		return &UnsupportedError{Pos: s.Agent.ProviderPos, Msg: fmt.Sprintf("provider %q cannot be used with agent.command", s.Agent.Provider)}
	}
	switch s.Agent.Provider {
	case provider.Script, provider.Anthropic, provider.OpenAI, provider.OpenAIResponses, provider.OpenAICompatible, provider.Gemini:
		return nil
	}
	return &UnsupportedError{Pos: s.Agent.ProviderPos, Msg: fmt.Sprintf("provider %q is not available in this version of dryfire", s.Agent.Provider)}
}

// MissingKeyError lists the cases that need a live model whose key is
// not set: found before the run, which then does not start.
type MissingKeyError struct {
	Mode    cassette.Mode
	Missing []MissingKey
}

// MissingKey is one environment variable that is not set and the cases
// that need it.
type MissingKey struct {
	Env   string
	Cases []string // "SUITE: CASE (why)"
}

// maxListed bounds the cases a MissingKeyError names per key.
const maxListed = 10

func (e *MissingKeyError) Error() string {
	var b strings.Builder
	for i, m := range e.Missing {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s is not set, and %s the live model:", m.Env, map[bool]string{true: "this case needs", false: fmt.Sprintf("these %d cases need", len(m.Cases))}[len(m.Cases) == 1])
		for j, c := range m.Cases {
			if j == maxListed {
				fmt.Fprintf(&b, "\n  … and %d more", len(m.Cases)-maxListed)
				break
			}
			b.WriteString("\n  " + c)
		}
	}
	b.WriteString("\nset it")
	if len(e.Missing) > 1 {
		b.WriteString(" (them)")
	}
	if e.Mode != cassette.None {
		b.WriteString(", or replay only with --record none")
	}
	return b.String()
}

// prepareLive resolves the record mode and the environment, and checks
// before anything runs that every case that will need a live model has
// its key.
func prepareLive(jobs *jobList, opts Options) (*live, error) {
	lv, err := newLive(opts)
	if err != nil {
		return nil, err
	}
	// Credentials in base URLs are secrets too, for the cassettes and the
	// report.
	for k, rs := range jobs.suites {
		if !jobs.selects(k) {
			continue
		}
		lv.secrets = append(lv.secrets, redact.FromURL(rs.s.Agent.BaseURL)...)
		if p := rs.s.Agent.Provider; p != provider.Script {
			lv.secrets = append(lv.secrets, redact.FromURL(lv.getenv(model.BaseURLEnv(p)))...)
		}
	}
	lv.red = redact.New(lv.secrets)
	needsModel := false
	missing := map[string][]string{}
	var order []string
	need := func(j job, keyEnv, why string) {
		if _, ok := missing[keyEnv]; !ok {
			order = append(order, keyEnv)
		}
		missing[keyEnv] = append(missing[keyEnv], j.suite.File+": "+j.c.Name+" ("+why+")")
	}
	for i := range jobs.jobs {
		// A stub has no judge check and no simulated user.
		ci, _ := jobs.caseOf(i)
		if rs, k := jobs.at(ci); rs.s.NoAgent || rs.s.Agent.Provider == provider.Script && len(rs.s.Agent.Command) == 0 && rs.s.Stubbed(k) {
			continue
		}
		j := jobs.job(i)
		if j.c.Skip || j.suite.NoAgent {
			continue
		}
		// A judge check's model, whoever the agent is.
		for _, jd := range judges(j.c) {
			needsModel = true
			keyEnv := model.KeyEnv(jd.Provider)
			if jd.Provider == provider.OpenAICompatible || lv.getenv(keyEnv) != "" {
				continue
			}
			switch file := j.judgeFile(jd); {
			case lv.mode == cassette.All:
				need(j, keyEnv, fmt.Sprintf("judge %d, --record all", jd.Index))
			case lv.mode == cassette.Once:
				if _, err := os.Stat(file); err != nil {
					need(j, keyEnv, "no judge cassette yet: "+file)
				}
			}
		}
		// A model-driven user's model.
		if u := j.c.User; u != nil && u.Model != nil {
			needsModel = true
			keyEnv := model.KeyEnv(u.Model.Provider)
			if u.Model.Provider != provider.OpenAICompatible && lv.getenv(keyEnv) == "" {
				switch file := j.userFile(); {
				case lv.mode == cassette.All:
					need(j, keyEnv, "the simulated user, --record all")
				case lv.mode == cassette.Once:
					if c, err := cassette.Load(file); err != nil || c.User == nil {
						need(j, keyEnv, "no recording of the simulated user yet in "+file)
					}
				}
			}
		}
		p := j.suite.Agent.Provider
		command := len(j.suite.Agent.Command) > 0
		if p == provider.Script {
			continue // its script answers, whoever the agent is
		}
		needsModel = true
		keyEnv := model.KeyEnv(p)
		if command {
			keyEnv = commandKeyMissing(&j.suite.Agent, lv.getenv)
			if keyEnv == "" {
				continue
			}
		} else if p == provider.OpenAICompatible || lv.getenv(keyEnv) != "" {
			continue
		}
		var why string
		switch {
		case j.plan.UsesImpl:
			if lv.mode != cassette.None {
				why = "runs passthrough code, so it always calls the live model"
			}
		case lv.mode == cassette.All:
			why = "--record all"
		case lv.mode == cassette.Once:
			if _, err := os.Stat(j.cassette); err != nil {
				why = "no cassette yet: " + j.cassette
			}
		}
		if why == "" {
			continue
		}
		need(j, keyEnv, why)
	}
	if len(order) > 0 {
		e := &MissingKeyError{Mode: lv.mode}
		for _, env := range order {
			e.Missing = append(e.Missing, MissingKey{Env: env, Cases: missing[env]})
		}
		return nil, e
	}
	if needsModel {
		lv.connect(opts, false)
	}
	return lv, nil
}

// newLive reads the run's environment and record mode.
func newLive(opts Options) (*live, error) {
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	lv := &live{mode: opts.Record, getenv: func(k string) string { return vars[k] }, env: env, templates: &templates{}}
	// Every secret the run knows of, for the cassettes and the report.
	lv.secrets = redact.FromEnv(env)
	lv.red = redact.New(lv.secrets)
	if lv.mode == "" {
		lv.mode = cassette.DefaultMode(lv.getenv)
	}
	if _, err := cassette.ParseMode(string(lv.mode)); err != nil {
		return nil, err
	}
	return lv, nil
}

// connect readies the live side: the transport to real APIs, unless only
// replaying (and not always, for drills that choose their own record
// mode).
func (lv *live) connect(opts Options, always bool) {
	if lv.mode != cassette.None || always {
		lv.transport = opts.Live
		if lv.transport == nil {
			t := http.DefaultTransport.(*http.Transport).Clone()
			t.MaxIdleConnsPerHost = max(opts.Concurrency, DefaultConcurrency)
			lv.transport = t
		}
	}
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
	if skipped(j, &c) {
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
	if len(j.suite.Agent.Command) > 0 {
		return runCommand(ctx, j, opts, lv, c, start, drill)
	}
	return runLoop(ctx, j, opts, lv, c, start, drill)
}

// skipped says whether the case is not run (skip:, or a world suite
// without agent), with why in c.
func skipped(j job, c *report.Case) bool {
	switch {
	case j.c.Skip:
		c.Status = report.Skipped
		c.Reason = j.c.SkipReason
		if c.Reason == "" {
			c.Reason = "skip: true"
		}
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
	m, rec, faults, err := loopModel(j, lv, &c)
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
		au = user
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
	c.Output, c.Turns, c.Usage = tr.Output, tr.Turns, tr.Usage
	c.Notes = append(c.Notes, tr.Notes...)
	r := ran{recs: sess.Records(), drill: drill, user: user, conv: tr.Conversation}
	opts.point.modelError(err)
	r.err, r.infra = loopError(err)
	if rec != nil {
		r.cassette = savingRecorder{rec}
	}
	if faults != nil {
		reportFaults(&c, j.c.ModelFaults, faults.Faults())
	}
	conclude(ctx, j, &c, r, &grader{ctx: ctx, lv: lv})
	return done(c, drill, start)
}

// loopModel is the built-in loop's model for a case: the script, or the
// real model behind the case's cassette (none when the case runs
// passthrough code: such a case is never recorded).
func loopModel(j job, lv *live, c *report.Case) (model.Model, *cassette.Recorder, *modelserver.FaultTransport, error) {
	passthrough := j.plan.UsesImpl
	if passthrough {
		c.Notes = append(c.Notes, NoteNeverRecorded)
	}
	if j.suite.Agent.Provider == provider.Script {
		return model.NewScript(j.c.Script), nil, nil, nil
	}
	if !passthrough {
		c.Cassette = j.cassette
	}
	return realModel(j, passthrough, lv)
}

// scriptCalls is how many tool calls a scripted case's model makes; 0 for
// a real model's.
func scriptCalls(j job) int {
	n := 0
	if j.suite.Agent.Provider == provider.Script {
		for _, t := range j.c.Script {
			n += len(t.ToolCalls)
		}
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

// ran is how the agent's run in a case ended, for judge: what the built-in
// loop and a program (agent.command) have in common.
type ran struct {
	recs  []tool.Record   // the tool calls, in the order they started
	drill *world.Instance // the case's world; nil outside world suites
	// broken is what failed around the agent (its model endpoint could
	// not be made, and it called the model): the case errs there,
	// unjudged, as an infrastructure error.
	broken error
	// replay is a model request that strayed from the recording: the case
	// fails there, unjudged (its checks would judge half a run).
	replay *cassette.ReplayError
	// unplayed are recorded model calls the run left unplayed.
	unplayed *cassette.ReplayError
	live     error // the live API failed
	err      error // the agent's run failed (the case errs)
	infra    bool  // err is the surroundings', not the agent's or the suite's
	failed   bool  // err fails the case (a test's own agent threw) instead
	// workspace is the case's workspace directory, which file checks
	// read ("" when it has none).
	workspace string

	// cassette is the case's cassette once the run is over: the built-in
	// loop's recorder or an agent.command case's endpoint; nil for none.
	cassette cassetteUser
	// user is the case's simulated user (nil: none), conv its
	// conversation (each reply's ModelTurn already a turn).
	user *simUser
	conv []agent.Exchange
	// program says the agent was a program (agent.command): its run is
	// worth a cassette only when the case did not err and the program
	// did not fail (a non-zero exit, a timeout, a call past max_turns, a
	// test's agent that threw: its recording may be cut short), and,
	// unless keepEmpty, when it recorded a model call (a test's drill
	// that recorded nothing leaves no cassette behind: most make none).
	// The built-in loop's is worth one unless the infrastructure failed.
	program, keepEmpty bool
}

// conclude is how every case ends, whoever its agent was: what the
// cassette says of the run, the simulated user's conversation, the
// verdict (judge), then the cassette written when the run finished: not
// one that was interrupted, strayed from its recording, or is not worth
// one (ran.program).
func conclude(ctx context.Context, j job, c *report.Case, r ran, g *grader) {
	if r.cassette != nil {
		r.readCassette(r.cassette, c)
	}
	if r.user != nil {
		save := ctx.Err() == nil && r.replay == nil && !(r.err != nil && r.infra)
		r.user.finish(c, r.conv, &r, save)
	}
	judge(j, c, r, g)
	if g != nil && g.lv != nil && g.lv.cov != nil {
		g.lv.cov.count(j, &r)
	}
	if r.cassette != nil && r.replay == nil && ctx.Err() == nil && r.worthACassette(c) {
		writeCassette(r.cassette, c)
	}
}

// worthACassette says whether a finished run is written (see ran.program).
func (r *ran) worthACassette(c *report.Case) bool {
	if !r.program {
		return !(c.Status == report.Errored && c.Infra)
	}
	_, recorded, _ := r.cassette.Stats()
	return c.Status != report.Errored && !r.failed && (r.keepEmpty || recorded > 0)
}

// judge fills a case's transcript, its drill fields (the drill ended
// first: its final state and evidence), its checks and its status from
// what its run left. The case's output and turns are already set.
//
// g asks the judge checks (nil: the case has none to ask, as in tests).
func judge(j job, c *report.Case, r ran, g *grader) {
	c.ToolCalls = make([]report.ToolCall, len(r.recs))
	unmatched := 0
	args := make([]byte, 0, 48*len(r.recs)) // every call's arguments, one after the other
	for i := range r.recs {
		rec := &r.recs[i]
		c.ToolCalls[i], args = toolCall(rec, args)
		if rec.Result.Outcome == tool.Unmatched {
			unmatched++
		}
		c.Notes = append(c.Notes, rec.Result.Notes...)
	}
	facts := &check.Facts{Calls: r.recs, Output: c.Output, Turns: c.Turns, Workspace: r.workspace, Replies: replies(c), MCP: c.MCP}
	facts.World = endDrill(c, r.drill)
	if r.broken != nil {
		c.Status, c.Reason, c.Infra = report.Errored, r.broken.Error(), true
		return
	}
	if r.replay != nil {
		c.Status, c.Reason, c.Replay = report.Failed, r.replay.Summary(), r.replay.Error()
		return
	}
	if r.live == nil && (r.err == nil || r.failed) {
		v, err := g.verdicts(j, c)
		if err != nil {
			c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
			return
		}
		facts.Verdicts = v
	} else if js := judges(j.c); len(js) > 0 {
		facts.Verdicts = map[int]*check.Verdict{}
		for _, jd := range js {
			facts.Verdicts[jd.Index] = &check.Verdict{Problem: "the agent's run did not finish, so there is nothing to judge"}
		}
	}
	results := check.Evaluate(j.c.Expect, facts)
	failed := 0
	c.Checks = make([]report.Check, len(results))
	for i, res := range results {
		c.Checks[i] = report.Check{Check: res.Check, At: res.At, Passed: res.Passed, Message: res.Message}
		if v := res.Verdict; v != nil {
			jd := j.c.Expect[i].Judge
			c.Checks[i].Judge = &report.Judged{Provider: jd.Provider, Model: jd.Model, Pass: v.Pass, Score: v.Score, Reasoning: v.Reasoning, Cassette: j.judgeFile(jd)}
		}
		if !res.Passed {
			failed++
		}
	}
	switch {
	case r.live != nil:
		c.Status, c.Reason, c.Infra = report.Errored, r.live.Error(), true
	case r.err != nil && r.failed:
		c.Status, c.Reason = report.Failed, r.err.Error()
		if failed > 0 {
			c.Reason += "; " + checksFailed(failed, len(results))
		}
	case r.err != nil:
		c.Status, c.Reason, c.Infra = report.Errored, r.err.Error(), r.infra
	case failed > 0 || unmatched > 0 || r.unplayed != nil:
		unplayed := ""
		if r.unplayed != nil {
			unplayed, c.Replay = r.unplayed.Summary(), r.unplayed.Error()
		}
		c.Status, c.Reason = report.Failed, failReason(failed, len(results), unmatched, unplayed)
	default:
		c.Status = report.Passed
	}
}

// failReason is the reason of a case that failed by its checks, its
// unmatched calls or the recorded calls it left unplayed (unplayed, the
// summary); "" when none did. Recheck reads it back.
func failReason(failed, checks, unmatched int, unplayed string) string {
	var parts []string
	if failed > 0 {
		parts = append(parts, checksFailed(failed, checks))
	}
	if unmatched > 0 {
		parts = append(parts, fmt.Sprintf("%d unmatched tool call(s)", unmatched))
	}
	if unplayed != "" {
		parts = append(parts, unplayed)
	}
	return strings.Join(parts, "; ")
}

func checksFailed(failed, checks int) string {
	return fmt.Sprintf("%d of %d checks failed", failed, checks)
}

// done stamps a finished case: a drill's verdict is its status (set last,
// after the cassette is saved), and the duration.
func done(c report.Case, drill *world.Instance, start time.Time) report.Case {
	if drill != nil {
		c.Verdict = c.Status
	}
	c.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return c
}

// realModel is the model of a case with a real provider: its calls go
// through the case's cassette recorder.
// A case's declared model faults are served by a FaultTransport over the
// recorder, returned when there are any.
func realModel(j job, passthrough bool, lv *live) (model.Model, *cassette.Recorder, *modelserver.FaultTransport, error) {
	a := &j.suite.Agent
	cred := model.Resolve(a.Provider, a.BaseURL, lv.getenv)
	keyEnv, key, base := cred.KeyEnv, cred.Key, cred.BaseURL
	cfg := cassette.Config{
		Mode:        lv.mode,
		File:        j.cassette,
		SuiteFile:   j.suite.File,
		Case:        j.c.Name,
		Provider:    a.Provider,
		Live:        lv.transport,
		Passthrough: passthrough,
		Secrets:     append(slices.Clip(lv.secrets), key),
		Match:       j.suite.MatchRules(j.c),
		Trials:      j.trials,
		DropUser:    !hasModelUser(j.c),
	}
	if key == "" && a.Provider != provider.OpenAICompatible {
		cfg.LiveUnavailable = keyEnv + " is not set"
	}
	rr, err := checkServed(j.cassette, lv.mode)
	if err != nil {
		return nil, nil, nil, err
	}
	if rr != nil {
		cfg.Rerecord, cfg.RecordedBy = rr, "dryfire serve"
	}
	rec, err := cassette.Open(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	retries, timeout := j.plan.Limits.Retries, j.plan.Limits.CallTimeout
	var transport http.RoundTripper = rec
	faults, _ := modelserver.NewFaultTransport(rec, ModelFaults(j.c)).(*modelserver.FaultTransport)
	if faults != nil {
		transport = faults
	}
	m, err := model.New(model.Options{
		Provider: a.Provider,
		Model:    a.Model,
		BaseURL:  base,
		APIKey:   key,
		Params:   a.Params,
		Client:   &http.Client{Transport: transport},
		Retries:  retries,
		Timeout:  timeout,
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return m, rec, faults, nil
}

// cassetteUser is a case's cassette once its agent's run is over: the
// built-in loop's recorder or an agent.command case's model endpoint.
type cassetteUser interface {
	Problem() *cassette.ReplayError
	Failure() error
	Unplayed() *cassette.ReplayError
	Stats() (played, recorded, live int)
	// Finish writes the cassette when the case recorded something, and
	// says whether it did.
	Finish() (bool, error)
}

// savingRecorder is the built-in loop's recorder as a cassetteUser.
type savingRecorder struct{ *cassette.Recorder }

func (r savingRecorder) Finish() (bool, error) { return r.Save() }

// readCassette notes what the cassette says of the run: a request that
// differs from the recording or goes beyond it ends the case (its checks
// would judge half a run), a live call that failed errs it, and recorded
// calls left unplayed fail a case that otherwise finished (r.err nil).
// The case's count of live calls is set too.
func (r *ran) readCassette(cu cassetteUser, c *report.Case) {
	r.replay, r.live = cu.Problem(), cu.Failure()
	if r.replay == nil && r.live == nil && r.err == nil {
		r.unplayed = cu.Unplayed()
	}
	_, _, c.Live = cu.Stats()
}

// writeCassette writes the case's cassette and notes what it recorded;
// a cassette that cannot be written errs the case.
func writeCassette(cu cassetteUser, c *report.Case) {
	wrote, err := cu.Finish()
	if err != nil {
		c.Status, c.Infra = report.Errored, true
		c.Reason = "the case ran, but its cassette could not be saved: " + err.Error()
		return
	}
	if wrote {
		played, recorded, _ := cu.Stats()
		note := fmt.Sprintf("recorded %s into %s", calls(recorded), c.Cassette)
		switch {
		case recorded == 0 && played == 0:
			// An agent.command program that called no model: its
			// cassette says so, for replays without a key.
			note = fmt.Sprintf("recorded no model call into %s: the agent made none (the file lets replays run without a key)", c.Cassette)
		case played > 0:
			note = fmt.Sprintf("recorded %s into %s, after %d replayed", calls(recorded), c.Cassette, played)
		}
		c.Notes = append(c.Notes, note)
	}
}

func calls(n int) string {
	if n == 1 {
		return "1 model call"
	}
	return fmt.Sprintf("%d model calls", n)
}

// toolCall is a recorded call as the report shows it; its arguments are
// appended to buf (returned), which they share with the case's other calls.
func toolCall(r *tool.Record, buf []byte) (report.ToolCall, []byte) {
	start := len(buf)
	buf = canonical.Append(buf, r.Args)
	return report.ToolCall{
		Turn:     r.Turn,
		ID:       r.ID,
		Tool:     r.Name,
		Args:     buf[start:len(buf):len(buf)],
		Outcome:  r.Result.Outcome,
		Rule:     r.Result.Rule,
		IsError:  r.Result.IsError,
		Result:   r.Result.Content,
		NearMiss: r.Result.NearMiss,
	}, buf
}

// canonical is value.Canonical's form, appended.
var canonical value.Form
