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

// Starlark had a step budget but no memory bound: s = s + s forty times
// was a fatal out-of-memory of the whole run; 'a' * 1000000000 allocated
// 1 GB and passed. Each is now a BEHAVIOR_FAILED on its call, at its line.
func TestHostileBehaviorMemoryIsBoundedPerCall(t *testing.T) {
	for _, tc := range []struct{ name, body string }{
		{"doubling concat", "    s = 'ab'\n    for i in range(40):\n        s = s + s\n    return {}\n"},
		{"augmented doubling", "    s = 'ab'\n    for i in range(40):\n        s += s\n    return {}\n"},
		{"list doubling", "    l = [1]\n    for i in range(40):\n        l += l\n    return {}\n"},
		{"extend doubling", "    l = [1]\n    for i in range(40):\n        l.extend(l)\n    return {}\n"},
		{"string repeat", "    s = 'a' * 1000000000\n    return {}\n"},
		{"list repeat", "    l = [0] * 100000000\n    return {}\n"},
		{"list of a range", "    l = list(range(1000000000))\n    return {}\n"},
		{"replace blowup", "    s = 'a' * 100000\n    s = s.replace('', s)\n    return {}\n"},
		{"join blowup", "    s = 'a' * 100000\n    s = s.join([s] * 10000)\n    return {}\n"},
		{"format blowup", "    s = 'a' * 1000000\n    f = '{}' * 1000\n    f = f.format(s)\n    return {}\n"},
		{"percent blowup", "    s = 'a' * 1000000\n    f = '%(a)s' * 1000\n    f = f % {'a': s}\n    return {}\n"},
		{"str of shared nesting", "    x = [1]\n    for i in range(40):\n        x = [x, x]\n    s = str(x)\n    return {}\n"},
		{"big int squaring", "    x = 3\n    for i in range(40):\n        x = x * x\n    return {}\n"},
		{"big int shifting", "    x = 3\n    for i in range(400):\n        x = x << 500\n    return {}\n"},
		{"split blowup", "    s = ',' * 10000000\n    l = s.split(',')\n    return {}\n"},
		{"method taken as a value", "    s = 'a' * 100000\n    f = s.replace\n    s = f('', s)\n    return {}\n"},
		{"bound join in a list", "    s = 'a' * 100000\n    fs = [s.join]\n    s = fs[0]([s] * 10000)\n    return {}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := hostileWorld(t, "limits: {memory_mb: 64}", "def h(ctx, args):\n"+tc.body)
			r := newDrill(t, w, Drill{}).Call(Request{Operation: "p/op"})
			wantCode(t, r, CodeBehaviorFailed)
			want := "memory limit: this would allocate more than 64 MiB (limits.memory_mb in the world file raises it)"
			if strings.Contains(tc.name, "int") {
				want = "integer limit: the result would have more than 65536 bits"
			}
			if !strings.Contains(r.Error.Message, want) || !strings.HasPrefix(r.Error.Message, "h.star:") {
				t.Errorf("message: %s", r.Error.Message)
			}
		})
	}
}

func TestHostileModuleTopLevelMemoryIsBounded(t *testing.T) {
	doc := "version: 1\nworld: hostile\nbehaviors: [h.star]\npackages: {p: {operations: {op: {behavior: h}}}}\n"
	src := "s = 'ab'\nfor i in range(40):\n    s = s + s\ndef h(ctx, args):\n    return {}\n"
	_, ds := Parse("h.world.yaml", []byte(doc), &LoadOptions{ReadFile: func(string) ([]byte, error) { return []byte(src), nil }})
	if !strings.Contains(ds.Error(), "h.star:3:") || !strings.Contains(ds.Error(), "memory limit: this would allocate more than 256 MiB") {
		t.Errorf("diagnostics: %s", ds.Error())
	}
}

