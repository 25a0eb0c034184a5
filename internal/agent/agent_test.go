package agent_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// suite is the world the loop runs in: mocks with a sequence and an
// error, and each test's script in its one case.
func suite(t *testing.T, scriptYAML string) (*tool.Recorder, *model.Script) {
	t.Helper()
	src := `version: 1
agent: {provider: script}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
  issue_refund:
    - sequence: [{error: timeout}, {return: {ok: true}}]
  search:
    - return: no results
cases:
  - name: c
    input: Please refund order A-991.
    script:
` + scriptYAML
	s, ds := spec.Parse("s.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("suite does not load:\n%v", ds)
	}
	sess := tool.NewRecorder(mock.NewSession(mock.Compile(s).ForCase(s.Cases[0]), nil), tool.RecorderOptions{})
	return sess, model.NewScript(s.Cases[0].Script)
}

// recorder wraps a model and keeps a copy of every request it was sent.
type recorder struct {
	model.Model
	mu       sync.Mutex
	requests []model.Request
}

func (r *recorder) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	r.mu.Lock()
	cp := *req
	cp.Messages = append([]model.Message(nil), req.Messages...)
	r.requests = append(r.requests, cp)
	r.mu.Unlock()
	return r.Model.Generate(ctx, req)
}

var cfg = agent.Config{
	Model:    "m",
	System:   "You are a support agent.",
	Input:    "Please refund order A-991.",
	Tools:    []model.ToolDef{{Name: "lookup_order", InputSchema: map[string]any{"type": "object"}}},
	Params:   map[string]any{"temperature": 0},
	MaxTurns: 5,
}

const refundScript = `      - tool_calls:
          - {name: lookup_order, args: {order_id: A-991}}
          - {name: issue_refund, args: {order_id: A-991}}
          - {name: search, args: {q: refunds}}
      - text: Retrying the refund.
        tool_calls: [{name: issue_refund, args: {order_id: A-991}}]
      - text: Your refund is on its way.
`

