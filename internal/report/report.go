// Package report holds the results of a run and writes them: the JSON
// report, JUnit XML, and the lines a person reads in a terminal or a CI log.
package report

import (
	"encoding/json"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/workspace"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// Status of a case.
type Status string

const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Errored Status = "error"
	Skipped Status = "skipped"
)

// Report is the result of a run.
type Report struct {
	Cases   []Case  `json:"cases"`
	Summary Summary `json:"summary"`
	// Shard, in the report of one shard of a run (--shard I/N), says
	// which part it is; a merge of all the parts has none.
	Shard *Shard `json:"shard,omitempty"`
	// Coverage, of a run with coverage (run --coverage), is what its
	// cases exercised of their suites' rules and worlds.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Totals, in the report of a run, are its cases counted as they
	// were done: all there is of them when the run kept no case
	// (runner.Options.Lean).
	Totals *Totals `json:"-"`
	// Recheck, in a report dryfire recheck wrote, says that its checks
	// were applied again to a stored run, and to which.
	Recheck *Recheck `json:"recheck,omitempty"`
	// Mutation, of a run with run --mutate, is each suite's mutation
	// score (the cases' own mutations are CaseMutation).
	Mutation []MutationScore `json:"mutation,omitempty"`
}

// Summary counts cases by status.
type Summary struct {
	Passed  int `json:"passed"`
	Failed  int `json:"failed"`
	Error   int `json:"error"`
	Skipped int `json:"skipped"`
	// Flaky counts the cases run several times (trials) of which some
	// trials passed and some did not.
	Flaky int `json:"flaky,omitempty"`
	// Usage is the total of the cases' token counts (as recorded, for
	// replayed calls).
	Usage model.Usage `json:"usage"`
	// UsageByRole splits Usage by who called the model, when a case's
	// judge or simulated user did (a case without a split counts as its
	// agent's).
	UsageByRole *RoleUsage `json:"usage_by_role,omitempty"`
}

// RoleUsage is a case's (or a run's) tokens by who spent them: the agent,
// its judge checks, its model-driven user.
type RoleUsage struct {
	Agent model.Usage `json:"agent"`
	Judge model.Usage `json:"judge"`
	User  model.Usage `json:"user"`
}

func (r *RoleUsage) add(o *RoleUsage) {
	addUsage(&r.Agent, o.Agent)
	addUsage(&r.Judge, o.Judge)
	addUsage(&r.User, o.User)
}

func addUsage(to *model.Usage, u model.Usage) {
	to.InputTokens += u.InputTokens
	to.OutputTokens += u.OutputTokens
}

// AddUsage counts tokens a case's judge ("judge") or simulated user
// ("user") spent: into the case's Usage and, split from the agent's
// (Usage so far), into UsageByRole. Nothing spent changes nothing.
func (c *Case) AddUsage(role string, u model.Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	if c.UsageByRole == nil {
		c.UsageByRole = &RoleUsage{Agent: c.Usage}
	}
	switch role {
	case "judge":
		addUsage(&c.UsageByRole.Judge, u)
	case "user":
		addUsage(&c.UsageByRole.User, u)
	default:
		addUsage(&c.UsageByRole.Agent, u)
	}
	addUsage(&c.Usage, u)
}

// Case is the result of one case.
type Case struct {
	Suite string `json:"suite"` // the suite file
	Name  string `json:"name"`
	// Input is the case's input: the first user message.
	Input     string      `json:"input,omitempty"`
	Status    Status      `json:"status"`
	Reason    string      `json:"reason"`
	Checks    []Check     `json:"checks"`
	ToolCalls []ToolCall  `json:"tool_calls"`
	Output    string      `json:"output"`
	Turns     int         `json:"turns"`
	Usage     model.Usage `json:"usage"`
	// UsageByRole splits Usage, when the case's judge checks or its
	// model-driven user spent tokens too: Usage is the sum of the three.
	UsageByRole *RoleUsage `json:"usage_by_role,omitempty"`
	Notes       []string   `json:"notes"`
	// Cassette is the file the case's model calls are recorded in (real
	// providers; never for a case that runs passthrough code).
	Cassette string `json:"cassette,omitempty"`
	// Replay says how the case's requests strayed from its recording: a
	// request that differs (with the differences), one beyond the end,
	// recorded calls left unplayed. Such a case fails.
	Replay string `json:"replay,omitempty"`
	// Stderr is the end of what an agent.command program wrote on
	// standard error (its last lines), for a case that did not pass.
	Stderr string `json:"stderr,omitempty"`
	// ModelFaults are the declared faults (model_faults) as they were
	// served to the agent's model requests.
	ModelFaults []ModelFault `json:"model_faults,omitempty"`
	// Script, in a scripted case whose agent talks to the model endpoint
	// (agent.command, an SDK's drill), is each model request in arrival
	// order beside the turn of the case's script that answered it.
	Script []ScriptTurn `json:"script,omitempty"`
	// MCP are the agent's MCP requests beside its tool calls, in the
	// order they were answered: reads of the suite's resources, gets of
	// its prompts, completions (an error for each one not answered).
	MCP []tool.MCPUse `json:"mcp,omitempty"`
	// Network is the network an agent.command program had, when it was
	// isolated: what it tried to reach past dryfire (refused).
	Network *Network `json:"network,omitempty"`
	// Workspace is what the agent changed in the case's workspace (a
	// case with workspace:).
	Workspace *Workspace `json:"workspace,omitempty"`
	// Drill fields (world suites): the verdict (the case's status), the
	// seed, the derived build and its hash, the final state, the evidence
	// of every operation and the events behaviors emitted.
	Verdict   Status          `json:"verdict,omitempty"`
	Seed      *int64          `json:"seed,omitempty"`
	BuildHash string          `json:"build_hash,omitempty"`
	Build     json.RawMessage `json:"build,omitempty"`
	// InitialState is the world's state when the drill began (its
	// scenario's setup), beside its final State.
	InitialState map[string]any   `json:"initial_state,omitempty"`
	State        map[string]any   `json:"state,omitempty"`
	Evidence     []world.Evidence `json:"evidence,omitempty"`
	Events       []world.Emitted  `json:"events,omitempty"`
	// Conversation, in a case with a simulated user (user:), is who said
	// what: each user message and the agent's reply to it, by turn.
	Conversation []Message `json:"conversation,omitempty"`
	// Trials, for a case run more than once (--trials, trials:): how
	// many passed, pass@k and pass^k, and every trial's own result.
	Trials *Trials `json:"trials,omitempty"`
	// Mutation, of a passing case of a run with --mutate, is how its
	// checks fared against its transcript mutated.
	Mutation *CaseMutation `json:"mutation,omitempty"`
	// DurationMS is wall time; the only field that varies between runs.
	DurationMS float64 `json:"duration_ms"`

	// Infra marks an error of the surroundings (a provider unreachable, a
	// cassette missing) rather than of the agent or the suite.
	Infra bool `json:"-"`
	// Live counts the model requests that went to a live API.
	Live int `json:"-"`
}

