package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/report"
)

// compareOptions are the flags of compare, and of run with --baseline.
type compareOptions struct {
	jsonOut, mdOut string
	failOn         string
	slowFactor     float64
	slowMS         float64
}

func newCompareCommand(e *env) *cobra.Command {
	var o compareOptions
	cmd := &cobra.Command{
		Use:   "compare BASE.json NEW.json [flags]",
		Short: "Say what changed from one run to another: regressions, fixes",
		Long: `Compare two JSON reports (dryfire run --json, or dryfire merge --json of a
run's shards): BASE, a run of the main branch say, and NEW, the run of a
change. Cases are paired by suite file and name, their checks by their
text. It prints, by kind of change, each case that changed (by suite,
then name; checks in their order):

  regressed  a case or a check passed in BASE and fails (or errs) in NEW
  fixed      a case or a check failed (or erred) in BASE and passes in NEW
  new        a case, or a check of a case in both, only in NEW
  gone       a case, or a check of a case in both, only in BASE
  skipped    a case that ran in BASE is skipped in NEW
  changed    another change of status: failed and error, skipped in BASE
  flaky      a case whose trials agreed (or that ran once) has trials that
             disagree in NEW
  steady     a flaky case's trials all agree in NEW
  pass-down  fewer of a case's trials pass (pass^1), its status and
             flakiness the same; pass^k is shown beside
  pass-up    more of a case's trials pass, its status and flakiness the same
  slower     a duration outlier: over F times the expected time a trial and
             at least MS over it, the expected time being BASE's times the
             run's median change (so that a slower machine flags nothing)
  faster     under the expected time over F, and at least MS under it

then a line of the counts. --markdown writes the same as GitHub-flavoured
Markdown, for a pull-request comment; on GitHub Actions it is also
appended to the job summary (GITHUB_STEP_SUMMARY). Names from the reports
are escaped in both, so that they show as the text they are.

Run both runs from the same directory: cases are paired by the suite
file's path as the report has it.

Exit status: 0 no change --fail-on counts; 1 a change it counts (by
default a regression; the kinds are said on standard error); 2 a usage
error, or a file that is not a whole run's JSON report (a shard's needs
dryfire merge first).`,
		Example: `  dryfire compare main.json pr.json
  dryfire compare main.json pr.json --markdown comment.md
  dryfire compare main.json pr.json --fail-on regressed,gone,flaky
  dryfire compare main.json pr.json --json - | jq .counts
  dryfire compare main.json pr.json --fail-on none      # report, never fail`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usageErr("compare takes two JSON reports, BASE and NEW, e.g. dryfire compare main.json pr.json; got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompare(e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.jsonOut, "json", "", "write the comparison as JSON to `FILE`, or to standard output with '-' (the text then goes to standard error)")
	f.StringVar(&o.mdOut, "markdown", "", "write the comparison as GitHub-flavoured Markdown to `FILE` (a pull-request comment), or to standard output with '-'")
	addCompareFlags(f, &o)
	return cmd
}

// addCompareFlags adds the flags compare and run --baseline share.
func addCompareFlags(f *pflag.FlagSet, o *compareOptions) {
	f.StringVar(&o.failOn, "fail-on", string(report.ChangeRegressed), "exit 1 when there is a change of one of these `KINDS`, comma-separated: "+strings.Join(kindNames(), ", ")+"; or none, e.g. --fail-on regressed,gone,flaky")
	f.Float64Var(&o.slowFactor, "slower-factor", 2, "a case is slower (faster) when its time a trial is over `F` times (under 1/F of) the expected time: BASE's times the run's median change")
	f.Float64Var(&o.slowMS, "slower-ms", 100, "and at least `MS` milliseconds over (under) it")
}

func kindNames() []string {
	var names []string
	for _, k := range report.ChangeKinds() {
		names = append(names, string(k))
	}
	return names
}

// parseFailOn reads --fail-on: kinds of change, or none.
func parseFailOn(s string) ([]report.ChangeKind, error) {
	if strings.TrimSpace(s) == "none" {
		return nil, nil
	}
	names := kindNames()
	var kinds []report.ChangeKind
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if !slices.Contains(names, part) {
			return nil, usageErr("--fail-on %q: %q is not a kind of change%s; the kinds are %s, or none", s, part, suggest.DidYouMean(part, names), strings.Join(names, ", "))
		}
		if k := report.ChangeKind(part); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
}

// checkCompareFlags checks what compare and run --baseline share.
func checkCompareFlags(o compareOptions) ([]report.ChangeKind, error) {
	if !(o.slowFactor >= 1) {
		return nil, usageErr("--slower-factor is at least 1, got %v", o.slowFactor)
	}
	if !(o.slowMS >= 0) {
		return nil, usageErr("--slower-ms is at least 0, got %v", o.slowMS)
	}
	return parseFailOn(o.failOn)
}

func runCompare(e *env, o compareOptions, args []string) error {
	failOn, err := checkCompareFlags(o)
	if err != nil {
		return err
	}
	text, err := jsonMarkdown(e, o.jsonOut, o.mdOut)
	if err != nil {
		return err
	}
	// What is read stays (both runs' outcomes) while the garbage of
	// decoding is small: the collector's default pace keeps the heap
	// near twice the live one, not Main's five times (GOGC=400).
	if e.getenv("GOGC") == "" {
		debug.SetGCPercent(100)
	}
	// The two reports are read at once, each a case at a time.
	var base, new *report.Outcomes
	var baseErr, newErr error
	var wg sync.WaitGroup
	wg.Go(func() { base, baseErr = readOutcomes(args[0]) })
	new, newErr = readOutcomes(args[1])
	wg.Wait()
	if err := cmp.Or(baseErr, newErr); err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	c, err := report.Compare(base, new, &report.CompareOptions{BaseName: args[0], NewName: args[1], SlowFactor: o.slowFactor, SlowMS: o.slowMS})
	if err != nil {
		return &exitError{code: exitUsage, err: err}
	}
	if err := c.WriteText(text); err != nil {
		return &exitError{code: exitInfra, err: err}
	}
	var errs []error
	if o.jsonOut != "" {
		if err := writeReportWith(e, o.jsonOut, c.WriteJSON); err != nil {
			errs = append(errs, fmt.Errorf("writing the JSON comparison: %w", err))
		}
	}
	if o.mdOut != "" {
		if err := writeReportWith(e, o.mdOut, c.WriteMarkdown); err != nil {
			errs = append(errs, fmt.Errorf("writing the Markdown comparison: %w", err))
		}
	}
	if onGitHub(e) {
		if err := ghAppendSummary(e, c.WriteMarkdown); err != nil {
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		fmt.Fprintln(e.stderr, "dryfire:", err)
	}
	return exitWith(compareExit(c, failOn, len(errs) > 0))
}

// jsonMarkdown checks the --json and --markdown of compare and verify,
// and says where the text goes: standard error when one of them is
// standard output.
func jsonMarkdown(e *env, jsonOut, mdOut string) (io.Writer, error) {
	if jsonOut != "" && jsonOut == mdOut {
		return nil, usageErr("--json and --markdown both write to %s; give each its own file", jsonOut)
	}
	for _, d := range []struct{ flag, dest string }{{"json", jsonOut}, {"markdown", mdOut}} {
		if err := checkDest(d.dest); err != nil {
			return nil, usageErr("--%s %s: %v", d.flag, d.dest, err)
		}
	}
	if jsonOut == "-" || mdOut == "-" {
		return e.stderr, nil
	}
	return e.stdout, nil
}

// exitWith is the error that exits with code, saying why on standard
// error when why is not empty; nil for exitOK.
func exitWith(code int, why string) error {
	switch {
	case code == exitOK:
		return nil
	case why == "":
		return &exitError{code: code}
	}
	return &exitError{code: code, err: errors.New(why)}
}

// readOutcomes reads the outcomes of a whole run's JSON report.
func readOutcomes(path string) (*report.Outcomes, error) {
	f, err := safeio.Open(path, "JSON report", safeio.Limit(maxReport))
	if err != nil {
		return nil, fmt.Errorf("reading the report %s: %w", path, err)
	}
	defer f.Close()
	o, err := report.ReadOutcomes(f)
	if err != nil {
		return nil, fmt.Errorf("%s:%w", path, posError{err})
	}
	if i, n := o.Shard(); n > 0 {
		return nil, fmt.Errorf("%s is the report of shard %d/%d of a run; merge the reports of all its shards first (dryfire merge shard-*.json --json run.json), then compare that", path, i, n)
	}
	return o, nil
}

// posError puts the space before an error that has no position
// ("FILE: message"), none before one that has ("FILE:3:5: message").
type posError struct{ err error }

func (p posError) Error() string {
	if s := p.err.Error(); s == "" || s[0] < '0' || s[0] > '9' {
		return " " + s
	}
	return p.err.Error()
}

func (p posError) Unwrap() error { return p.err }

// ghAppendSummary appends what write writes to the job summary
// (GITHUB_STEP_SUMMARY), when there is one.
func ghAppendSummary(e *env, write func(io.Writer) error) error {
	path := e.getenv("GITHUB_STEP_SUMMARY")
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing the job summary (GITHUB_STEP_SUMMARY): %w", err)
	}
	err = write(f)
	if err == nil {
		_, err = io.WriteString(f, "\n")
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing the job summary (GITHUB_STEP_SUMMARY): %w", err)
	}
	return nil
}
