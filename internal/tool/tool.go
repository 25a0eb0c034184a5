// Package tool is the seam between an agent and whatever answers its tool
// calls: the mock engine (with passthrough code behind impl: rules) and
// simulated worlds. Every answer comes back as a Result (what the model receives,
// plus evidence of how it was chosen), and every call is kept as a Record
// for checks and reports.
package tool

import (
	"context"
	"encoding/json"
)

// Call is one tool call made by the model.
type Call struct {
	ID   string
	Name string
	Args string // the arguments as JSON text, as the model sent them
	Turn int    // 1-based model turn that made the call
}

// Outcome says how a call was answered.
type Outcome string

const (
	Return    Outcome = "return"
	Content   Outcome = "content"
	Error     Outcome = "error"
	Impl      Outcome = "impl"
	Unmatched Outcome = "unmatched"
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
// from what its suite declares (resources and prompts): a resource read,
// a prompt get, a completion.
type MCPUse struct {
	Method    string            `json:"method"` // resources/read, prompts/get, completion/complete
	URI       string            `json:"uri,omitempty"`
	Name      string            `json:"name,omitempty"` // the prompt's, or the completed argument's
	Arguments map[string]string `json:"arguments,omitempty"`
	Error     string            `json:"error,omitempty"` // the answer was this error (not found, a missing argument)
}

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
// request, its params as sent) and what the client answered (its result,
// without _meta), or why there is no answer.
type Asked struct {
	Method  string          `json:"method"`
	Request json.RawMessage `json:"request"`
	Answer  json.RawMessage `json:"answer,omitempty"`
	Error   string          `json:"error,omitempty"`
}
