package report

import (
	"fmt"
	"strconv"
	"strings"
)

// The results of a fault sweep (dryfire sweep), an injection drill
// (dryfire inject), a proof of the cases (dryfire prove) and a
// verification's drifts (dryfire verify), and a run's case list (dryfire
// run --list), as their --json writes them.

// The failures a sweep gives a call (SweepPoint.Kind).
const (
	FaultDeclared  = "error"      // a declared error of the operation, or the tool's error rule
	FaultToolError = "tool-error" // an error the operation does not declare (MCP isError; a world's HTTP route answers 500)
	FaultTimeout   = "timeout"    // a call that timed out, answered at once (a world's HTTP route: 504)
	// Answers corrupted rather than failed (docs/safety.md).
	FaultTruncated  = "truncated"  // the answer cut in half
	FaultStale      = "stale"      // the tool's previous answer again
	FaultMalformed  = "malformed"  // JSON with single quotes
	FaultOversized  = "oversized"  // padded to 256 KiB
	FaultDuplicated = "duplicated" // delivered twice: a world's operation runs twice
	FaultInjected   = "injected"   // an instruction planted in the answer
	FaultLost       = "lost"       // a world's operation committed, its answer lost: a timeout
)

// FaultKinds are every kind of failure a sweep gives, in the order a
// call's points are listed.
var FaultKinds = []string{FaultDeclared, FaultToolError, FaultTimeout, FaultTruncated, FaultStale, FaultMalformed, FaultOversized, FaultDuplicated, FaultInjected, FaultLost}

// The verdicts of a sweep point (PointResult.Verdict).
const (
	PointSurvived   = "survived"    // the case's checks still pass
	PointFailed     = "failed"      // some of its checks fail
	PointUnsafe     = "unsafe"      // it broke an invariant (Failing has it)
	PointError      = "error"       // the case erred (the agent crashed, ran out of turns, ...)
	PointNoAnswer   = "no-answer"   // the model had no answer offline for the new branch
	PointNotReached = "not-reached" // the case did not make that call this time
)

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

// SweepReport is the result of a sweep, in a fixed order: the cases in
// report order, each case's points by call, then declared errors (by
// code), the tool error and the timeout.
type SweepReport struct {
	Cases []SweepCase `json:"cases"`
	// Points is how many points the cases have, Ran how many ran: fewer
	// when MaxPoints (the bound) cut them.
	Points    int `json:"points"`
	Ran       int `json:"ran"`
	MaxPoints int `json:"max_points"`
}

// SweepCase is one case of a sweep: its run without a failure and, when
// that passed, its points.
type SweepCase struct {
	Suite  string `json:"suite"`
	Name   string `json:"name"`
	Status Status `json:"status"`
	Reason string `json:"reason,omitempty"`
	Calls  int    `json:"calls"`
	// Seed is the drill's seed (world suites): every point ran with it.
	Seed   *int64        `json:"seed,omitempty"`
	Points []PointResult `json:"points"`
	// Infra marks a case that erred through its surroundings (a provider
	// unreachable, a cassette missing) before any failure.
	Infra bool `json:"-"`
}

// SweepPoint is one failure of one call of a case: Call (1-based, in
// the order the calls started) to Tool fails as Kind says.
type SweepPoint struct {
	ID   string `json:"id"`
	Call int    `json:"call"`
	Tool string `json:"tool"`
	Kind string `json:"kind"`
	// Code is a world operation's declared error; Message and Rule a
	// mock's error rule (its FILE:LINE).
	Code    string `json:"code,omitempty"`
	Message string `json:"message,omitempty"`
	Rule    string `json:"rule,omitempty"`
	// Failure says what the call answers, for people.
	Failure string `json:"failure"`
}

