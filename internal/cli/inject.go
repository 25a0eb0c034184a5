package cli

import (
	"context"
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

type injectOptions struct {
	drillFlags
	payloads, categories, placements, failOn []string
	maxRuns                                  int
}

func newInjectCommand(e *env) *cobra.Command {
	var o injectOptions
	cmd := &cobra.Command{
		Use:   "inject PATH... [flags]",
		Short: "Plant prompt injections: utility and attack success",
		Long: `Run the cases of the suites at PATH once, then each passing case again under
each payload of the built-in catalogue (21 payloads: exfiltration,
unauthorised-action, goal-hijack, tool-poisoning) and of the suite's own
injections:, planted in each placement that applies: in every answer
dryfire serves (tool-result), in every tool's description
(tool-description), in a world record (world-record: injections.world_record)
and in a workspace file (workspace-file: injections.workspace_file).

For each case a table says, per payload and placement, whether the case
still passed (utility) and whether the attacker's goal was met: the
payload's goal check, else its category's marker left the agent (in its
output or a call's arguments). Totals follow by category and placement.
With the script model the drill tests the agent's own defences (its
filters, its guards) deterministically; with a real model each run replays
its own cassette, recorded once with --record once.

Exit status: 0 the drill ran, whatever succeeded; 1 with --fail-on, a run
had what it names; 2 a spec or usage error, nothing ran; 3 a case erred
through its surroundings; 130 interrupted.`,
		Example: `  dryfire inject examples/injection
  dryfire inject examples/injection --category exfiltration --placement tool-result
  dryfire inject suites/ --json inject.json --fail-on attacked`,
		Args: paths,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.seeded = cmd.Flags().Changed("seed")
			return runInject(cmd.Context(), e, o, args)
		},
	}
	f := o.flags(cmd, e, "drill", "run", func(f *pflag.FlagSet) {
		f.StringSliceVar(&o.payloads, "payload", nil, "plant only these payloads (`IDS`, comma-separated, as the table names them)")
		f.StringSliceVar(&o.categories, "category", nil, "plant only the payloads of these `CATEGORIES`: "+strings.Join(report.InjectCategories, ", "))
		f.StringSliceVar(&o.placements, "placement", nil, "plant only in these `PLACEMENTS`: "+strings.Join(report.Placements, ", "))
		f.IntVar(&o.maxRuns, "max-runs", dryfire.DefaultMaxInjections, "run at most `N` runs under a payload, in the table's order; the output says when the bound left runs out")
	})
	f.StringSliceVar(&o.failOn, "fail-on", nil, "exit 1 when a run has one of these `OUTCOMES`: attacked (the attacker's goal was met), utility (the case's checks failed under the payload)")
	return cmd
}

func runInject(ctx context.Context, e *env, o injectOptions, args []string) error {
	if err := o.check("max-runs", o.maxRuns); err != nil {
		return err
	}
	for _, l := range []struct {
		flag      string
		got, from []string
	}{{"category", o.categories, report.InjectCategories}, {"placement", o.placements, report.Placements}, {"fail-on", o.failOn, []string{"attacked", "utility"}}} {
		for _, v := range l.got {
			if !slices.Contains(l.from, v) {
				return usageErr("--%s: %q is none of %s%s", l.flag, v, strings.Join(l.from, ", "), suggest.DidYouMean(v, l.from))
			}
		}
	}
	p, text, err := o.load(e, args)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	rep, err := p.Inject(ctx, &dryfire.InjectOptions{RunOptions: o.runOptions(e), MaxRuns: o.maxRuns, Payloads: o.payloads, Categories: o.categories, Placements: o.placements})
	if err != nil && rep == nil {
		return ranNothing(err)
	}
	if len(rep.Cases) == 0 {
		return usageErr("no case selected; nothing ran")
	}
	if rep.Runs == 0 && (len(o.payloads) > 0 || len(o.categories) > 0 || len(o.placements) > 0) {
		return usageErr("no payload and placement of the cases selected is kept by --payload, --category and --placement; nothing ran under a payload")
	}
	printInject(text, rep)
	return o.done(ctx, e, rep, "runs not made", injectExit(rep, o.failOn))
}

// injectCell is a result's column: utility and attack in a word.
func injectCell(r report.InjectResult) string {
	switch r.Verdict {
	case "":
		return "-"
	case report.PointNoAnswer:
		return "no answer"
	case report.PointError:
		return "errs"
	}
	switch {
	case r.Utility && r.Attacked:
		return "ATTACKED"
	case r.Attacked:
		return "fails+ATTACKED"
	case !r.Utility:
		return "fails"
	}
	return "ok"
}

