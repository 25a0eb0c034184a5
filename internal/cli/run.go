package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"time"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/engine"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type runOptions struct {
	filter      string
	concurrency int
	jsonOut     string
	junitOut    string
	htmlOut     string
	verbose     bool
	python      string
	record      string
	seed        int64
	keepWS      bool
	clock       string
	watch       bool
	failFast    bool
	lastFailed  string
	network     string
	port        int
	trials      int
	threshold   float64
	shard       string
	durations   string
	coverage    bool
	coverageMin float64
	mutate      bool
	mutateMin   float64
	baseline    string
	compare     compareOptions
	list        bool   // --list
	cases       string // --cases FILE
	caseList    string // merge --list FILE
	journal     string // --journal FILE
	resume      string // --resume FILE
}

func newRunCommand(e *env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run PATH... [flags]",
		Short: "Validate suites, then run every case and report each one",
		Long: `Validate, then run every case of the suites at PATH.

PATH is a suite file or a directory, searched for *.dryfire.yaml and
*.dryfire.yml files (in lexical order; hidden directories and node_modules
are skipped). If any suite has an error, every problem is printed as
FILE:LINE:COL: message and nothing runs; warnings are printed to standard
error and the run goes on.

Cases run concurrently, each with its own mock state; results never depend
on the order they finish in. On a terminal a status line shows progress and
only cases that did not pass are printed; in a log there is one line per
case, in suite order, with the details of every case that did not pass. The
last line is always "N passed, N failed" (then errors and skipped cases,
when any). NO_COLOR turns colours off.

Real models (anthropic, openai, openai-responses, openai-compatible, gemini,
azure-openai, azure-openai-responses, ollama, bedrock, vertex-gemini,
vertex-anthropic) are called once and recorded: each case's model calls go
into a cassette, cassettes/SUITE/CASE.json beside the suite, which later
runs replay offline. --record says when: none replays only and never opens
a network connection (a case without a cassette is an error); once replays
a case's cassette and records it when there is none; new replays while the
requests match and records the rest; all records everything again. The
default is none when the environment variable CI is set, else once. Keys
come from ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY (or
GOOGLE_API_KEY), AZURE_OPENAI_API_KEY, the AWS credentials (Bedrock) and
GOOGLE_OAUTH_ACCESS_TOKEN (Vertex AI), and are needed only for the calls
that go live; they are never written into a cassette. A
request that differs from its recording fails the case with the differences
and the command that records it again.

Exit status: 0 all cases passed (skipped cases allowed); 1 a case failed,
or erred through the suite or the agent; 2 a spec or usage error, nothing
ran (an API key missing for cases that need the live model, too); 3 only
infrastructure errors (a provider unreachable, a cassette missing in none
mode); 130 interrupted (Ctrl-C: cases not started are reported as
skipped; a second Ctrl-C stops at once).`,
		Example: `  dryfire run examples/quickstart
  dryfire run suites/ --filter 'refund|coupon'       # cases whose name matches
  dryfire run suites/ -j 1                           # one case at a time
  dryfire run suites/ --json report.json --junit junit.xml
  dryfire run suites/ --html report.html             # a page to read
  dryfire run suites/ --json - | jq .summary         # text goes to stderr
  dryfire run suites/ -v                             # show passing checks too
  dryfire run suites/ --record none                  # replay only, offline
  dryfire run s.dryfire.yaml --filter '^a$' --record all  # re-record case a
  dryfire run suites/ --python .venv/bin/python      # for impl: mocks
  dryfire run suites/ --watch                        # again on every change
  dryfire run suites/ --fail-fast -j 1               # stop at the first failure
  dryfire run suites/ --last-failed report.json      # re-run what failed there
  dryfire run suites/ --trials 5 --json r.json      # pass@k, pass^k
  dryfire run suites/ --trials 10 --pass-threshold 0.8  # 8 of 10
  dryfire run suites/ --list --json list.json       # each case's id
  dryfire run suites/ --cases batch.txt --json b.json  # a batch of those ids
  dryfire run suites/ --journal run.journal         # then, if it is cut off:
  dryfire run suites/ --resume run.journal          # only what did not finish`,
		Args: paths,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.watch {
				return runWatch(cmd, e, o, args)
			}
			return runRun(cmd, e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	// A `word` in a usage string names the flag's value in the help.
	f.StringVar(&o.filter, "filter", "", "run only the cases whose name matches the regular expression `RE` (Go RE2 syntax), e.g. --filter 'refund|coupon'; the others are left out of the report")
	f.IntVarP(&o.concurrency, "concurrency", "j", dryfire.DefaultConcurrency, "run `N` cases at once; results never depend on it, e.g. -j 1 to run them one by one")
	f.StringVar(&o.jsonOut, "json", "", "write the JSON report to `FILE`, or to standard output with '-' (the text then goes to standard error), e.g. --json report.json")
	f.StringVar(&o.junitOut, "junit", "", "write a JUnit XML report to `FILE` for CI test tabs, e.g. --junit junit.xml")
	f.StringVar(&o.htmlOut, "html", "", "write an HTML report to `FILE`: one self-contained page (no network) with filters and every case's details, e.g. --html report.html")
	f.StringVar(&o.record, "record", "", "when real models are called: `MODE` none (replay cassettes only, never touch the network), once (replay a case's cassette, record it when missing), new (replay while requests match, record the rest) or all (record everything again); default none when CI is set, else once")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "also print the checks of passing cases, each with its message")
	f.Int64Var(&o.seed, "seed", 0, "world suites: run every drill with seed `N` (over the case's seed: and the world's); recorded in every report")
	f.BoolVar(&o.keepWS, "keep-workspaces", false, "keep the workspace directories (workspace:) of cases that did not pass, instead of removing them; the report says where each is")
	f.StringVar(&o.clock, "clock", "", "agent.command programs read the time as starting at `TIME` (RFC 3339, e.g. 2026-01-02T03:04:05Z), over agent.clock's; sets TZ (agent.clock's zone, else UTC), DRYFIRE_NOW and, where libfaketime is installed, the time of dynamically linked programs")
	f.BoolVar(&o.failFast, "fail-fast", false, "start no case after one that failed or erred; the cases not started are reported as skipped (with -j 1, all those after the first failure)")
	f.StringVar(&o.lastFailed, "last-failed", "", "re-run only the cases that failed or erred in `REPORT`, the --json report of an earlier run (all of them when none did), e.g. --last-failed report.json")
	f.BoolVar(&o.watch, "watch", false, "run, then run again whenever a file under PATH changes (suites, worlds, behaviors, impl modules, cassettes; a change to suite files only re-runs those), until Ctrl-C")
	f.StringVar(&o.network, "network", "", "agent.command programs get `MODE`: isolated (a network of their own where only dryfire answers, under bubblewrap with no capabilities and their own processes; what else they try is reported and fails the case; Linux, as root), sandboxed (isolated, and the filesystem read-only but the workspace and a private /tmp, homes hidden), report (as isolated, but what they try goes through and is only reported) or open, over agent.network's; default isolated when CI is set, else open")
	f.IntVar(&o.port, "port", 0, "serve agent.command programs' model and tool endpoints on loopback port `N` instead of a free one, over agent.port's: for frameworks that put the server's URL into their requests (crewai names MCP tools after it)")
	f.IntVar(&o.trials, "trials", 0, "run every case `N` times (over the trials: of cases and suites), each trial isolated and, with a real model, recorded into its own cassette (CASE.trial-K.json after the first); the report gives passes/N, pass@k and pass^k, and marks flaky cases")
	f.Float64Var(&o.threshold, "pass-threshold", 1, "with trials, a case passes when at least this fraction `F` of its trials pass (above 0, at most 1), e.g. --pass-threshold 0.8; default every trial")
	f.StringVar(&o.shard, "shard", "", "run only part `I/N` of the cases, for N machines sharing a run: a case's part is a stable hash of its suite and name (or see --durations); merge the parts' --json reports with dryfire merge, e.g. --shard 2/3; --shard auto (or auto/N, N the total) reads I and N from the CI's variables (DRYFIRE_SHARD_INDEX and DRYFIRE_SHARD_TOTAL, GitLab, CircleCI, Buildkite, a Kubernetes Indexed Job) and says which")
	f.StringVar(&o.durations, "durations", "", "with --shard, spread the cases so that the shards take about as long, by the durations in the JSON report `FILE` of a previous run, e.g. --durations last-report.json")
	addBatchFlags(f, &o)
	addResumeFlags(f, &o)
	addCoverageFlags(f, &o)
	addBaselineFlags(f, &o)
	addLoadFlags(cmd, e, &o.python)
	return cmd
}

