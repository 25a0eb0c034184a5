package report

import (
	"io"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
	"github.com/dryfire-dev/dryfire/report"
)

// comparisonJSON is the comparison as `dryfire compare --json` writes it;
// its field order is the format.
type comparisonJSON struct {
	// Changes, the cases that changed, are first: written one at a time
	// (jsonout.List).
	Changes   []changeJSON     `json:"changes"`
	Base      runJSON          `json:"base"`
	New       runJSON          `json:"new"`
	Counts    countsJSON       `json:"counts"`
	Durations durationRuleJSON `json:"durations"`
	Trials    *TrialsDelta     `json:"trials,omitempty"`
}

type runJSON struct {
	Report     string  `json:"report"`
	Cases      int     `json:"cases"`
	Passed     int     `json:"passed"`
	Failed     int     `json:"failed"`
	Error      int     `json:"error"`
	Skipped    int     `json:"skipped"`
	Flaky      int     `json:"flaky"`
	DurationMS float64 `json:"duration_ms"`
}

// countsJSON has a key a kind of change, in ChangeKinds order.
type countsJSON struct {
	Regressed int `json:"regressed"`
	Fixed     int `json:"fixed"`
	New       int `json:"new"`
	Gone      int `json:"gone"`
	Skipped   int `json:"skipped"`
	Changed   int `json:"changed"`
	Flaky     int `json:"flaky"`
	Steady    int `json:"steady"`
	PassDown  int `json:"pass-down"`
	PassUp    int `json:"pass-up"`
	Slower    int `json:"slower"`
	Faster    int `json:"faster"`
	Unchanged int `json:"unchanged"`
	Common    int `json:"in_both"`
}

type durationRuleJSON struct {
	Factor      float64 `json:"factor"`
	MinMS       float64 `json:"min_ms"`
	MedianRatio float64 `json:"median_ratio"`
	Compared    int     `json:"compared"`
}

type changeJSON struct {
	Suite  string        `json:"suite"`
	Name   string        `json:"name"`
	Kinds  []ChangeKind  `json:"kinds"`
	Base   *Outcome      `json:"base"`
	New    *Outcome      `json:"new"`
	Checks []CheckChange `json:"checks"`
	// PassHatK, for a case with trials in both runs: pass^k for k = 1
	// to the fewer trials of the two, in each run.
	PassHatK *passHatKJSON `json:"pass_hat_k,omitempty"`
	// MSPerTrial, for a slower or faster case: its duration a trial in
	// each run.
	MSPerTrial *[2]float64 `json:"ms_per_trial,omitempty"`
}

type passHatKJSON struct {
	Base []float64 `json:"base"`
	New  []float64 `json:"new"`
}

// WriteJSON writes the comparison as indented JSON, its changes one at a
// time.
func (c *Comparison) WriteJSON(w io.Writer) error {
	cnt := func(k ChangeKind) int { return c.Count(k) }
	head := comparisonJSON{
		Base: runOf(c.BaseName, c.Base),
		New:  runOf(c.NewName, c.New),
		Counts: countsJSON{
			Regressed: cnt(report.ChangeRegressed), Fixed: cnt(report.ChangeFixed), New: cnt(report.ChangeNew), Gone: cnt(report.ChangeGone),
			Skipped: cnt(report.ChangeSkipped), Changed: cnt(report.ChangeStatus), Flaky: cnt(report.ChangeFlaky), Steady: cnt(report.ChangeSteady),
			PassDown: cnt(report.ChangePassDown), PassUp: cnt(report.ChangePassUp), Slower: cnt(report.ChangeSlower), Faster: cnt(report.ChangeFaster),
			Unchanged: c.Unchanged, Common: c.Common,
		},
		Durations: durationRuleJSON{Factor: c.Durations.Factor, MinMS: c.Durations.MinMS, MedianRatio: round6(c.Durations.Median), Compared: c.Durations.Compared},
	}
	if c.Trials.Cases > 0 {
		head.Trials = &c.Trials
	}
	l := jsonout.New(w, "changes")
	for i := range c.Changes {
		if err := l.Item(changeOf(&c.Changes[i])); err != nil {
			return err
		}
	}
	return l.End(&head)
}

func runOf(name string, t RunTally) runJSON {
	return runJSON{Report: name, Cases: t.Cases, Passed: t.Passed, Failed: t.Failed, Error: t.Error, Skipped: t.Skipped, Flaky: t.Flaky, DurationMS: round6(t.DurationMS)}
}

func changeOf(ch *CaseChange) *changeJSON {
	j := &changeJSON{Suite: ch.Suite, Name: ch.Name, Kinds: ch.Kinds, Base: ch.Base, New: ch.New, Checks: ch.Checks}
	if j.Checks == nil {
		j.Checks = []CheckChange{}
	}
	if ch.Base != nil && ch.New != nil && ch.Base.Trials != nil && ch.New.Trials != nil {
		b, n := ch.Base.Trials, ch.New.Trials
		k := min(b.N, n.N)
		p := &passHatKJSON{Base: make([]float64, k), New: make([]float64, k)}
		for i := 1; i <= k; i++ {
			p.Base[i-1], p.New[i-1] = PassHatK(b.N, b.Passed, i), PassHatK(n.N, n.Passed, i)
		}
		j.PassHatK = p
	}
	if ch.Has(report.ChangeSlower) || ch.Has(report.ChangeFaster) {
		j.MSPerTrial = &[2]float64{round6(ch.BaseMS), round6(ch.NewMS)}
	}
	return j
}