func TestRunConversation(t *testing.T) {
	sess, script := suite(t, refundScript)
	rec := &recorder{Model: script}
	tr, err := agent.Run(context.Background(), rec, sess, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Output != "Your refund is on its way." || tr.Turns != 3 {
		t.Errorf("output %q after %d turns; want the final text after 3", tr.Output, tr.Turns)
	}

	// Several tool calls of one turn run in order, and every call carries
	// its turn.
	type callSummary struct {
		ID, Name, Content string
		IsError           bool
		Turn              int
	}
	var calls []callSummary
	for _, r := range sess.Records() {
		calls = append(calls, callSummary{r.ID, r.Name, r.Result.Content, r.Result.IsError, r.Turn})
	}
	wantCalls := []callSummary{
		{"call_1_1", "lookup_order", `{"tier":"gold"}`, false, 1},
		{"call_1_2", "issue_refund", "timeout", true, 1},
		{"call_1_3", "search", "no results", false, 1},
		{"call_2_1", "issue_refund", `{"ok":true}`, false, 2},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}

	// The conversation: the input, then each turn's assistant message and
	// its tool results in call order, with is_error.
	assistant1 := model.Message{Role: model.Assistant, ToolCalls: []tool.Call{
		{ID: "call_1_1", Name: "lookup_order", Args: `{"order_id":"A-991"}`, Turn: 1},
		{ID: "call_1_2", Name: "issue_refund", Args: `{"order_id":"A-991"}`, Turn: 1},
		{ID: "call_1_3", Name: "search", Args: `{"q":"refunds"}`, Turn: 1},
	}}
	turn1 := []model.Message{
		{Role: model.User, Text: "Please refund order A-991."},
		assistant1,
		{Role: model.ToolRole, CallID: "call_1_1", Text: `{"tier":"gold"}`},
		{Role: model.ToolRole, CallID: "call_1_2", Text: "timeout", IsError: true},
		{Role: model.ToolRole, CallID: "call_1_3", Text: "no results"},
	}
	turn2 := append(append([]model.Message(nil), turn1...),
		model.Message{Role: model.Assistant, Text: "Retrying the refund.", ToolCalls: []tool.Call{
			{ID: "call_2_1", Name: "issue_refund", Args: `{"order_id":"A-991"}`, Turn: 2},
		}},
		model.Message{Role: model.ToolRole, CallID: "call_2_1", Text: `{"ok":true}`},
	)
	final := append(append([]model.Message(nil), turn2...),
		model.Message{Role: model.Assistant, Text: "Your refund is on its way."})

	if len(rec.requests) != 3 {
		t.Fatalf("%d model calls, want 3", len(rec.requests))
	}
	for i, want := range [][]model.Message{turn1[:1], turn1, turn2} {
		got := rec.requests[i]
		if diff := cmp.Diff(want, got.Messages); diff != "" {
			t.Errorf("request %d messages (-want +got):\n%s", i+1, diff)
		}
		if got.Model != cfg.Model || got.System != cfg.System || !cmp.Equal(got.Tools, cfg.Tools) || !cmp.Equal(got.Params, cfg.Params) {
			t.Errorf("request %d does not carry the config: %+v", i+1, got)
		}
	}
	if diff := cmp.Diff(final, tr.Messages); diff != "" {
		t.Errorf("transcript messages (-want +got):\n%s", diff)
	}
}

func TestRunMaxTurns(t *testing.T) {
	loop := strings.Repeat("      - tool_calls: [{name: search, args: {q: x}}]\n", 10)
	for _, max := range []int{1, 3} {
		sess, script := suite(t, loop)
		rec := &recorder{Model: script}
		c := cfg
		c.MaxTurns = max
		tr, err := agent.Run(context.Background(), rec, sess, c)
		var mt *agent.MaxTurnsError
		if !errors.As(err, &mt) || mt.Max != max {
			t.Fatalf("max %d: err = %v, want *MaxTurnsError{%d}", max, err, max)
		}
		if len(rec.requests) != max || tr.Turns != max {
			t.Errorf("max %d: %d model calls, %d turns; want exactly %d", max, len(rec.requests), tr.Turns, max)
		}
		// The last allowed turn's tool calls still ran.
		if n := len(sess.Records()); n != max {
			t.Errorf("max %d: %d tool calls, want %d", max, n, max)
		}
		want := fmt.Sprintf("max_turns (%d) reached: turn %d still called tools, and a further model call is not allowed", max, max)
		if err.Error() != want {
			t.Errorf("message\n got %s\nwant %s", err, want)
		}
	}
}

// A case that ends on exactly max_turns is not an error.
func TestRunEndsOnTheLastAllowedTurn(t *testing.T) {
	sess, script := suite(t, refundScript)
	c := cfg
	c.MaxTurns = 3
	tr, err := agent.Run(context.Background(), script, sess, c)
	if err != nil || tr.Turns != 3 || tr.Output != "Your refund is on its way." {
		t.Errorf("got %d turns, output %q, err %v", tr.Turns, tr.Output, err)
	}
}

func TestRunMaxTurnsInvalid(t *testing.T) {
	sess, script := suite(t, refundScript)
	rec := &recorder{Model: script}
	c := cfg
	c.MaxTurns = 0
	if _, err := agent.Run(context.Background(), rec, sess, c); err == nil || len(rec.requests) != 0 {
		t.Errorf("max_turns 0: err %v after %d model calls; want an error and none", err, len(rec.requests))
	}
}

func TestRunScriptExhausted(t *testing.T) {
	sess, script := suite(t, `      - tool_calls: [{name: lookup_order, args: {order_id: A-991}}]
      - text: Looking further.
        tool_calls: [{name: search, args: {q: x}}]
`)
	tr, err := agent.Run(context.Background(), script, sess, cfg)
	var ex *model.ErrScriptExhausted
	if !errors.As(err, &ex) {
		t.Fatalf("err = %v, want *model.ErrScriptExhausted", err)
	}
	want := "the script ran out: it has 2 turns, and turn 2 still called tools, so the loop asked for turn 3; end the script with a turn that has text and no tool_calls"
	if err.Error() != want {
		t.Errorf("message\n got %s\nwant %s", err, want)
	}
	// The transcript holds what happened: two turns, both tools run, and
	// the last text seen as the output.
	if tr.Turns != 2 || tr.Output != "Looking further." || len(sess.Records()) != 2 {
		t.Errorf("transcript: %d turns, output %q, %d calls", tr.Turns, tr.Output, len(sess.Records()))
	}
}

func TestRunOutputIsTheFinalText(t *testing.T) {
	tests := []struct {
		name, script, want string
	}{
		{"text only", "      - text: Done.\n", "Done."},
		{"after tools", "      - text: First.\n        tool_calls: [{name: search, args: {}}]\n      - text: Second.\n", "Second."},
		{"empty final text", "      - text: First.\n        tool_calls: [{name: search, args: {}}]\n      - text: \"\"\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess, script := suite(t, tt.script)
			tr, err := agent.Run(context.Background(), script, sess, cfg)
			if err != nil || tr.Output != tt.want {
				t.Errorf("output %q, err %v; want %q", tr.Output, err, tt.want)
			}
		})
	}
}

