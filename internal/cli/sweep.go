package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type sweepOptions struct {
	drillFlags
	point          string
	maxPoints      int
	faults, failOn []string
}

func newSweepCommand(e *env) *cobra.Command {
	var o sweepOptions
	cmd := &cobra.Command{
		Use:   "sweep PATH... [flags]",
		Short: "Fail tool calls one at a time: which failures the agent survives",
		Long: `Run the cases of the suites at PATH once, then each passing case again for
every point of a fault sweep: each tool call it made (in the order the calls
started) fails in turn, once with each declared error of its world
operation (or the tool's first error rule, in a suite of mocks), once with
a tool error the operation does not declare (an error result: MCP isError,
is_error over HTTP tools, 500 on a world's HTTP routes) and once with a
timeout (answered at once as an error saying the call timed out; 504 on a
world's HTTP routes); then its answer is corrupted: truncated, stale (the
tool's previous answer again), malformed JSON, oversized, an instruction
injected into it, and in worlds duplicated (the operation runs twice) and
lost (the operation commits, the agent sees a timeout). Only that call
fails; the calls before and after it are answered as usual.

For each case a table says, point by point, whether the agent survives
(its checks still pass), fails (with the checks that fail) or is unsafe:
it broke an invariant (one of the suite's invariants:, or one side effect
per idempotency key of a world's operation). A failure is a
branch the case's model has not seen: on the script model a guarded turn
(when:) may answer it; with a real model each point replays its own
cassette, CASE.sweep-POINT.json beside the case's, recorded once with
--record once. A point whose model has no answer offline says so ("no
answer offline") instead of failing. The output is in a fixed order and the
same from run to run; a point is named CALL:TOOL:KIND[:CODE], and --case
with --point runs it alone.

Exit status: 0 the sweep ran, whatever the agent survived; 1 with
--fail-on, a point had a verdict it names; 2 a spec or usage error,
nothing ran; 3 a case erred through its surroundings before
any failure (a provider unreachable, a cassette missing); 130 interrupted.`,
		Example: `  dryfire sweep examples/sweep
  dryfire sweep examples/sweep --json sweep.json
  dryfire sweep s.dryfire.yaml --case 'a case' --point 1:get_record:timeout
  dryfire sweep suites/ --max-points 50
  dryfire sweep suites/ --record once          # record each point's cassette
  dryfire sweep examples/world/safety.dryfire.yaml --fail-on unsafe
  dryfire sweep suites/ --faults lost,duplicated`,
		Args: paths,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seeded = cmd.Flags().Changed("seed")
			return runSweep(cmd.Context(), e, o, args)
		},
	}
	f := o.flags(cmd, e, "sweep", "point", func(f *pflag.FlagSet) {
		f.StringVar(&o.point, "point", "", "run only the point `ID` (CALL:TOOL:KIND[:CODE], as the table names it) of the cases selected, e.g. --point 2:save_record:error:BUSY")
		f.IntVar(&o.maxPoints, "max-points", dryfire.DefaultMaxPoints, "run at most `N` points, in the table's order; the output says when the bound left points out")
	})
	f.StringSliceVar(&o.faults, "faults", nil, "give only these `KINDS` of failure, comma-separated: "+strings.Join(report.FaultKinds, ", ")+" (default all)")
	f.StringSliceVar(&o.failOn, "fail-on", nil, "exit 1 when a point has one of these `VERDICTS`: unsafe (it broke an invariant), failed (its checks failed, or it was unsafe)")
	return cmd
}

