package model

import (
	"context"
	"fmt"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Script is the offline, deterministic model: its answers are a case's
// scripted turns, in order, whatever the conversation says.
type Script struct {
	turns []*spec.Turn
	mu    sync.Mutex
	next  int
}

// NewScript serves the given turns.
func NewScript(turns []*spec.Turn) *Script { return &Script{turns: turns} }

// ErrScriptExhausted is returned when the loop asks for a turn the script
// does not have.
type ErrScriptExhausted struct {
	Turns int // how many turns the script has
}

func (e *ErrScriptExhausted) Error() string {
	if e.Turns == 0 {
		return "the script has no turns, so the loop has nothing to send for turn 1; give the case a script that ends with a turn that has text and no tool_calls"
	}
	turns := "turns"
	if e.Turns == 1 {
		turns = "turn"
	}
	return fmt.Sprintf("the script ran out: it has %d %s, and turn %d still called tools, so the loop asked for turn %d; end the script with a turn that has text and no tool_calls", e.Turns, turns, e.Turns, e.Turns+1)
}

// Generate returns the next scripted turn.
func (s *Script) Generate(ctx context.Context, _ *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.next >= len(s.turns) {
		return nil, &ErrScriptExhausted{Turns: len(s.turns)}
	}
	t := s.turns[s.next]
	s.next++
	r := &Response{Text: t.Text}
	if len(t.ToolCalls) > 0 {
		r.ToolCalls = make([]tool.Call, len(t.ToolCalls))
		for i, c := range t.ToolCalls {
			r.ToolCalls[i] = tool.Call{ID: c.ID, Name: c.Name, Args: c.ArgsJSON}
		}
	}
	return r, nil
}
