package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// caseOutcome is what a comparison of two runs needs of one case's result:
// its status, its checks' verdicts, its trials and its duration. Its
// JSON is a side of a change in compare --json.
type caseOutcome struct {
	Suite  string `json:"-"`
	Name   string `json:"-"`
	Status Status `json:"status"`
	// Reason is why a case that did not pass did not (its first line,
	// bounded); empty for a passed case.
	Reason string         `json:"reason,omitempty"`
	Checks []checkOutcome `json:"-"`
	Trials *trialCount    `json:"trials,omitempty"` // nil: the case ran once
	// DurationMS is the case's wall time, all its trials together.
	DurationMS float64 `json:"duration_ms"`
}

// checkOutcome is one check's verdict.
type checkOutcome struct {
	Check  string `json:"check"` // the check as written, which names it across runs
	At     string `json:"at"`    // FILE:LINE
	Passed bool   `json:"passed"`
}

// trialCount is how many of a case's trials passed.
type trialCount struct {
	N      int  `json:"n"`
	Passed int  `json:"passed"`
	Flaky  bool `json:"flaky"`
}

// maxReason bounds an caseOutcome's reason, in bytes.
const maxReason = 300

// outcomeOf is what a comparison needs of c.
func outcomeOf(c *Case) caseOutcome {
	o := caseOutcome{Suite: c.Suite, Name: c.Name, Status: c.Status, DurationMS: c.DurationMS}
	if c.Status != Passed {
		o.Reason = shortReason(c.Reason)
	}
	if len(c.Checks) > 0 {
		o.Checks = make([]checkOutcome, len(c.Checks))
		for i, ch := range c.Checks {
			o.Checks[i] = checkOutcome{Check: ch.Check, At: ch.At, Passed: ch.Passed}
		}
	}
	if t := c.Trials; t != nil {
		o.Trials = &trialCount{N: t.N, Passed: t.Passed, Flaky: t.Flaky}
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

// Outcomes are what Compare needs of a run: each case's status, its
// checks' verdicts, its trials and its duration, in report order (a JSON
// report's, ReadOutcomes; or a run's cases as they are done, Put).
type Outcomes struct {
	cases                  []caseOutcome
	shardIndex, shardCount int
}

// Len is the number of cases.
func (o *Outcomes) Len() int { return len(o.cases) }

// Shard is, for the report of one shard of a run, which shard it is;
// 0, 0 for a whole run's.
func (o *Outcomes) Shard() (index, count int) { return o.shardIndex, o.shardCount }

// Put sets the outcome of the case at report position i (a run hands
// its cases on as they are done, not in order).
func (o *Outcomes) Put(i int, c *Case) {
	if i >= len(o.cases) {
		o.cases = slices.Grow(o.cases, i+1-len(o.cases))[:i+1]
	}
	o.cases[i] = outcomeOf(c)
}

// Keep leaves out the cases keep refuses: of a baseline, those a run
// with a filter does not select.
func (o *Outcomes) Keep(keep func(suite, name string) bool) {
	o.cases = slices.DeleteFunc(o.cases, func(c caseOutcome) bool { return !keep(c.Suite, c.Name) })
}

// changeKinds are every kind, in the order a comparison lists them.
var changeKinds = ChangeKinds()

func kindIndex(k ChangeKind) int { return slices.Index(changeKinds, k) }

// CompareOptions shape Compare; nil or zero fields take the defaults.
type CompareOptions struct {
	// BaseName and NewName name the two runs in what is written (their
	// report files).
	BaseName, NewName string
	// SlowFactor and SlowMS are the duration outlier rule: a case is
	// slower when its time a trial is over SlowFactor times what BASE's
	// time and the run's median change make expected, and at least SlowMS
	// over it (faster likewise). Defaults 2 and 100.
	SlowFactor, SlowMS float64
}

// Defaults of the duration rule.
const (
	defaultSlowFactor = 2
	defaultSlowMS     = 100
)

// Comparison is what changed from one run (BASE) to another (NEW), case
// by case and check by check, in a fixed order (suite, case, check).
type Comparison struct {
	baseName, newName string
	base, new         runTally
	// changes are the cases that changed, by suite, then name (bytewise).
	changes []caseChange
	// counts[i] is how many cases have change changeKinds[i].
	counts []int
	// unchanged counts the cases in both runs with no change.
	unchanged int
	// common counts the cases in both runs.
	common    int
	durations durationRule
	trials    trialsDelta
}

// runTally counts a run's cases by status.
type runTally struct {
	Cases, Passed, Failed, Error, Skipped, Flaky int
	DurationMS                                   float64
}

// durationRule is how a comparison finds duration outliers. A case's
// duration is per trial (its duration over its trials); Median is the
// median over the cases in both runs, with a BASE duration above zero,
// of NEW's duration over BASE's (1 when there is none): how much slower
// the NEW run is as a whole (another machine, a loaded one). A case is
// slower when NEW > Factor × Median × BASE and NEW − Median × BASE >=
// MinMS; faster when NEW < Median × BASE / Factor and Median × BASE −
// NEW >= MinMS. Skipped cases are left out.
type durationRule struct {
	Factor, MinMS float64
	Median        float64
	Compared      int // cases the median is over
}

// trialsDelta is the pass^k of the cases run with trials in both runs,
// averaged over them: pass^1 (the share of trials that passed) and
// pass^K, K the fewest trials any of them had in either run.
type trialsDelta struct {
	Cases int     `json:"cases"`
	K     int     `json:"k"`
	Base1 float64 `json:"base_pass_hat_1"`
	New1  float64 `json:"new_pass_hat_1"`
	BaseK float64 `json:"base_pass_hat_k"`
	NewK  float64 `json:"new_pass_hat_k"`
	Base  int     `json:"-"` // cases with trials in BASE
	New   int     `json:"-"` // and in NEW
}

// caseChange is one case that changed.
type caseChange struct {
	Suite, Name string
	Kinds       []ChangeKind // in changeKinds order
	Base, New   *caseOutcome // nil: not in that run
	Checks      []checkChange
	// PerTrialMS are the case's durations a trial, BASE's and NEW's, for
	// a slower or faster case.
	BaseMS, NewMS float64
}

// Has reports whether the case has change k.
func (c *caseChange) Has(k ChangeKind) bool { return slices.Contains(c.Kinds, k) }

// checkChange is one check that changed: regressed, fixed, new or gone.
type checkChange struct {
	Kind  ChangeKind `json:"change"`
	Check string     `json:"check"`
	At    string     `json:"at"` // in NEW; in BASE for a gone check
}

// Count is how many cases have change k.
func (c *Comparison) Count(k ChangeKind) int {
	if i := kindIndex(k); i >= 0 {
		return c.counts[i]
	}
	return 0
}

type caseKey struct{ suite, name string }

// Compare compares two runs. It refuses a run that has a case twice.
func Compare(base, new *Outcomes, o *CompareOptions) (*Comparison, error) {
	opts := *cmp.Or(o, &CompareOptions{})
	if opts.SlowFactor <= 0 {
		opts.SlowFactor = defaultSlowFactor
	}
	if opts.SlowMS <= 0 {
		opts.SlowMS = defaultSlowMS
	}
	c := &Comparison{baseName: opts.BaseName, newName: opts.NewName, counts: make([]int, len(changeKinds))}
	c.base, c.new = tally(base), tally(new)
	inBase := make(map[caseKey]int, len(base.cases))
	for i := range base.cases {
		k := caseKey{base.cases[i].Suite, base.cases[i].Name}
		if j, dup := inBase[k]; dup {
			return nil, fmt.Errorf("%s has the case %q of %s twice (cases %d and %d): compare the reports of two runs", opts.BaseName, k.name, k.suite, j+1, i+1)
		}
		inBase[k] = i
	}
	inNew := make(map[caseKey]int, len(new.cases))
	for i := range new.cases {
		k := caseKey{new.cases[i].Suite, new.cases[i].Name}
		if j, dup := inNew[k]; dup {
			return nil, fmt.Errorf("%s has the case %q of %s twice (cases %d and %d): compare the reports of two runs", opts.NewName, k.name, k.suite, j+1, i+1)
		}
		inNew[k] = i
	}
	c.durations = newDurationRule(base, new, inBase, opts)
	c.trials = newTrialsDelta(base, new, inBase)
	for i := range new.cases {
		n := &new.cases[i]
		var b *caseOutcome
		if j, ok := inBase[caseKey{n.Suite, n.Name}]; ok {
			b = &base.cases[j]
			c.common++
		}
		c.add(diffCase(b, n, c.durations))
	}
	for i := range base.cases {
		b := &base.cases[i]
		if _, ok := inNew[caseKey{b.Suite, b.Name}]; !ok {
			c.add(diffCase(b, nil, c.durations))
		}
	}
	slices.SortFunc(c.changes, func(x, y caseChange) int {
		return cmp.Or(strings.Compare(x.Suite, y.Suite), strings.Compare(x.Name, y.Name))
	})
	return c, nil
}

func (c *Comparison) add(ch caseChange) {
	if len(ch.Kinds) == 0 {
		c.unchanged++
		return
	}
	for _, k := range ch.Kinds {
		c.counts[kindIndex(k)]++
	}
	c.changes = append(c.changes, ch)
}

func tally(o *Outcomes) runTally {
	var t runTally
	t.Cases = len(o.cases)
	for i := range o.cases {
		oc := &o.cases[i]
		switch oc.Status {
		case Passed:
			t.Passed++
		case Failed:
			t.Failed++
		case Errored:
			t.Error++
		case Skipped:
			t.Skipped++
		}
		if oc.Trials != nil && oc.Trials.Flaky {
			t.Flaky++
		}
		t.DurationMS += oc.DurationMS
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
