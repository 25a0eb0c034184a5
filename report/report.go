// Package report is the result of a dryfire run, as `dryfire run --json`
// writes it: a Report of cases (Case), each with its checks, tool calls,
// output and, for a world suite, its drill's evidence. The same types are
// what the dryfire package's Project.Run returns, what the run's text,
// JSON, JUnit and HTML reports are written from (NewText, WriteJSON,
// JUnit, HTML), and what Merge, Compare and recheck read back.
package report

import "encoding/json"

// Status is a case's status.
type Status string

// Case statuses.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Errored Status = "error"
	Skipped Status = "skipped"
)

// Report is the result of a run, as `dryfire run --json` writes it.
type Report struct {
	Cases   []Case  `json:"cases"`
	Summary Summary `json:"summary"`
	// Shard, in the report of one shard of a run (--shard I/N), says
	// which part it is; a merge of all the parts has none.
	Shard *Shard `json:"shard,omitempty"`
	// Coverage, of a run with coverage (run --coverage), is what its
	// cases exercised of their suites' rules and worlds; a merge adds up
	// the shards'.
	Coverage *Coverage `json:"coverage,omitempty"`
	// Totals, in the report of a run, are its cases counted as they
	// were done: all there is of most of them when the run streamed its
	// cases to the reports (Stream) and kept only some.
	Totals *Totals `json:"-"`
	// Recheck, in a report dryfire recheck wrote, says that its checks
	// are the suites' current ones applied again to a stored run.
	Recheck *Recheck `json:"recheck,omitempty"`
	// Mutation, of a run with run --mutate, is each suite's mutation
	// score, in report order (the cases' own mutations are CaseMutation).
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
	Usage Usage `json:"usage"`
	// UsageByRole splits Usage by who called the model, when a case's
	// judge or simulated user did (a case without a split counts as its
	// agent's).
	UsageByRole *RoleUsage `json:"usage_by_role,omitempty"`
}

// Usage counts a model's tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// RoleUsage is a case's (or a run's) tokens by who spent them: the agent,
// its judge checks, its model-driven user.
type RoleUsage struct {
	Agent Usage `json:"agent"`
	Judge Usage `json:"judge"`
	User  Usage `json:"user"`
}

func (r *RoleUsage) add(o *RoleUsage) {
	addUsage(&r.Agent, o.Agent)
	addUsage(&r.Judge, o.Judge)
	addUsage(&r.User, o.User)
}

func addUsage(to *Usage, u Usage) {
	to.InputTokens += u.InputTokens
	to.OutputTokens += u.OutputTokens
}

// Case is the result of one case.
type Case struct {
	Suite string `json:"suite"` // the suite file
	Name  string `json:"name"`
	// Input is the case's input: the first user message.
	Input     string     `json:"input,omitempty"`
	Status    Status     `json:"status"`
	Reason    string     `json:"reason"`
	Checks    []Check    `json:"checks"`
	ToolCalls []ToolCall `json:"tool_calls"`
	Output    string     `json:"output"`
	Turns     int        `json:"turns"`
	Usage     Usage      `json:"usage"`
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
	MCP []MCPUse `json:"mcp,omitempty"`
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
	InitialState map[string]any `json:"initial_state,omitempty"`
	State        map[string]any `json:"state,omitempty"`
	Evidence     []Evidence     `json:"evidence,omitempty"`
	Events       []Event        `json:"events,omitempty"`
	// Conversation, in a case with a simulated user (user:), is who said
	// what: each user message and the agent's reply to it, by turn.
	Conversation []Message `json:"conversation,omitempty"`
	// Trials, for a case run more than once (--trials, trials:): how
	// many passed, pass@k and pass^k, and every trial's own result. The
	// case's other fields are those of trial Shown; its usage and
	// duration are its trials' totals.
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
	Mode     string           `json:"mode"`
	Attempts []NetworkAttempt `json:"attempts"`
}

// NetworkAttempt is what a program tried to reach, with how often: a TCP
// connection, a UDP datagram, or a DNS lookup of Name (Address is then
// the name server's).
type NetworkAttempt struct {
	Kind    string `json:"kind"` // tcp, udp or dns
	Address string `json:"address"`
	Port    int    `json:"port"`
	Name    string `json:"name,omitempty"`
	Count   int    `json:"count"` // how many packets tried it
}

// Workspace is a case's workspace after the run: its changes against the
// template, and where it was kept, if it was.
type Workspace struct {
	Template string            `json:"template"`
	Changes  []WorkspaceChange `json:"changes"`
	More     int               `json:"more_changes,omitempty"` // changes not listed
	Kept     string            `json:"kept,omitempty"`         // the directory, kept (--keep-workspaces)
}

// WorkspaceChange is one file or directory the agent added, removed or
// modified, with a short diff of a text file.
type WorkspaceChange struct {
	Path   string `json:"path"`   // slash path within the workspace
	Change string `json:"change"` // added, removed or modified
	// Diff is a short unified diff of a modified text file (or the start
	// of an added one), at most a few lines; empty for binary or large
	// files and directories.
	Diff string `json:"diff,omitempty"`
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
	Outcome Outcome         `json:"outcome"`
	// Where is "own" for a call the agent ran itself (one of its own
	// tools, seen on the model wire: no outcome, no rule; its result is
	// what the agent sent the model); "" for a call dryfire served.
	Where string `json:"where,omitempty"`
	// Actor is the world actor of a call the simulated user made on its
	// side of the world (dual control); "" for the agent's calls.
	Actor    string    `json:"actor,omitempty"`
	Rule     string    `json:"rule"` // FILE:LINE of the rule that answered; empty when none
	IsError  bool      `json:"is_error"`
	Result   string    `json:"result"` // the exact text the model received
	NearMiss *NearMiss `json:"near_miss,omitempty"`
	// Asked is what the call asked the agent's MCP client (a rule's
	// elicit or sample) and what it answered; nil for most calls.
	Asked *Asked `json:"asked,omitempty"`
}