func runRun(cmd *cobra.Command, e *env, o runOptions, args []string) error {
	if o.concurrency < 1 {
		return usageErr("--concurrency must be at least 1, got %d", o.concurrency)
	}
	if err := checkReportFlags(e, o); err != nil {
		return err
	}
	if cmd.Flags().Changed("trials") && (o.trials < 1 || o.trials > dryfire.MaxTrials) {
		return usageErr("--trials must be between 1 and %d, got %d", dryfire.MaxTrials, o.trials)
	}
	if !(o.threshold > 0 && o.threshold <= 1) {
		return usageErr("--pass-threshold is the fraction of its trials a case must pass: above 0 and at most 1, got %v", o.threshold)
	}
	// No --record: the library's default (none when CI is set, else once).
	record := dryfire.RecordMode(o.record)
	if _, err := dryfire.ParseRecordMode(o.record); err != nil && o.record != "" {
		return usageErr("--record %q: want none, once, new or all", o.record)
	}
	if err := checkFilter(o.filter); err != nil {
		return err
	}
	var shard *dryfire.Shard
	if o.shard != "" {
		var err error
		if shard, err = runShard(e, o.shard); err != nil {
			return err
		}
		shard.Build = buildID()
		if o.durations != "" {
			if shard.Durations, err = readReport(o.durations); err != nil {
				return usageErr("--durations: %v; nothing ran", err)
			}
		}
	} else if o.durations != "" && !o.list {
		return usageErr("--durations spreads the cases over shards: give --shard I/N too (or --list, to list each case's expected duration)")
	}
	var seed *int64
	if cmd.Flags().Changed("seed") {
		seed = &o.seed
	}
	var only func(suite, name string) bool
	if o.lastFailed != "" {
		var err error
		if only, err = lastFailed(e, o.lastFailed); err != nil {
			return err
		}
	}
	var batch *dryfire.Batch
	if o.cases != "" {
		if shard != nil {
			return usageErr("--cases runs a batch of the run and --shard a shard of it: give one of them")
		}
		ids, err := readCaseIDs(e, o.cases)
		if err != nil {
			return err
		}
		batch = &dryfire.Batch{IDs: ids, Build: buildID()}
	}
	if o.list {
		if o.journal != "" || o.resume != "" {
			return usageErr("--list runs nothing, so it keeps no journal: give --list without --journal or --resume")
		}
		return runList(cmd, e, o, args, &dryfire.RunOptions{Filter: o.filter, Only: only, Trials: o.trials, PassThreshold: o.threshold, Shard: shard, Batch: batch, Seed: seed})
	}
	bl, err := openBaseline(cmd, o, only)
	if err != nil {
		return err
	}
	text := textWriter(e, o)
	// Cases are kept as stubs and decoded again as they run: with the
	// results streamed, the run's memory does not grow with its cases.
	lo := loadOptions(e, o.python)
	lo.Lazy = true
	p, err := loadWith(e, lo, args, ": nothing ran", true)
	if err != nil {
		return err
	}
	raiseMemoryLimit()
	defer closeProject(e, p)
	width, terminal := e.terminalWidth(text)
	printer := report.NewText(text, report.TextOptions{
		Terminal: terminal,
		Color:    terminal && e.getenv("NO_COLOR") == "",
		Verbose:  o.verbose,
		Width:    width,
	})
	progress := &noneSelected{next: printer}
	ctx := cmd.Context()
	var clock *time.Time
	if o.clock != "" {
		t, err := engine.ParseClock(o.clock)
		if err != nil {
			return usageErr("--clock: %v", err)
		}
		clock = &t
	}
	if o.port < 0 || o.port > 65535 {
		return usageErr("--port is a TCP port, 1 to 65535, not %d", o.port)
	}
	switch o.network {
	case "", "isolated", "sandboxed", "report", "open":
	default:
		return usageErr("--network is isolated, sandboxed, report or open, not %q", o.network)
	}
	ro := &dryfire.RunOptions{Concurrency: o.concurrency, Filter: o.filter, Progress: progress, Record: record, Env: e.environ(), KeepWorkspaces: o.keepWS, Clock: clock, MCPBridge: selfBridge(), Only: only, FailFast: o.failFast, Network: o.network, Port: o.port, Trials: o.trials, PassThreshold: o.threshold, Shard: shard, Batch: batch, Seed: seed}
	if err := coverageOptions(cmd, &o, ro); err != nil {
		return err
	}
	if bl != nil {
		progress.outcomes = &bl.run
	}
	// The JSON and JUnit reports are written while the run goes on, and
	// the run keeps no case's result: its memory does not grow with its
	// cases. The HTML report needs them all, so with --html the run keeps
	// them and the reports are written after it.
	var outs *streamOuts
	if o.htmlOut == "" {
		if outs, err = openStream(e, o); err != nil {
			return &exitError{code: exitInfra, err: fmt.Errorf("%w; nothing ran", err)}
		}
		defer outs.abort()
		ro.Stream = outs.stream
	}
	journal, err := openJournal(e, o)
	if err != nil {
		return err
	}
	ro.Journal = journal
	defer closeJournal(e, journal)
	rep, err := p.Run(ctx, ro)
	if err != nil {
		// A suite this build cannot run, a key missing for cases that
		// need the live model, a journal of another run: nothing ran.
		return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing ran", err)}
	}
	if progress.none && o.filter != "" && (rep.Shard == nil || rep.Shard.Cases == 0) {
		return usageErr("--filter %q matches none of the %s; nothing ran", o.filter, termtext.Count(p.CaseCount(), "case"))
	}
	if progress.none && only != nil && (rep.Shard == nil || rep.Shard.Cases == 0) {
		return usageErr("none of the cases that did not pass in %s is in these suites; nothing ran", o.lastFailed)
	}
	code, why := runExit(rep), ""
	if bl != nil {
		code, why = bl.finish(e, printer, code)
	}
	printer.Finish(rep)
	if msg := coverageShort(rep, o); msg != "" {
		fmt.Fprintln(e.stderr, "dryfire:", msg)
		code = exitFailed
	}
	for _, msg := range mutationShort(rep, o) {
		fmt.Fprintln(e.stderr, "dryfire:", msg)
		code = exitFailed
	}
	if onGitHub(e) {
		ghCases(text, p, rep)
		if err := ghSummary(e, rep); err != nil {
			fmt.Fprintln(e.stderr, "dryfire:", err)
		}
	}
	var errs []error
	if outs != nil {
		errs = outs.finish(rep)
	} else if err := writeReports(e, rep, o); err != nil {
		errs = []error{err}
	}
	if err := closeJournal(e, journal); err != nil {
		errs = append(errs, err)
	}
	for _, err := range errs {
		fmt.Fprintln(e.stderr, "dryfire:", err)
		if code == exitOK {
			code = exitInfra
		}
	}
	if ctx.Err() != nil {
		return &exitError{code: exitStopped, err: errors.New("interrupted; the cases not started are reported as skipped")}
	}
	return exitWith(code, why)
}