// usageModel answers with fixed usage and no tools after n turns.
type usageModel struct{ n, calls int }

func (m *usageModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	m.calls++
	r := &model.Response{Usage: model.Usage{InputTokens: 10 * m.calls, OutputTokens: m.calls}}
	if m.calls < m.n {
		r.ToolCalls = []tool.Call{{ID: "c", Name: "search", Args: `{}`}}
	} else {
		r.Text = "done"
	}
	return r, nil
}

func TestRunSumsUsage(t *testing.T) {
	sess, _ := suite(t, "      - text: x\n")
	tr, err := agent.Run(context.Background(), &usageModel{n: 3}, sess, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := (model.Usage{InputTokens: 60, OutputTokens: 6}); tr.Usage != want {
		t.Errorf("usage %+v, want %+v", tr.Usage, want)
	}
}

// cancelling is a tool session that cancels the run on its first call.
type cancelling struct {
	tool.Session
	cancel context.CancelFunc
	calls  int
}

func (c *cancelling) Call(ctx context.Context, call tool.Call) tool.Result {
	c.calls++
	c.cancel()
	return c.Session.Call(ctx, call)
}

func TestRunStopsWhenCancelled(t *testing.T) {
	t.Run("before the first turn", func(t *testing.T) {
		sess, script := suite(t, refundScript)
		rec := &recorder{Model: script}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := agent.Run(ctx, rec, sess, cfg)
		if !errors.Is(err, context.Canceled) || len(rec.requests) != 0 {
			t.Errorf("err %v after %d model calls; want context.Canceled and none", err, len(rec.requests))
		}
	})
	t.Run("between tool calls", func(t *testing.T) {
		sess, script := suite(t, refundScript)
		rec := &recorder{Model: script}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tools := &cancelling{Session: sess, cancel: cancel}
		tr, err := agent.Run(ctx, rec, tools, cfg)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		// The first turn asked for three tools; the run stopped after the
		// first, and made no further model call.
		if tools.calls != 1 || len(rec.requests) != 1 || tr.Turns != 1 {
			t.Errorf("%d tool calls, %d model calls, %d turns; want 1, 1, 1", tools.calls, len(rec.requests), tr.Turns)
		}
	})
	t.Run("a model that waits", func(t *testing.T) {
		sess, _ := suite(t, refundScript)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := agent.Run(ctx, blocking{}, sess, cfg)
			done <- err
		}()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})
}

// blocking is a model that answers only when its context ends.
type blocking struct{}

func (blocking) Generate(ctx context.Context, _ *model.Request) (*model.Response, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestRunModelError(t *testing.T) {
	sess, _ := suite(t, refundScript)
	boom := errors.New("provider unreachable")
	tr, err := agent.Run(context.Background(), failing{boom}, sess, cfg)
	if !errors.Is(err, boom) || tr.Turns != 0 {
		t.Errorf("err %v, %d turns; want the model's error and 0", err, tr.Turns)
	}
	if len(tr.Messages) != 1 || tr.Messages[0].Role != model.User {
		t.Errorf("transcript messages %+v, want the input only", tr.Messages)
	}
}

type failing struct{ err error }

func (f failing) Generate(context.Context, *model.Request) (*model.Response, error) {
	return nil, f.err
}
