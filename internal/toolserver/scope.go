package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// Scope is the tool world of one case, or of a suite when no case is
// chosen: the rules that answer (the suite's, with the case's overrides),
// the passthrough code behind impl rules, the mock state, and one merged
// record of every tool call made in it, over MCP and HTTP alike, in call
// order.
//
// State rules:
//   - An MCP session has its own sequence positions, so two sessions each
//     see a sequence from its start: a legacy session (2025-11-25 and
//     earlier) opened with initialize over streamable HTTP, and a stdio or
//     in-memory connection (either era; over stdio, one per process).
//   - Everything without a session shares the scope's own state: HTTP tool
//     calls (POST /tools/NAME), stateless MCP requests (2026-07-28, or a
//     legacy request without Mcp-Session-Id), and Scope.Call.
//   - Reset puts every sequence back to its start (the shared state and
//     every session's) and clears the record.
//   - A world scope (ScopeOptions.World) has one world, shared by every
//     session and HTTP call alike: a world is one simulated environment,
//     and an agent's MCP sessions, its HTTP calls and /ops all act on it.
//     Reset restores the world (world.Instance.Reset) and clears the
//     record.
//
// A Scope is safe for concurrent use: a call's selection and sequence
// advance happen in the mock engine's one critical section, so counts
// are exact under any concurrency, and its record (tool.Recorder) keeps
// the order calls started in.
type Scope struct {
	id    string
	suite *spec.Suite
	cse   *spec.Case
	set   *mock.Set
	// extras are the suite's resources and prompts, with the MCP
	// requests beside tool calls that used them (resources.go).
	extras extras
	// asks are the calls that may ask the MCP client (ask.go); nil when
	// no rule asks.
	asks *asks
	// usesImpl says a rule of the scope runs passthrough code.
	usesImpl bool
	label    string
	tools    []Tool
	notes    []string
	// structured are the tools with an output schema: only their results
	// carry structuredContent (see toolResult).
	structured map[string]bool
	world      *world.Instance // a world scope's world; nil for mocks
	worldAPI   *worldAPI       // its routes (world.go); nil for mocks
	upstream   tool.Answerer   // answers every call instead of the mocks; nil: the mocks
	model      http.Handler    // the scope's model routes; nil: the server's

	rec       *tool.Recorder // the merged record of every call
	noRecords bool           // rec keeps none
	memo      memo           // pure tools' answers (memo.go)
	// sessions are the MCP sessions and their mock state (sessions.go).
	sessions sessions

	mcp          *mcpServer
	serverInfo   []byte // the serverInfo of 2026-07-28 results, as JSON
	noFastModern bool   // a tool declares x-mcp-header: go-sdk checks those
	slowMCP      bool   // tests: every MCP request through go-sdk
	fastCalls    atomic.Int64
	listBody     func() []byte // the GET /tools body, made once (makeList)
}

