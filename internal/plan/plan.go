// Package plan is what a suite and each of its cases are before anything
// runs, worked out once: the rules that answer, the tools a model is
// shown (one list, one order, for the built-in loop, MCP and HTTP alike),
// the drill of a world suite, the cassette of a case, whether a case
// runs user code (passthrough), and the limits of its run. The runner, the tool server, the root
// package and reproduction read these facts here instead of each working
// them out again.
package plan

import (
	"cmp"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Suite is the plan of one suite, shared by its cases. Immutable once
// made, safe for concurrent use.
type Suite struct {
	Spec  *spec.Suite
	Rules *mock.Set         // the suite's compiled rules
	World *world.SuiteWorld // the suite's world; nil outside world suites

	tools     []Tool // the suite's own list (declared, then mocked; or the world's operations)
	modelDefs []model.ToolDef
	usesImpl  bool // the suite's own rules run passthrough code
	limits    Limits

	pathsOnce sync.Once
	paths     map[string]string // by case name
}

// Case is the plan of one case (or of a suite's own tools, when Spec is
// nil: a server without a case).
type Case struct {
	Suite *Suite
	Spec  *spec.Case // nil: the suite's own
	// Rules are the rules the case sees: its own mocks replace the
	// suite's list for each tool they name.
	Rules *mock.Set
	// Tools are the tools the agent is shown, in the order a model sees
	// them: the declared tools in file order, then tools only the suite
	// mocks, then tools only the case mocks; in a world suite the world's
	// operations in operation order.
	Tools []Tool
	// ModelTools are Tools as the built-in loop sends them to a model.
	ModelTools []model.ToolDef
	// UsesImpl says the case runs passthrough code (an impl: rule): such
	// a case is never recorded into a cassette.
	UsesImpl bool
	Limits   Limits
}

// DefaultCommandTimeout bounds the run of an agent.command program in one
// case, unless agent.timeout_s says otherwise.
const DefaultCommandTimeout = 120 * time.Second

// Limits bound a case's run.
type Limits struct {
	// MaxTurns bounds the model calls: the case's max_turns, else the
	// agent's, else spec.DefaultMaxTurns.
	MaxTurns int
	// CallTimeout bounds one model call of the built-in loop
	// (agent.timeout_s, else wire.DefaultTimeout); RunTimeout the whole
	// run of an agent.command program (agent.timeout_s, else
	// DefaultCommandTimeout).
	CallTimeout, RunTimeout time.Duration
	// Retries is how often the built-in loop retries a failed model call
	// (agent.retries, else wire.DefaultRetries).
	Retries int
}

// suiteLimits are the limits of a case with no max_turns of its own.
func suiteLimits(a *spec.Agent) Limits {
	l := Limits{MaxTurns: (&spec.Case{}).EffectiveMaxTurns(a), CallTimeout: wire.DefaultTimeout, RunTimeout: DefaultCommandTimeout, Retries: wire.DefaultRetries}
	if a.TimeoutS > 0 {
		l.CallTimeout = time.Duration(a.TimeoutS * float64(time.Second))
		l.RunTimeout = l.CallTimeout
	}
	if a.Retries != nil {
		l.Retries = *a.Retries
	}
	return l
}

// Tool is one tool an agent is shown.
type Tool struct {
	Name        string
	Description string
	// Input is the input schema as declared (a JSON value); nil when
	// none is.
	Input any
	// Output is a world operation's output schema as declared; nil
	// otherwise.
	Output any
	// Operation is the world operation (package/operation) behind the
	// tool; empty for mocks.
	Operation string
	// Pos is where the tool or operation is declared; zero for a tool
	// that is only mocked.
	Pos yamlpos.Pos
}

// openObject is the schema of a tool without one.
var openObject = map[string]any{"type": "object"}

// New plans a suite: sw is the world a world suite runs on (what
// world.LoadFiles or world.AttachSuite returned for it), nil for a suite
// of mocks. rules are its compiled rules (mock.Compile), to share one
// compilation; nil compiles them.
func New(s *spec.Suite, sw *world.SuiteWorld, rules *mock.Set) *Suite {
	if rules == nil {
		rules = mock.Compile(s)
	}
	p := &Suite{Spec: s, Rules: rules, World: sw, limits: suiteLimits(&s.Agent)}
	if p.World != nil {
		p.tools = WorldTools(p.World.World)
	} else {
		seen := map[string]bool{}
		for _, t := range s.Tools {
			p.tools = append(p.tools, Tool{Name: t.Name, Description: t.Description, Input: t.InputSchema, Pos: t.Pos})
			seen[t.Name] = true
		}
		p.tools = addMocked(p.tools, seen, s.MockOrder)
		p.usesImpl = rules.UsesImpl()
	}
	p.modelDefs = modelDefs(p.tools)
	return p
}

// WorldTools are a world's operations as tools, in operation order, each
// by its tool name: the tools of a world suite, or of a world instance
// started from a stored build.
func WorldTools(w *world.World) []Tool {
	tools := make([]Tool, 0, len(w.OpList))
	for _, key := range w.OpList {
		op := w.Operations[key]
		tools = append(tools, Tool{Name: op.Tool, Description: op.Description, Input: op.Input, Output: op.Output, Operation: key, Pos: op.Pos})
	}
	return tools
}

// addMocked appends the tools of names not in seen, with no schema.
func addMocked(tools []Tool, seen map[string]bool, names []string) []Tool {
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			tools = append(tools, Tool{Name: n})
		}
	}
	return tools
}

