package cli

import (
	"testing"

	"github.com/dryfire-dev/dryfire/report"
)

func TestRunExit(t *testing.T) {
	passed := report.Case{Status: report.Passed}
	failed := report.Case{Status: report.Failed}
	agentErr := report.Case{Status: report.Errored}
	infraErr := report.Case{Status: report.Errored, Infra: true}
	skipped := report.Case{Status: report.Skipped}
	for _, tc := range []struct {
		name  string
		cases []report.Case
		want  int
	}{
		{"no cases", nil, 0},
		{"all passed", []report.Case{passed, passed}, 0},
		{"passed and skipped", []report.Case{passed, skipped}, 0},
		{"all skipped", []report.Case{skipped}, 0},
		{"a failure", []report.Case{passed, failed, skipped}, 1},
		{"an agent error", []report.Case{passed, agentErr}, 1},
		{"an infra error only", []report.Case{passed, infraErr, skipped}, 3},
		{"infra errors only", []report.Case{infraErr, infraErr}, 3},
		{"infra error then a failure", []report.Case{infraErr, failed}, 1},
		{"failure then an infra error", []report.Case{failed, infraErr}, 1},
		{"infra and agent errors", []report.Case{infraErr, agentErr}, 1},
	} {
		if got := runExit(&report.Report{Cases: tc.cases}); got != tc.want {
			t.Errorf("%s: runExit = %d, want %d", tc.name, got, tc.want)
		}
	}
}
