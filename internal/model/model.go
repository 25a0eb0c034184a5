// Package model is how the built-in agent loop talks to a model: one
// provider-neutral request and response, and the providers behind it.
// The offline `script` provider lives here; real providers speak their
// own wire formats behind the same interface.
package model

import (
	"context"
	"encoding/json"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Role of a message in the conversation.
type Role string

const (
	User      Role = "user"
	Assistant Role = "assistant"
	ToolRole  Role = "tool"
)

// Message is one entry of the conversation.
type Message struct {
	Role      Role
	Text      string
	ToolCalls []tool.Call // Assistant
	// Tool result (Role tool)
	CallID  string
	IsError bool
	// Raw is the provider's own form of an assistant turn (Anthropic content
	// blocks, Responses output items), sent back verbatim on the next call
	// so that nothing the API needs (thinking, reasoning items) is lost.
	Raw json.RawMessage
}

// ToolDef is a tool the model is shown.
type ToolDef struct {
	Name        string
	Description string
	InputSchema any // JSON value
}

// Request is one model call.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolDef
	Params   map[string]any
}

// Usage counts tokens.
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
}

// Response is the model's answer.
type Response struct {
	Text      string
	ToolCalls []tool.Call // Turn is filled in by the loop
	Usage     Usage
	// Raw is the provider's form of this turn; the loop keeps it on the
	// assistant message (see Message.Raw).
	Raw json.RawMessage
	// Notes are remarks about this turn for the report: an answer cut
	// short at max_tokens, a refusal. The turn is still an answer.
	Notes []string
}

// Model answers requests. A Model value serves one case.
type Model interface {
	Generate(ctx context.Context, req *Request) (*Response, error)
}
