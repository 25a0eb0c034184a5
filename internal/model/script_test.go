package model_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// script loads the script of a suite's first case.
func script(t *testing.T, turns string) []*spec.Turn {
	t.Helper()
	src := "version: 1\nagent: {provider: script}\nmocks:\n  lookup_order: [{return: x}]\n  issue_refund: [{return: x}]\n" +
		"cases:\n  - name: c\n    input: hi\n    script:\n" + turns
	s, ds := spec.Parse("s.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("suite does not load:\n%v", ds)
	}
	return s.Cases[0].Script
}

const threeTurns = `      - tool_calls:
          - {name: lookup_order, args: {order_id: A-991, n: 1.50}}
          - {id: my-id, name: issue_refund, args: {order_id: A-991}}
      - text: Checking.
        tool_calls: [{name: lookup_order, args: {}}]
      - text: Your order is gold tier.
`

func TestScriptServesTurnsInOrder(t *testing.T) {
	s := model.NewScript(script(t, threeTurns))
	want := []*model.Response{
		{ToolCalls: []tool.Call{
			{ID: "call_1_1", Name: "lookup_order", Args: `{"n":1.50,"order_id":"A-991"}`},
			{ID: "my-id", Name: "issue_refund", Args: `{"order_id":"A-991"}`},
		}},
		{Text: "Checking.", ToolCalls: []tool.Call{{ID: "call_2_1", Name: "lookup_order", Args: `{}`}}},
		{Text: "Your order is gold tier."},
	}
	for i, w := range want {
		got, err := s.Generate(context.Background(), &model.Request{})
		if err != nil {
			t.Fatalf("turn %d: %v", i+1, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("turn %d (-want +got):\n%s", i+1, diff)
		}
	}
}

// The script ignores what it is sent: it is the case's turns, whatever
// the conversation.
func TestScriptIgnoresTheRequest(t *testing.T) {
	s := model.NewScript(script(t, "      - text: hello\n"))
	got, err := s.Generate(context.Background(), &model.Request{Model: "x", System: "be brief", Messages: []model.Message{{Role: model.User, Text: "other"}}})
	if err != nil || got.Text != "hello" {
		t.Errorf("got %+v, %v", got, err)
	}
}

func TestScriptExhausted(t *testing.T) {
	tests := []struct {
		name  string
		turns []*spec.Turn
		want  string
	}{
		{"one turn", script(t, "      - tool_calls: [{name: lookup_order, args: {}}]\n"),
			"the script ran out: it has 1 turn, and turn 1 still called tools, so the loop asked for turn 2; end the script with a turn that has text and no tool_calls"},
		{"three turns", script(t, threeTurns)[:2],
			"the script ran out: it has 2 turns, and turn 2 still called tools, so the loop asked for turn 3; end the script with a turn that has text and no tool_calls"},
		{"no turns", nil,
			"the script has no turns, so the loop has nothing to send for turn 1; give the case a script that ends with a turn that has text and no tool_calls"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := model.NewScript(tt.turns)
			for range tt.turns {
				if _, err := s.Generate(context.Background(), &model.Request{}); err != nil {
					t.Fatal(err)
				}
			}
			for range 2 { // and it stays exhausted
				resp, err := s.Generate(context.Background(), &model.Request{})
				var ex *model.ErrScriptExhausted
				if !errors.As(err, &ex) || resp != nil {
					t.Fatalf("got %+v, %v; want *ErrScriptExhausted", resp, err)
				}
				if ex.Turns != len(tt.turns) {
					t.Errorf("Turns = %d, want %d", ex.Turns, len(tt.turns))
				}
				if err.Error() != tt.want {
					t.Errorf("message\n got %s\nwant %s", err, tt.want)
				}
			}
		})
	}
}

func TestScriptCancelled(t *testing.T) {
	s := model.NewScript(script(t, "      - text: hello\n"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Generate(ctx, &model.Request{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// A cancelled call does not use up a turn.
	if got, err := s.Generate(context.Background(), &model.Request{}); err != nil || got.Text != "hello" {
		t.Errorf("after a cancelled call: %+v, %v", got, err)
	}
}

// Each turn is served once, even to concurrent callers. Run with -race.
func TestScriptConcurrent(t *testing.T) {
	var turns string
	for range 100 {
		turns += "      - tool_calls: [{name: lookup_order, args: {}}]\n"
	}
	s := model.NewScript(script(t, turns))
	var wg sync.WaitGroup
	var mu sync.Mutex
	seen := map[string]int{}
	exhausted := 0
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				r, err := s.Generate(context.Background(), &model.Request{})
				mu.Lock()
				if err != nil {
					exhausted++
				} else {
					seen[r.ToolCalls[0].ID]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != 100 || exhausted != 60 {
		t.Errorf("%d distinct turns served, %d exhausted; want 100 and 60", len(seen), exhausted)
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("turn %s served %d times", id, n)
		}
	}
}

// A response's tool calls are the model's own: the loop fills in Turn on
// them, which must not leak into the script or later responses.
func TestScriptResponsesAreFresh(t *testing.T) {
	turns := script(t, "      - tool_calls: [{name: lookup_order, args: {}}]\n")
	a, _ := model.NewScript(turns).Generate(context.Background(), &model.Request{})
	a.ToolCalls[0].Turn = 7
	a.ToolCalls[0].Args = "changed"
	b, _ := model.NewScript(turns).Generate(context.Background(), &model.Request{})
	if b.ToolCalls[0].Turn != 0 || b.ToolCalls[0].Args != "{}" {
		t.Errorf("a response changed the script: %+v", b.ToolCalls[0])
	}
}

// The turns left unserved, optional ones aside; a turn whose answer was
// refused (it calls a tool the request does not offer) is listed as
// refused, not as served, in what later errors say.
func TestScriptUnservedAndRefused(t *testing.T) {
	s := model.NewScript(script(t, `      - tool_calls: [{name: issue_refund}]
      - text: one
      - text: two
        optional: true
      - text: three
`))
	offers := &model.Request{Tools: []model.ToolDef{{Name: "lookup_order"}}}
	if _, err := s.Pick(offers); err == nil {
		t.Fatal("a turn calling a tool not offered was not refused")
	}
	if _, err := s.Pick(offers); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{4}, s.Unserved()); diff != "" {
		t.Errorf("unserved (-want +got):\n%s", diff)
	}
	want := "script turn 4 was never served: the agent made 2 model calls (turn 1 (request 1, refused), turn 2 (request 2)); a turn the agent may not ask for is marked optional: true"
	if got := (&model.UnservedError{Turns: s.Unserved(), Served: s.Served()}).Error(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	s.Pick(offers)
	s.Pick(offers)
	_, err := s.Pick(offers)
	if want := "model request 5 matches no turn of the script: all 4 turns are served (turn 1 (request 1, refused), turn 2 (request 2), turn 3 (request 3), turn 4 (request 4))"; err == nil || len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
		t.Errorf("got  %v\nwant %s…", err, want)
	}
	if len(s.Unserved()) != 0 {
		t.Errorf("unserved %v", s.Unserved())
	}
}
