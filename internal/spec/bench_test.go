package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
)

// largeSuite generates a suite of cases × 3 scripted tool calls, 3 tools
// with 6 rules each (suite level) and 3 checks per case.
func largeSuite(cases int) []byte {
	var b strings.Builder
	b.WriteString("version: 1\nname: large\nagent:\n  provider: script\n  system: You are a support agent.\n  max_turns: 8\n")
	tools := []string{"lookup_order", "issue_refund", "find_coupon"}
	b.WriteString("tools:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "  %s:\n    description: The %s tool.\n    input_schema:\n      type: object\n      properties: {order_id: {type: string}, amount: {type: number}, note: {type: string}}\n      required: [order_id]\n", t, t)
	}
	b.WriteString("mocks:\n")
	for _, t := range tools {
		fmt.Fprintf(&b, "  %s:\n", t)
		for r := range 4 {
			fmt.Fprintf(&b, "    - when: {order_id: A-%d, amount: %d.5}\n      return: {ok: true, tier: gold, total: %d, items: [a, b, c]}\n", r, r, r*10)
		}
		b.WriteString("    - when: {order_id: B-1}\n      sequence:\n        - error: timeout\n        - return: {ok: true}\n")
		b.WriteString("    - return: {tier: standard}\n")
	}
	b.WriteString("cases:\n")
	for i := range cases {
		fmt.Fprintf(&b, "  - name: case %d\n    input: Please look at order A-%d.\n    script:\n", i, i)
		for _, t := range tools {
			fmt.Fprintf(&b, "      - tool_calls: [{name: %s, args: {order_id: A-%d, amount: %d.5}}]\n", t, i%4, i%4)
		}
		fmt.Fprintf(&b, "      - text: Order A-%d is done.\n", i)
		fmt.Fprintf(&b, "    expect:\n      - called: {tool: lookup_order, with: {order_id: A-%d}, times: 1}\n      - order: [lookup_order, issue_refund, find_coupon]\n      - output: {contains: done, regex: 'A-\\d+'}\n", i%4)
	}
	return []byte(b.String())
}

func TestLargeSuite(t *testing.T) {
	s, ds := Parse("large.dryfire.yaml", largeSuite(50), nil)
	if len(ds) > 0 {
		t.Fatalf("unexpected diagnostics:\n%v", ds)
	}
	if len(s.Cases) != 50 || len(s.Mocks["find_coupon"]) != 6 || len(s.Cases[49].Expect) != 3 || len(s.Cases[0].Script) != 4 {
		t.Errorf("suite has the wrong shape: %d cases", len(s.Cases))
	}
}

// BenchmarkParseLarge parses 1,000 cases × 3 tool calls (3 tools, 6 rules
// each, 3 checks per case): dryfire validate of such a suite should take
// well under 100 ms.
func BenchmarkParseLarge(b *testing.B) {
	data := largeSuite(1000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		_, ds := Parse("large.dryfire.yaml", data, nil)
		if len(ds) > 0 {
			b.Fatal(ds)
		}
	}
}

// BenchmarkParseLargeWhole is BenchmarkParseLarge with the file parsed
// whole, as when its cases cannot be cut apart: the two ways side by side.
func BenchmarkParseLargeWhole(b *testing.B) {
	noCutting = true
	defer func() { noCutting = false }()
	BenchmarkParseLarge(b)
}

// BenchmarkParseData parses a suite whose 1,000 cases are rows of a JSON
// Lines file (3 tool calls and 3 checks each), checking them without
// keeping them (validate).
func BenchmarkParseData(b *testing.B) {
	dir := b.TempDir()
	var rows strings.Builder
	for i := range 1000 {
		fmt.Fprintf(&rows, "{\"id\": \"A-%d\", \"name\": \"case %d\", \"amount\": %d}\n", i, i, i%50)
	}
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows.String()), 0o644)
	data := []byte("version: 1\nagent: {provider: script}\nmocks:\n  lookup_order: [{return: {ok: true}}]\n  issue_refund: [{return: {ok: true}}]\ncases:\n" +
		"  - from: rows.jsonl\n    name: \"{{name}}\"\n    input: \"Refund {{id}}\"\n    script:\n" +
		"      - tool_calls: [{name: lookup_order, args: {order_id: \"{{id}}\"}}, {name: lookup_order, args: {order_id: \"{{id}}\"}}]\n" +
		"      - tool_calls: [{name: issue_refund, args: {order_id: \"{{id}}\", amount: \"{{amount}}\"}}]\n      - text: Done.\n" +
		"    expect:\n      - called: {tool: lookup_order, with: {order_id: \"{{id}}\"}, times: 2}\n      - called: {tool: issue_refund, times: 1}\n      - output: {contains: Done}\n")
	file := filepath.Join(dir, "d.dryfire.yaml")
	b.ReportAllocs()
	for b.Loop() {
		s, ds := Parse(file, data, &Options{Root: dir, Discard: true})
		if len(ds) > 0 || s.Discarded != 1000 {
			b.Fatal(ds)
		}
	}
}

// BenchmarkDecodeStubs decodes again each of the 4,096 stubs of a suite
// loaded Lazy, as run does before each case runs: inline items (a span
// of the suite's text each) and JSON Lines rows.
func BenchmarkDecodeStubs(b *testing.B) {
	const n = 4096
	for _, jsonl := range []bool{false, true} {
		b.Run(map[bool]string{false: "inline", true: "jsonl"}[jsonl], func(b *testing.B) {
			dir := b.TempDir()
			path, err := suite.Write(dir, n, jsonl)
			if err != nil {
				b.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			s, ds := Parse(path, data, &Options{Root: dir, Lazy: true})
			if ds.HasErrors() || s.Len() != n || !s.CaseAt(n-1).Lazy() {
				b.Fatalf("%d cases: %v", s.Len(), ds)
			}
			b.ReportAllocs()
			for b.Loop() {
				for i := range n {
					if _, err := s.Decode(s.CaseAt(i)); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
