// Package agent is dryfire's built-in agent loop: send the conversation to
// the model, run each tool call it asks for through the tool session in
// order, append the results, and repeat until the model answers without
// tool calls or the turn limit is reached.
package agent

import (
	"cmp"
	"context"
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Config is what the loop needs besides the model and the tools.
type Config struct {
	Model    string
	System   string
	Input    string
	Tools    []model.ToolDef
	Params   map[string]any
	MaxTurns int // model calls allowed; at least 1
	// User, when set, goes on with the conversation after each reply;
	// MaxTurns bounds the model calls of the whole conversation.
	User User
}

// User is a simulated user: after each of the agent's replies (made by
// model turns up to turn), its next message, or ok false to end the
// conversation.
type User interface {
	Next(ctx context.Context, reply string, turn int) (msg string, ok bool, err error)
}

// Exchange is one turn of a conversation: a user message and the agent's
// reply, made by model turns up to ModelTurn.
type Exchange struct {
	User      string
	Reply     string
	ModelTurn int
}

// Transcript is what happened in one run of the loop.
type Transcript struct {
	Output   string // the final text (the last text seen, on error)
	Turns    int    // model calls made
	Usage    model.Usage
	Messages []model.Message
	// Conversation is every turn of the conversation, the first (Input)
	// included; the last may have no reply when the run ended in it.
	Conversation []Exchange
	// Notes are the model's remarks for the report (an answer cut short).
	Notes []string
}

// MaxTurnsError says the model still wanted tools after the last allowed turn.
type MaxTurnsError struct{ Max int }

func (e *MaxTurnsError) Error() string {
	return fmt.Sprintf("max_turns (%d) reached: turn %d still called tools, and a further model call is not allowed", e.Max, e.Max)
}

// Run drives one case. The error, if any, is the reason the case could not
// finish; the transcript holds what happened up to then.
func Run(ctx context.Context, m model.Model, tools tool.Session, cfg Config) (*Transcript, error) {
	t := &Transcript{}
	if cfg.MaxTurns < 1 {
		return t, fmt.Errorf("agent: max_turns must be at least 1, not %d", cfg.MaxTurns)
	}
	// Room for a few turns of calls: the messages of a short case are
	// allocated once.
	msgs := append(make([]model.Message, 0, 8), model.Message{Role: model.User, Text: cfg.Input})
	req := &model.Request{Model: cfg.Model, System: cfg.System, Tools: cfg.Tools, Params: cfg.Params, Messages: msgs}
	t.Conversation = []Exchange{{User: cfg.Input}}
	defer func() { t.Messages = req.Messages }() // what was said, however it ends
	for {
		if t.Turns >= cfg.MaxTurns {
			return t, &MaxTurnsError{Max: cfg.MaxTurns}
		}
		if err := ctx.Err(); err != nil {
			return t, err
		}
		resp, err := m.Generate(ctx, req)
		if err != nil {
			return t, err
		}
		t.Turns++
		t.Usage.InputTokens += resp.Usage.InputTokens
		t.Usage.OutputTokens += resp.Usage.OutputTokens
		t.Notes = append(t.Notes, resp.Notes...)
		t.Output = cmp.Or(resp.Text, t.Output)
		calls := resp.ToolCalls
		for i := range calls {
			calls[i].Turn = t.Turns
		}
		req.Messages = append(req.Messages, model.Message{Role: model.Assistant, Text: resp.Text, ToolCalls: calls, Raw: resp.Raw})
		if len(calls) == 0 {
			t.Output = resp.Text
			last := &t.Conversation[len(t.Conversation)-1]
			last.Reply, last.ModelTurn = resp.Text, t.Turns
			if cfg.User == nil {
				return t, nil
			}
			msg, ok, err := cfg.User.Next(ctx, resp.Text, t.Turns)
			if err != nil || !ok {
				return t, err
			}
			t.Conversation = append(t.Conversation, Exchange{User: msg})
			req.Messages = append(req.Messages, model.Message{Role: model.User, Text: msg})
			continue
		}
		for _, c := range calls {
			if err := ctx.Err(); err != nil {
				return t, err
			}
			r := tools.Call(ctx, c)
			req.Messages = append(req.Messages, model.Message{Role: model.ToolRole, CallID: c.ID, Text: r.Content, IsError: r.IsError})
		}
	}
}
