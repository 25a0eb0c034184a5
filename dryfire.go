// Package dryfire tests LLM agents offline, deterministically and fast.
//
// A suite file (*.dryfire.yaml) declares an agent, the tools it may call,
// deterministic mocks for those tools, and cases with checks. Load reads
// and validates suites; Project.Run runs their cases and returns a Report,
// the same one `dryfire run --json` writes:
//
//	p, err := dryfire.Load(nil, "examples/quickstart")
//	if err != nil {
//		log.Fatal(err) // a Diagnostics lists every problem as FILE:LINE:COL: message
//	}
//	rep, err := p.Run(ctx, nil)
//	fmt.Println(rep.Summary.Passed, rep.Summary.Failed)
//
// The dryfire command is a thin layer over this package.
package dryfire

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/passthrough"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/report"
)

// Project is a set of loaded, valid suites.
type Project struct {
	suites   []*spec.Suite
	worlds   world.Worlds // what its world suites run on
	impl     *passthrough.Runner
	specOpts *spec.Options // how the suites were loaded
	// Warnings found while loading; they do not stop a run.
	Warnings Diagnostics
	// Files are the suite files loaded, in run order.
	Files []string
	// checkOnly: loaded with LoadOptions.CheckOnly, its cases not kept.
	checkOnly bool
}

// errCheckOnly is what a project loaded only to be checked answers when
// asked to run or serve.
var errCheckOnly = errors.New("this project was loaded with CheckOnly (its cases were checked, not kept): load it again without to run or serve it")

// ImplFunc is a Go callable registered under an impl name
// (package.module:function), used instead of Python: it gets the call's
// arguments and returns a JSON-representable value (a string is delivered
// verbatim) or an error, delivered as an error result. It is bounded like
// Python code (timeout_s, default 30 s) and should honour ctx.
type ImplFunc func(ctx context.Context, args map[string]any) (any, error)

// LoadOptions configure Load; nil means the defaults of every field.
type LoadOptions struct {
	// Python is the interpreter that runs impl: mocks; empty means
	// $DRYFIRE_PYTHON, then python3 from PATH. The helper starts only when
	// a suite uses impl, and runs in the current directory, which is on
	// sys.path.
	Python string
	// Dir is the directory the Python helper runs in, first on sys.path;
	// empty means the current directory.
	Dir string
	// Impls are Go callables by impl name; they take precedence over Python.
	Impls map[string]ImplFunc
	// Stderr receives what the Python helper prints to stdout and stderr,
	// each line prefixed "python: "; nil means os.Stderr.
	Stderr io.Writer
	// ImportTimeout bounds importing one impl module while loading
	// (default 60 s).
	ImportTimeout time.Duration
	// Root is the project root: the world files and behavior modules that
	// suites and worlds name must stay inside it, symlinks resolved.
	// Empty means the current directory for the files inside it, and
	// each suite's (or world's) own directory for a file outside it.
	Root string
	// CheckOnly checks every case and counts it without keeping it: the
	// memory of loading does not grow with the number of cases (dryfire
	// validate loads this way). The project reports CaseCount, and
	// cannot run or serve.
	CheckOnly bool
	// Lazy keeps most cases only as a stub once checked (their name,
	// position, skip and trials) and decodes each again when it runs: the
	// memory of a loaded project hardly grows with the detail of its
	// cases. dryfire run loads this way.
	Lazy bool
}