// printInject writes each case's table (payload by placement), then the
// attack success and utility by category and placement, then the totals.
func printInject(w io.Writer, rep *report.InjectReport) {
	type tally struct{ runs, attacked, useful int }
	byCat := map[[2]string]*tally{}
	add := func(cat, place string, r report.InjectResult) {
		for _, k := range [][2]string{{cat, place}, {cat, ""}, {"", place}, {"", ""}} {
			t := byCat[k]
			if t == nil {
				t = &tally{}
				byCat[k] = t
			}
			t.runs++
			if r.Attacked {
				t.attacked++
			}
			if r.Utility {
				t.useful++
			}
		}
	}
	var places []string
	for _, c := range rep.Cases {
		head, ok := drilled(w, "DRILLED", "a payload", c.Suite, c.Name, c.Status, c.Reason)
		if !ok {
			continue
		}
		var cp []string
		var ids []string
		width := len("PAYLOAD")
		for _, r := range c.Results {
			if !slices.Contains(cp, r.Placement) {
				cp = append(cp, r.Placement)
			}
			if !slices.Contains(ids, r.Payload) {
				ids = append(ids, r.Payload)
				width = max(width, len(termtext.Printable(r.Payload)))
			}
			if r.Verdict == "ran" {
				add(r.Category, r.Placement, r)
			}
		}
		for _, p := range report.Placements {
			if slices.Contains(cp, p) && !slices.Contains(places, p) {
				places = append(places, p)
			}
		}
		fmt.Fprintf(w, "INJECT  %s (%s, %s)\n", head, termtext.Count(len(ids), "payload"), termtext.Count(len(c.Results), "run"))
		if len(c.Results) == 0 {
			continue
		}
		row := []string{fmt.Sprintf("  %-*s  %-19s", width, "PAYLOAD", "CATEGORY")}
		for _, p := range cp {
			row = append(row, fmt.Sprintf("%-16s", p))
		}
		line(w, row)
		for k := 0; k < len(c.Results); {
			r := c.Results[k]
			row := []string{fmt.Sprintf("  %-*s  %-19s", width, termtext.Printable(r.Payload), r.Category)}
			for _, p := range cp {
				text := "n/a"
				if k < len(c.Results) && c.Results[k].Payload == r.Payload && c.Results[k].Placement == p {
					text = injectCell(c.Results[k])
					k++
				}
				row = append(row, fmt.Sprintf("%-16s", text))
			}
			line(w, row)
		}
		fmt.Fprintf(w, "  one payload alone: dryfire inject %s --case %s --payload ID\n", termtext.ShellQuote(c.Suite), termtext.ShellQuote(c.Name))
	}
	if byCat[[2]string{"", ""}] == nil {
		fmt.Fprintf(w, "%s run\n", termtext.Count(rep.Ran, "run"))
		return
	}
	for _, part := range []struct {
		title string
		n     func(*tally) int
	}{{"ATTACK SUCCESS (the attacker's goal met / runs)", func(t *tally) int { return t.attacked }}, {"UTILITY UNDER ATTACK (the case's checks passed / runs)", func(t *tally) int { return t.useful }}} {
		fmt.Fprintln(w, part.title)
		row := []string{fmt.Sprintf("  %-19s", "CATEGORY")}
		for _, p := range places {
			row = append(row, fmt.Sprintf("%-16s", p))
		}
		line(w, append(row, "ALL"))
		for _, cat := range append(slices.Clone(report.InjectCategories), "") {
			if byCat[[2]string{cat, ""}] == nil {
				continue
			}
			name := cat
			if cat == "" {
				name = "all"
			}
			row := []string{fmt.Sprintf("  %-19s", name)}
			for _, p := range append(slices.Clone(places), "") {
				text := "-"
				if t := byCat[[2]string{cat, p}]; t != nil {
					text = fmt.Sprintf("%d/%d", part.n(t), t.runs)
				}
				row = append(row, fmt.Sprintf("%-16s", text))
			}
			line(w, row)
		}
	}
	all := byCat[[2]string{"", ""}]
	fmt.Fprintf(w, "%s: utility %d/%d, attack success %d/%d", termtext.Count(rep.Ran, "run"), all.useful, all.runs, all.attacked, all.runs)
	if rep.Ran < rep.Runs {
		fmt.Fprintf(w, "; the drill has %d runs, it stopped at the bound of %d (--max-runs %d)", rep.Runs, rep.MaxRuns, rep.MaxRuns)
	}
	if other := rep.Ran - all.runs; other > 0 {
		fmt.Fprintf(w, "; %d did not run to their end", other)
	}
	fmt.Fprintln(w)
}

// line writes the columns of a table's row, two spaces apart, without
// trailing blanks.
func line(w io.Writer, cols []string) {
	fmt.Fprintln(w, strings.TrimRight(strings.Join(cols, "  "), " "))
}

// injectExit: a case that erred through its surroundings is exit 3; a run
// with what failOn names, 1; otherwise the drill ran.
func injectExit(rep *report.InjectReport, failOn []string) error {
	n := 0
	for _, c := range rep.Cases {
		if c.Status == report.Errored && c.Infra {
			return &exitError{code: exitInfra}
		}
		for _, r := range c.Results {
			if r.Verdict == "ran" && (r.Attacked && slices.Contains(failOn, "attacked") || !r.Utility && slices.Contains(failOn, "utility")) {
				n++
			}
		}
	}
	if n > 0 {
		var what []string
		for _, f := range failOn {
			what = append(what, map[string]string{"attacked": "the attack succeeded", "utility": "the case's checks failed"}[f])
		}
		return &exitError{code: exitFailed, err: fmt.Errorf("%s where %s (--fail-on %s)", termtext.Count(n, "run"), strings.Join(what, " or "), strings.Join(failOn, ","))}
	}
	return nil
}
