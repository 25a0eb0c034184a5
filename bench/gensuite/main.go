// Command gensuite writes the large suites the scale figures are measured
// on (docs/limits.md): N cases, each a scripted agent making 3 tool calls
// that mocks answer, judged by 3 checks.
//
//	go run ./bench/gensuite -n 100000 -o /tmp/big        # big/inline.dryfire.yaml
//	go run ./bench/gensuite -n 1000000 -jsonl -o /tmp/big # big/data.dryfire.yaml + big/rows.jsonl
//
// Inline cases are written out in YAML; with -jsonl the suite has one
// from: template and each case is a row of rows.jsonl. A suite file over
// 8 MiB needs DRYFIRE_MAX_FILE_MB to be loaded.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
)

const head = `version: 1
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

func main() {
	n := flag.Int("n", 1000, "cases")
	jsonl := flag.Bool("jsonl", false, "cases from a JSON Lines file (one from: template)")
	out := flag.String("o", ".", "directory to write into")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	if *jsonl {
		write(filepath.Join(*out, "data.dryfire.yaml"), func(w *bufio.Writer) { w.WriteString(head + template) })
		write(filepath.Join(*out, "rows.jsonl"), func(w *bufio.Writer) {
			for i := range *n {
				fmt.Fprintf(w, `{"name": "case-%07d", "id": "O-%d", "amount": %d}`+"\n", i, i, i%500)
			}
		})
		return
	}
	write(filepath.Join(*out, "inline.dryfire.yaml"), func(w *bufio.Writer) {
		w.WriteString(head)
		for i := range *n {
			fmt.Fprintf(w, `  - name: case-%07d
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
`, i, i, i%500)
		}
	})
}

func write(path string, body func(*bufio.Writer)) {
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	body(w)
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
