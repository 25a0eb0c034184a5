package dryfire_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

// A streamed run writes the reports a kept run renders, byte for byte
// (durations aside): the cases of a suite kept as stubs, passing, failing,
// skipped and run several times, in suite order whichever worker ran them.
func TestStreamedReportsAreTheReports(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {status: shipped}}]\ncases:\n")
	for i := range 2100 {
		fmt.Fprintf(&b, "  - name: case-%d\n    input: Where is O-%d?\n    script:\n      - tool_calls: [{name: lookup, args: {id: O-%d}}]\n      - text: Shipped.\n    expect:\n      - called: {tool: lookup, times: 1}\n      - output: {contains: %s}\n", i, i, i, map[bool]string{true: "Lost", false: "Shipped"}[i%13 == 4])
		switch {
		case i%17 == 2:
			b.WriteString("    skip: true\n")
		case i%19 == 3:
			b.WriteString("    trials: 3\n")
		}
	}
	path := filepath.Join(t.TempDir(), "s.dryfire.yaml")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := dryfire.Load(&dryfire.LoadOptions{Lazy: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background(), nil)
	kept, err := p.Run(context.Background(), &dryfire.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON, err := kept.JSON()
	if err != nil {
		t.Fatal(err)
	}
	wantJUnit, err := kept.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var gotJSON, gotJUnit bytes.Buffer
	stream, err := report.NewStream(&gotJSON, &gotJUnit)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Close(rep); err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Failed == 0 || rep.Summary.Skipped == 0 || rep.Summary.Passed == 0 {
		t.Fatalf("summary %+v: want cases of every kind", rep.Summary)
	}
	durations := regexp.MustCompile(`"duration_ms": [0-9.e+-]+|time="[0-9.]+"`)
	same := func(what string, got, want []byte) {
		t.Helper()
		g, w := durations.ReplaceAll(got, nil), durations.ReplaceAll(want, nil)
		if !bytes.Equal(g, w) {
			i := 0
			for i < min(len(g), len(w)) && g[i] == w[i] {
				i++
			}
			t.Errorf("the streamed %s report differs at byte %d: %q, want %q", what, i, g[max(0, i-80):min(len(g), i+80)], w[max(0, i-80):min(len(w), i+80)])
		}
	}
	same("JSON", gotJSON.Bytes(), wantJSON)
	same("JUnit", gotJUnit.Bytes(), wantJUnit)
}