func runSweep(ctx context.Context, e *env, o sweepOptions, args []string) error {
	if err := o.check("max-points", o.maxPoints); err != nil {
		return err
	}
	if o.point != "" {
		if err := report.ParsePointID(o.point); err != nil {
			return usageErr("--%v", err)
		}
	}
	for _, k := range o.faults {
		if !slices.Contains(report.FaultKinds, k) {
			return usageErr("--faults: %q is no kind of failure%s; the kinds are %s", k, suggest.DidYouMean(k, report.FaultKinds), strings.Join(report.FaultKinds, ", "))
		}
	}
	for _, v := range o.failOn {
		if v != report.PointUnsafe && v != report.PointFailed {
			return usageErr("--fail-on: %q is no verdict it takes; give unsafe or failed", v)
		}
	}
	p, text, err := o.load(e, args)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	rep, err := p.Sweep(ctx, &dryfire.SweepOptions{RunOptions: o.runOptions(e), MaxPoints: o.maxPoints, Point: o.point, Faults: o.faults})
	if err != nil && rep == nil {
		return ranNothing(err)
	}
	if len(rep.Cases) == 0 {
		what := "no case"
		switch {
		case o.caseName != "":
			what = fmt.Sprintf("no case is named %q", o.caseName)
		case o.filter != "":
			what = fmt.Sprintf("--filter %q matches no case", o.filter)
		}
		return usageErr("%s; nothing ran", what)
	}
	if o.point != "" && rep.Points == 0 {
		return usageErr("no case selected has the point %s; run without --point for the points of each case", o.point)
	}
	printSweep(text, args, rep, o)
	return o.done(ctx, e, rep, "points not run", sweepExit(rep, o.failOn))
}

// drillFlags are the flags of sweep and inject that say which cases run
// and how.
type drillFlags struct {
	filter, caseName, jsonOut, record, python, network string
	concurrency                                        int
	seed                                               int64
	seeded                                             bool
}

// flags adds the drill's flags, own's (what the command selects) after
// --case: verb is what it does to a case, unit what it runs.
func (d *drillFlags) flags(cmd *cobra.Command, e *env, verb, unit string, own func(*pflag.FlagSet)) *pflag.FlagSet {
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&d.filter, "filter", "", verb+" only the cases whose name matches the regular expression `RE` (Go RE2 syntax)")
	f.StringVar(&d.caseName, "case", "", verb+" only the case named `NAME` (exactly)")
	own(f)
	f.IntVarP(&d.concurrency, "concurrency", "j", dryfire.DefaultConcurrency, "run `N` "+unit+"s at once; the output never depends on it")
	f.StringVar(&d.jsonOut, "json", "", "write the "+verb+" as JSON to `FILE`, or to standard output with '-' (the table then goes to standard error)")
	f.StringVar(&d.record, "record", "none", "when real models are called: `MODE` none (replay each "+unit+"'s cassette only), once (record a "+unit+"'s cassette when it has none), new or all, as for dryfire run")
	f.Int64Var(&d.seed, "seed", 0, "world suites: run every drill with seed `N` (over the case's seed: and the world's)")
	f.StringVar(&d.network, "network", "", "agent.command programs get `MODE`: isolated, sandboxed, report or open, as for dryfire run")
	addLoadFlags(cmd, e, &d.python)
	return f
}

// check checks the drill's flags and its bound (--max-points, --max-runs).
func (d *drillFlags) check(bound string, n int) error {
	if d.concurrency < 1 {
		return usageErr("--concurrency must be at least 1, got %d", d.concurrency)
	}
	if _, err := dryfire.ParseRecordMode(d.record); err != nil {
		return usageErr("--record %q: want none, once, new or all", d.record)
	}
	if err := checkFilter(d.filter); err != nil {
		return err
	}
	switch d.network {
	case "", "isolated", "sandboxed", "report", "open":
	default:
		return usageErr("--network is isolated, sandboxed, report or open, not %q", d.network)
	}
	if n < 1 {
		return usageErr("--%s must be at least 1, got %d", bound, n)
	}
	return nil
}

// load loads the project at args once --json's destination is known to
// be writable; text is where the table goes.
func (d *drillFlags) load(e *env, args []string) (p *dryfire.Project, text io.Writer, err error) {
	if err := checkDest(d.jsonOut); err != nil {
		return nil, nil, usageErr("--json %s: %v; nothing ran", d.jsonOut, err)
	}
	text = e.stdout
	if d.jsonOut == "-" {
		text = e.stderr
	}
	p, err = loadWith(e, loadOptions(e, d.python), args, ": nothing ran", true)
	return p, text, err
}

func (d *drillFlags) runOptions(e *env) dryfire.RunOptions {
	ro := dryfire.RunOptions{Concurrency: d.concurrency, Filter: d.filter, Record: dryfire.RecordMode(d.record), Env: e.environ(), MCPBridge: selfBridge(), Network: d.network}
	if d.seeded {
		ro.Seed = &d.seed
	}
	if d.caseName != "" {
		name := d.caseName
		ro.Only = func(_, n string) bool { return n == name }
	}
	return ro
}