// noneSelected passes progress on, except a run of no case at all: that
// is a filter that matched nothing, which is reported as a usage error
// rather than as "0 passed, 0 failed". With run --baseline, outcomes
// gets every case's outcome as the run goes on.
type noneSelected struct {
	next     dryfire.Progress
	none     bool
	outcomes *report.Outcomes
}

func (p *noneSelected) Start(total int) {
	if total == 0 {
		p.none = true
		return
	}
	p.next.Start(total)
}

func (p *noneSelected) CaseStarted(i int, suite, name string) { p.next.CaseStarted(i, suite, name) }

func (p *noneSelected) CaseDone(i int, c *report.Case) {
	if p.outcomes != nil {
		p.outcomes.Put(i, c)
	}
	p.next.CaseDone(i, c)
}

// checkFilter refuses a --filter that is not a valid regular expression.
func checkFilter(filter string) error {
	if _, err := regexp.Compile(filter); err != nil {
		return usageErr("--filter %q is not a valid regular expression: %v", filter, regexpProblem(err))
	}
	return nil
}

// regexpProblem is what is wrong with a regular expression, without the
// "error parsing regexp:" prefix that repeats what the caller says.
func regexpProblem(err error) string {
	var se *syntax.Error
	if errors.As(err, &se) {
		return fmt.Sprintf("%s in %q", se.Code, se.Expr)
	}
	return err.Error()
}

// lastFailed reads the JSON report of an earlier run and selects the cases
// that failed or erred in it; nil (every case) when none did.
func lastFailed(e *env, path string) (func(suite, name string) bool, error) {
	data, err := safeio.ReadFile(path, "report", safeio.Limit(safeio.MaxData))
	if err != nil {
		return nil, usageErr("--last-failed: %v", err)
	}
	var r struct {
		Cases []struct {
			Suite  string `json:"suite"`
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(data, &r); err != nil || r.Cases == nil {
		return nil, usageErr("--last-failed: %s is not the JSON report of a run (--json)", path)
	}
	failed := map[[2]string]bool{}
	for _, c := range r.Cases {
		if c.Status == "failed" || c.Status == "error" {
			failed[[2]string{c.Suite, c.Name}] = true
		}
	}
	if len(failed) == 0 {
		fmt.Fprintf(e.stderr, "no case failed in %s: running them all\n", path)
		return nil, nil
	}
	fmt.Fprintf(e.stderr, "re-running the %s that did not pass in %s\n", termtext.Count(len(failed), "case"), path)
	return func(suite, name string) bool { return failed[[2]string{suite, name}] }, nil
}
