package report

// Coverage is what a run's cases exercised of their suites (run
// --coverage): every mock rule, sequence entry and world part, each with
// how often it was used. A part no case used has Calls 0.
type Coverage struct {
	Exercised int     `json:"exercised"`
	Total     int     `json:"total"`
	Percent   float64 `json:"percent"`
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
	// Kind is rule, entry (of a sequence), operation, override, fault,
	// behavior or event.
	Kind string `json:"kind"`
	At   string `json:"at"` // FILE:LINE
	// Name is the tool (rule, entry), package/operation (operation), id
	// (override, fault, event) or package/operation=function (behavior).
	Name string `json:"name"`
	// Entry is a sequence entry's place in its rule's sequence, 0-based.
	Entry *int `json:"entry,omitempty"`
	// Case names the case whose own mocks or setup hold the item.
	Case string `json:"case,omitempty"`
	// Calls is how often the item was used: calls it answered (rule,
	// entry, override, fault), calls of it (operation, behavior), times
	// it fired (event).
	Calls int `json:"calls"`
}
