package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type recheckOptions struct {
	runOptions // the report flags (--json, --junit, --html, -v) and --record
}

func newRecheckCommand(e *env) *cobra.Command {
	var o recheckOptions
	cmd := &cobra.Command{
		Use:   "recheck REPORT [flags]",
		Short: "Apply the suites' current checks to a stored run, running nothing",
		Long: `Apply the checks (expect:) the suites have now to the run a JSON report
of dryfire run --json holds: its tool calls, output, turns, conversation
and a drill's final state, evidence and events, as the run left them. No
agent runs, no tool call is answered, no passthrough code starts and no
model is called: edit a check, re-check the last run, and see what it
says now.

A judge check unchanged since the run keeps its verdict from the report.
A judge check that is new or edited is asked through its cassette
(CASE.judge-N.json), replayed only; with --record once (or new, all) its
model is called and recorded, as in a run. A file check reads the
workspace the run kept (--keep-workspaces); without it, an unchanged file
check keeps its stored result and a new or edited one errs its case,
saying that the report does not hold the workspace. A case whose run
ended before its checks, or that was skipped, is as stored; a case the
suite no longer has errs.

The text, the JSON, JUnit and HTML reports are a run's, and say that
they are a re-check: the line before the summary, the report's "recheck"
object (the report re-checked, the cases re-checked, the checks whose
verdict changed, the checks kept), the JUnit testsuites name. Each check
whose verdict changed is a note of its case.

Exit status: as dryfire run's for the re-checked cases: 0 every case
passed; 1 a case failed or erred; 2 a usage error, or a report or suite
that cannot be read (nothing re-checked); 3 a report could not be
written.`,
		Example: `  dryfire run suites/ --json report.json
  dryfire recheck report.json                      # after editing a check
  dryfire recheck report.json --json rechecked.json --junit junit.xml
  dryfire recheck report.json --record once        # ask a new judge check`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				return usageErr("recheck needs the JSON report of a run, e.g. dryfire recheck report.json")
			case len(args) > 1:
				return usageErr("recheck takes one report, got %q", args[1])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecheck(cmd.Context(), e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.jsonOut, "json", "", "write the re-checked JSON report to `FILE`, or to standard output with '-' (the text then goes to standard error)")
	f.StringVar(&o.junitOut, "junit", "", "write the re-checked JUnit XML report to `FILE`")
	f.StringVar(&o.htmlOut, "html", "", "write the re-checked HTML report to `FILE`")
	f.StringVar(&o.record, "record", "", "judge checks that are new or edited since the run: `MODE` none (the default: replay their cassettes only), once (record a judge's call when it has no cassette), new or all, as dryfire run's --record")
	f.BoolVarP(&o.verbose, "verbose", "v", false, "also print the checks of passing cases, each with its message")
	cmd.Flags().StringVar(&e.root, "root", "", "the project root `DIR`: the suites the report names must be inside it (default: the current directory)")
	return cmd
}

func runRecheck(ctx context.Context, e *env, o recheckOptions, args []string) error {
	if err := checkReportFlags(e, o.runOptions); err != nil {
		return err
	}
	if _, err := dryfire.ParseRecordMode(o.record); err != nil && o.record != "" {
		return usageErr("--record %q: want none, once, new or all", o.record)
	}
	data, err := safeio.ReadFile(args[0], "JSON report", safeio.Limit(maxReport))
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("reading the report %s: %w; nothing re-checked", args[0], err)}
	}
	rep, err := dryfire.Recheck(ctx, data, &dryfire.RecheckOptions{Name: args[0], Root: e.root, Record: dryfire.RecordMode(o.record), Env: e.environ()})
	var ds dryfire.Diagnostics
	switch {
	case errors.As(err, &ds):
		printDiagnostics(e, ds)
		return &exitError{code: exitUsage, err: errors.New("the suites of the report do not load; nothing re-checked")}
	case err != nil:
		return &exitError{code: exitUsage, err: fmt.Errorf("%s: %w; nothing re-checked", args[0], err)}
	}
	text := textWriter(e, o.runOptions)
	printer := report.NewText(text, report.TextOptions{Verbose: o.verbose})
	printer.Start(len(rep.Cases))
	live := 0
	for i := range rep.Cases {
		printer.CaseDone(i, &rep.Cases[i])
		live += rep.Cases[i].Live
	}
	rc := rep.Recheck
	ran := "no agent, tool or model ran"
	if live > 0 {
		ran = fmt.Sprintf("no agent or tool ran; %s of judges went live", termtext.Count(live, "model call"))
	}
	fmt.Fprintf(text, "re-checked %s with the suites' checks as they are now: %s, %s changed, %s kept; %s\n",
		termtext.Printable(rc.Report), termtext.Count(rc.Cases, "case"), termtext.Count(rc.Changed, "check"), termtext.Count(rc.Kept, "check"), ran)
	printer.Finish(rep)
	code := runExit(rep)
	if err := writeReports(e, rep, o.runOptions); err != nil {
		fmt.Fprintln(e.stderr, "dryfire:", err)
		if code == exitOK {
			code = exitInfra
		}
	}
	if ctx.Err() != nil {
		return &exitError{code: exitStopped, err: errors.New("interrupted")}
	}
	return exitWith(code, "")
}
