package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/dryfire-dev/dryfire"
)

func addCoverageFlags(f *pflag.FlagSet, o *runOptions) {
	f.BoolVar(&o.coverage, "coverage", false, "count what the cases exercised of their suites: every mock rule (FILE:LINE), sequence entry, world operation, behavior, override, fault and scheduled event, how often, and those never used at their lines; printed before the last line and written into the JSON and HTML reports (\"coverage\"); dryfire merge adds up the shards'")
	f.Float64Var(&o.coverageMin, "coverage-min", 0, "with coverage (implied), fail the run (exit 1) when less than `PCT` percent of those parts were exercised, e.g. --coverage-min 90")
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
	return nil
}

// coverageShort says how a run's coverage is under --coverage-min; empty
// when it is not, or there is no threshold.
func coverageShort(rep *dryfire.Report, o runOptions) string {
	c := rep.Coverage
	if c == nil || o.coverageMin == 0 || c.Percent >= o.coverageMin {
		return ""
	}
	return fmt.Sprintf("coverage %.1f%% (%d of %d exercised) is under --coverage-min %v%%", c.Percent, c.Exercised, c.Total, o.coverageMin)
}