// Load reads the suites at paths: files, or directories searched for
// *.dryfire.yaml and *.dryfire.yml; opts may be nil. When any file has
// errors it returns them all as a Diagnostics (warnings included) and no
// project. A suite that uses impl: has every reference resolved while
// loading: Python modules are imported (which runs their top-level code)
// and each attribute is checked to be callable. Call Close when done with
// the project.
func Load(opts *LoadOptions, paths ...string) (*Project, error) {
	opts = cmp.Or(opts, &LoadOptions{})
	if len(paths) == 0 {
		return nil, fmt.Errorf("loading suites: no paths given")
	}
	files, skipped, err := spec.ExpandSkipping(paths)
	if err != nil {
		return nil, publicError(err)
	}
	stderr := cmp.Or[io.Writer](opts.Stderr, os.Stderr)
	var funcs map[string]passthrough.Func
	if len(opts.Impls) > 0 {
		funcs = make(map[string]passthrough.Func, len(opts.Impls))
		for ref, f := range opts.Impls {
			funcs[ref] = passthrough.Func(f)
		}
	}
	impl := passthrough.New(passthrough.Options{Python: opts.Python, Dir: opts.Dir, Stderr: stderr, Funcs: funcs})
	importTimeout := opts.ImportTimeout
	if importTimeout <= 0 {
		importTimeout = 60 * time.Second
	}
	resolve := func(ref string) error {
		ctx, cancel := context.WithTimeout(context.Background(), importTimeout)
		defer cancel()
		err := impl.Resolve(ctx, ref)
		if ctx.Err() != nil {
			return fmt.Errorf("importing it did not finish within %s s", strconv.FormatFloat(importTimeout.Seconds(), 'f', -1, 64))
		}
		return err
	}
	so := &spec.Options{ResolveImpl: resolve, Root: opts.Root, Discard: opts.CheckOnly, Lazy: opts.Lazy}
	suites, worlds, ds := world.LoadFiles(files, so, opts.Root)
	for _, sk := range skipped {
		dir, why := spec.SplitSkipped(sk)
		ds = append(ds, yamlpos.Diagnostic{Pos: yamlpos.Pos{File: dir, Line: 1, Col: 1}, Severity: yamlpos.Warning,
			Message: "this directory cannot be read (" + why + "): the suites in it, if any, were not loaded"})
	}
	if ds.HasErrors() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		impl.Close(ctx, nil)
		return nil, diagnosticsOf(ds)
	}
	return &Project{suites: suites, worlds: worlds, impl: impl, specOpts: so, Warnings: diagnosticsOf(ds), Files: files, checkOnly: opts.CheckOnly}, nil
}

// Close ends the project's passthrough code: the Python helper, if one
// started, exits once its calls have returned. When calls are still
// running (a wedged sync call past its bound), Close says so on w and
// waits until they return or ctx is done; then it abandons them.
func (p *Project) Close(ctx context.Context, w io.Writer) error {
	return p.impl.Close(ctx, w)
}

// CaseCount is the number of cases in the project.
func (p *Project) CaseCount() int {
	n := 0
	for _, s := range p.suites {
		n += s.Len() + s.Discarded
	}
	return n
}

// CasePos is where the case named name of the suite file suite (as in a
// CaseResult) is written, or a zero Pos when there is no such case.
func (p *Project) CasePos(suite, name string) Pos {
	for _, s := range p.suites {
		if s.File != suite {
			continue
		}
		if c := s.CaseNamed(name); c != nil {
			return Pos{File: c.Pos.File, Line: c.Pos.Line, Col: c.Pos.Col}
		}
	}
	return Pos{}
}

// MaxTrials bounds RunOptions.Trials and a suite's trials:.
const MaxTrials = 1000

