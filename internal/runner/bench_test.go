package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// bigSuite is n cases of three tool calls each, matched by `when` rules
// and a sequence, with four checks.
func bigSuite(tb testing.TB, n int) []*spec.Suite {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`version: 1
agent: {provider: script, max_turns: 6}
tools:
  lookup_order: {input_schema: {type: object, properties: {order_id: {type: string}}}}
  issue_refund: {input_schema: {type: object, properties: {order_id: {type: string}, amount: {type: number}}}}
  find_coupon: {input_schema: {type: object, properties: {customer: {type: string}, tier: {type: string}}}}
mocks:
  lookup_order:
    - {when: {order_id: A-1}, return: {tier: gold, total: 120.5, items: [{sku: X-1, qty: 2}]}}
    - {when: {order_id: A-2}, return: {tier: silver}}
    - {return: {tier: standard}}
  issue_refund:
    - {when: {amount: 0}, error: nothing to refund}
    - {sequence: [{error: timeout}, {return: {refund_id: R-1}}]}
  find_coupon:
    - {when: {tier: gold}, return: {code: GOLD10}}
    - {return: null}
cases:
`)
	for i := range n {
		order := fmt.Sprintf("A-%d", i%3+1)
		fmt.Fprintf(&b, `  - name: case %d
    input: refund %s
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: %s}}]
      - tool_calls: [{name: issue_refund, args: {order_id: %s, amount: %d}}, {name: find_coupon, args: {tier: gold}}]
      - text: Refund for %s requested.
    expect:
      - called: {tool: lookup_order, with: {order_id: %s}, times: 1}
      - called: {tool: issue_refund, min: 1}
      - order: [lookup_order, issue_refund, find_coupon]
      - output: {contains: %s, regex: 'Refund for [A-Z]-\d+'}
`, i, order, order, order, 10+i%50, order, order, order)
	}
	s, ds := spec.Parse("big.dryfire.yaml", []byte(b.String()), nil)
	if ds.HasErrors() {
		tb.Fatal(ds)
	}
	return []*spec.Suite{s}
}

func BenchmarkRun1000(b *testing.B) {
	suites := bigSuite(b, 1000)
	for _, n := range []int{1, 8} {
		b.Run(fmt.Sprintf("j%d", n), func(b *testing.B) {
			for b.Loop() {
				rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: n})
				if err != nil || rep.Summary.Passed != 1000 {
					b.Fatalf("%v %+v", err, rep.Summary)
				}
			}
			b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "cases/s")
		})
	}
}

// BenchmarkRun1000Coverage is BenchmarkRun1000 counting coverage (run
// --coverage), against the same run without.
func BenchmarkRun1000Coverage(b *testing.B) {
	suites := bigSuite(b, 1000)
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("coverage=%v", on), func(b *testing.B) {
			for b.Loop() {
				rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 8, Coverage: on})
				if err != nil || rep.Summary.Passed != 1000 || on != (rep.Coverage != nil) {
					b.Fatalf("%v %+v", err, rep.Summary)
				}
			}
			b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "cases/s")
		})
	}
}
