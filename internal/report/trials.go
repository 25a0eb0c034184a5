package report

import (
	"fmt"
	"math"
)

// Trials is how a case did over several runs of it (--trials, trials:).
// The case's own fields are those of one trial, Trials.Shown; its usage
// and duration are the totals of its trials.
type Trials struct {
	N      int `json:"n"`      // trials run
	Passed int `json:"passed"` // trials that passed
	// Threshold is the fraction of trials that must pass for the case to
	// pass (1: every trial; --pass-threshold).
	Threshold float64 `json:"threshold"`
	// Flaky: some trials passed and some did not.
	Flaky bool `json:"flaky"`
	// PassAtK[k-1] is pass@k: the chance that at least one of k trials
	// drawn from the N passes, 1 - C(N-c, k) / C(N, k) for c passes.
	PassAtK []float64 `json:"pass_at_k"`
	// PassHatK[k-1] is pass^k: the chance that all of k trials drawn from
	// the N pass, C(c, k) / C(N, k).
	PassHatK []float64 `json:"pass_hat_k"`
	// Shown is the trial (1-based) whose result the case's fields are:
	// the first with the case's status.
	Shown int `json:"shown"`
	// Runs are the trials' own results, in trial order.
	Runs []Case `json:"runs"`
}

// FoldTrials is the result of one case from the results of its trials
// (at least one, in trial order). The case passes when at least
// threshold (0 < threshold <= 1) of its trials passed; otherwise it failed
// if a trial failed, else it erred (or was skipped, when every trial was).
func FoldTrials(runs []Case, threshold float64) Case {
	n := len(runs)
	passed, failed, errored := 0, 0, 0
	infra := true
	for _, r := range runs {
		switch r.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		case Errored:
			errored++
			infra = infra && r.Infra
		}
	}
	var status Status
	switch {
	case passed >= Needed(n, threshold):
		status = Passed
	case failed > 0:
		status = Failed
	case errored > 0:
		status = Errored
	case passed > 0:
		status = Failed // too few passed, the others were skipped
	default:
		status = Skipped
	}
	shown := 0
	for i, r := range runs {
		if r.Status == status {
			shown = i
			break
		}
	}
	c := runs[shown]
	c.Status = status
	c.Infra = status == Errored && infra
	c.Usage, c.DurationMS, c.Live = runs[0].Usage, 0, 0
	c.Usage.InputTokens, c.Usage.OutputTokens = 0, 0
	c.UsageByRole = nil
	var roles RoleUsage
	for _, r := range runs {
		c.Usage.InputTokens += r.Usage.InputTokens
		c.Usage.OutputTokens += r.Usage.OutputTokens
		if r.UsageByRole != nil {
			roles.add(r.UsageByRole)
			c.UsageByRole = &roles
		} else {
			addUsage(&roles.Agent, r.Usage)
		}
		c.DurationMS += r.DurationMS
		c.Live += r.Live
	}
	if status == Failed || status == Errored {
		c.Reason = fmt.Sprintf("%d of %d trials passed, %d needed; trial %d: %s", passed, n, Needed(n, threshold), shown+1, c.Reason)
	}
	t := &Trials{N: n, Passed: passed, Threshold: threshold, Flaky: passed > 0 && passed < n, Shown: shown + 1, Runs: runs}
	t.PassAtK, t.PassHatK = make([]float64, n), make([]float64, n)
	for k := 1; k <= n; k++ {
		t.PassAtK[k-1] = PassAtK(n, passed, k)
		t.PassHatK[k-1] = PassHatK(n, passed, k)
	}
	c.Trials = t
	return c
}

// Needed is how many of n trials must pass for a case to pass at
// threshold.
func Needed(n int, threshold float64) int {
	return max(1, int(math.Ceil(threshold*float64(n)-1e-9)))
}

// PassAtK is 1 - C(n-c, k) / C(n, k), rounded to 6 decimals: the chance
// that at least one of k trials drawn without replacement from n, of
// which c passed, passed.
func PassAtK(n, c, k int) float64 { return round6(1 - choose(n-c, k, n)) }

// PassHatK is C(c, k) / C(n, k), rounded to 6 decimals: the chance that
// all k trials drawn without replacement from n, of which c passed,
// passed.
func PassHatK(n, c, k int) float64 { return round6(choose(c, k, n)) }

// choose is C(m, k) / C(n, k) for m <= n, as a product that stays within
// [0, 1] at every step.
func choose(m, k, n int) float64 {
	if k > m {
		return 0
	}
	p := 1.0
	for i := 0; i < k; i++ {
		p *= float64(m-i) / float64(n-i)
	}
	return p
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
