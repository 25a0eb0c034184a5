package cli

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire/report"
)

// addBaselineFlags adds run's --baseline and the flags it shares with
// compare.
func addBaselineFlags(f *pflag.FlagSet, o *runOptions) {
	f.StringVar(&o.baseline, "baseline", "", "compare the run with the JSON report `FILE` of an earlier run (of the main branch, say), as dryfire compare does, printed before the last line; the run then fails on what --fail-on counts (by default a regression), not on cases that fail as they failed there, e.g. --baseline main.json")
	addCompareFlags(f, &o.compare)
}

// baseline is run's --baseline: the earlier run, and this run's
// outcomes as its cases are done.
type baseline struct {
	path   string
	opts   compareOptions
	failOn []report.ChangeKind
	base   *report.Outcomes
	run    report.Outcomes
}

// openBaseline reads --baseline before the run (nil without it): only its
// cases this run selects (--filter, --last-failed) count.
func openBaseline(cmd *cobra.Command, o runOptions, only func(suite, name string) bool) (*baseline, error) {
	if o.baseline == "" {
		for _, name := range []string{"fail-on", "slower-factor", "slower-ms"} {
			if cmd.Flags().Changed(name) {
				return nil, usageErr("--%s is a rule of the comparison with a baseline: give --baseline FILE too", name)
			}
		}
		return nil, nil
	}
	if o.shard != "" || o.cases != "" {
		return nil, usageErr("--baseline compares a whole run, not a shard or a batch: merge the parts' reports (dryfire merge), then dryfire compare the baseline with that")
	}
	failOn, err := checkCompareFlags(o.compare)
	if err != nil {
		return nil, err
	}
	base, err := readOutcomes(o.baseline)
	if err != nil {
		return nil, usageErr("--baseline: %v; nothing ran", err)
	}
	// A baseline with a case twice is refused now, not after the run.
	if _, err := report.Compare(base, &report.Outcomes{}, &report.CompareOptions{BaseName: o.baseline}); err != nil {
		return nil, usageErr("--baseline: %v; nothing ran", err)
	}
	var re *regexp.Regexp
	if o.filter != "" {
		re = regexp.MustCompile(o.filter) // checked before
	}
	if re != nil || only != nil {
		base.Keep(func(suite, name string) bool {
			return (re == nil || re.MatchString(name)) && (only == nil || only(suite, name))
		})
	}
	return &baseline{path: o.baseline, opts: o.compare, failOn: failOn, base: base}, nil
}

// finish compares the run with the baseline, prints the comparison
// before the run's last lines (and appends it to the job summary on
// GitHub Actions), and says the run's exit code (baselineExit) and why.
func (b *baseline) finish(e *env, printer *report.Text, run int) (int, string) {
	c, err := report.Compare(b.base, &b.run, &report.CompareOptions{BaseName: b.path, NewName: "this run", SlowFactor: b.opts.slowFactor, SlowMS: b.opts.slowMS})
	if err != nil {
		// This run has a case twice: it cannot.
		fmt.Fprintln(e.stderr, "dryfire: comparing with the baseline:", err)
		return run, ""
	}
	var text strings.Builder
	text.WriteString("\n")
	c.WriteText(&text)
	text.WriteString("\n")
	printer.Print(text.String())
	if onGitHub(e) {
		if err := ghAppendSummary(e, c.WriteMarkdown); err != nil {
			fmt.Fprintln(e.stderr, "dryfire:", err)
		}
	}
	return baselineExit(run, c, b.failOn)
}