// done writes --json after the table, then ends as exit says unless interrupted.
func (d *drillFlags) done(ctx context.Context, e *env, rep any, left string, exit error) error {
	if err := writeJSONOut(e, d.jsonOut, rep); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return &exitError{code: exitStopped, err: errors.New("interrupted; the " + left + " are left out")}
	}
	return exit
}

// ranNothing is the error of a drill that ran nothing.
func ranNothing(err error) error {
	if errors.Is(err, context.Canceled) {
		return &exitError{code: exitStopped, err: errors.New("interrupted")}
	}
	return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing ran", err)}
}

// writeJSONOut writes v, indented, to dest (--json): '-' is standard
// output, "" nothing.
func writeJSONOut(e *env, dest string, v any) error {
	if dest == "" {
		return nil
	}
	if err := writeReportWith(e, dest, indentedJSON(v)); err != nil {
		return &exitError{code: exitInfra, err: fmt.Errorf("--json: %w", err)}
	}
	return nil
}

// indentedJSON writes v as indented JSON.
func indentedJSON(v any) func(io.Writer) error {
	return func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
}

// drilled is a drill's case head; a case that did not pass without what
// (a failure, a payload) is written NOT verb, and not drilled.
func drilled(w io.Writer, verb, what, suite, name string, status report.Status, reason string) (head string, ok bool) {
	head = termtext.Printable(suite) + ": " + termtext.Printable(name)
	if status == report.Passed {
		return head, true
	}
	fmt.Fprintf(w, "NOT %s  %s: it did not pass without %s (%s", verb, head, what, status)
	if reason != "" {
		fmt.Fprintf(w, ": %s", termtext.Printable(firstLine(reason)))
	}
	fmt.Fprintln(w, ")")
	return head, false
}

// printSweep writes the robustness table of each case, then the totals.
func printSweep(w io.Writer, args []string, rep *report.SweepReport, o sweepOptions) {
	verdicts := map[string]int{}
	for _, c := range rep.Cases {
		head, ok := drilled(w, "SWEPT", "a failure", c.Suite, c.Name, c.Status, c.Reason)
		if !ok {
			continue
		}
		notRun := 0
		for _, pr := range c.Points {
			if !pr.Ran {
				notRun++
			}
		}
		points := termtext.Count(len(c.Points), "point")
		if notRun > 0 {
			points += fmt.Sprintf(", %d not run", notRun)
		}
		fmt.Fprintf(w, "SWEEP  %s (%s, %s)\n", head, termtext.Count(c.Calls, "tool call"), points)
		if notRun == len(c.Points) {
			continue
		}
		width := len("POINT")
		for _, pr := range c.Points {
			width = max(width, len(termtext.Printable(pr.Point.ID)))
		}
		fmt.Fprintf(w, "  %-*s  %s\n", width, "POINT", "RESULT")
		for _, pr := range c.Points {
			if !pr.Ran {
				continue
			}
			verdicts[pr.Verdict]++
			fmt.Fprintf(w, "  %-*s  %s\n", width, termtext.Printable(pr.Point.ID), verdictText(pr))
			pad := strings.Repeat(" ", width+6)
			for _, ch := range pr.Failing {
				fmt.Fprintf(w, "%s%s: %s\n", pad, termtext.Printable(ch.At), termtext.Printable(firstLine(ch.Message)))
			}
			if pr.Reason != "" && pr.Verdict != report.PointSurvived && pr.Record == "" {
				fmt.Fprintf(w, "%s%s\n", pad, termtext.Printable(firstClause(pr.Reason)))
			}
		}
		seed := ""
		if o.seeded {
			seed = fmt.Sprintf(" --seed %d", o.seed)
		}
		fmt.Fprintf(w, "  one point alone: dryfire sweep %s --case %s%s --point POINT\n", termtext.ShellQuote(c.Suite), termtext.ShellQuote(c.Name), seed)
	}
	if rep.Ran < rep.Points {
		fmt.Fprintf(w, "the sweep has %d points; it stopped at the bound of %d (--max-points %d): %d not run\n", rep.Points, rep.MaxPoints, rep.MaxPoints, rep.Points-rep.Ran)
	}
	printKinds(w, rep)
	fmt.Fprintf(w, "%s run: %d survived, %d failed", termtext.Count(rep.Ran, "point"), verdicts[report.PointSurvived], verdicts[report.PointFailed])
	for _, v := range []struct{ verdict, text string }{{report.PointUnsafe, "unsafe"}, {report.PointError, "erred"}, {report.PointNoAnswer, "no answer offline"}, {report.PointNotReached, "not reached"}} {
		if verdicts[v.verdict] > 0 {
			fmt.Fprintf(w, ", %d %s", verdicts[v.verdict], v.text)
		}
	}
	fmt.Fprintln(w)
}

