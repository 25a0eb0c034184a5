package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/report"
)

// Outcome is what a comparison of two runs needs of one case's result:
// its status, its checks' verdicts, its trials and its duration. Its
// JSON is a side of a change in compare --json.
type Outcome struct {
	Suite  string `json:"-"`
	Name   string `json:"-"`
	Status Status `json:"status"`
	// Reason is why a case that did not pass did not (its first line,
	// bounded); empty for a passed case.
	Reason string         `json:"reason,omitempty"`
	Checks []CheckOutcome `json:"-"`
	Trials *TrialCount    `json:"trials,omitempty"` // nil: the case ran once
	// DurationMS is the case's wall time, all its trials together.
	DurationMS float64 `json:"duration_ms"`
}

// CheckOutcome is one check's verdict.
type CheckOutcome struct {
	Check  string `json:"check"` // the check as written, which names it across runs
	At     string `json:"at"`    // FILE:LINE
	Passed bool   `json:"passed"`
}

// TrialCount is how many of a case's trials passed.
type TrialCount struct {
	N      int  `json:"n"`
	Passed int  `json:"passed"`
	Flaky  bool `json:"flaky"`
}

// maxReason bounds an Outcome's reason, in bytes.
const maxReason = 300

// OutcomeOf is what a comparison needs of c.
func OutcomeOf(c *Case) Outcome {
	o := Outcome{Suite: c.Suite, Name: c.Name, Status: c.Status, DurationMS: c.DurationMS}
	if c.Status != Passed {
		o.Reason = shortReason(c.Reason)
	}
	if len(c.Checks) > 0 {
		o.Checks = make([]CheckOutcome, len(c.Checks))
		for i, ch := range c.Checks {
			o.Checks[i] = CheckOutcome{Check: ch.Check, At: ch.At, Passed: ch.Passed}
		}
	}
	if t := c.Trials; t != nil {
		o.Trials = &TrialCount{N: t.N, Passed: t.Passed, Flaky: t.Flaky}
	}
	return o
}

