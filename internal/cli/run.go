package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/atomicfile"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/runner"
)

var cobraNoArgs = cobra.NoArgs

type runOptions struct {
	filter      string
	concurrency int
	jsonOut     string
	junitOut    string
	verbose     bool
}

func newRunCommand(e *env) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run PATH...",
		Short: "Run suites and report each case",
		Long: `Validate, then run every case of the suites at PATH.

PATH is a suite file or a directory, searched for *.dryfire.yaml and
*.dryfire.yml files. Cases run concurrently, each with its own mock state;
results never depend on the order they finish in. On a terminal a status
line shows progress and only cases that did not pass are printed; in a log
there is one line per case, in suite order. The last line is always
"N passed, N failed" (then errors and skipped cases, when any).
NO_COLOR turns colours off.

Exit status: 0 all cases passed; 1 a case failed (or erred through the
suite or the agent); 2 a spec or usage error, nothing ran; 3 only
infrastructure errors; 130 interrupted.`,
		Example: `  dryfire run examples/quickstart
  dryfire run suites/ --filter 'refund' --concurrency 16
  dryfire run suites/ --json report.json --junit junit.xml
  dryfire run suites/ --json - | jq .summary`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, e, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.filter, "filter", "", "run only cases whose name matches this regular expression, e.g. --filter 'refund|coupon'")
	f.IntVarP(&o.concurrency, "concurrency", "j", runner.DefaultConcurrency, "how many cases run at once, e.g. -j 1 to run them one by one")
	f.StringVar(&o.jsonOut, "json", "", "write the JSON report to FILE, or to standard output with '-' (then the text output goes to standard error)")
	f.StringVar(&o.junitOut, "junit", "", "write a JUnit XML report to FILE, for CI test tabs, e.g. --junit junit.xml")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print the checks of passing cases too")
	return cmd
}

func runRun(cmd *cobra.Command, e *env, o runOptions, args []string) error {
	if o.concurrency < 1 {
		return usageErr("--concurrency must be at least 1, got %d", o.concurrency)
	}
	if o.jsonOut == "-" && o.junitOut == "-" {
		return usageErr("--json and --junit cannot both write to standard output")
	}
	text := e.stdout
	if o.jsonOut == "-" {
		text = e.stderr
	}
	p, err := dryfire.Load(args...)
	var ds dryfire.Diagnostics
	switch {
	case errors.As(err, &ds):
		for _, d := range ds {
			fmt.Fprintln(e.stderr, d)
		}
		errs, warns := ds.Count()
		fmt.Fprintf(e.stderr, "%s, %s: nothing ran\n", count(errs, "error"), count(warns, "warning"))
		return &exitError{code: report.ExitUsage}
	case err != nil:
		return &exitError{code: report.ExitUsage, err: err}
	}
	for _, d := range p.Warnings {
		fmt.Fprintln(e.stderr, d)
	}
	terminal := isTerminal(text)
	printer := dryfire.NewTextPrinter(text, dryfire.TextOptions{
		Terminal: terminal,
		Color:    terminal && e.getenv("NO_COLOR") == "",
		Verbose:  o.verbose,
	})
	ctx := cmd.Context()
	rep, err := p.Run(ctx, dryfire.RunOptions{Concurrency: o.concurrency, Filter: o.filter, Progress: printer})
	if err != nil {
		return &exitError{code: report.ExitUsage, err: err}
	}
	printer.Finish(rep)
	if err := writeReports(e, rep, o); err != nil {
		return &exitError{code: report.ExitInfra, err: err}
	}
	if ctx.Err() != nil {
		return &exitError{code: report.ExitStopped, err: errors.New("interrupted")}
	}
	if code := rep.ExitCode(); code != 0 {
		return &exitError{code: code}
	}
	return nil
}

func writeReports(e *env, rep *dryfire.Report, o runOptions) error {
	write := func(dest string, render func() ([]byte, error)) error {
		data, err := render()
		if err != nil {
			return err
		}
		if dest == "-" {
			_, err := e.stdout.Write(data)
			return err
		}
		return atomicfile.Write(dest, data, 0o644)
	}
	if o.jsonOut != "" {
		if err := write(o.jsonOut, rep.JSON); err != nil {
			return fmt.Errorf("writing the JSON report: %w", err)
		}
	}
	if o.junitOut != "" {
		if err := write(o.junitOut, rep.JUnit); err != nil {
			return fmt.Errorf("writing the JUnit report: %w", err)
		}
	}
	return nil
}
