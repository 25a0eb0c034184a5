package report

import (
	"fmt"
	"math"
)

// FoldTrials is the result of one case from the results of its trials
// (at least one, in trial order). The case passes when at least
// threshold (0 < threshold <= 1) of its trials passed; otherwise it failed
// if a trial failed, else it erred (or was skipped, when every trial was).
func FoldTrials(runs []Case, threshold float64) Case {
	n := len(runs)
	needed := (&Trials{N: n, Threshold: threshold}).Needed()
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
	case passed >= needed:
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
	var tot Totals // the trials' usage, by role when one split it, and live calls
	c.DurationMS = 0
	for i := range runs {
		tot.Add(&runs[i])
		c.DurationMS += runs[i].DurationMS
	}
	c.Usage, c.UsageByRole, c.Live = tot.Summary.Usage, tot.Summary.UsageByRole, tot.Live
	if status == Failed || status == Errored {
		c.Reason = fmt.Sprintf("%d of %d trials passed, %d needed; trial %d: %s", passed, n, needed, shown+1, c.Reason)
	}
	t := &Trials{N: n, Passed: passed, Threshold: threshold, Flaky: passed > 0 && passed < n, Shown: shown + 1, Runs: runs}
	t.PassAtK, t.PassHatK = make([]float64, n), make([]float64, n)
	for k := 1; k <= n; k++ {
		t.PassAtK[k-1] = passAtK(n, passed, k)
		t.PassHatK[k-1] = passHatK(n, passed, k)
	}
	c.Trials = t
	return c
}

// passAtK is 1 - C(n-c, k) / C(n, k), rounded to 6 decimals: the chance
// that at least one of k trials drawn without replacement from n, of
// which c passed, passed.
func passAtK(n, c, k int) float64 { return round6(1 - choose(n-c, k, n)) }

// passHatK is C(c, k) / C(n, k), rounded to 6 decimals: the chance that
// all k trials drawn without replacement from n, of which c passed,
// passed.
func passHatK(n, c, k int) float64 { return round6(choose(c, k, n)) }

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