// ScopeOptions describe a Scope.
type ScopeOptions struct {
	// ID names the scope under /cases/ID/ when it is added to a Server; the
	// default scope of a Server (its root paths) may leave it empty.
	ID string
	// Suite is the suite whose tools and rules are served. Required.
	Suite *spec.Suite
	// Case selects a case's mocks (they replace the suite's rule list for
	// each tool they name); nil serves the suite's own rules.
	Case *spec.Case
	// Rules are the suite's compiled rules (mock.Compile(Suite)), to share
	// one compilation between the scopes of a suite's cases; nil compiles
	// them.
	Rules *mock.Set
	// Plan, when set, is the case's plan, which a run has made already:
	// its suite, case, rules and tools are served, and Suite, Case and
	// Rules are not used.
	Plan *plan.Case
	// Impl runs impl: rules; nil answers them with an error result saying
	// passthrough code is not available.
	Impl mock.Impl
	// World, when set, makes this a world scope: the world's operations
	// are the tools (in operation order, each by its tool name), every
	// call is an operation of this one instance by its drill's actor, and
	// the /ops and /world routes answer. Suite is then the world suite;
	// Case, Rules and Impl are not used.
	World *world.Instance
	// NoRecords keeps no record of calls: Records returns none. A
	// long-running server sets it, or its memory grows with every call
	// (about 760 bytes a call with the record). Scopes of runs, whose
	// checks read the record, leave it unset.
	NoRecords bool
	// SessionTimeout ends an MCP session opened over HTTP (2025-11-25 and
	// earlier) after that long without a request from its client, as
	// if the client had deleted it; the client gets 404 and opens a new
	// one. 0 means DefaultSessionTimeout; a negative value, never.
	SessionTimeout time.Duration
	// MaxSessions bounds the MCP sessions over HTTP open at once: opening
	// one more ends the one idle the longest. 0 means DefaultMaxSessions;
	// negative, no bound.
	MaxSessions int
	// Model, when set, serves the scope's model routes (/v1/... under the
	// scope's prefix, the prefix stripped): its case's model endpoint,
	// mounted with its tools. Nil: the server's Options.Model.
	Model http.Handler
	// Turn, when set, stamps each call's Turn (in Records) with what it
	// returns as the call starts: the runner of agent.command cases gives
	// the number of model calls made so far.
	Turn func() int
	// Upstream, when set, answers every tool call (whose arguments are
	// an object) instead of the mocks: real tools behind a recording
	// proxy (dryfire record-tools). The plan's tools are served.
	Upstream tool.Answerer
	// Fault, when set, may fail a call in place of its answerer (a fault
	// sweep's point).
	Fault tool.Fault
}

// DefaultSessionTimeout is how long an MCP session over HTTP may stay
// idle before it ends, unless ScopeOptions.SessionTimeout says otherwise.
const DefaultSessionTimeout = 30 * time.Minute

// DefaultMaxSessions is how many MCP sessions over HTTP may be open at
// once, unless ScopeOptions.MaxSessions says otherwise (each holds tens
// of kilobytes in go-sdk).
const DefaultMaxSessions = 1000

// NewScope returns the scope of a suite, or of one of its cases.
func NewScope(o ScopeOptions) *Scope {
	p := o.Plan
	if p == nil {
		if o.Suite == nil {
			panic("toolserver.NewScope: no suite")
		}
		p = plan.New(o.Suite, nil, o.Rules).Case(o.Case)
	}
	o.Suite, o.Case = p.Suite.Spec, p.Spec
	s := &Scope{id: o.ID, suite: o.Suite, cse: o.Case, world: o.World, model: o.Model, upstream: o.Upstream,
		rec: tool.NewRecorder(nil, tool.RecorderOptions{NoRecords: o.NoRecords, Turn: o.Turn, Fault: o.Fault}), noRecords: o.NoRecords}
	s.sessions.init(o)
	s.extras.suite = o.Suite
	if o.Case != nil {
		s.label = o.Case.Name
	}
	if o.World != nil {
		tools := plan.WorldTools(o.World.World())
		if o.Plan != nil && len(o.Plan.Tools) > 0 {
			tools = o.Plan.Tools // the case's: the world's, or as a drill changed them
		}
		s.tools, s.notes = served(tools)
		s.worldAPI = &worldAPI{in: o.World, tools: s.tools, call: s.CallWorld, reset: s.Reset}
	} else {
		s.set, s.usesImpl = p.Rules, p.UsesImpl
		s.tools, s.notes = served(p.Tools)
		s.sessions.mocks(s.set, o.Impl, o.Case)
		s.asks = newAsks(s.set.AskingTools())
	}
	for _, t := range s.tools {
		if t.OutputSchema != nil {
			if s.structured == nil {
				s.structured = map[string]bool{}
			}
			s.structured[t.Name] = true
		}
	}
	s.mcp, s.listBody = newMCPServer(s), sync.OnceValue(s.makeList)
	return s
}

// ID is the scope's name under /cases/.
func (s *Scope) ID() string { return s.id }

