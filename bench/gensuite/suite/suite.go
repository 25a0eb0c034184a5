// Package suite writes the large suites the scale figures are measured
// on (docs/limits.md): N cases, each a scripted agent making 3 tool calls
// that mocks answer, judged by 3 checks. bench/gensuite writes them from
// the command line; the root package's benchmarks write them too.
package suite

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
)

// lookup is how both heads begin: a scripted agent, the tool lookup_order.
const lookup = `version: 1
agent: {provider: script}
tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
`

const head = lookup + `  refund:
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

// LookupHead is the head of the serving benchmarks' suites (bench/setup,
// bench/table): one tool, lookup_order, that a mock answers {tier: gold}
// for order A-991; the cases follow.
const LookupHead = lookup + `mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
cases:
`

const template = `  - from: rows.jsonl
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

// Write writes a suite of n cases into dir and returns its path: inline
// (inline.dryfire.yaml), or with jsonl one from: template
// (data.dryfire.yaml) whose cases are the rows of rows.jsonl.
func Write(dir string, n int, jsonl bool) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if jsonl {
		path := filepath.Join(dir, "data.dryfire.yaml")
		if err := write(path, func(w *bufio.Writer) { w.WriteString(head + template) }); err != nil {
			return "", err
		}
		return path, write(filepath.Join(dir, "rows.jsonl"), func(w *bufio.Writer) {
			for i := range n {
				fmt.Fprintf(w, `{"name": "case-%07d", "id": "O-%d", "amount": %d}`+"\n", i, i, i%500)
			}
		})
	}
	path := filepath.Join(dir, "inline.dryfire.yaml")
	return path, write(path, func(w *bufio.Writer) {
		w.WriteString(head)
		for i := range n {
			fmt.Fprintf(w, inlineCase, i, i, i%500)
		}
	})
}

const inlineCase = `  - name: case-%07d
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

func write(path string, body func(*bufio.Writer)) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	body(w)
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