func modelDefs(tools []Tool) []model.ToolDef {
	defs := make([]model.ToolDef, len(tools))
	for i, t := range tools {
		defs[i] = model.ToolDef{Name: t.Name, Description: t.Description, InputSchema: cmp.Or(t.Input, any(openObject))}
	}
	return defs
}

// Case plans one case of the suite; nil plans the suite's own tools and
// rules.
func (s *Suite) Case(c *spec.Case) *Case {
	p := &Case{Suite: s, Spec: c, Rules: s.Rules, Tools: s.tools, ModelTools: s.modelDefs, UsesImpl: s.usesImpl, Limits: s.limits}
	if c != nil {
		p.Limits.MaxTurns = c.EffectiveMaxTurns(&s.Spec.Agent)
	}
	if c == nil || len(c.Mocks) == 0 || s.World != nil {
		return p
	}
	p.Rules = s.Rules.ForCase(c)
	p.UsesImpl = p.Rules.UsesImpl()
	seen := make(map[string]bool, len(s.tools))
	for _, t := range s.tools {
		seen[t.Name] = true
	}
	if tools := addMocked(append([]Tool(nil), s.tools...), seen, c.MockOrder); len(tools) > len(s.tools) {
		p.Tools, p.ModelTools = tools, modelDefs(tools)
	}
	return p
}

// WithTools is the case shown other tools: those of real tools behind a
// recording proxy, instead of the declared and mocked ones.
func (c *Case) WithTools(tools []Tool) *Case {
	p := *c
	p.Tools, p.ModelTools = tools, modelDefs(tools)
	return &p
}

// Cassette is the case's cassette file (cassettes/SUITE/CASE.json beside
// the suite). Paths depend on every case of the suite, not only the ones
// a run selects: a filter never moves a cassette.
func (c *Case) Cassette() string {
	s := c.Suite
	s.pathsOnce.Do(func() {
		names := make([]string, s.Spec.Len())
		for i := range names {
			names[i] = s.Spec.CaseName(i)
		}
		// By name, which is unique in a suite: a case decoded again from a
		// stub (spec.Options.Lazy) has the stub's file.
		s.paths = make(map[string]string, len(names))
		for i, path := range cassette.Paths(s.Spec.File, names) {
			s.paths[names[i]] = path
		}
	})
	if c.Spec == nil {
		return ""
	}
	return s.paths[c.Spec.Name]
}

// Drill is the drill the case's world starts from, with its seed: seed
// when given (a run's), else the case's, else the world's; a plan of the
// suite's own (Spec nil) has the suite's default scenario. Only for a
// world suite (Suite.World not nil).
func (c *Case) Drill(seed *int64) world.Drill {
	return c.Suite.World.Drill(c.Spec, c.Suite.Spec.Scenario, seed)
}
