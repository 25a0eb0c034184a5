package cli

import (
	"testing"

	"github.com/dryfire-dev/dryfire"
)

func TestRunExit(t *testing.T) {
	passed := dryfire.CaseResult{Status: dryfire.Passed}
	failed := dryfire.CaseResult{Status: dryfire.Failed}
	agentErr := dryfire.CaseResult{Status: dryfire.Errored}
	infraErr := dryfire.CaseResult{Status: dryfire.Errored, Infra: true}
	skipped := dryfire.CaseResult{Status: dryfire.Skipped}
	for _, tc := range []struct {
		name  string
		cases []dryfire.CaseResult
		want  int
	}{
		{"no cases", nil, 0},
		{"all passed", []dryfire.CaseResult{passed, passed}, 0},
		{"passed and skipped", []dryfire.CaseResult{passed, skipped}, 0},
		{"all skipped", []dryfire.CaseResult{skipped}, 0},
		{"a failure", []dryfire.CaseResult{passed, failed, skipped}, 1},
		{"an agent error", []dryfire.CaseResult{passed, agentErr}, 1},
		{"an infra error only", []dryfire.CaseResult{passed, infraErr, skipped}, 3},
		{"infra errors only", []dryfire.CaseResult{infraErr, infraErr}, 3},
		{"infra error then a failure", []dryfire.CaseResult{infraErr, failed}, 1},
		{"failure then an infra error", []dryfire.CaseResult{failed, infraErr}, 1},
		{"infra and agent errors", []dryfire.CaseResult{infraErr, agentErr}, 1},
	} {
		if got := runExit(&dryfire.Report{Cases: tc.cases}); got != tc.want {
			t.Errorf("%s: runExit = %d, want %d", tc.name, got, tc.want)
		}
	}
}
