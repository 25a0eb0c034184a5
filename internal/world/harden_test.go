package world

import (
	"strings"
	"testing"
	"time"
)

// Regression tests for hostile worlds and behaviors: each names the
// problem it reproduces.

// hostileWorld loads a one-operation world whose behavior is src.
func hostileWorld(t *testing.T, extra, src string) *World {
	t.Helper()
	doc := `version: 1
world: hostile
behaviors: [h.star]
` + extra + `
packages:
  p:
    operations:
      op:
        behavior: h
`
	w, ds := Parse("h.world.yaml", []byte(doc), &LoadOptions{ReadFile: func(string) ([]byte, error) { return []byte(src), nil }})
	if ds.HasErrors() {
		t.Fatalf("load:\n%s", ds.Error())
	}
	return w
}

func TestHostileSelfReschedulingBehaviorIsBoundedPerTick(t *testing.T) {
	w := hostileWorld(t, "", "def h(ctx, args):\n    ctx.schedule('+0s', 'p/op', {})\n    return {}\n")
	in := newDrill(t, w, Drill{})
	wantOK(t, in.Call(Request{Operation: "p/op"}))
	done := make(chan *Response)
	go func() { done <- in.Call(Request{Operation: "p/op"}) }()
	var r *Response
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the second call hangs")
	}
	wantCode(t, r, CodeEventLimit)
	if !strings.Contains(r.Error.Message, "limits.events_per_tick") {
		t.Errorf("message does not say how to raise the limit: %s", r.Error.Message)
	}
	// The world keeps serving: the looping events were dropped.
	if n := len(in.Evidence()); n > DefaultEventsPerTick+3 {
		t.Errorf("%d evidence entries", n)
	}
	wantOK(t, in.Call(Request{Operation: "p/op"}))
	if err := in.Advance(time.Minute); err == nil || !strings.Contains(err.Error(), "events_per_tick") {
		t.Errorf("advance: %v", err)
	}
}

func TestHostileBehaviorSchedulingTooManyEventsInOneCallFails(t *testing.T) {
	w := hostileWorld(t, "limits: {scheduled_per_call: 5}", "def h(ctx, args):\n    for i in range(10):\n        ctx.schedule('+1h', 'p/op', {})\n    return {}\n")
	in := newDrill(t, w, Drill{})
	r := in.Call(Request{Operation: "p/op"})
	wantCode(t, r, CodeBehaviorFailed)
	if !strings.Contains(r.Error.Message, "more than 5 events") || !strings.Contains(r.Error.Message, "limits.scheduled_per_call") || !strings.Contains(r.Error.Message, "h.star:3:") {
		t.Errorf("message: %s", r.Error.Message)
	}
}
