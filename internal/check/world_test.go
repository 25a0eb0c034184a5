package check

import (
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
)

func v(s string) any {
	x, err := value.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return x
}

func ptr[T any](v T) *T { return &v }

func TestStateChecks(t *testing.T) {
	facts := &Facts{World: &WorldFacts{
		State:   v(`{"p":{"bag":[1,2,3],"queue":["a","b"],"recs":{"k.1":{"x":1,"y":[1,2]}}}}`).(map[string]any),
		Ordered: func(pkg, coll string) bool { return coll == "queue" },
	}}
	n := func(i int) *int { return &i }
	for _, c := range []struct {
		check spec.Check
		pass  bool
		msg   string
	}{
		{spec.Check{Path: "p.bag", StateEquals: v(`[3,1,2]`), HasEquals: true}, true, "equals"},        // unordered collection
		{spec.Check{Path: "p.queue", StateEquals: v(`["b","a"]`), HasEquals: true}, false, "to equal"}, // declared ordered
		{spec.Check{Path: "/p/recs/k.1/x", StateEquals: v(`1`), HasEquals: true}, true, ""},            // JSON Pointer for a dotted key
		{spec.Check{Path: "/p/recs/k.1", StateEquals: v(`{"x":2,"z":1}`), HasEquals: true}, false, `.x: expected 2, got 1; missing .z; unexpected .y`},
		{spec.Check{Path: "p.recs", StateHas: v(`{"k.1":{"y":[1,2]}}`), HasContains: true}, true, ""},
		{spec.Check{Path: "p.bag", StateHas: v(`2`), HasContains: true}, true, ""},
		{spec.Check{Path: "p.nope", Absent: true}, true, ""},
		{spec.Check{Path: "p.recs.zz.x", StateEquals: v(`1`), HasEquals: true}, false, "(p.recs exists; it holds k.1)"},
		{spec.Check{Path: "p.bag", Count: n(3)}, true, ""},
		{spec.Check{Path: "p.recs", Count: n(2)}, false, "holds 1"},
		// Nested lists compare as multisets too, at any depth (they compared
		// in order); ordered: true asks for order, ordered: false for none,
		// even in a declared ordered collection.
		{spec.Check{Path: "/p/recs/k.1", StateEquals: v(`{"x":1,"y":[2,1]}`), HasEquals: true}, true, "equals"},
		{spec.Check{Path: "p.recs", StateEquals: v(`{"k.1":{"y":[2,1],"x":1.0}}`), HasEquals: true}, true, "equals"},
		{spec.Check{Path: "p", StateEquals: v(`{"bag":[2,3,1],"queue":["a","b"],"recs":{"k.1":{"x":1,"y":[2,1]}}}`), HasEquals: true}, true, "equals"},
		{spec.Check{Path: "p", StateEquals: v(`{"bag":[1,2,3],"queue":["b","a"],"recs":{"k.1":{"x":1,"y":[1,2]}}}`), HasEquals: true}, false, "to equal"},
		{spec.Check{Path: "/p/recs/k.1", StateEquals: v(`{"x":1,"y":[2,1]}`), HasEquals: true, StateOrdered: ptr(true)}, false, "to equal"},
		{spec.Check{Path: "p.bag", StateEquals: v(`[3,1,2]`), HasEquals: true, StateOrdered: ptr(true)}, false, "to equal"},
		{spec.Check{Path: "p.bag", StateEquals: v(`[1,2,3]`), HasEquals: true, StateOrdered: ptr(true)}, true, "equals"},
		{spec.Check{Path: "p.queue", StateEquals: v(`["b","a"]`), HasEquals: true, StateOrdered: ptr(false)}, true, "equals"},
		{spec.Check{Path: "p.bag", StateEquals: v(`[1,2,2]`), HasEquals: true}, false, "to equal"}, // a multiset, not a set
	} {
		c.check.Kind = spec.CheckState
		ok, msg := one(&c.check, facts)
		if ok != c.pass || !strings.Contains(msg, c.msg) {
			t.Errorf("%s: %v %q", c.check.Path, ok, msg)
		}
	}
}

func TestEventAndOperationChecks(t *testing.T) {
	facts := &Facts{World: &WorldFacts{
		Emitted: []world.Emitted{{Type: "saved", Data: v(`{"id":"a"}`)}, {Type: "saved", Data: v(`{"id":"b"}`)}},
		Evidence: []world.Evidence{
			{Operation: "p/save", Actor: "agent", Outcome: "behavior", Arguments: v(`{"id":"a"}`)},
			{Operation: "p/save", Actor: "agent", Outcome: "receipt", Arguments: v(`{"id":"a"}`)},
			{Operation: "p/save", Actor: "event:e", Outcome: "behavior", Arguments: v(`{}`)},
		},
	}}
	one1 := 1
	two := 2
	for _, c := range []struct {
		check spec.Check
		pass  bool
	}{
		{spec.Check{Kind: spec.CheckEvent, EventType: "saved", Count: &two}, true},
		{spec.Check{Kind: spec.CheckEvent, EventType: "saved", EventData: value.Compile(v(`{"id":"b"}`)), Count: &one1}, true},
		{spec.Check{Kind: spec.CheckEvent, EventType: "gone"}, false},
		{spec.Check{Kind: spec.CheckCalled, Operation: "p/save", Times: &two}, true}, // the event's run is not the agent's
		{spec.Check{Kind: spec.CheckCalled, Operation: "p/save", Outcome: "receipt", Times: &one1}, true},
		{spec.Check{Kind: spec.CheckNotCalled, Operation: "p/save", With: value.Compile(v(`{"id":"z"}`))}, true},
	} {
		if ok, msg := one(&c.check, facts); ok != c.pass {
			t.Errorf("%+v: %v %q", c.check, ok, msg)
		}
	}
}