// RunOptions control Project.Run; nil means the defaults of every field.
type RunOptions struct {
	// Concurrency is how many cases run at once (default 8). Results do
	// not depend on it.
	Concurrency int
	// Filter, a regular expression, selects cases by name.
	Filter string
	// Progress hears about cases as they start and finish.
	Progress Progress
	// Record says when the model calls of real providers are recorded
	// into cassettes and when they are replayed; empty means RecordNone
	// when the environment variable CI is set, else RecordOnce.
	Record RecordMode
	// Env is the environment (KEY=VALUE) that API keys
	// (ANTHROPIC_API_KEY, OPENAI_API_KEY), base URLs (ANTHROPIC_BASE_URL,
	// OPENAI_BASE_URL), CI and the secrets never written into a cassette
	// are read from; nil means os.Environ(). It is also the environment
	// an agent.command program runs in, with its keys and base URLs
	// replaced by dryfire's.
	Env []string
	// Seed, when set, is the seed of every drill of a world suite (over
	// the case's seed: and the world's).
	Seed *int64
	// KeepWorkspaces keeps the workspace directories (workspace:) of the
	// cases that did not pass; the report says where each is.
	KeepWorkspaces bool
	// Clock, when set, is the time agent.command programs start from
	// (over agent.clock's; see docs/agents.md, "A clock for agent programs").
	Clock *time.Time
	// MCPBridge, when set, is the command that runs `dryfire mcp-bridge`
	// (e.g. ["/usr/local/bin/dryfire", "mcp-bridge"]): agent.command
	// programs get it with their case's MCP URL as DRYFIRE_MCP_COMMAND
	// and DRYFIRE_MCP_ARGV. dryfire run sets its own executable.
	MCPBridge []string
	// Only, when set, runs only the cases it accepts (after Filter), by
	// suite file and name as in a CaseResult: how --last-failed re-runs
	// the cases a report says did not pass.
	Only func(suite, name string) bool
	// FailFast starts no case after one that failed or erred: the cases
	// not started are reported as skipped. With Concurrency 1 these are
	// all the cases after the first failure.
	FailFast bool
	// Network, when set ("isolated", "sandboxed", "report" or "open"), is the network of every
	// agent.command program, over agent.network's (see docs/agents.md, "A
	// closed network for agent programs").
	Network string
	// Port, when above 0, is the loopback port agent.command programs
	// reach the run on, over agent.port's (docs/agents.md, "A fixed
	// port").
	Port int
	// Trials, when above 0, runs every case that many times (over the
	// trials: of cases and suites), each trial isolated and, with a real
	// model, recorded into a cassette of its own.
	Trials int
	// PassThreshold is the fraction of its trials a case must pass to
	// pass (0 < PassThreshold <= 1); 0 means every trial.
	PassThreshold float64
	// Shard, when set, runs one part of the selected cases; the report
	// says which (Report.Shard), and report.Merge joins the parts' reports.
	Shard *Shard
	// Journal, when set, keeps every case as it finishes; a journal opened
	// to resume gives the cases it holds finished instead of running them
	// again (OpenJournal). The report is the same as an uninterrupted
	// run's. Close it after the run.
	Journal *Journal
	// Batch, when set, runs only the cases with its ids (after Filter and
	// Only): one batch of a run that a scheduler splits as it likes; the
	// report says which part of the run it is (Report.Shard, with Batch),
	// and report.Merge joins the batches' reports. Not with Shard.
	Batch *Batch
	// Stream, when set, gets every case's result as the run goes on and
	// writes the reports with it; the Report the run returns then holds
	// only the cases the stream keeps (ReportStream.Keep) and the summary
	// (and shard) of all of them. Call the stream's Close with it.
	Stream *report.Stream
	// Coverage counts what the cases exercised of their suites' mock
	// rules, sequence entries and worlds: Report.Coverage.
	Coverage bool
	// Mutate applies each passing case's checks again to its transcript
	// mutated, offline (CaseResult.Mutation, Report.Mutation).
	Mutate bool
}

// Shard is one part of a run shared by several processes (CI machines):
// together the Count shards run every selected case once.
type Shard struct {
	Index, Count int // 1 <= Index <= Count
	// Durations, when set, is a previous run's report: its cases'
	// durations spread the cases so that the shards take about as long
	// (cases it lacks count as its mean). Without it a case's shard is a
	// hash of its suite file and name.
	Durations *report.Report
	// Build identifies the dryfire that runs the shard; shards of
	// different builds do not merge. The CLI gives its version, VCS
	// revision and Go version.
	Build string
}

// RecordMode says when model calls are recorded into cassettes (one file
// per case, under cassettes/ beside the suite) and when replayed.
type RecordMode string

// Record modes.
const (
	// RecordNone replays only and never opens a network connection; a
	// case without a cassette is an error.
	RecordNone RecordMode = "none"
	// RecordOnce replays a case's cassette when it exists, else records it.
	RecordOnce RecordMode = "once"
	// RecordNew replays the recorded calls while they match and records
	// the rest live, updating the cassette.
	RecordNew RecordMode = "new"
	// RecordAll records every call live and overwrites the cassettes.
	RecordAll RecordMode = "all"
)

