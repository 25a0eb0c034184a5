package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

func addCoverageFlags(f *pflag.FlagSet, o *runOptions) {
	f.BoolVar(&o.coverage, "coverage", false, "count what the cases exercised of their suites: every mock rule (FILE:LINE), sequence entry, world operation, behavior, override, fault and scheduled event, how often, and those never used at their lines; printed before the last line and written into the JSON and HTML reports (\"coverage\"); dryfire merge adds up the shards'")
	f.Float64Var(&o.coverageMin, "coverage-min", 0, "with coverage (implied), fail the run (exit 1) when less than `PCT` percent of those parts were exercised, e.g. --coverage-min 90")
	f.BoolVar(&o.mutate, "mutate", false, "prove the checks able to fail: apply each passing case's checks again to its transcript mutated (a call dropped, made twice or swapped, an argument changed, a number of the output changed, a world record changed), offline; print each suite's mutation score and the checks no mutant made fail, and write them into the JSON report (\"mutation\")")
	f.Float64Var(&o.mutateMin, "mutate-min", 0, "with mutate (implied), fail the run (exit 1) when a suite's checks catch less than `PCT` percent of its mutants, e.g. --mutate-min 80")
}

// coverageOptions checks the coverage flags and sets ro.Coverage.
func coverageOptions(cmd *cobra.Command, o *runOptions, ro *dryfire.RunOptions) error {
	if cmd.Flags().Changed("coverage-min") {
		if !(o.coverageMin >= 0 && o.coverageMin <= 100) {
			return usageErr("--coverage-min is a percentage, 0 to 100, not %v", o.coverageMin)
		}
		o.coverage = true
	}
	ro.Coverage = o.coverage
	if cmd.Flags().Changed("mutate-min") {
		if !(o.mutateMin >= 0 && o.mutateMin <= 100) {
			return usageErr("--mutate-min is a percentage, 0 to 100, not %v", o.mutateMin)
		}
		o.mutate = true
	}
	ro.Mutate = o.mutate
	return nil
}

// coverageShort says how a run's coverage is under --coverage-min; empty
// when it is not, or there is no threshold.
func coverageShort(rep *report.Report, o runOptions) string {
	c := rep.Coverage
	if c == nil || o.coverageMin == 0 || c.Percent >= o.coverageMin {
		return ""
	}
	return fmt.Sprintf("coverage %.1f%% (%d of %d exercised) is under --coverage-min %v%%", c.Percent, c.Exercised, c.Total, o.coverageMin)
}

// mutationShort says which suites' mutation scores are under --mutate-min.
func mutationShort(rep *report.Report, o runOptions) []string {
	var out []string
	for _, m := range rep.Mutation {
		if m.Score < o.mutateMin {
			out = append(out, fmt.Sprintf("%s: mutation score %.1f%% (%d of %d mutants caught) is under --mutate-min %v%%", termtext.Printable(m.Suite), m.Score, m.Caught, m.Mutants, o.mutateMin))
		}
	}
	return out
}
