package world

import "testing"

// BenchmarkCall is one operation through the full pipeline (decode,
// permission, input schema, budget, idempotency, override selection,
// a Starlark behavior that reads and writes state and emits an event,
// output schema, evidence).
func BenchmarkCall(b *testing.B) {
	w := mustLoad(b, "testdata/seed.world.yaml")
	in := newDrill(b, w, Drill{})
	b.ReportAllocs()
	for b.Loop() {
		if len(in.evidence) > 100 { // keep the world small: a drill is short
			in.evidence, in.emitted = in.evidence[:0], in.emitted[:0]
			in.reset()
		}
		r := in.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"a","text":"hello"}`})
		if r.Status != "ok" {
			b.Fatal(r.Content())
		}
	}
}
