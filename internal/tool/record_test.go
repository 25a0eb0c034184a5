package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// echo answers every call with its name and keeps what it was given.
type echo struct {
	mu    sync.Mutex
	args  []any
	perrs []bool
	// hold, when set, blocks a call named "slow" until it is closed;
	// entered is closed once that call is being answered.
	hold, entered chan struct{}
}

func (e *echo) Answer(_ context.Context, c tool.Call, args any, perr error) tool.Result {
	e.mu.Lock()
	e.args = append(e.args, args)
	e.perrs = append(e.perrs, perr != nil)
	e.mu.Unlock()
	if c.Name == "slow" && e.hold != nil {
		close(e.entered)
		<-e.hold
	}
	return tool.Result{Content: c.Name, Entry: -1}
}

func names(recs []tool.Record) []string {
	out := []string{}
	for _, r := range recs {
		out = append(out, r.Name)
	}
	return out
}

// The record is in the order calls started in: a call still running is
// left out until it is done, then takes its place before the calls that
// started after it.
func TestRecorderKeepsStartOrder(t *testing.T) {
	e := &echo{hold: make(chan struct{}), entered: make(chan struct{})}
	r := tool.NewRecorder(e, tool.RecorderOptions{})
	done := make(chan struct{})
	go func() {
		r.Call(context.Background(), tool.Call{Name: "slow", Args: "{}"})
		close(done)
	}()
	<-e.entered
	r.Call(context.Background(), tool.Call{Name: "fast", Args: "{}"})
	if diff := cmp.Diff([]string{"fast"}, names(r.Records())); diff != "" {
		t.Errorf("while slow runs (-want +got):\n%s", diff)
	}
	close(e.hold)
	<-done
	if diff := cmp.Diff([]string{"slow", "fast"}, names(r.Records())); diff != "" {
		t.Errorf("after (-want +got):\n%s", diff)
	}
}