// Outcome says how a tool call was answered: by a rule's return, content
// or error, by passthrough code (impl), or by no rule (unmatched). A
// world's calls carry the world's outcome (ok, a declared error, a
// receipt, ...).
type Outcome string

// Outcomes of a mock.
const (
	OutcomeReturn    Outcome = "return"
	OutcomeContent   Outcome = "content"
	OutcomeError     Outcome = "error"
	OutcomeImpl      Outcome = "impl"
	OutcomeUnmatched Outcome = "unmatched"
)

// NearMiss is the rule closest to an unmatched call, and where it parts.
type NearMiss struct {
	Tool     string `json:"tool"`
	Rule     string `json:"rule,omitempty"` // FILE:LINE; empty when the tool has no rules
	Path     string `json:"path,omitempty"`
	Expected string `json:"expected,omitempty"`
	Got      string `json:"got,omitempty"`
	Reason   string `json:"reason,omitempty"`
	// Note is set instead of a rule when there is nothing to compare
	// (no rules for the tool, arguments that are not JSON).
	Note string `json:"note,omitempty"`
}

// Asked is what a tool call asked its MCP client, a mock rule's elicit or
// sample: the request's method (elicitation/create or
// sampling/createMessage) and params as sent, and the client's result
// (without _meta), or why there is none.
type Asked struct {
	Method  string          `json:"method"`
	Request json.RawMessage `json:"request"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// MCPUse is an MCP request of an agent other than a tool call, answered
// from what its suite declares: a resource read (resources/read), a
// prompt get (prompts/get), a completion (completion/complete).
type MCPUse struct {
	Method    string            `json:"method"`
	URI       string            `json:"uri,omitempty"`
	Name      string            `json:"name,omitempty"` // the prompt's, or the completed argument's
	Arguments map[string]string `json:"arguments,omitempty"`
	Error     string            `json:"error,omitempty"` // the answer was this error (not found, a missing argument)
}

// Tally recomputes the summary from the cases.
func (r *Report) Tally() {
	t := TotalsOf(r)
	r.Summary, r.Mutation = t.Summary, t.Mutation()
}

// Shard says which part of a run a report is (run --shard I/N), so that
// the reports of all the parts merge into the run's.
type Shard struct {
	// Batch says the report is a batch's (run --cases): a part of the run
	// that is no shard of a count (merge_batch.go); Index and Count are 0.
	Batch bool `json:"batch,omitempty"`
	Index int  `json:"index,omitempty"` // 1-based
	Count int  `json:"count,omitempty"`
	// Cases is how many cases the whole run has, over all its shards.
	Cases int `json:"cases"`
	// Positions are the places of this shard's cases in the whole run's
	// report, in order.
	Positions []int `json:"positions"`
	// Suites identifies what ran: a hash of the suite files' contents,
	// the run's cases in order, and what changes their results (trials,
	// pass threshold, seed).
	Suites string `json:"suites"`
	// Build identifies the dryfire that ran it.
	Build string `json:"build"`
	// Balanced says the cases were spread by the durations of a previous
	// report rather than by a hash of their names.
	Balanced bool `json:"balanced"`
	// Infra are the positions of the cases that erred through their
	// surroundings (a provider unreachable, a cassette missing): what
	// decides the exit code of a merge, as of the run.
	Infra []int `json:"infra"`
	// Live counts the model requests that went live.
	Live int `json:"live"`
}

// Recheck says that a report's checks are the suites' current checks
// applied again to a stored run (dryfire recheck), not a run's own: no
// agent, model or tool ran for it.
type Recheck struct {
	// Report names the report whose run was re-checked, as given.
	Report string `json:"report"`
	// Cases counts the cases whose checks were applied again; the others
	// (skipped, or whose run ended before its checks) are as stored.
	Cases int `json:"cases"`
	// Changed counts the checks whose verdict is not the stored one: a
	// check that passes now and failed then, or the reverse, and a check
	// added or removed.
	Changed int `json:"changed"`
	// Kept counts the checks whose stored result was kept because they
	// are unchanged and the report does not hold what they read (a
	// judge's verdict, a workspace's files).
	Kept int `json:"kept"`
}

// Trials is how a case did over several runs of it (--trials, trials:).
// The case's own fields are those of one trial, Trials.Shown; its usage
// and duration are the totals of its trials.
type Trials struct {
	N      int `json:"n"`      // trials run
	Passed int `json:"passed"` // trials that passed
	// Threshold is the fraction of trials that must pass for the case to
	// pass (1: every trial; --pass-threshold).
	Threshold float64 `json:"threshold"`
	// Flaky: some trials passed and some did not.
	Flaky bool `json:"flaky"`
	// PassAtK[k-1] is pass@k: the chance that at least one of k trials
	// drawn from the N passes, 1 - C(N-c, k) / C(N, k) for c passes.
	PassAtK []float64 `json:"pass_at_k"`
	// PassHatK[k-1] is pass^k: the chance that all of k trials drawn from
	// the N pass, C(c, k) / C(N, k).
	PassHatK []float64 `json:"pass_hat_k"`
	// Shown is the trial (1-based) whose result the case's fields are:
	// the first with the case's status.
	Shown int `json:"shown"`
	// Runs are the trials' own results, in trial order.
	Runs []Case `json:"runs"`
}