// Suite is the suite served.
func (s *Scope) Suite() *spec.Suite { return s.suite }

// Case is the case whose mocks are served; nil for the suite's own.
func (s *Scope) Case() *spec.Case { return s.cse }

// Tools are the tools served, in the order the built-in loop shows them
// to a model: the suite's declared tools in file order, then tools that
// are only mocked (suite, then case), with an open object schema.
func (s *Scope) Tools() []Tool { return s.tools }

// Notes are warnings about how the suite's tools are served, as
// FILE:LINE:COL: warning: ... (an input schema MCP cannot carry as
// written); empty for most suites.
func (s *Scope) Notes() []string { return s.notes }

// UsesImpl reports whether any rule of the scope runs passthrough code.
func (s *Scope) UsesImpl() bool { return s.usesImpl }

// World is the world a world scope serves; nil for a scope of mocks.
func (s *Scope) World() *world.Instance { return s.world }

// Call answers one tool call on the scope's shared state, the one HTTP
// tool calls and stateless MCP requests use, and records it. args is the
// JSON text of the arguments. It answers exactly what the built-in loop
// would deliver, an unmatched call included.
func (s *Scope) Call(ctx context.Context, name, args string) tool.Result {
	return s.answer(ctx, nil, name, []byte(args))
}

// Records returns a copy of every finished call since the start or the
// last Reset, in call order (the order calls started in), across every
// MCP session and HTTP call of the scope (and /ops calls of a world
// scope, named by their tool). None when ScopeOptions.NoRecords is set.
func (s *Scope) Records() []tool.Record { return s.rec.Records() }

// Over is why calls of the scope were refused: its record reached a
// bound (tool.Recorder.Over); nil when none was.
func (s *Scope) Over() error { return s.rec.Over() }

// Reset puts every sequence of the scope back to its start, for the
// shared state and every MCP session alike, and clears the record. Calls
// running meanwhile finish on the state they started with and are left
// out of the record. A world scope's world is reset as a whole
// (world.Instance.Reset: its evidence is kept).
func (s *Scope) Reset() {
	s.extras.reset()
	s.asks.end(errors.New("the scope was reset"))
	s.rec.Reset(s.sessions.reset)
	if s.world != nil {
		s.world.Reset()
	}
}

// answer checks that args is a JSON object (absent or null counts as
// {}), then answers the call on the state of ss (nil: the shared state)
// and records it. Arguments that are not an object are answered and
// recorded as an unmatched call whose near miss says so, without
// consulting the rules.
func (s *Scope) answer(ctx context.Context, ss *mcp.ServerSession, name string, args []byte) tool.Result {
	memo := s.memoOn()
	if memo {
		if e := s.memo.lookup(name, args); e != nil {
			return e.res
		}
	}
	text := callArgs(args)
	v, valid, err := value.ParseChecked(text)
	res := s.answerParsed(ctx, ss, name, text, v, err)
	// Kept only for arguments known to be JSON: POST /tools refuses the
	// others, and would answer them from the memo.
	if memo && valid && s.set.Pure(name) {
		s.memo.keep(name, args, res, nil)
	}
	return res
}

// callArgs is the text of a call's arguments: args trimmed, {} for none
// or null.
func callArgs(args []byte) string {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return "{}"
	}
	return string(args)
}

// answerParsed is answer of the arguments' text (callArgs) and its value
// parsed (value.ParseString).
func (s *Scope) answerParsed(ctx context.Context, ss *mcp.ServerSession, name, text string, args any, perr error) tool.Result {
	c := tool.Call{Name: name, Args: text}
	if s.world != nil {
		return s.rec.CallParsed(ctx, c, args, perr, func() tool.Answerer { return s.world })
	}
	if text[0] != '{' {
		return s.rec.CallParsed(ctx, c, args, perr, func() tool.Answerer { return notObject{} })
	}
	if s.upstream != nil {
		return s.rec.CallParsed(ctx, c, args, perr, func() tool.Answerer { return s.upstream })
	}
	// The state is picked as the call takes its place in the record, so
	// a Reset falls wholly before or after the call.
	return s.rec.CallParsed(ctx, c, args, perr, func() tool.Answerer { return s.sessions.mockOf(ss) })
}