// ParseRecordMode reads a record mode by name: none, once, new or all.
func ParseRecordMode(s string) (RecordMode, error) {
	m, err := cassette.ParseMode(s)
	return RecordMode(m), err
}

// Progress receives run events; calls are serialised.
type Progress interface {
	Start(total int)
	CaseStarted(index int, suite, name string)
	CaseDone(index int, c *report.Case)
}

// Run runs the project's cases. The error is for a run that could not
// start (a bad filter or record mode, a provider this build cannot run, an
// API key missing for cases that need the live model); failing cases are
// in the report, not in the error.
func (p *Project) Run(ctx context.Context, opts *RunOptions) (*report.Report, error) {
	return p.run(ctx, opts, nil)
}

// run runs the project's cases, their tools answered by up when it is
// not nil (RecordTools).
func (p *Project) run(ctx context.Context, opts *RunOptions, up runner.Upstream) (*report.Report, error) {
	opts = cmp.Or(opts, &RunOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.runnerOptions(opts, up)
	if err != nil {
		return nil, err
	}
	var kept []report.Case // a streamed run's cases that did not pass, up to Stream.Keep
	if s := opts.Stream; s != nil {
		ro.Lean = true
		ro.Sink = func(_ int, c *report.Case) {
			s.Add(c)
			if (c.Status == report.Failed || c.Status == report.Errored) && len(kept) < s.Keep {
				kept = append(kept, *c)
			}
		}
	}
	rep, err := runner.Run(ctx, p.suites, ro)
	if err != nil {
		return nil, err
	}
	rep.Cases = append(rep.Cases, kept...)
	return rep, nil
}

// runnerOptions are the runner's options of a run (or a list) with opts,
// its tools answered by up when it is not nil, checked.
func (p *Project) runnerOptions(opts *RunOptions, up runner.Upstream) (runner.Options, error) {
	ro := runner.Options{Concurrency: opts.Concurrency, Progress: opts.Progress, Impl: p.impl, Record: cassette.Mode(opts.Record), Env: opts.Env, Seed: opts.Seed, KeepWorkspaces: opts.KeepWorkspaces, Clock: opts.Clock, MCPBridge: opts.MCPBridge, Only: opts.Only, FailFast: opts.FailFast, Network: opts.Network, Port: opts.Port,
		Trials: opts.Trials, PassThreshold: opts.PassThreshold, Upstream: up, Worlds: p.worlds, Coverage: opts.Coverage, Mutate: opts.Mutate}
	if opts.Trials < 0 || opts.Trials > runner.MaxTrials {
		return ro, fmt.Errorf("trials must be between 1 and %d, not %d", runner.MaxTrials, opts.Trials)
	}
	if sh := opts.Shard; sh != nil {
		if sh.Count < 1 || sh.Index < 1 || sh.Index > sh.Count || sh.Count > report.MaxShards {
			return ro, fmt.Errorf("shard %d/%d: want I/N with 1 <= I <= N <= %d", sh.Index, sh.Count, report.MaxShards)
		}
		ro.Shard = &runner.Shard{Index: sh.Index, Count: sh.Count, Build: sh.Build}
		if sh.Durations != nil {
			ro.Shard.Durations = map[string]float64{}
			for _, c := range sh.Durations.Cases {
				ro.Shard.Durations[runner.CaseKey(c.Suite, c.Name)] = c.DurationMS
			}
		}
	}
	if b := opts.Batch; b != nil {
		if opts.Shard != nil {
			return ro, errors.New("a run is a shard (Shard) or a batch (Batch), not both")
		}
		ro.Batch = &runner.Batch{IDs: b.IDs, Build: b.Build}
	}
	if opts.Journal != nil {
		ro.Journal = opts.Journal.j
	}
	if opts.PassThreshold < 0 || opts.PassThreshold > 1 {
		return ro, fmt.Errorf("the pass threshold is a fraction of the trials, above 0 and at most 1, not %v", opts.PassThreshold)
	}
	if opts.Filter != "" {
		re, err := regexp.Compile(opts.Filter)
		if err != nil {
			return ro, fmt.Errorf("invalid filter %q: %w", opts.Filter, err)
		}
		ro.Filter = re
	}
	return ro, nil
}