// What the memory rewrite must not change: the operators' and methods'
// own results and errors.
func TestMemoryRewriteKeepsSemantics(t *testing.T) {
	src := `def h(ctx, args):
    l = [1]
    m = l
    l += [2]
    d = {"a": 1}
    d["a"] += 41
    s = "x"
    s += "y"
    n = 3
    n <<= 2
    n *= 2
    t = (1,) + (2,)
    return {"alias": m, "d": d, "s": s * 2, "n": n, "t": list(t), "j": "-".join(["a", "b"]),
            "r": "aXa".replace("X", "b"), "f": "{}{}".format(1, "z"), "p": "%d%%" % 5, "u": {1: 2} | {3: 4} == {1: 2, 3: 4},
            "sp": "a,b".split(","), "str": str([1, "a"]), "bound": [f("-") for f in ["a b".split]][0], "rep": type("x".replace), "ext": l.extend([3]) == None and l, "m": max(1, 2) % 2}
`
	w := hostileWorld(t, "", src)
	r := newDrill(t, w, Drill{}).Call(Request{Operation: "p/op"})
	wantOK(t, r)
	want := `{"alias":[1,2,3],"bound":["a b"],"d":{"a":42},"ext":[1,2,3],"f":"1z","j":"a-b","m":0,"n":24,"p":"5%","r":"aba","rep":"builtin_function_or_method","s":"xyxy","sp":["a","b"],"str":"[1, \"a\"]","t":[1,2],"u":true}`
	if got := r.Content(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	bad := hostileWorld(t, "", "def h(ctx, args):\n    return 1 + 'a'\n")
	r = newDrill(t, bad, Drill{}).Call(Request{Operation: "p/op"})
	if r.Error == nil || r.Error.Message != "h.star:2:14: unknown binary op: int + string" {
		t.Errorf("error: %+v", r.Error)
	}
}

// A value of shared lists nested 40 deep is 2^40 JSON values: returning
// it is refused, not converted.
func TestHostileSharedNestingReturnedIsRefused(t *testing.T) {
	w := hostileWorld(t, "", "def h(ctx, args):\n    x = [1]\n    for i in range(40):\n        x = [x, x]\n    return {'x': x}\n")
	r := newDrill(t, w, Drill{}).Call(Request{Operation: "p/op"})
	wantCode(t, r, CodeBehaviorFailed)
	if !strings.Contains(r.Error.Message, "returned a value that is not JSON: more than 1000000 values") {
		t.Errorf("message: %s", r.Error.Message)
	}
}

// A world served for long grew without bound (200k /ops → 700 MB), and
// each GET /world/evidence copied all of it: the evidence kept is
// bounded, counted when dropped, and read in pages.
func TestHostileEvidenceIsBoundedAndPaged(t *testing.T) {
	w := hostileWorld(t, "", "def h(ctx, args):\n    ctx.emit('e', {})\n    return {}\n")
	in := newDrill(t, w, Drill{})
	in.SetEvidenceLimit(100)
	for range 1000 {
		wantOK(t, in.Call(Request{Operation: "p/op"}))
	}
	ev := in.Evidence()
	if len(ev) > 110 || ev[len(ev)-1].Seq != 1000 {
		t.Fatalf("%d entries kept, last seq %d", len(ev), ev[len(ev)-1].Seq)
	}
	p := in.Page(0, 30)
	if p.Dropped != 1000-len(ev) || len(p.Evidence) != 30 || p.Evidence[0].Seq != p.Dropped+1 || !p.More || p.Next != p.Dropped+30 || len(p.Events) != 30 {
		t.Errorf("first page: dropped %d, %d entries from %d, next %d, more %v, %d events", p.Dropped, len(p.Evidence), p.Evidence[0].Seq, p.Next, p.More, len(p.Events))
	}
	last := in.Page(990, 30)
	if len(last.Evidence) != 10 || last.More || last.Next != 1000 || last.Evidence[0].Seq != 991 {
		t.Errorf("last page: %d entries, next %d, more %v", len(last.Evidence), last.Next, last.More)
	}
	if p := in.Page(1000, 30); len(p.Evidence) != 0 || p.Next != 1000 || p.More {
		t.Errorf("past the end: %+v", p)
	}
}

// A tuple, nested in a list or not, is returned as a JSON array; bytes,
// though indexable too, are not a JSON value.
func TestBehaviorTupleIsAnArrayBytesAreNot(t *testing.T) {
	w := hostileWorld(t, "", "def h(ctx, args):\n    return {'t': (1, ('a', [2, ()]))}\n")
	r := newDrill(t, w, Drill{}).Call(Request{Operation: "p/op"})
	wantOK(t, r)
	if got, want := r.Content(), `{"t":[1,["a",[2,[]]]]}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	w = hostileWorld(t, "", "def h(ctx, args):\n    return {'b': b'xy'}\n")
	r = newDrill(t, w, Drill{}).Call(Request{Operation: "p/op"})
	wantCode(t, r, CodeBehaviorFailed)
	if !strings.Contains(r.Error.Message, "a bytes is not a JSON value") {
		t.Errorf("message: %s", r.Error.Message)
	}
}