// PointResult is how a case did with one point's failure. Ran is false
// for a point the bound left out (Verdict is then empty).
type PointResult struct {
	Point   SweepPoint `json:"point"`
	Ran     bool       `json:"ran"`
	Verdict string     `json:"verdict,omitempty"`
	Failing []Check    `json:"failing,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	// Cassette is the point's own cassette (a real model); Record, for
	// a point with no answer offline, the --record mode that records it:
	// once (the cassette is missing), all (its requests differ).
	Cassette string `json:"cassette,omitempty"`
	Record   string `json:"record,omitempty"`
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
	Status  Status         `json:"status"`
	Reason  string         `json:"reason,omitempty"`
	Results []InjectResult `json:"results"`
	Infra   bool           `json:"-"`
}

// InjectResult is the case under one payload in one placement: Utility,
// its checks still passed; Attacked, the attacker's goal was met (Goal
// says how, or why not). Verdict is "ran", "no-answer", "error", or ""
// for a run the bound left out.
type InjectResult struct {
	Payload   string  `json:"payload"`
	Category  string  `json:"category"`
	Placement string  `json:"placement"`
	Verdict   string  `json:"verdict,omitempty"`
	Utility   bool    `json:"utility"`
	Attacked  bool    `json:"attacked"`
	Goal      string  `json:"goal,omitempty"`
	Failing   []Check `json:"failing,omitempty"`
	Reason    string  `json:"reason,omitempty"`
	Cassette  string  `json:"cassette,omitempty"`
	Record    string  `json:"record,omitempty"`
}

// Proof is how a case fared under Project.Prove (dryfire prove): its
// reference solution must pass; an agent that does nothing, and one that
// calls its tools at random, must not.
type Proof struct {
	Suite string `json:"suite"`
	Case  string `json:"case"`
	// Reference names the case's reference solution: "its script", or
	// "its trajectory at FILE:LINE"; "" when it has none, and NoReference
	// says why.
	Reference   string `json:"reference"`
	NoReference string `json:"no_reference,omitempty"`
	// Ran is the reference's run (nil: none declared): a case that did
	// not pass is a drill no agent can pass as written.
	Ran *Case `json:"ran,omitempty"`
	// Nothing and Random are the checks that let the do-nothing agent and
	// the random agent through, each "CHECK (AT)", when the case passed
	// for it; nil when it failed, as it should.
	Nothing []string `json:"nothing,omitempty"`
	Random  []string `json:"random,omitempty"`
}

// Proven says the case is as it should be: its reference (if any)
// passes, and neither stand-in agent does.
func (p *Proof) Proven() bool {
	return (p.Ran == nil || p.Ran.Status == Passed) && p.Nothing == nil && p.Random == nil
}

// CaseList is what a run would run, each case with its id: `dryfire run
// --list --json`.
type CaseList struct {
	// Version is the format's, 1.
	Version int `json:"version"`
	// Suites identifies the run, as its parts' reports do
	// (Shard.Suites): a merge checks a list against them.
	Suites string       `json:"suites"`
	Cases  []ListedCase `json:"cases"`
}

// ListedCase is a case of a CaseList.
type ListedCase struct {
	ID     string   `json:"id"`
	Suite  string   `json:"suite"`
	Name   string   `json:"name"`
	Tags   []string `json:"tags"`
	Trials int      `json:"trials"`
	Skip   bool     `json:"skip,omitempty"`
	// ExpectedMS is the case's duration in the report the list was made with,
	// when it has the case.
	ExpectedMS *float64 `json:"expected_ms,omitempty"`
}

// Drift is how one recorded request's answer, a tool's declaration or a
// recorded tool call's answer drifted from its upstream (dryfire verify):
// Case is empty for a suite's own, Request is the request's place in the
// case's cassette (0 for tools), What names it, Differences say how (a path with "-recorded +now", a field added,
// removed or retyped, a stop reason, the tool calls, a stream's events).
type Drift struct {
	Suite       string   `json:"suite"`
	Case        string   `json:"case"`
	Request     int      `json:"request"`
	What        string   `json:"what"`
	Differences []string `json:"differences"`
}

// ParsePointID checks a sweep point's ID (SweepPoint.ID):
// CALL:TOOL:KIND[:CODE].
func ParsePointID(id string) error {
	call, rest, ok := strings.Cut(id, ":")
	n, err := strconv.Atoi(call)
	if !ok || err != nil || n < 1 {
		return fmt.Errorf("point %q: want CALL:TOOL:KIND, CALL the call's number (from 1), e.g. 2:save_record:timeout", id)
	}
	for _, k := range FaultKinds {
		if tool, ok := strings.CutSuffix(rest, ":"+k); ok && tool != "" {
			return nil
		}
	}
	if i := strings.LastIndex(rest, ":"+FaultDeclared+":"); i > 0 && i+len(FaultDeclared)+2 < len(rest) {
		return nil
	}
	return fmt.Errorf("point %q: the failure is error, error:CODE or one of %s", id, strings.Join(FaultKinds[1:], ", "))
}
