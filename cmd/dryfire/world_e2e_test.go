package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// writeWorldSuite copies the support-desk world beside a generated suite
// of n drills, each making five operations (lookups, an idempotent refund
// retried through a one-shot override, a ticket) with five checks.
func writeWorldSuite(tb testing.TB, dir string, n int) {
	tb.Helper()
	for _, f := range []string{"support.world.yaml", "behaviors.star"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "world", f))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	var b strings.Builder
	b.WriteString(`version: 1
name: drills
world: support.world.yaml
agent: {provider: script, max_turns: 8}
cases:
`)
	for i := range n {
		fmt.Fprintf(&b, `  - name: drill %04d
    input: Refund A-991.
    toolOverrides:
      - {id: busy, operation: refunds/refunds.create, times: 1, outcome: {kind: error, code: UNAVAILABLE}}
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-991}}, {name: lookup_order, args: {order_id: A-992}}]
      - tool_calls: [{name: issue_refund, args: {order_id: A-991, amount: %d, request_id: r-%d}}]
      - tool_calls: [{name: issue_refund, args: {order_id: A-991, amount: %d, request_id: r-%d}}]
      - tool_calls: [{name: open_ticket, args: {subject: drill %d}}]
      - text: Refunded.
    expect:
      - called: {operation: refunds/refunds.create, times: 2}
      - state: {path: refunds.refunds, count: 1}
      - state: {path: tickets.queue, contains: {subject: drill %d}}
      - event: {type: refund.created, count: 1}
      - output: {contains: Refunded}
`, i, 10+i%100, i, 10+i%100, i, i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "drills.dryfire.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
}

var durationField = regexp.MustCompile(`"duration_ms": [0-9.e+-]+`)

// TestE2EWorldDrills runs 1,000 drills of 5 operations through the binary
// (and with -e2e-perf asserts ≥ 1,000 drills/s), then checks determinism:
// the same seed gives byte-identical evidence and verdicts; another seed
// changes only what the seed drives (here nothing: no behavior draws).
func TestE2EWorldDrills(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	writeWorldSuite(t, dir, benchCases)
	code, out, errOut := runBinary(t, dir, bin, "run", "drills.dryfire.yaml", "--json", "a.json")
	if code != 0 || !strings.HasSuffix(out, "\n1000 passed, 0 failed\n") || errOut != "" {
		t.Fatalf("run: exit %d\nstdout (end):\n%s\nstderr:\n%s", code, out[max(0, len(out)-800):], errOut)
	}
	runBinary(t, dir, bin, "run", "drills.dryfire.yaml", "--json", "b.json", "-j", "2")
	runBinary(t, dir, bin, "run", "drills.dryfire.yaml", "--json", "c.json", "--seed", "9")
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return durationField.ReplaceAllString(string(data), `"duration_ms": 0`)
	}
	a, b, c := read("a.json"), read("b.json"), read("c.json")
	if a != b {
		t.Error("two runs with one seed differ (beyond duration_ms)")
	}
	if strings.ReplaceAll(c, `"seed": 9`, `"seed": 42`) != a {
		t.Error("another seed changed more than the seed")
	}
	var rep struct {
		Cases []struct {
			Verdict  string
			Evidence []json.RawMessage
		}
	}
	if err := json.Unmarshal([]byte(a), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != benchCases || rep.Cases[0].Verdict != "passed" || len(rep.Cases[0].Evidence) != 5 {
		t.Fatalf("report: %d cases, first %+v", len(rep.Cases), rep.Cases[0].Verdict)
	}
	if !*e2ePerf {
		return
	}
	wall, cpu := best(5, func() time.Duration {
		_, _, _, c := timeBinary(t, dir, bin, "run", "drills.dryfire.yaml")
		return c
	})
	rate := float64(benchCases) / wall.Seconds()
	t.Logf("1,000 drills × 5 operations through the CLI: %.0f ms wall (%.0f drills/s), %.0f ms CPU", float64(wall.Microseconds())/1000, rate, float64(cpu.Microseconds())/1000)
	if rate < 1000 {
		t.Errorf("%.0f drills/s; target ≥ 1,000", rate)
	}
}
