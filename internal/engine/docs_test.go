package engine_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/docblock"
)

// pageJSON is a JSON block of docs/engine-protocol.md, by a line of it.
func pageJSON(t *testing.T, block string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(block), &m); err != nil {
		t.Fatalf("docs/engine-protocol.md: a block is not JSON: %v\n%s", err, block)
	}
	return m
}

// sketchKeys checks an answer against the page's sketch of it (JSON with
// … for what it leaves out): every key the sketch names is a key of the
// answer somewhere, and the answer has no top-level key the sketch lacks.
func sketchKeys(t *testing.T, what, sketch string, answer map[string]any) {
	t.Helper()
	have := docblock.JSONKeys(answer)
	have["…"] = true
	named := map[string]bool{}
	for _, k := range docblock.SketchKeys(sketch) {
		named[k] = true
		if !have[k] {
			t.Errorf("%s: the page names %q, which the answer does not have", what, k)
		}
	}
	for k := range answer {
		if !named[k] {
			t.Errorf("%s: the answer has %q, which the page does not show", what, k)
		}
	}
}

// TestDocsProtocolExamples runs the examples of docs/engine-protocol.md
// against the engine on testdata/project (the page's project): the start
// request as written (its cwd made the project's), an /ops call answered
// busy once by the request's override and then ok through its behavior
// override, and the end request; each answer is the page's, or has the
// keys the page sketches.
func TestDocsProtocolExamples(t *testing.T) {
	must := func(block string, err error) string {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return block
	}
	startBody := must(docblock.Find("../../docs/engine-protocol.md", `  "drill": "save-record",`))
	startAnswer := must(docblock.Find("../../docs/engine-protocol.md", `  "id": "3f2a…",`))
	opBody := must(docblock.Find("../../docs/engine-protocol.md", `{"arguments": {"id": "record-1", "text": "hello"}, "actorId": "agent", "idempotencyKey": "save-record-1"}`))
	opAnswers := must(docblock.Find("../../docs/engine-protocol.md", `{"status": "ok", "output": {"id": "record-1", "version": 1}, "error": null, "receipt": false}`))
	endBody := must(docblock.Find("../../docs/engine-protocol.md", `{"output": "Saved record-1.", "error": null}`))
	endAnswer := must(docblock.Find("../../docs/engine-protocol.md", `  "verdict": "passed",`))

	dir := project(t)
	p := startEngine(t, dir)
	body := pageJSON(t, startBody)
	body["cwd"] = dir
	d := p.start(body)
	sketchKeys(t, "the start answer", startAnswer, d.answer)

	lines := strings.Split(strings.TrimSpace(opAnswers), "\n")
	if len(lines) != 2 {
		t.Fatalf("the page shows %d /ops answers, want an ok and an error", len(lines))
	}
	ok, busy := pageJSON(t, lines[0]), pageJSON(t, lines[1])
	for i, want := range []map[string]any{busy, ok} {
		status, got := p.call("POST", d.url+"/ops/record-store/records.save", pageJSON(t, opBody), false)
		if g, w := canonical(t, got), canonical(t, want); g != w {
			t.Errorf("/ops call %d: %d %v, the page shows %v", i+1, status, got, want)
		}
		if wantStatus := []int{http.StatusServiceUnavailable, http.StatusOK}[i]; status != wantStatus {
			t.Errorf("/ops call %d: status %d, want %d", i+1, status, wantStatus)
		}
	}

	status, end := p.call("POST", "/engine/drills/"+d.id+"/end", pageJSON(t, endBody), true)
	if status != http.StatusOK {
		t.Fatalf("end: %d %v", status, end)
	}
	sketchKeys(t, "the end answer", endAnswer, end)
	// The page's setup makes records.save busy once, then saves slowly.
	if got := evidence(t, end); !slices.Equal(got, []string{"record-store/records.save error busy-once@test", "record-store/records.save behavior"}) {
		t.Errorf("end: evidence %v", got)
	}
}

// canonical is v as JSON with sorted keys.
func canonical(t *testing.T, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(data, &x); err != nil {
		t.Fatal(err)
	}
	data, _ = json.Marshal(x)
	return string(data)
}