// notObject answers a call whose arguments are not a JSON object, without
// the mocks, as unmatched, with the reason as its near miss.
type notObject struct{}

func (notObject) Answer(_ context.Context, c tool.Call, _ any, _ error) tool.Result {
	nm := &tool.NearMiss{Tool: c.Name, Note: fmt.Sprintf("the arguments are not a JSON object (got %s)", jsonKind(c.Args[0]))}
	return tool.Result{Outcome: tool.Unmatched, IsError: true, Entry: -1, NearMiss: nm, Content: "dryfire: " + mock.DescribeMiss(nm)}
}

// jsonKind names the JSON type that starts with c.
func jsonKind(c byte) string {
	switch {
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "text that is not JSON"
}

// CallWorld runs one operation of a world scope and records it as c (its
// name the tool name the agent used, or the operation's): the /ops
// routes' calls, and a simulated user's (c.Actor set).
func (s *Scope) CallWorld(ctx context.Context, c tool.Call, req world.Request) *world.Response {
	op := &world.Op{In: s.world, Req: req}
	s.rec.CallOn(ctx, c, func() tool.Answerer { return op })
	return op.Response
}

// Tool is a tool as served: what MCP tools/list and GET /tools show.
type Tool struct {
	Name        string
	Description string
	// InputSchema is a JSON object with "type": "object", as MCP
	// 2025-11-25 requires.
	InputSchema json.RawMessage
	// OutputSchema, for a world operation whose output schema is an
	// object's, is that schema (MCP outputSchema); nil otherwise.
	OutputSchema json.RawMessage
	// Operation is the world operation (package/operation) behind the
	// tool; empty for mocks.
	Operation string
}

var openObject = json.RawMessage(`{"type":"object"}`)

// served are the tools of a plan as MCP and HTTP serve them, in the
// plan's order (the order a model is shown them), with a note for each
// input schema MCP cannot carry as written.
func served(tools []plan.Tool) ([]Tool, []string) {
	out := make([]Tool, 0, len(tools))
	var notes []string
	for _, t := range tools {
		schema, note := inputSchema(t.Input)
		if note != "" {
			what := fmt.Sprintf("tool %q", t.Name)
			if t.Operation != "" {
				what = "operation " + t.Operation
			}
			notes = append(notes, fmt.Sprintf("%s: warning: %s: %s", t.Pos, what, note))
		}
		st := Tool{Name: t.Name, Description: t.Description, InputSchema: schema, Operation: t.Operation}
		if m, ok := t.Output.(map[string]any); ok && m["type"] == "object" {
			st.OutputSchema = json.RawMessage(value.Canonical(m))
		}
		out = append(out, st)
	}
	return out, notes
}

// inputSchema is a declared input_schema as MCP carries it: none is an
// open object; a mapping without "type" gets "type": "object" (MCP
// 2025-11-25 requires it, and tool arguments are objects anyway); any
// other schema is served as an open object, with a note.
func inputSchema(v any) (json.RawMessage, string) {
	if v == nil {
		return openObject, ""
	}
	m, ok := v.(map[string]any)
	if !ok {
		return openObject, fmt.Sprintf("input_schema is %s, not a mapping: MCP clients are shown {\"type\": \"object\"}", value.TypeName(v))
	}
	switch t := m["type"]; t {
	case "object":
	case nil:
		m = maps.Clone(m)
		m["type"] = "object"
	default:
		return openObject, fmt.Sprintf("input_schema has type %s, not object: MCP clients are shown {\"type\": \"object\"}", value.Canonical(t))
	}
	return json.RawMessage(value.Canonical(m)), ""
}