// The arguments are parsed once: the answerer gets the value (numbers as
// written) and the record keeps the same value; text that is not JSON
// reaches the answerer as an error and is kept as the text.
func TestRecorderParsesOnce(t *testing.T) {
	e := &echo{}
	r := tool.NewRecorder(e, tool.RecorderOptions{})
	r.Call(context.Background(), tool.Call{Name: "a", Args: `{ "n": 1.50, "s": ["x"] }`})
	r.Call(context.Background(), tool.Call{Name: "b", Args: `not json`})
	want := map[string]any{"n": json.Number("1.50"), "s": []any{"x"}}
	if diff := cmp.Diff([]any{want, nil}, e.args); diff != "" {
		t.Errorf("answerer's arguments (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true}, e.perrs); diff != "" {
		t.Errorf("answerer's parse errors (-want +got):\n%s", diff)
	}
	recs := r.Records()
	if diff := cmp.Diff([]any{want, "not json"}, []any{recs[0].Args, recs[1].Args}); diff != "" {
		t.Errorf("recorded arguments (-want +got):\n%s", diff)
	}
	if recs[0].Call.Args != `{ "n": 1.50, "s": ["x"] }` {
		t.Errorf("recorded text %q", recs[0].Call.Args)
	}
}

// Reset clears the record; a call running across it is left out, and
// the reset's own work runs before any call that starts after it.
func TestRecorderReset(t *testing.T) {
	e := &echo{hold: make(chan struct{}), entered: make(chan struct{})}
	r := tool.NewRecorder(e, tool.RecorderOptions{})
	r.Call(context.Background(), tool.Call{Name: "before", Args: "{}"})
	done := make(chan struct{})
	go func() {
		r.Call(context.Background(), tool.Call{Name: "slow", Args: "{}"})
		close(done)
	}()
	<-e.entered
	state := "old"
	r.Reset(func() { state = "new" })
	var picked string
	r.CallOn(context.Background(), tool.Call{Name: "after", Args: "{}"}, func() tool.Answerer {
		picked = state
		return e
	})
	close(e.hold)
	<-done
	if diff := cmp.Diff([]string{"after"}, names(r.Records())); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if picked != "new" {
		t.Errorf("a call after the reset picked the %s state", picked)
	}
}

// NoRecords keeps nothing and changes no answer; Turn stamps each call.
func TestRecorderOptions(t *testing.T) {
	r := tool.NewRecorder(&echo{}, tool.RecorderOptions{NoRecords: true})
	if got := r.Call(context.Background(), tool.Call{Name: "a"}); got.Content != "a" {
		t.Errorf("answer %q", got.Content)
	}
	if n := len(r.Records()); n != 0 {
		t.Errorf("%d records kept with NoRecords", n)
	}

	turn := 0
	r = tool.NewRecorder(&echo{}, tool.RecorderOptions{Turn: func() int { turn++; return turn * 10 }})
	r.Call(context.Background(), tool.Call{Name: "a", Turn: 3})
	r.Call(context.Background(), tool.Call{Name: "b", Turn: 3})
	kept := tool.NewRecorder(&echo{}, tool.RecorderOptions{})
	kept.Call(context.Background(), tool.Call{Name: "c", Turn: 3})
	var got []int
	for _, rec := range append(r.Records(), kept.Records()...) {
		got = append(got, rec.Turn)
	}
	if diff := cmp.Diff([]int{10, 20, 3}, got); diff != "" {
		t.Errorf("turns (-want +got):\n%s", diff)
	}
}

// Many calls, across the record's chunks, stay in order and complete.
// The room made at first (Calls) changes nothing of the record: fewer
// calls, as many, more, and after a Reset.
func TestRecorderManyCalls(t *testing.T) {
	for _, room := range []int{0, 1, 3, 5000, 1 << 20} {
		r := tool.NewRecorder(&echo{}, tool.RecorderOptions{Calls: room})
		for _, n := range []int{5000, 3} {
			for i := range n {
				r.Call(context.Background(), tool.Call{ID: fmt.Sprint(i), Name: "t", Args: "{}"})
			}
			recs := r.Records()
			if len(recs) != n {
				t.Fatalf("room %d: %d records, want %d", room, len(recs), n)
			}
			for i, rec := range recs {
				if rec.ID != fmt.Sprint(i) {
					t.Fatalf("room %d: record %d is call %s", room, i, rec.ID)
				}
			}
			r.Reset(nil)
		}
	}
}

// Hole 4 of issue 36: arguments nested deeper than tool.MaxDepth are kept
// in the record as their text (one string), not as a value as deep as
// they are; the answerer still gets them parsed.
func TestRecorderKeepsBoundedDepth(t *testing.T) {
	e := &echo{}
	r := tool.NewRecorder(e, tool.RecorderOptions{})
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	r.Call(context.Background(), tool.Call{Name: "ok", Args: nest(tool.MaxDepth)})
	r.Call(context.Background(), tool.Call{Name: "deep", Args: nest(tool.MaxDepth + 1)})
	r.Call(context.Background(), tool.Call{Name: "deeper", Args: `{"a": ` + nest(9000) + `}`})
	recs := r.Records()
	if _, ok := recs[0].Args.([]any); !ok {
		t.Errorf("%d levels: kept %T, want the value", tool.MaxDepth, recs[0].Args)
	}
	for _, rec := range recs[1:] {
		if s, ok := rec.Args.(string); !ok || s != rec.Call.Args {
			t.Errorf("%s: kept %T, want the text", rec.Name, rec.Args)
		}
	}
	if _, ok := e.args[2].(map[string]any); !ok {
		t.Errorf("the answerer got %T, want the value", e.args[2])
	}
}

// Hole 3 of issue 36: a case's record grew without end (300 calls of
// 1 MiB of arguments took 2.5 GB and made a 300 MiB report). It keeps at
// most tool.MaxCalls calls and tool.MaxKept bytes of arguments and
// results: a call past either is refused, not answered nor kept, with an
// error result naming the bound, and Over says so (the case errs). A
// server that keeps no record is not bounded; Reset starts the count
// over.
func TestRecorderBoundsCallsAndBytes(t *testing.T) {
	ctx := context.Background()
	e := &echo{}
	r := tool.NewRecorder(e, tool.RecorderOptions{})
	for range tool.MaxCalls {
		r.Call(ctx, tool.Call{Name: "a", Args: "{}"})
	}
	if r.Over() != nil {
		t.Fatalf("over at %d calls: %v", tool.MaxCalls, r.Over())
	}
	res := r.Call(ctx, tool.Call{Name: "past", Args: "{}"})
	if !res.IsError || !strings.Contains(res.Content, "tool.MaxCalls") || len(e.args) != tool.MaxCalls {
		t.Errorf("call %d: %+v, answered %d", tool.MaxCalls+1, res, len(e.args))
	}
	if n := len(r.Records()); n != tool.MaxCalls {
		t.Errorf("kept %d calls", n)
	}
	if err := r.Over(); err == nil || err.Error() != "the agent made more than 10000 tool calls in this case (tool.MaxCalls); 1 call past it refused" {
		t.Errorf("Over: %v", err)
	}

	r.Reset(nil)
	e.args = nil
	mib := `{"blob": "` + strings.Repeat("x", 1<<20) + `"}`
	for i := range 40 {
		res := r.Call(ctx, tool.Call{Name: fmt.Sprint("big", i), Args: mib})
		if (i < 15) == res.IsError {
			t.Errorf("call %d of 1 MiB: %.200s", i+1, res.Content)
		}
	}
	if n := len(r.Records()); n != 15 || len(e.args) != 15 {
		t.Errorf("kept %d calls, answered %d; want 15", n, len(e.args))
	}
	if err := r.Over(); err == nil || err.Error() != "the tool calls of this case passed 16 MiB of arguments and results kept (tool.MaxKept); 25 calls past it refused" {
		t.Errorf("Over: %v", err)
	}

	free := tool.NewRecorder(e, tool.RecorderOptions{NoRecords: true})
	for range 20 {
		if res := free.Call(ctx, tool.Call{Name: "big", Args: mib}); res.IsError {
			t.Fatalf("a recorder without records refused a call: %.200s", res.Content)
		}
	}
}
