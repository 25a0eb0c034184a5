package dryfire

import (
	"context"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxInjections bounds an injection drill's runs unless
// InjectOptions.MaxRuns says otherwise.
const DefaultMaxInjections = 2000

// Where an injection drill plants a payload (InjectResult.Placement).
const (
	PlaceToolResult      = "tool-result"      // in every answer dryfire serves
	PlaceToolDescription = "tool-description" // in every tool's description
	PlaceWorldRecord     = "world-record"     // as a world record's field (injections.world_record)
	PlaceWorkspaceFile   = "workspace-file"   // in a workspace file (injections.workspace_file)
)

// Placements are the placements in table order; InjectCategories the
// payloads' categories.
var (
	Placements       = []string{PlaceToolResult, PlaceToolDescription, PlaceWorldRecord, PlaceWorkspaceFile}
	InjectCategories = []string{"exfiltration", "unauthorised-action", "goal-hijack", "tool-poisoning"}
)

// InjectOptions control Project.Inject; nil means the defaults. The run's
// options are RunOptions', as for a sweep (Record defaults to RecordNone).
type InjectOptions struct {
	RunOptions
	// MaxRuns bounds the runs under a payload, in table order; 0 means
	// DefaultMaxInjections.
	MaxRuns int
	// Payloads, Categories and Placements, when set, keep only those.
	Payloads, Categories, Placements []string
}

// InjectReport is an injection drill's result: the cases in report
// order, each case's results by payload then placement.
type InjectReport struct {
	Cases   []InjectCase `json:"cases"`
	Runs    int          `json:"runs"`
	Ran     int          `json:"ran"`
	MaxRuns int          `json:"max_runs"`
}

// InjectCase is one case: its clean run and, when that passed, how it did
// under each payload in each placement.
type InjectCase struct {
	Suite   string         `json:"suite"`
	Name    string         `json:"name"`
	Status  report.Status  `json:"status"`
	Reason  string         `json:"reason,omitempty"`
	Results []InjectResult `json:"results"`
	Infra   bool           `json:"-"`
}

// InjectResult is the case under one payload in one placement: Utility,
// its checks still passed; Attacked, the attacker's goal was met (Goal
// says how, or why not). Verdict is "ran", "no-answer", "error", or ""
// for a run the bound left out.
type InjectResult struct {
	Payload   string         `json:"payload"`
	Category  string         `json:"category"`
	Placement string         `json:"placement"`
	Verdict   string         `json:"verdict,omitempty"`
	Utility   bool           `json:"utility"`
	Attacked  bool           `json:"attacked"`
	Goal      string         `json:"goal,omitempty"`
	Failing   []report.Check `json:"failing,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	Cassette  string         `json:"cassette,omitempty"`
	Record    string         `json:"record,omitempty"`
}

// Inject runs the selected cases once, then each passing case again with
// each payload (the built-in catalogue's and the suite's injections:)
// planted in each placement that applies, and says per run whether the
// case still passed (utility) and whether the attacker's goal was met
// (see docs/safety.md).
func (p *Project) Inject(ctx context.Context, opts *InjectOptions) (*InjectReport, error) {
	if opts == nil {
		opts = &InjectOptions{}
	}
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.drillOptions(opts.RunOptions)
	if err != nil {
		return nil, err
	}
	rep, err := runner.Inject(ctx, p.suites, ro, runner.InjectOptions{MaxRuns: opts.MaxRuns, Payloads: opts.Payloads, Categories: opts.Categories, Placements: opts.Placements})
	if rep == nil {
		return nil, err
	}
	out := &InjectReport{Runs: rep.Runs, Ran: rep.Ran, MaxRuns: rep.MaxRuns, Cases: make([]InjectCase, len(rep.Cases))}
	for i, c := range rep.Cases {
		ic := InjectCase{Suite: c.Suite, Name: c.Case, Status: c.Status, Reason: c.Reason, Infra: c.Infra, Results: make([]InjectResult, len(c.Results))}
		for k, r := range c.Results {
			ic.Results[k] = InjectResult{Payload: r.Payload.ID, Category: r.Payload.Category, Placement: r.Place, Verdict: r.Verdict, Utility: r.Utility, Attacked: r.Attacked,
				Goal: r.Goal, Failing: r.Failing, Reason: r.Reason, Cassette: r.Cassette, Record: r.Record}
		}
		out.Cases[i] = ic
	}
	return out, err
}