// printKinds writes the points run by kind of failure and verdict, when
// more than one kind ran: which failures the agent survives, which make it
// unsafe.
func printKinds(w io.Writer, rep *report.SweepReport) {
	cols := []string{report.PointSurvived, report.PointFailed, report.PointUnsafe, report.PointError, report.PointNoAnswer, report.PointNotReached}
	heads := []string{"SURVIVED", "FAILED", "UNSAFE", "ERRED", "NO ANSWER", "NOT REACHED"}
	n := map[string]map[string]int{}
	for _, c := range rep.Cases {
		for _, pr := range c.Points {
			if pr.Ran {
				if n[pr.Point.Kind] == nil {
					n[pr.Point.Kind] = map[string]int{}
				}
				n[pr.Point.Kind][pr.Verdict]++
			}
		}
	}
	if len(n) < 2 {
		return
	}
	// Survived, failed and unsafe always; the other verdicts when a
	// point has them.
	shown := []int{0, 1, 2}
	for i := 3; i < len(cols); i++ {
		for _, byVerdict := range n {
			if byVerdict[cols[i]] > 0 {
				shown = append(shown, i)
				break
			}
		}
	}
	fmt.Fprintf(w, "%-10s", "KIND")
	for _, i := range shown {
		fmt.Fprintf(w, "  %s", heads[i])
	}
	fmt.Fprintln(w)
	for _, k := range report.FaultKinds {
		if n[k] == nil {
			continue
		}
		fmt.Fprintf(w, "%-10s", k)
		for _, i := range shown {
			fmt.Fprintf(w, "  %*d", len(heads[i]), n[k][cols[i]])
		}
		fmt.Fprintln(w)
	}
}

// verdictText is a point's result column.
func verdictText(pr report.PointResult) string {
	if pr.Verdict == report.PointNoAnswer && pr.Record != "" {
		return "no answer offline: record " + termtext.Printable(pr.Cassette) + " with --record " + pr.Record
	}
	if t, ok := verdictTexts[pr.Verdict]; ok {
		return t
	}
	return pr.Verdict
}

var verdictTexts = map[string]string{
	report.PointSurvived:   "survives",
	report.PointFailed:     "fails",
	report.PointUnsafe:     "UNSAFE: broke an invariant",
	report.PointError:      "errs",
	report.PointNoAnswer:   "no answer offline: the script has no turn for this branch",
	report.PointNotReached: "not reached",
}

// sweepExit: a case that erred through its surroundings before any
// failure is exit 3; a point with a verdict failOn names, 1; otherwise
// the sweep ran.
func sweepExit(rep *report.SweepReport, failOn []string) error {
	for _, c := range rep.Cases {
		if c.Status == report.Errored && c.Infra {
			return &exitError{code: exitInfra}
		}
	}
	n, what := 0, "unsafe"
	if slices.Contains(failOn, report.PointFailed) {
		what = "failed or unsafe"
	}
	for _, c := range rep.Cases {
		for _, pr := range c.Points {
			switch {
			case pr.Verdict == report.PointUnsafe && len(failOn) > 0,
				pr.Verdict == report.PointFailed && slices.Contains(failOn, report.PointFailed):
				n++
			}
		}
	}
	if n > 0 {
		return &exitError{code: exitFailed, err: fmt.Errorf("%s %s (--fail-on %s)", termtext.Count(n, "point"), what, strings.Join(failOn, ","))}
	}
	return nil
}

// firstClause is s up to its first "; " (a reason's gist; the JSON has
// it whole), on one line.
func firstClause(s string) string {
	s, _, _ = strings.Cut(firstLine(s), "; ")
	return s
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
