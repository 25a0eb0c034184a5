package report

import (
	"io"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
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
	Trials    *trialsDelta     `json:"trials,omitempty"`
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

// countsJSON has a key a kind of change, in changeKinds order.
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
	Base   *caseOutcome  `json:"base"`
	New    *caseOutcome  `json:"new"`
	Checks []checkChange `json:"checks"`
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
		Base: runOf(c.baseName, c.base),
		New:  runOf(c.newName, c.new),
		Counts: countsJSON{
			Regressed: cnt(ChangeRegressed), Fixed: cnt(ChangeFixed), New: cnt(ChangeNew), Gone: cnt(ChangeGone),
			Skipped: cnt(ChangeSkipped), Changed: cnt(ChangeStatus), Flaky: cnt(ChangeFlaky), Steady: cnt(ChangeSteady),
			PassDown: cnt(ChangePassDown), PassUp: cnt(ChangePassUp), Slower: cnt(ChangeSlower), Faster: cnt(ChangeFaster),
			Unchanged: c.unchanged, Common: c.common,
		},
		Durations: durationRuleJSON{Factor: c.durations.Factor, MinMS: c.durations.MinMS, MedianRatio: round6(c.durations.Median), Compared: c.durations.Compared},
	}
	if c.trials.Cases > 0 {
		head.Trials = &c.trials
	}
	l := jsonout.New(w, "changes")
	for i := range c.changes {
		if err := l.Item(changeOf(&c.changes[i])); err != nil {
			return err
		}
	}
	return l.End(&head)
}

func runOf(name string, t runTally) runJSON {
	return runJSON{Report: name, Cases: t.Cases, Passed: t.Passed, Failed: t.Failed, Error: t.Error, Skipped: t.Skipped, Flaky: t.Flaky, DurationMS: round6(t.DurationMS)}
}

func changeOf(ch *caseChange) *changeJSON {
	j := &changeJSON{Suite: ch.Suite, Name: ch.Name, Kinds: ch.Kinds, Base: ch.Base, New: ch.New, Checks: ch.Checks}
	if j.Checks == nil {
		j.Checks = []checkChange{}
	}
	if ch.Base != nil && ch.New != nil && ch.Base.Trials != nil && ch.New.Trials != nil {
		b, n := ch.Base.Trials, ch.New.Trials
		k := min(b.N, n.N)
		p := &passHatKJSON{Base: make([]float64, k), New: make([]float64, k)}
		for i := 1; i <= k; i++ {
			p.Base[i-1], p.New[i-1] = passHatK(b.N, b.Passed, i), passHatK(n.N, n.Passed, i)
		}
		j.PassHatK = p
	}
	if ch.Has(ChangeSlower) || ch.Has(ChangeFaster) {
		j.MSPerTrial = &[2]float64{round6(ch.BaseMS), round6(ch.NewMS)}
	}
	return j
}