func shortReason(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > maxReason {
		cut := maxReason
		for cut > 0 && s[cut]&0xc0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Outcomes are a run's cases as a comparison needs them, in report
// order.
type Outcomes struct {
	Cases []Outcome
}

// Put sets the outcome of the case at report position i (a run hands
// its cases on as they are done, not in order).
func (o *Outcomes) Put(i int, c *Case) {
	if i >= len(o.Cases) {
		o.Cases = slices.Grow(o.Cases, i+1-len(o.Cases))[:i+1]
	}
	o.Cases[i] = OutcomeOf(c)
}

// Keep leaves out the cases keep refuses: of a baseline, those a run
// with a filter did not select.
func (o *Outcomes) Keep(keep func(suite, name string) bool) {
	o.Cases = slices.DeleteFunc(o.Cases, func(c Outcome) bool { return !keep(c.Suite, c.Name) })
}

// ChangeKinds are every kind, in the order a comparison lists them.
var ChangeKinds = report.ChangeKinds()

func kindIndex(k ChangeKind) int { return slices.Index(ChangeKinds, k) }

// CompareOptions shape a comparison; zero fields take their defaults.
type CompareOptions struct {
	// BaseName and NewName name the two runs (their files).
	BaseName, NewName string
	// SlowFactor and SlowMS are the duration outlier rule (DurationRule):
	// defaults 2 and 100.
	SlowFactor, SlowMS float64
}

// Defaults of the duration rule.
const (
	DefaultSlowFactor = 2
	DefaultSlowMS     = 100
)

// Comparison is what changed from one run (BASE) to another (NEW).
type Comparison struct {
	BaseName, NewName string
	Base, New         RunTally
	// Changes are the cases that changed, by suite, then name (bytewise).
	Changes []CaseChange
	// Counts[i] is how many cases have change ChangeKinds[i].
	Counts []int
	// Unchanged counts the cases in both runs with no change.
	Unchanged int
	// Common counts the cases in both runs.
	Common    int
	Durations DurationRule
	Trials    TrialsDelta
}

// RunTally counts a run's cases by status.
type RunTally struct {
	Cases, Passed, Failed, Error, Skipped, Flaky int
	DurationMS                                   float64
}

// DurationRule is how a comparison finds duration outliers. A case's
// duration is per trial (its duration over its trials); Median is the
// median over the cases in both runs, with a BASE duration above zero,
// of NEW's duration over BASE's (1 when there is none): how much slower
// the NEW run is as a whole (another machine, a loaded one). A case is
// slower when NEW > Factor × Median × BASE and NEW − Median × BASE >=
// MinMS; faster when NEW < Median × BASE / Factor and Median × BASE −
// NEW >= MinMS. Skipped cases are left out.
type DurationRule struct {
	Factor, MinMS float64
	Median        float64
	Compared      int // cases the median is over
}

// TrialsDelta is the pass^k of the cases run with trials in both runs,
// averaged over them: pass^1 (the share of trials that passed) and
// pass^K, K the fewest trials any of them had in either run.
type TrialsDelta struct {
	Cases int     `json:"cases"`
	K     int     `json:"k"`
	Base1 float64 `json:"base_pass_hat_1"`
	New1  float64 `json:"new_pass_hat_1"`
	BaseK float64 `json:"base_pass_hat_k"`
	NewK  float64 `json:"new_pass_hat_k"`
	Base  int     `json:"-"` // cases with trials in BASE
	New   int     `json:"-"` // and in NEW
}

// CaseChange is one case that changed.
type CaseChange struct {
	Suite, Name string
	Kinds       []ChangeKind // in ChangeKinds order
	Base, New   *Outcome     // nil: not in that run
	Checks      []CheckChange
	// PerTrialMS are the case's durations a trial, BASE's and NEW's, for
	// a slower or faster case.
	BaseMS, NewMS float64
}

// Has reports whether the case has change k.
func (c *CaseChange) Has(k ChangeKind) bool { return slices.Contains(c.Kinds, k) }

// CheckChange is one check that changed: regressed, fixed, new or gone.
type CheckChange struct {
	Kind  ChangeKind `json:"change"`
	Check string     `json:"check"`
	At    string     `json:"at"` // in NEW; in BASE for a gone check
}

// Count is how many cases have change k.
func (c *Comparison) Count(k ChangeKind) int {
	if i := kindIndex(k); i >= 0 {
		return c.Counts[i]
	}
	return 0
}

type caseKey struct{ suite, name string }

// Compare compares two runs' outcomes. It refuses a run that has a case
// twice.
func Compare(base, new *Outcomes, opts CompareOptions) (*Comparison, error) {
	if opts.SlowFactor <= 0 {
		opts.SlowFactor = DefaultSlowFactor
	}
	if opts.SlowMS <= 0 {
		opts.SlowMS = DefaultSlowMS
	}
	c := &Comparison{BaseName: opts.BaseName, NewName: opts.NewName, Counts: make([]int, len(ChangeKinds))}
	c.Base, c.New = tally(base), tally(new)
	inBase := make(map[caseKey]int, len(base.Cases))
	for i := range base.Cases {
		k := caseKey{base.Cases[i].Suite, base.Cases[i].Name}
		if j, dup := inBase[k]; dup {
			return nil, fmt.Errorf("%s has the case %q of %s twice (cases %d and %d): compare the reports of two runs", opts.BaseName, k.name, k.suite, j+1, i+1)
		}
		inBase[k] = i
	}
	inNew := make(map[caseKey]int, len(new.Cases))
	for i := range new.Cases {
		k := caseKey{new.Cases[i].Suite, new.Cases[i].Name}
		if j, dup := inNew[k]; dup {
			return nil, fmt.Errorf("%s has the case %q of %s twice (cases %d and %d): compare the reports of two runs", opts.NewName, k.name, k.suite, j+1, i+1)
		}
		inNew[k] = i
	}
	c.Durations = durationRule(base, new, inBase, opts)
	c.Trials = trialsDelta(base, new, inBase)
	for i := range new.Cases {
		n := &new.Cases[i]
		var b *Outcome
		if j, ok := inBase[caseKey{n.Suite, n.Name}]; ok {
			b = &base.Cases[j]
			c.Common++
		}
		c.add(diffCase(b, n, c.Durations))
	}
	for i := range base.Cases {
		b := &base.Cases[i]
		if _, ok := inNew[caseKey{b.Suite, b.Name}]; !ok {
			c.add(diffCase(b, nil, c.Durations))
		}
	}
	slices.SortFunc(c.Changes, func(x, y CaseChange) int {
		return cmp.Or(strings.Compare(x.Suite, y.Suite), strings.Compare(x.Name, y.Name))
	})
	return c, nil
}

func (c *Comparison) add(ch CaseChange) {
	if len(ch.Kinds) == 0 {
		c.Unchanged++
		return
	}
	for _, k := range ch.Kinds {
		c.Counts[kindIndex(k)]++
	}
	c.Changes = append(c.Changes, ch)
}

func tally(o *Outcomes) RunTally {
	var t RunTally
	t.Cases = len(o.Cases)
	for i := range o.Cases {
		c := &o.Cases[i]
		switch c.Status {
		case Passed:
			t.Passed++
		case Failed:
			t.Failed++
		case Errored:
			t.Error++
		case Skipped:
			t.Skipped++
		}
		if c.Trials != nil && c.Trials.Flaky {
			t.Flaky++
		}
		t.DurationMS += c.DurationMS
	}
	return t
}

// ratio renders NEW over BASE as ×R.
func ratio(b, n float64) string {
	if b <= 0 {
		return "×∞"
	}
	return "×" + num(n/b, 2)
}

// num is x with at most d decimals, trailing zeros dropped.
func num(x float64, d int) string {
	p := math.Pow(10, float64(d))
	x = math.Round(x*p) / p
	if x == 0 {
		x = 0 // not -0
	}
	s := fmt.Sprintf("%.*f", d, x)
	if strings.Contains(s, ".") {
		s = strings.TrimSuffix(strings.TrimRight(s, "0"), ".")
	}
	return s
}
