package runner

import (
	"sync"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

// coverage counts what a run's cases exercised of their suites
// (Options.Coverage). It is read off what each case kept anyway, once
// the case is over: the rule and sequence entry of every tool record
// (tool.Result.Rule, Entry) and the drill's evidence and override counts
// (world.Instance.Coverage). Nothing is counted on the tool-call path.
type coverage struct {
	mu     sync.Mutex
	suites map[string]*suiteCoverage // by suite file
}

// suiteCoverage is one suite's items, made when its first case ends.
type suiteCoverage struct {
	mu      sync.Mutex
	items   *report.CoverageCounter
	rules   map[string]int   // a rule's FILE:LINE → its item
	entries map[string][]int // a sequence rule's FILE:LINE → its entries' items
}

// suite is j's suite's coverage, its suite-wide items (the suite's rules,
// its world's parts) laid out the first time.
func (cv *coverage) suite(j job) *suiteCoverage {
	cv.mu.Lock()
	defer cv.mu.Unlock()
	sc := cv.suites[j.suite.File]
	if sc != nil {
		return sc
	}
	sc = &suiteCoverage{items: report.NewCoverageCounter(j.suite.File), rules: map[string]int{}, entries: map[string][]int{}}
	for _, name := range j.suite.MockOrder {
		sc.addRules(j.suite.Mocks[name], "")
	}
	if sw := j.plan.Suite.World; sw != nil {
		for _, it := range sw.World.CoverageItems() {
			sc.items.Add(it)
		}
	}
	cv.suites[j.suite.File] = sc
	return sc
}

// addRules lays out rules and their sequence entries (cas: the case whose
// own mocks they are). Call with sc.mu held, or before sc is shared.
func (sc *suiteCoverage) addRules(rules []*spec.Rule, cas string) {
	for _, r := range rules {
		at := r.Pos.FileLine()
		if _, ok := sc.rules[at]; ok {
			continue
		}
		sc.rules[at] = sc.items.Add(report.CoverageItem{Kind: "rule", At: at, Name: r.Tool, Case: cas})
		if r.Outcome.Kind != spec.Sequence {
			continue
		}
		es := make([]int, len(r.Outcome.Sequence))
		for i, e := range r.Outcome.Sequence {
			eat := at
			if e.Pos.Line > 0 {
				eat = e.Pos.FileLine()
			}
			k := i
			es[i] = sc.items.Add(report.CoverageItem{Kind: "entry", At: eat, Name: r.Tool, Entry: &k, Case: cas})
		}
		sc.entries[at] = es
	}
}

// count adds what one finished case (one trial) exercised.
func (cv *coverage) count(j job, r *ran) {
	sc := cv.suite(j)
	var drilled []report.CoverageItem
	if r.drill != nil {
		drilled = r.drill.Coverage(j.c.Name, j.c.Pos.FileLine(), j.suite.File)
	}
	sc.mu.Lock()
	defer sc.mu.Unlock()
	for _, name := range j.c.MockOrder {
		sc.addRules(j.c.Mocks[name], j.c.Name)
	}
	for i := range r.recs {
		res := &r.recs[i].Result
		if res.Rule == "" {
			continue
		}
		if k, ok := sc.rules[res.Rule]; ok {
			sc.items.Hit(k, 1)
		}
		if es := sc.entries[res.Rule]; res.Entry >= 0 && res.Entry < len(es) {
			sc.items.Hit(es[res.Entry], 1)
		}
	}
	for _, it := range drilled {
		sc.items.Add(it) // its calls too
	}
}

// report is the run's coverage, its suites in file order.
func (cv *coverage) report() *report.Coverage {
	out := &report.Coverage{Suites: []report.CoverageSuite{}}
	for _, sc := range cv.suites {
		out.Suites = append(out.Suites, sc.items.Suite())
	}
	out.Tally()
	return out
}
