// Package spec loads dryfire suite files: YAML with positions, the suite
// JSON Schema, and the semantic rules the schema cannot say. Every problem
// of every file comes back at once as a positioned Diagnostic, before
// anything runs.
package spec

import (
	"cmp"
	"regexp"
	"time"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// DefaultMaxTurns bounds model calls per case when a suite does not say.
const DefaultMaxTurns = 10

// Suite is one loaded suite file.
type Suite struct {
	File string // path as loaded
	// Root is the project root its cassettes and workspaces stay inside,
	// as its other paths do: Options.Root, else the default root of its
	// file when it was loaded ("": see ProjectRoot).
	Root  string
	Name  string
	Agent Agent
	Tools []*Tool // in file order
	// Script is the suite's default script: the model's turns of every
	// case without a script of its own (ScriptOf).
	Script []*Turn
	// Mocks are the suite-level rules per tool name.
	Mocks     map[string][]*Rule
	MockOrder []string // tool names of Mocks, in file order
	// Resources and Prompts are served over MCP beside the tools
	// (resources.go).
	Resources []*Resource
	Prompts   []*Prompt
	// Cases are the suite's cases in order; nil once one is kept as a
	// stub (Options.Lazy): Len, CaseName and CaseAt read them then.
	Cases []*Case
	// Discarded counts the cases checked but not kept (Options.Discard).
	Discarded int
	// src is where stubs are decoded again from (Options.Lazy).
	src *source
	// Match are the suite's request matching rules (see MatchRules).
	Match []reqmatch.Rule
	// Workspace is the template directory copied for each case (as
	// written, relative to the suite); a case's own replaces it.
	Workspace    string
	WorkspacePos yamlpos.Pos
	// Trials is how often each case runs (0: once; a case's own and the
	// run's --trials go over it).
	Trials int

	// World is the world file a world suite names (as written, relative
	// to the suite), and Scenario its default scenario; the cases of such
	// a suite are drills, and its tools are the world's operations.
	World, Scenario       string
	WorldPos, ScenarioPos yamlpos.Pos
	// NoAgent is a world suite without agent: its drills' agent is the
	// test's own function (the TypeScript and Python SDKs), so a run
	// reports them as skipped.
	NoAgent bool
	// ScriptDrills: the cases with a script are scripted though the
	// suite has an agent now (a suite without agent given a program,
	// dryfire reproduce -- COMMAND).
	ScriptDrills bool
	// Invariants are checks every case keeps beside its own (Checks); a
	// fault sweep's point that breaks one is unsafe.
	Invariants []*Check
	// Injections are its prompt-injection drills (nil: the defaults).
	Injections *Injections
	// Target is the suite's target: (nil without one): what its drills'
	// agent is and the bindings it may reach the world through.
	Target *Target
}

// Binding names: the ways a drill's agent reaches its world.
const (
	BindingDirect = "direct" // mockTool / mock_tool: the /ops route
	BindingMCP    = "mcp"    // the MCP endpoint
	BindingHTTP   = "http"   // the /tools routes and the world's own HTTP routes
)

// AllBindings are the bindings of a drill whose suite declares none.
var AllBindings = []string{BindingDirect, BindingMCP, BindingHTTP}

// Target is a world suite's target: its kind (external: the test's own
// function, run by the SDKs) and its bindings.
type Target struct {
	Kind     string
	Bindings []string // as listed; AllBindings when the suite lists none
	Pos      yamlpos.Pos
}

// DrillBindings are the bindings a drill of s may use.
func (s *Suite) DrillBindings() []string {
	if s.Target == nil {
		return AllBindings
	}
	return s.Target.Bindings
}

// ScriptOf is the script of case c: its own, else the suite's (nil when
// neither has one).
func (s *Suite) ScriptOf(c *Case) []*Turn {
	if c.Script != nil {
		return c.Script
	}
	return s.Script
}

// Scripted says whether the model calls of case c are answered by its
// script (ScriptOf), never by a cassette: its suite's provider is script,
// or it is a drill of a world suite without agent that has a script.
func (s *Suite) Scripted(c *Case) bool {
	if s.Agent.Provider == provider.Script {
		return true
	}
	return (s.NoAgent || s.ScriptDrills) && len(s.ScriptOf(c)) > 0
}

// Agent is the agent under test.
type Agent struct {
	Provider string
	Model    string
	BaseURL  string
	System   string
	MaxTurns int
	// Retries is how often a failed model call is retried; nil means the
	// default.
	Retries *int
	// TimeoutS bounds one model call of the built-in loop, or the whole
	// run of an agent.command program in a case; 0 means the default.
	TimeoutS float64
	Params   map[string]any
	// APIVersion is Azure OpenAI's api-version (agent.api_version); "":
	// the provider's default.
	APIVersion string
	// Command is an existing agent program and its arguments, run for
	// each case instead of the built-in loop (relative to the suite's
	// directory, its working directory); Provider is then optional and
	// names the API the program calls.
	Command    []string
	CommandPos yamlpos.Pos // of the command key
	// CLI is the coding-agent CLI run through dryfire's adapter
	// (agent.cli: CLIClaudeCode, CLICodex, CLIGemini); "" for none.
	// Command is then the CLI's executable and arguments of the user's:
	// its name alone when agent.command is not written (CLIFound), which
	// the runner looks for in node_modules/.bin and on PATH.
	CLI      string
	CLIPos   yamlpos.Pos
	CLIFound bool
	Pos      yamlpos.Pos // of the agent key
	// ProviderPos is the position of the provider value.
	ProviderPos yamlpos.Pos
	// Match are the agent's request matching rules.
	Match []reqmatch.Rule
	// Clock is what an agent.command program reads as the time; nil: the
	// real clock.
	Clock *Clock
	// Network is the network an agent.command program gets: isolated,
	// sandboxed, report, open, or "" (the run's default).
	Network    string
	NetworkPos yamlpos.Pos
	// Env are the suite's own variables for an agent.command program
	// (agent.env), in file order: they replace the run's values and the
	// offline settings dryfire sets (internal/runner's OfflineEnv).
	Env []EnvVar
	// Port is the loopback port the run serves the programs' endpoints
	// on (agent.port); 0: a free port.
	Port    int
	PortPos yamlpos.Pos
	// OfferedTools is agent.offered_tools: note, strict, off, or "" (note).
	OfferedTools string
	// SideCalls is agent.side_calls: the preset of side calls dryfire
	// answers itself (claude-code, or none); "" is claude-code under
	// agent.cli: claude-code, else none (SideCallsOf).
	SideCalls string
}

// SideCallsOf is the preset of side calls in force for agent a ("":
// none).
func SideCallsOf(a *Agent) string {
	switch {
	case a.SideCalls == "none":
		return ""
	case a.SideCalls != "":
		return a.SideCalls
	case a.CLI == CLIClaudeCode:
		return CLIClaudeCode
	}
	return ""
}

// The coding-agent CLIs of agent.cli, and the executable each is found
// by when agent.command does not give it.
const (
	CLIClaudeCode = "claude-code"
	CLICodex      = "codex"
	CLIGemini     = "gemini-cli"
)

// CLIExecutable is the name of the executable of an agent.cli.
func CLIExecutable(cli string) string {
	switch cli {
	case CLIClaudeCode:
		return "claude"
	case CLIGemini:
		return "gemini"
	}
	return cli
}

// EnvVar is one variable of agent.env.
type EnvVar struct {
	Name, Value string
	Pos         yamlpos.Pos
}

// BindingEnv are the variables dryfire sets to lead a program to its
// case's endpoint; agent.env cannot set them, nor any DRYFIRE_ variable.
var BindingEnv = []string{"OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY",
	"OLLAMA_HOST", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "GOOGLE_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS"}

// The values of agent.network.
const (
	NetworkIsolated = "isolated"
	NetworkReport   = "report"
	NetworkOpen     = "open"
	// NetworkSandboxed is isolated with the filesystem confined too: the
	// levels nest (open, report, isolated, sandboxed), so one key says how
	// closed a program's surroundings are.
	NetworkSandboxed = "sandboxed"
)

// Clock is a fixed start time for an agent program, and its time zone.
type Clock struct {
	Now time.Time // the start; the clock runs from there
	TZ  string    // an IANA zone name; "" means UTC
	Pos yamlpos.Pos
}

// Tool is a tool the model is shown.
type Tool struct {
	Name        string
	Description string
	InputSchema any // JSON value; nil when not declared
	// Aliases are other names a model is shown the tool by (a
	// framework's decoration tool.Names does not know).
	Aliases   []string
	Pos       yamlpos.Pos
	SchemaPos yamlpos.Pos // where InputSchema is written
}

// ToolAliases are the aliases of the suite's tools (alias → tool), or
// nil: what tool.NewNames takes.
func (s *Suite) ToolAliases() map[string]string {
	var aliases map[string]string
	for _, t := range s.Tools {
		for _, a := range t.Aliases {
			if aliases == nil {
				aliases = map[string]string{}
			}
			aliases[a] = t.Name
		}
	}
	return aliases
}

// OutcomeKind is what a rule or sequence entry does.
type OutcomeKind string

const (
	Return   OutcomeKind = "return"
	Content  OutcomeKind = "content"
	Fail     OutcomeKind = "error"
	Sequence OutcomeKind = "sequence"
	Impl     OutcomeKind = "impl"
)

// Outcome is what a matching rule delivers.
type Outcome struct {
	Kind     OutcomeKind
	Value    any         // Return: the value (nil for return: null)
	Blocks   []any       // Content: the MCP content blocks (mappings; base64 without whitespace)
	Message  string      // Fail: the error message
	Impl     string      // Impl: package.module:function
	Sequence []Outcome   // Sequence: the entries
	Pos      yamlpos.Pos // of the outcome's value

	node *yaml.Node // the outcome's value, for load errors
}

// Rule is one mock rule.
type Rule struct {
	Tool     string
	When     *value.Pattern // nil: matches every call
	Outcome  Outcome
	TimeoutS float64 // impl bound; 0 means the default
	// DelayMS is how long each call the rule answers waits before its
	// answer, in milliseconds (a slow tool); 0: none.
	DelayMS float64
	// Log and Progress are MCP notifications sent during each call the
	// rule answers over MCP, before the answer: log messages (at or above
	// the level the client set) and progress values (when the request
	// carries a progressToken; increasing, the last being the total).
	Log      []LogMessage
	Progress []float64
	// Ask is what the rule asks the MCP client during each call it
	// answers (elicit or sample); nil for most rules.
	Ask *Ask
	Pos yamlpos.Pos // of the rule (its first key)

	whenNode *yaml.Node
}

// LogMessage is one MCP log message of a rule's log.
type LogMessage struct {
	Level  string // debug, info, notice, warning, error, critical, alert or emergency
	Logger string // optional
	Data   any    // any JSON value
}

// Case is one case of a suite.
type Case struct {
	Name       string
	Input      string
	Skip       bool
	SkipReason string
	// Tags are the case's labels (tags:), for whoever schedules its runs
	// (run --list).
	Tags     []string
	MaxTurns int // 0: the agent's
	Trials   int // 0: the suite's
	// Match are the case's request matching rules, after the suite's
	// and the agent's.
	Match []reqmatch.Rule
	// Workspace is the case's own template directory (see Suite).
	Workspace    string
	WorkspacePos yamlpos.Pos
	// ModelFaults are the faults of the case's model requests, in file
	// order; ModelFaultsPos is where the list was written.
	ModelFaults    []ModelFault
	ModelFaultsPos yamlpos.Pos
	// Mocks replace the suite's whole rule list for each tool they name.
	Mocks     map[string][]*Rule
	MockOrder []string
	Script    []*Turn
	Expect    []*Check
	// User, when set, goes on talking after the agent's first reply: a
	// conversation of several turns.
	User *User
	Pos  yamlpos.Pos

	// Drill fields of a world suite's case: the scenario, the actor, the
	// drill's overrides and the per-test setup, as JSON values with the
	// nodes they were written at (for positioned messages).
	Scenario, Actor       string
	ScenarioPos, ActorPos yamlpos.Pos
	Seed                  *int64
	ToolOverrides         any
	ToolOverridesNode     *yaml.Node
	Setup                 map[string]any
	SetupNode             *yaml.Node

	node  *yaml.Node
	index int        // in the cases list, counting items that are not cases
	lazy  bool       // a stub (Options.Lazy): Suite.Decode decodes it
	rows  *rowSource // a stub's data file, when a row made it
}

// MaxUserTurns bounds the messages a simulated user sends after input
// (a scripted list's length, a model-driven user's max_turns).
const MaxUserTurns = 100

// DefaultUserMaxTurns is a model-driven user's max_turns when not given.
const DefaultUserMaxTurns = 5

// User is a case's simulated user: scripted turns, or a model.
type User struct {
	Script []*UserTurn // scripted; nil for a model-driven user
	Model  *UserModel  // model-driven; nil for a scripted user
	Pos    yamlpos.Pos

	key, node *yaml.Node // the user key and its value, for messages
}

// UserTurn is one scripted message of a simulated user, said only when
// the agent's last reply matches When (when set). Before saying it, the
// user makes Do's world calls as Actor (dual control: world suites).
type UserTurn struct {
	Say   string
	When  *regexp.Regexp
	Actor string
	Do    []*UserAct
	Pos   yamlpos.Pos
	// ActorPos is where actor is written.
	ActorPos yamlpos.Pos

	actorNode, doNode *yaml.Node
}

// UserAct is one world call a simulated user makes on its side: an
// operation (package/operation) or a tool name, with its arguments.
type UserAct struct {
	Tool, Operation string
	Args            string // the arguments as JSON text ({} for none)
	Pos             yamlpos.Pos
}

// Name is the call's name in the record: its tool, else its operation.
func (a *UserAct) Name() string { return cmp.Or(a.Tool, a.Operation) }

// UserModel is a model-driven simulated user, its model resolved as a
// judge's is (the agent's when not given).
type UserModel struct {
	Provider, Model, BaseURL string
	Instructions             string
	StopWhen                 *regexp.Regexp
	MaxTurns                 int
}

// Turn is one scripted model answer.
type Turn struct {
	Text      string
	ToolCalls []*ScriptCall
	// When, when set, is the guard on the requests the turn answers.
	When *Guard
	// Optional: the agent may never ask for it (a case does not fail for
	// leaving it unserved).
	Optional bool
	Pos      yamlpos.Pos

	broken bool // reported as an error: its reachability says nothing
}

// Guard says which model requests a scripted turn answers: every field
// set must hold.
type Guard struct {
	// Tools: the request offers every one of these tools; with NoTools,
	// it offers none at all (tools: []).
	Tools   []string
	NoTools bool
	// Result, when set, asks that the request end with a tool result
	// (true) or with none (false); ResultOf, when set, that one of those
	// results be for a call of this tool.
	Result   *bool
	ResultOf string
	// User: the last user message's text contains it.
	User string
	// Matches is found in the text of the request's last message.
	Matches *regexp.Regexp
	// MatchesSize is the size of Matches' program, what reading one
	// byte may cost it (regexSize).
	MatchesSize int
	// Anywhere is found anywhere in the request: its system prompt, a
	// message, a call's arguments, a tool's name or description.
	Anywhere     *regexp.Regexp
	AnywhereSize int
	Pos          yamlpos.Pos
}

// ScriptCall is one tool call of a scripted turn.
type ScriptCall struct {
	ID       string
	Name     string
	Args     any    // the arguments as a value (an object)
	ArgsJSON string // canonical JSON of Args
	Pos      yamlpos.Pos
}

// EffectiveMaxTurns is the case's bound on model calls.
func (c *Case) EffectiveMaxTurns(a *Agent) int {
	if c.MaxTurns > 0 {
		return c.MaxTurns
	}
	if a.MaxTurns > 0 {
		return a.MaxTurns
	}
	return DefaultMaxTurns
}

// MatchRules are the request matching rules of a case: the suite's, the
// agent's and the case's, in that order; nil when none are declared (the
// strict default).
func (s *Suite) MatchRules(c *Case) []reqmatch.Rule {
	n := len(s.Match) + len(s.Agent.Match) + len(c.Match)
	if n == 0 {
		return nil
	}
	out := make([]reqmatch.Rule, 0, n)
	out = append(out, s.Match...)
	out = append(out, s.Agent.Match...)
	return append(out, c.Match...)
}

// ProjectRoot is the project root the suite's paths stay inside: Root,
// else the default root of its file (safeio.DefaultRoot).
func (s *Suite) ProjectRoot() string {
	if s.Root != "" {
		return s.Root
	}
	return safeio.DefaultRoot(s.File)
}

// WorkspaceOf is the template directory of a case, as written (relative
// to the suite), and where it is written; "" when it has none.
func (s *Suite) WorkspaceOf(c *Case) (string, yamlpos.Pos) {
	if c.Workspace != "" {
		return c.Workspace, c.WorkspacePos
	}
	return s.Workspace, s.WorkspacePos
}
