package dryfire_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
)

// benchHead and benchCase are the suites of bench/gensuite: each case a
// scripted agent making 3 tool calls that mocks answer, judged by 3 checks.
const benchHead = `version: 1
agent: {provider: script}
tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  refund:
    description: Refund an order.
    input_schema: {type: object, properties: {order_id: {type: string}, amount: {type: number}}, required: [order_id]}
mocks:
  lookup_order:
    - when: {order_id: O-1}
      return: {status: delivered}
    - return: {status: shipped}
  refund:
    - return: {ok: true}
cases:
`

const benchCase = `  - name: case-%07d
    input: Refund order O-%[2]d
    script:
      - tool_calls:
          - {name: lookup_order, args: {order_id: O-%[2]d}}
          - {name: lookup_order, args: {order_id: O-%[2]d}}
      - tool_calls: [{name: refund, args: {order_id: O-%[2]d, amount: %[3]d}}]
      - text: Refunded O-%[2]d.
    expect:
      - called: {tool: lookup_order, with: {order_id: O-%[2]d}, times: 2}
      - called: {tool: refund, times: 1}
      - output: {contains: Refunded}
`

const benchTemplate = `  - from: rows.jsonl
    name: "{{name}}"
    input: "Refund order {{id}}"
    script:
      - tool_calls:
          - {name: lookup_order, args: {order_id: "{{id}}"}}
          - {name: lookup_order, args: {order_id: "{{id}}"}}
      - tool_calls: [{name: refund, args: {order_id: "{{id}}", amount: "{{amount}}"}}]
      - text: "Refunded {{id}}."
    expect:
      - called: {tool: lookup_order, with: {order_id: "{{id}}"}, times: 2}
      - called: {tool: refund, times: 1}
      - output: {contains: "Refunded"}
`

// writeBenchSuite writes a suite of n cases, inline or as rows of a JSON
// Lines file, and returns its path.
func writeBenchSuite(tb testing.TB, n int, jsonl bool) string {
	tb.Helper()
	dir := tb.TempDir()
	var suite, rows strings.Builder
	suite.WriteString(benchHead)
	if jsonl {
		suite.WriteString(benchTemplate)
		for i := range n {
			fmt.Fprintf(&rows, `{"name": "case-%07d", "id": "O-%d", "amount": %d}`+"\n", i, i, i%500)
		}
		if err := os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows.String()), 0o644); err != nil {
			tb.Fatal(err)
		}
	} else {
		for i := range n {
			fmt.Fprintf(&suite, benchCase, i, i, i%500)
		}
	}
	path := filepath.Join(dir, "bench.dryfire.yaml")
	if err := os.WriteFile(path, []byte(suite.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkRunStreamed is `dryfire run --json --junit` of a large suite
// without its loading: 4,096 cases kept as stubs (Lazy), decoded as they
// run, their results streamed to both reports and a line each printed.
func BenchmarkRunStreamed(b *testing.B) {
	const n = 4096
	for _, jsonl := range []bool{false, true} {
		b.Run(map[bool]string{false: "inline", true: "jsonl"}[jsonl], func(b *testing.B) {
			p, err := dryfire.Load(&dryfire.LoadOptions{Lazy: true}, writeBenchSuite(b, n, jsonl))
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close(context.Background(), nil)
			for b.Loop() {
				stream, err := dryfire.NewReportStream(io.Discard, io.Discard)
				if err != nil {
					b.Fatal(err)
				}
				printer := dryfire.NewTextPrinter(io.Discard, dryfire.TextOptions{})
				rep, err := p.Run(context.Background(), &dryfire.RunOptions{Stream: stream, Progress: printer})
				if err != nil {
					b.Fatal(err)
				}
				if err := stream.Close(rep); err != nil {
					b.Fatal(err)
				}
				printer.Finish(rep)
				if rep.Summary.Passed != n {
					b.Fatalf("%+v", rep.Summary)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "cases/s")
		})
	}
}
