package examples_test

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/drill"
	"github.com/dryfire-dev/dryfire/internal/test/docblock"
	"github.com/dryfire-dev/dryfire/report"
)

// The Go blocks of the docs are excerpts of these tests (each marked
// <!-- excerpt: examples/docs_go_test.go -->): the code a page shows
// compiles and runs as written.

// docs/sdks.md, "Go": load and run the quickstart from the repository
// root.
func TestDocsGoLibrary(t *testing.T) {
	t.Chdir("..")
	ctx := context.Background()
	p, err := dryfire.Load(nil, "examples/quickstart") // err is a dryfire.Diagnostics on spec errors
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(ctx, &dryfire.RunOptions{Concurrency: 4, Filter: "refund"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Passed {
			t.Errorf("%s: %s", c.Name, c.Reason)
		}
	}
	// "refund" is in the names of two of the three cases.
	if len(rep.Cases) != 2 {
		t.Errorf("--filter refund chose %d cases, want 2", len(rep.Cases))
	}
}

// Record and Saved are the record store's types in docs/worlds.md.
type Record struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

type Saved struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// runAgent is the page's agent: it saves record-1 and retries a save
// the store answers retryable, as the drill's check wants.
func runAgent(ctx context.Context, save func(Record) (Saved, error)) error {
	var err error
	for range 3 {
		if _, err = save(Record{ID: "record-1", Text: "hi"}); err == nil {
			return nil
		}
		var te *drill.ToolError
		if !errors.As(err, &te) || te.Code != "BUSY" {
			return err
		}
	}
	return err
}

// docs/worlds.md, "Go": the page's drill on the page's world files.
func TestDocsWorldsGo(t *testing.T) {
	dir := writeWorldFiles(t)
	t.Chdir(dir)
	ctx := context.Background()
	w, err := drill.Load("records.world.yaml")
	res, err := w.Run(ctx, &drill.Options{
		ToolOverrides: []drill.Override{{ID: "busy-once", Operation: "record-store/records.save",
			Arguments: map[string]any{"id": "record-1"}, Times: 1,
			Outcome: drill.Outcome{Kind: "error", Code: "BUSY", Message: "Try again"}}},
		Checks: []drill.Check{drill.StateEquals("record-store.records.record-1.text", "hi")},
	}, func(ctx context.Context, d *drill.Drill) error {
		save := drill.Bind(d, drill.Binding[Record, Saved]{
			Operation:      "record-store/records.save",
			IdempotencyKey: func(r Record) string { return "save-" + r.ID },
		})
		return runAgent(ctx, save) // your agent, with its dependency replaced
	})
	// res.Verdict is "passed" or "failed"; res.Evidence, res.State, res.BuildHash, res.Seed
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != drill.Passed {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Failures)
	}
	if _, err := os.Stat("records.world.yaml"); err != nil {
		t.Fatal(err)
	}
}

// jsonNames returns the JSON names of the fields of t and of every
// struct type its fields hold, as encoding/json writes them.
func jsonNames(t reflect.Type, names map[string]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || names[t.String()] {
		return
	}
	names[t.String()] = true // visited
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous {
			jsonNames(f.Type, names)
			continue
		}
		if name == "" {
			name = f.Name
		}
		names[name] = true
		jsonNames(f.Type, names)
	}
}

// TestDocsReportSketches: the sketches of the JSON report in
// docs/running.md name only keys the report has, and the values they list
// for status and outcome are the report's.
func TestDocsReportSketches(t *testing.T) {
	names := map[string]bool{}
	jsonNames(reflect.TypeOf(report.Report{}), names)
	whole := strings.Join(pageBlock(t, "docs/running.md", `{"cases": [{"suite": "examples/quickstart/support.dryfire.yaml", "name": "…",`), "\n")
	trials := strings.Join(pageBlock(t, "docs/running.md", `"trials": {`), "\n")
	coverage := strings.Join(pageBlock(t, "docs/running.md", `{"coverage": {"exercised": 7,`), "\n")
	for _, sketch := range []struct {
		text string
		data map[string]bool // keys that are data, not the report's own
	}{
		{whole, map[string]bool{"order_id": true, "…": true}},
		{trials, nil},
		{coverage, nil},
	} {
		n := 0
		for _, k := range docblock.SketchKeys(sketch.text) {
			n++
			if !names[k] && !sketch.data[k] {
				t.Errorf("docs/running.md: a sketch of the report names %q, which the report does not have:\n%s", k, sketch.text)
			}
		}
		if n < 5 {
			t.Errorf("docs/running.md: a sketch names %d keys:\n%s", n, sketch.text)
		}
	}
	text := whole
	for _, want := range []string{
		strings.Join([]string{string(report.Passed), string(report.Failed), string(report.Errored), string(report.Skipped)}, "|"),
		strings.Join([]string{string(report.OutcomeReturn), string(report.OutcomeContent), string(report.OutcomeError), string(report.OutcomeImpl), string(report.OutcomeUnmatched)}, "|"),
	} {
		if !strings.Contains(text, `"`+want+`"`) {
			t.Errorf("docs/running.md: the report sketch does not list the values %s", want)
		}
	}
}