// Message is one message of a conversation: the user's or the agent's
// (role "user" or "agent"), in turn Turn (1 is input and its reply); an
// agent's reply came from model turns up to ModelTurn (tool calls with a
// turn after the previous reply's ModelTurn were made for it).
type Message struct {
	Role      string `json:"role"`
	Turn      int    `json:"turn"`
	Text      string `json:"text"`
	ModelTurn int    `json:"model_turn,omitempty"`
}

// ScriptTurn is one model request of a scripted case and the turn of the
// script that answered it (Turn 0: none did; the case errs).
type ScriptTurn struct {
	Request  int    `json:"request"`
	Turn     int    `json:"turn"`
	API      string `json:"api"`
	Streamed bool   `json:"streamed"`
	// LastMessage is the request's last message: its role (or tool and
	// name) and its text.
	LastMessage string `json:"last_message"`
	// Refused: the request was answered with an error (no turn holds for
	// it, or its turn calls a tool it does not offer): the case's reason.
	Refused bool `json:"refused,omitempty"`
}

// ModelFault is a declared fault as it was served: the request it
// answered, what it did, and whether the client sent that request again.
type ModelFault struct {
	Request int    `json:"request"`
	API     string `json:"api"`
	Fault   string `json:"fault"`
	Retried bool   `json:"retried"`
}

// Network is an agent program's isolated network: its mode and what the
// program tried to reach there other than dryfire, in a fixed order.
type Network struct {
	Mode     string            `json:"mode"`
	Attempts []netjail.Attempt `json:"attempts"`
}

// Workspace is a case's workspace after the run: its changes against the
// template, and where it was kept, if it was.
type Workspace struct {
	Template string             `json:"template"`
	Changes  []workspace.Change `json:"changes"`
	More     int                `json:"more_changes,omitempty"` // changes not listed
	Kept     string             `json:"kept,omitempty"`         // the directory, kept (--keep-workspaces)
}

// Check is the result of one check.
type Check struct {
	Check   string `json:"check"`
	At      string `json:"at"` // FILE:LINE of the check
	Passed  bool   `json:"passed"`
	Message string `json:"message"`
	// Invariant marks one of the suite's invariants (invariants:).
	Invariant bool `json:"invariant,omitempty"`
	// Judge is a judge check's verdict (judge checks only).
	Judge *Judged `json:"judge,omitempty"`
}

// Judged is what a judge check's model answered: its verdict and its
// reasoning, and where the call is recorded.
type Judged struct {
	Provider  string   `json:"provider"`
	Model     string   `json:"model"`
	Pass      bool     `json:"pass"`
	Score     *float64 `json:"score,omitempty"`
	Reasoning string   `json:"reasoning"`
	Cassette  string   `json:"cassette"`
}

// ToolCall is one call the agent made and what it got back.
type ToolCall struct {
	Turn    int             `json:"turn"`
	ID      string          `json:"id"`
	Tool    string          `json:"tool"`
	Args    json.RawMessage `json:"args"`
	Outcome tool.Outcome    `json:"outcome"`
	// Where is "own" for a call the agent ran itself (one of its own
	// tools, seen on the model wire: no outcome, no rule; its result is
	// what the agent sent the model); "" for a call dryfire served.
	Where    string         `json:"where,omitempty"`
	Rule     string         `json:"rule"`
	IsError  bool           `json:"is_error"`
	Result   string         `json:"result"`
	NearMiss *tool.NearMiss `json:"near_miss,omitempty"`
	// Asked is what the call asked the agent's MCP client (a rule's
	// elicit or sample) and what it answered.
	Asked *tool.Asked `json:"asked,omitempty"`
}

// Tally recomputes the summary from the cases.
func (r *Report) Tally() {
	t := TotalsOf(r)
	r.Summary, r.Mutation = t.Summary, t.Mutation()
}
