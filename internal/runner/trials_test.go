package runner_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

const trialsSuite = `version: 1
trials: 2
agent: {provider: script}
cases:
  - name: suite's
    input: hi
    script: [{text: ok}]
  - name: own
    input: hi
    trials: 3
    script: [{text: ok}]
  - name: once
    input: hi
    trials: 1
    script: [{text: ok}]
    expect: [{output: {contains: nope}}]
`

// A case runs its own trials:, else its suite's; --trials goes over
// both. Progress hears of cases, not of trials.
func TestTrialsPrecedence(t *testing.T) {
	suites := writeSuite(t, t.TempDir(), "t.dryfire.yaml", trialsSuite)
	for _, tc := range []struct {
		trials int
		want   []int // trials per case; 0: ran once, no trials field
	}{
		{0, []int{2, 3, 0}},
		{4, []int{4, 4, 4}},
		{1, []int{0, 0, 0}},
	} {
		p := &progress{done: map[int]report.Status{}}
		rep, err := runner.Run(context.Background(), suites, runner.Options{Trials: tc.trials, Progress: p, Concurrency: 3})
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, c := range rep.Cases {
			n := 0
			if c.Trials != nil {
				n = c.Trials.N
				if len(c.Trials.Runs) != n {
					t.Errorf("%s: %d runs of %d trials", c.Name, len(c.Trials.Runs), n)
				}
			}
			got = append(got, n)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("--trials %d (-want +got):\n%s", tc.trials, diff)
		}
		if p.total != 3 || len(p.done) != 3 {
			t.Errorf("--trials %d: progress of %d cases, %d done; want 3", tc.trials, p.total, len(p.done))
		}
		last := rep.Cases[2]
		if last.Status != report.Failed || rep.Summary.Passed != 2 || rep.Summary.Failed != 1 || rep.Summary.Flaky != 0 {
			t.Errorf("--trials %d: %+v, last case %s", tc.trials, rep.Summary, last.Status)
		}
	}
}
