// Package tool is the seam between an agent and whatever answers its tool
// calls: the mock engine (with passthrough code behind impl: rules) and
// simulated worlds. Every answer comes back as a Result (what the model receives,
// plus evidence of how it was chosen), and every call is kept as a Record
// for checks and reports.
package tool

import (
	"context"

	"github.com/dryfire-dev/dryfire/report"
)

// Call is one tool call made by the model.
type Call struct {
	ID   string
	Name string
	Args string // the arguments as JSON text, as the model sent them
	Turn int    // 1-based model turn that made the call
	// Actor is the world actor of a simulated user's call (dual control);
	// "" for the agent's.
	Actor string
}

// Outcome says how a call was answered. It and the record types below
// are the report's (package report), which shows them as they are.
type Outcome = report.Outcome

const (
	Return    = report.OutcomeReturn
	Content   = report.OutcomeContent
	Error     = report.OutcomeError
	Impl      = report.OutcomeImpl
	Unmatched = report.OutcomeUnmatched
)

// Result is the answer to one call.
type Result struct {
	Content string // the exact text the model receives
	IsError bool
	// Blocks are the MCP content blocks of a content outcome, as a JSON
	// array, which an MCP client receives as they are (Content is their
	// text); nil for every other outcome, which MCP delivers as one text
	// block of Content.
	Blocks []byte
	// Notices are what an MCP client is sent during the call, before the
	// answer; nil for most calls. The built-in loop and HTTP tools have
	// no channel for them.
	Notices *Notices
	// Asked is what the call asked the MCP client (a rule's elicit or
	// sample) and its answer; nil for most calls.
	Asked   *Asked
	Outcome Outcome
	Rule    string // FILE:LINE of the rule that answered; empty when none
	// Entry is the 0-based sequence entry used, or -1.
	Entry int
	// NearMiss explains an unmatched call.
	NearMiss *NearMiss
	// Notes are remarks for the report (for example, why a case is not
	// recorded).
	Notes []string
	// Evidence is whatever the answering engine records beyond the above
	// (a world's state version, override, fault); nil for plain mocks.
	Evidence any
}

// Notices are the MCP notifications of a call: log messages
// (notifications/message, sent at or above the level the client set) and
// progress (notifications/progress, sent when the request carries a
// progressToken).
type Notices struct {
	Log []LogMessage
	// Progress holds increasing values; the last is the total.
	Progress []float64
}

// LogMessage is the params of one notifications/message.
type LogMessage struct {
	Level  string // debug, info, notice, warning, error, critical, alert or emergency
	Logger string // empty: none
	Data   []byte // JSON
}

// NearMiss is the closest rule to an unmatched call.
type NearMiss = report.NearMiss

// Record is one call and its answer, in call order.
type Record struct {
	Call
	Args   any // the parsed arguments (the raw text when not JSON)
	Result Result
	// Own: the agent ran the call itself (one of its own tools, seen on
	// the model wire); Result is what it sent the model back (Content,
	// IsError), and no rule answered it.
	Own bool
}

// Session answers the tool calls of one case and keeps their record.
// Implementations must be safe for concurrent use.
type Session interface {
	Call(ctx context.Context, c Call) Result
	Records() []Record
}

// MCPUse is an MCP request of an agent other than a tool call, answered
// from what its suite declares (resources and prompts).
type MCPUse = report.MCPUse

// Ask is a request a mock rule sends the MCP client whose call it
// answers, during the call: an elicitation or a sampling request.
type Ask struct {
	Method string // elicitation/create or sampling/createMessage
	Params []byte // the request's params, JSON
}

// Asker sends an Ask to the client of the call being answered and
// returns its answer (the result, JSON), or why there is none. The
// tool server puts one in the context of the calls that may ask
// (WithAsker); a call without one has no client to ask.
type Asker interface {
	Ask(ctx context.Context, a *Ask) ([]byte, error)
}

type askerKey struct{}

// WithAsker is ctx carrying a, for the rules that ask.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom is the Asker of ctx, or nil.
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// Asked is what a call asked its client (an elicitation or a sampling
// request) and what the client answered, or why there is no answer.
type Asked = report.Asked
