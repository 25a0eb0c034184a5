package dryfire

import "github.com/dryfire-dev/dryfire/internal/report"

// Coverage is what a run's cases exercised of their suites
// (RunOptions.Coverage, `dryfire run --coverage`): every mock rule,
// sequence entry and world part (operation, behavior, override, fault,
// scheduled event), each with how often it was used; 0 is never.
type Coverage struct {
	Exercised int     `json:"exercised"`
	Total     int     `json:"total"`
	Percent   float64 `json:"percent"` // rounded down to a tenth
	// Suites are in file order.
	Suites []CoverageSuite `json:"suites"`
}

// CoverageSuite is one suite's coverage, its items in (file, line) order.
type CoverageSuite struct {
	Suite     string         `json:"suite"`
	Exercised int            `json:"exercised"`
	Total     int            `json:"total"`
	Percent   float64        `json:"percent"`
	Items     []CoverageItem `json:"items"`
}

// CoverageItem is one part of a suite or its world.
type CoverageItem struct {
	// Kind is rule, entry (of a sequence), operation, behavior,
	// override, fault or event.
	Kind string `json:"kind"`
	At   string `json:"at"` // FILE:LINE
	// Name is the tool (rule, entry), package/operation (operation),
	// package/operation=function (behavior) or id (override, fault,
	// event; an override without one: its operation).
	Name string `json:"name"`
	// Entry is a sequence entry's place in its sequence, 0-based.
	Entry *int `json:"entry,omitempty"`
	// Case names the case whose own mocks or setup hold the item.
	Case string `json:"case,omitempty"`
	// Calls is how often the item was used (an event: how often it fired).
	Calls int `json:"calls"`
}

func coverageOf(c *report.Coverage) *Coverage {
	if c == nil {
		return nil
	}
	out := &Coverage{Exercised: c.Exercised, Total: c.Total, Percent: c.Percent, Suites: make([]CoverageSuite, len(c.Suites))}
	for i, s := range c.Suites {
		cs := CoverageSuite{Suite: s.Suite, Exercised: s.Exercised, Total: s.Total, Percent: s.Percent, Items: make([]CoverageItem, len(s.Items))}
		for k, it := range s.Items {
			cs.Items[k] = CoverageItem(it)
		}
		out.Suites[i] = cs
	}
	return out
}

func internalCoverage(c *Coverage) *report.Coverage {
	if c == nil {
		return nil
	}
	out := &report.Coverage{Exercised: c.Exercised, Total: c.Total, Percent: c.Percent, Suites: make([]report.CoverageSuite, len(c.Suites))}
	for i, s := range c.Suites {
		cs := report.CoverageSuite{Suite: s.Suite, Exercised: s.Exercised, Total: s.Total, Percent: s.Percent, Items: make([]report.CoverageItem, len(s.Items))}
		for k, it := range s.Items {
			cs.Items[k] = report.CoverageItem(it)
		}
		out.Suites[i] = cs
	}
	return out
}
