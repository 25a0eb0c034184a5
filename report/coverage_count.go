package report

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// Coverage kinds, in the order items on one line are listed.
var coverageKinds = []string{"rule", "entry", "operation", "behavior", "override", "fault", "event"}

// key identifies an item within its suite: the same part of a file
// used by several cases (a data file's rows) is one item.
func itemKey(it *CoverageItem) string {
	e := -1
	if it.Entry != nil {
		e = *it.Entry
	}
	return it.Kind + "\x00" + it.At + "\x00" + it.Name + "\x00" + strconv.Itoa(e)
}

// CoverageCounter gathers one suite's items by key while a run counts
// them; not safe for concurrent use.
type CoverageCounter struct {
	suite string
	items []CoverageItem
	at    map[string]int
}

// NewCoverageCounter starts the items of suite.
func NewCoverageCounter(suite string) *CoverageCounter {
	return &CoverageCounter{suite: suite, at: map[string]int{}}
}

// Add adds it (its calls too) and returns its index; an item added again
// is the same item, its calls summed, and its case dropped when the two
// name different cases.
func (c *CoverageCounter) Add(it CoverageItem) int {
	k := itemKey(&it)
	if i, ok := c.at[k]; ok {
		c.items[i].Calls += it.Calls
		if c.items[i].Case != it.Case {
			c.items[i].Case = ""
		}
		return i
	}
	c.at[k] = len(c.items)
	c.items = append(c.items, it)
	return len(c.items) - 1
}

// Hit counts n uses of item i.
func (c *CoverageCounter) Hit(i, n int) { c.items[i].Calls += n }

// Suite is the suite's coverage (Coverage.Tally sorts and counts it).
func (c *CoverageCounter) Suite() CoverageSuite {
	return CoverageSuite{Suite: c.suite, Items: slices.Clone(c.items)}
}

// splitAt is FILE:LINE as its file and line (0 when there is none).
func splitAt(at string) (string, int) {
	i := strings.LastIndexByte(at, ':')
	if i < 0 {
		return at, 0
	}
	n, err := strconv.Atoi(at[i+1:])
	if err != nil {
		return at, 0
	}
	return at[:i], n
}

func compareItems(a, b CoverageItem) int {
	fa, la := splitAt(a.At)
	fb, lb := splitAt(b.At)
	ea, eb := -1, -1
	if a.Entry != nil {
		ea = *a.Entry
	}
	if b.Entry != nil {
		eb = *b.Entry
	}
	return cmp.Or(cmp.Compare(fa, fb), cmp.Compare(la, lb),
		cmp.Compare(slices.Index(coverageKinds, a.Kind), slices.Index(coverageKinds, b.Kind)),
		cmp.Compare(ea, eb), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Case, b.Case))
}

// percent is exercised of total as a percentage, rounded down to a tenth
// (100 only when every item is exercised; 100 when there are none).
func percent(exercised, total int) float64 {
	if total == 0 {
		return 100
	}
	return float64(exercised*1000/total) / 10
}

// Tally sorts every suite's items into (file, line) order and
// counts them.
func (c *Coverage) Tally() {
	c.Exercised, c.Total = 0, 0
	slices.SortFunc(c.Suites, func(a, b CoverageSuite) int { return cmp.Compare(a.Suite, b.Suite) })
	for i := range c.Suites {
		s := &c.Suites[i]
		slices.SortStableFunc(s.Items, compareItems)
		s.Exercised, s.Total = 0, len(s.Items)
		for _, it := range s.Items {
			if it.Calls > 0 {
				s.Exercised++
			}
		}
		s.Percent = percent(s.Exercised, s.Total)
		c.Exercised += s.Exercised
		c.Total += s.Total
	}
	c.Percent = percent(c.Exercised, c.Total)
}

// mergeCoverage adds up the coverage of a run's shards: every suite's
// items, their calls summed, as the unsharded run counts them.
func mergeCoverage(parts []*Coverage) *Coverage {
	var order []string
	suites := map[string]*CoverageCounter{}
	for _, p := range parts {
		for _, s := range p.Suites {
			c := suites[s.Suite]
			if c == nil {
				c = NewCoverageCounter(s.Suite)
				suites[s.Suite] = c
				order = append(order, s.Suite)
			}
			for _, it := range s.Items {
				c.Add(it)
			}
		}
	}
	out := &Coverage{Suites: []CoverageSuite{}}
	for _, name := range order {
		out.Suites = append(out.Suites, suites[name].Suite())
	}
	out.Tally()
	return out
}

// mergeShardCoverage is the coverage of the shards' merge: none when no
// shard counted it; every shard must have, or the figure is not the run's.
func mergeShardCoverage(reps []*Report, names []string) (*Coverage, error) {
	with, without := -1, -1
	var parts []*Coverage
	for i, r := range reps {
		switch {
		case r.Coverage != nil:
			parts = append(parts, r.Coverage)
			if with < 0 {
				with = i
			}
		case without < 0:
			without = i
		}
	}
	switch {
	case with < 0:
		return nil, nil
	case without >= 0:
		return nil, fmt.Errorf("%s has coverage but %s has none: run every shard with --coverage, or none", names[with], names[without])
	}
	return mergeCoverage(parts), nil
}

// maxUnexercisedLines bounds the unexercised items the text lists per
// suite; the JSON report has them all.
const maxUnexercisedLines = 50

// coverageText is the coverage as a person reads it at the end of a run:
// a line for the run and one per suite, then each suite's unexercised
// items (verbose: every item, with its calls).
func coverageText(c *Coverage, verbose bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "coverage: %s of %d exercised (%.1f%%)\n", strconv.Itoa(c.Exercised), c.Total, c.Percent)
	for _, s := range c.Suites {
		fmt.Fprintf(&b, "  %s: %s of %d (%.1f%%)\n", termtext.Printable(s.Suite), strconv.Itoa(s.Exercised), s.Total, s.Percent)
		listed, left := 0, 0
		for _, it := range s.Items {
			switch {
			case it.Calls == 0 && listed < maxUnexercisedLines:
				listed++
				fmt.Fprintf(&b, "    %s: %s: never\n", termtext.Printable(it.At), describeItem(it))
			case it.Calls == 0:
				left++
			case verbose:
				fmt.Fprintf(&b, "    %s: %s: %s\n", termtext.Printable(it.At), describeItem(it), uses(it))
			}
		}
		if left > 0 {
			fmt.Fprintf(&b, "    and %s never exercised (the JSON report lists them all)\n", termtext.Count(left, "more item"))
		}
	}
	return b.String()
}

// uses says how often an item was used: an event's firings, the others'
// calls.
func uses(it CoverageItem) string {
	if it.Kind == "event" {
		return "fired " + termtext.Count(it.Calls, "time")
	}
	return termtext.Count(it.Calls, "call")
}

// describeItem names an item: its kind, its name, its entry, its case.
func describeItem(it CoverageItem) string {
	s := it.Kind + " " + termtext.Printable(it.Name)
	if it.Entry != nil {
		s = fmt.Sprintf("sequence entry %d of %s", *it.Entry+1, termtext.Printable(it.Name))
	}
	if it.Case != "" {
		s += " (case " + strconv.Quote(termtext.Printable(it.Case)) + ")"
	}
	return s
}
