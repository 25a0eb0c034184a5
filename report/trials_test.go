package report

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPassAtKAndHatK(t *testing.T) {
	for _, tc := range []struct {
		n, c, k   int
		atK, hatK float64
	}{
		{5, 5, 1, 1, 1},
		{5, 5, 5, 1, 1},
		{5, 0, 1, 0, 0},
		{5, 0, 5, 0, 0},
		{5, 3, 1, 0.6, 0.6},
		{5, 3, 2, 0.9, 0.3},    // 1 - C(2,2)/C(5,2) = 1 - 1/10; C(3,2)/C(5,2) = 3/10
		{5, 3, 3, 1, 0.1},      // C(2,3) = 0; C(3,3)/C(5,3) = 1/10
		{5, 3, 4, 1, 0},        // C(3,4) = 0
		{10, 1, 3, 0.3, 0},     // 1 - C(9,3)/C(10,3) = 1 - 84/120
		{3, 2, 2, 1, 0.333333}, // C(2,2)/C(3,2) = 1/3, rounded
	} {
		if got := passAtK(tc.n, tc.c, tc.k); got != tc.atK {
			t.Errorf("pass@%d with %d of %d: %v, want %v", tc.k, tc.c, tc.n, got, tc.atK)
		}
		if got := passHatK(tc.n, tc.c, tc.k); got != tc.hatK {
			t.Errorf("pass^%d with %d of %d: %v, want %v", tc.k, tc.c, tc.n, got, tc.hatK)
		}
	}
}

func TestFoldTrials(t *testing.T) {
	run := func(s Status, reason string) Case {
		return Case{Suite: "s.dryfire.yaml", Name: "c", Status: s, Reason: reason, DurationMS: 2, Usage: usage(10, 1)}
	}
	p, f, e, sk := run(Passed, ""), run(Failed, "1 of 2 checks failed"), run(Errored, "unreachable"), run(Skipped, "interrupted")
	e.Infra = true
	for _, tc := range []struct {
		name      string
		runs      []Case
		threshold float64
		status    Status
		reason    string
		shown     int
		flaky     bool
		infra     bool
	}{
		{"all pass", []Case{p, p, p}, 1, Passed, "", 1, false, false},
		{"one fails", []Case{p, f, p}, 1, Failed, "2 of 3 trials passed, 3 needed; trial 2: 1 of 2 checks failed", 2, true, false},
		{"threshold met", []Case{p, f, p}, 0.6, Passed, "", 1, true, false},
		{"threshold of 0.7 needs 3 of 3 (not a float's 2.1)", []Case{p, f, p}, 0.7, Failed, "2 of 3 trials passed, 3 needed; trial 2: 1 of 2 checks failed", 2, true, false},
		{"a failure shows over an error", []Case{e, f}, 1, Failed, "0 of 2 trials passed, 2 needed; trial 2: 1 of 2 checks failed", 2, false, false},
		{"errors only", []Case{p, e}, 1, Errored, "1 of 2 trials passed, 2 needed; trial 2: unreachable", 2, true, true},
		{"all skipped", []Case{sk, sk}, 1, Skipped, "interrupted", 1, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := FoldTrials(tc.runs, tc.threshold)
			got := []any{c.Status, c.Reason, c.Trials.Shown, c.Trials.Flaky, c.Infra, c.Trials.N, len(c.Trials.Runs), c.DurationMS, c.Usage}
			want := []any{tc.status, tc.reason, tc.shown, tc.flaky, tc.infra, len(tc.runs), len(tc.runs), 2 * float64(len(tc.runs)), usage(10*len(tc.runs), len(tc.runs))}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func usage(in, out int) Usage { return Usage{InputTokens: in, OutputTokens: out} }

// A judge's and a simulated user's tokens count in the case's usage, with
// a split by role; the run's summary and the text's usage line add them
// up (a case without a split is its agent's), and trials sum them.
func TestUsageByRole(t *testing.T) {
	c := Case{Usage: usage(100, 10)}
	AddUsage(&c, "judge", usage(0, 0))
	if c.UsageByRole != nil {
		t.Errorf("nothing spent, yet a split: %+v", c.UsageByRole)
	}
	AddUsage(&c, "judge", usage(30, 3))
	AddUsage(&c, "user", usage(20, 2))
	AddUsage(&c, "judge", usage(5, 1))
	want := &RoleUsage{Agent: usage(100, 10), Judge: usage(35, 4), User: usage(20, 2)}
	if diff := cmp.Diff(want, c.UsageByRole); diff != "" || c.Usage != usage(155, 16) {
		t.Errorf("usage %+v, split (-want +got):\n%s", c.Usage, diff)
	}
	r := &Report{Cases: []Case{c, {Usage: usage(1, 1)}}}
	r.Tally()
	if diff := cmp.Diff(&RoleUsage{Agent: usage(101, 11), Judge: usage(35, 4), User: usage(20, 2)}, r.Summary.UsageByRole); diff != "" || r.Summary.Usage != usage(156, 17) {
		t.Errorf("summary %+v (-want +got):\n%s", r.Summary.Usage, diff)
	}
	// The usage line is the first of what Finish prints.
	usageLine := func(r *Report) string {
		var b strings.Builder
		NewText(&b, TextOptions{}).Finish(r)
		line, _, _ := strings.Cut(b.String(), "\n")
		return line
	}
	if got, want := usageLine(r), "usage: 156 input tokens, 17 output tokens (agent 101 in, 11 out; judges 35 in, 4 out; simulated users 20 in, 2 out) (as recorded: every model call was replayed, nothing was spent)"; got != want {
		t.Errorf("usage line = %q\nwant         %q", got, want)
	}
	f := FoldTrials([]Case{c, {Usage: usage(7, 7)}}, 1)
	if diff := cmp.Diff(&RoleUsage{Agent: usage(107, 17), Judge: usage(35, 4), User: usage(20, 2)}, f.UsageByRole); diff != "" || f.Usage != usage(162, 23) {
		t.Errorf("folded %+v (-want +got):\n%s", f.Usage, diff)
	}
	// No split anywhere: none in the summary either.
	r = &Report{Cases: []Case{{Usage: usage(1, 1)}}}
	if r.Tally(); r.Summary.UsageByRole != nil || usageLine(r) != "usage: 1 input tokens, 1 output tokens (as recorded: every model call was replayed, nothing was spent)" {
		t.Errorf("no split: %+v %q", r.Summary.UsageByRole, usageLine(r))
	}
}
