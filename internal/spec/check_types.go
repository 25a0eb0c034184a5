package spec

import (
	"regexp"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	yaml "go.yaml.in/yaml/v4"
)

// The checks of a case's expect list: their kinds, modes and fields.

// CheckKind names a check.
type CheckKind string

const (
	CheckCalled     CheckKind = "called"
	CheckNotCalled  CheckKind = "not_called"
	CheckOrder      CheckKind = "order"
	CheckOutput     CheckKind = "output"
	CheckMaxTurns   CheckKind = "max_turns"
	CheckNoErrors   CheckKind = "no_errors"
	CheckState      CheckKind = "state"
	CheckEvent      CheckKind = "event"
	CheckFile       CheckKind = "file"
	CheckCommand    CheckKind = "command"
	CheckTrajectory CheckKind = "trajectory"
	CheckPolicy     CheckKind = "policy"
	CheckNotLeaked  CheckKind = "not_leaked"
	CheckJudge      CheckKind = "judge"
	CheckRead       CheckKind = "read"
	CheckNotRead    CheckKind = "not_read"
	CheckPrompted   CheckKind = "prompted"
	CheckElicited   CheckKind = "elicited"
	CheckSampled    CheckKind = "sampled"
)

// Trajectory match modes: how the calls made compare with a trajectory
// check's calls.
const (
	TrajectoryStrict    = "strict"    // the same calls, in the same order
	TrajectoryUnordered = "unordered" // the same calls, in any order
	TrajectorySubset    = "subset"    // every call made is one of the check's
	TrajectorySuperset  = "superset"  // every call of the check was made
)

// Trajectory argument modes: how a call's arguments compare with an
// entry's with.
const (
	ArgsSubset = "subset" // with is a deep subset of the arguments
	ArgsExact  = "exact"  // the arguments equal with
	ArgsIgnore = "ignore" // only tool names count
)

// TrajectoryCall is one entry of a trajectory check.
type TrajectoryCall struct {
	Tool string
	With *value.Pattern // nil: any arguments
	Pos  yamlpos.Pos
}

// ArgMatch is an argument a call check wants to match Re (written Src).
type ArgMatch struct {
	Arg, Src string
	Re       *regexp.Regexp
}

// TurnAny, as Check.Turn, is an output check on any of the replies.
const TurnAny = -1

// Judge is a judge check: a model grades the case against Rubric.
type Judge struct {
	Rubric    string
	Provider  string // resolved: the check's, else the agent's
	Model     string // resolved: the check's, else the agent's
	BaseURL   string // the agent's base_url when the provider is the agent's
	Threshold *float64
	// Index is the check's place among its case's judge checks
	// (1-based): its cassette is CASE.judge-INDEX.json.
	Index int
}

// CheckKinds lists every check, in documentation order.
var CheckKinds = []string{"called", "not_called", "order", "trajectory", "policy", "not_leaked", "judge", "output", "max_turns", "no_errors", "state", "event", "file", "read", "not_read", "prompted", "elicited", "sampled"}

// Where a tool call ran, as a check's where: says.
const (
	WhereOwn    = "own"    // the agent ran it itself (seen on the model wire)
	WhereServed = "served" // dryfire answered it
)

// Check is one entry of a case's expect list.
type Check struct {
	Kind CheckKind
	Pos  yamlpos.Pos
	// Source is the check as written, in canonical JSON, for reports.
	Source string

	// Invariant: the check is one of the suite's invariants.
	Invariant bool

	// Where restricts the calls a check looks at to those that ran
	// there: WhereOwn, WhereServed; "": all of them.
	Where string
	// Matching are the arguments a called or not_called check wants to
	// match a regular expression, by name (a string as it is, another
	// value as its JSON text).
	Matching []ArgMatch

	// called / not_called
	Tool  string
	With  *value.Pattern
	Times *int
	Min   *int
	Max   *int

	// order
	Order []string

	// read / not_read: a resource's URI (Times as for called);
	// prompted: a prompt's name and the arguments it was got with.
	URI        string
	Prompt     string
	PromptWith map[string]string

	// elicited: the answer's action and a deep subset of its content;
	// sampled: text of the answer (Contains) and its model. Tool, With
	// and Times as for called.
	Action        string
	AnswerContent *value.Pattern
	Model         string

	// trajectory: the calls, the match mode and the argument mode
	// (defaults strict and subset).
	Trajectory      []*TrajectoryCall
	TrajectoryMatch string
	TrajectoryArgs  string

	// policy: the rule (policy.go).
	Policy *Policy
	// not_leaked: the strings that must not leave the agent.
	Secrets []string

	// judge: the rubric and the judge's model (the agent's when not
	// given: Judge has them resolved), and the score to pass at (nil: the
	// verdict's pass decides).
	Judge *Judge

	// output
	Contains   *string
	Regex      *regexp.Regexp
	Equals     *string
	JSONSchema *jschema.Schema
	// Turn is which reply an output check reads in a conversation: 0
	// the last, TurnAny any of them, else the reply to the Nth user
	// message.
	Turn int

	// max_turns
	MaxTurns int

	// called / not_called in a world suite: an operation (package/op)
	// instead of a tool, and optionally an actor and an evidence outcome.
	Operation string
	Actor     string
	Outcome   string

	// state: Path, then one of Equals (StateEquals), Contains, Absent,
	// Count.
	Path        string
	StateEquals any
	HasEquals   bool
	StateHas    any
	HasContains bool
	Absent      bool
	Count       *int
	// StateOrdered is the check's ordered: how equals compares lists
	// (nil: as multisets, except a collection declared ordered).
	StateOrdered *bool

	// event: Type, Data (a deep subset), Count.
	EventType string
	EventData *value.Pattern

	// file: File (a slash path in the workspace), then Exists or Absent,
	// or any of Contains, Regex, Equals (the text), SHA256 and JSONPath
	// (with JSONEquals when HasEquals).
	File string
	// command: Run, a shell command line run in the workspace after the
	// program, its exit code ExitCode, bounded by RunTimeout seconds (0:
	// DefaultCommandTimeout); Contains and Regex on its output.
	Run        string
	ExitCode   int
	RunTimeout float64
	Exists     bool
	SHA256     string // lower-case hex
	JSONPath   string
	JSONEquals any

	withNode  *yaml.Node
	judgeNode *yaml.Node // the judge check's value
	// srcNode and srcVal are the check's value, its Source once made
	// (decoder.lateSources).
	srcNode   *yaml.Node
	srcVal    any
	turnNode  *yaml.Node   // an output check's turn
	toolNodes []*yaml.Node // where each tool name of the check is written
}
