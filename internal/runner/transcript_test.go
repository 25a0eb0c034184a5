package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// ownToolsSuite is an agent program with tools of its own (search_docs,
// Write: it runs them itself) beside dryfire's, which it shows the model
// as dryfire_NAME (Mastra's server prefix) and runs last first within a
// turn (as concurrent calls may arrive).
func ownToolsSuite(t *testing.T) string {
	return fmt.Sprintf(`version: 1
agent:
  provider: script
  command: [%q, loop, http]
  env: {TEST_OWN: "search_docs,Write", TEST_PREFIX: dryfire_, TEST_REVERSE: "1"}
tools:
  lookup_order:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order:
    - when: {order_id: A-1}
      return: {tier: gold}
    - return: {tier: none}
cases:
  - name: own and served
    input: Refund A-1.
    script:
      - tool_calls:
          - {name: search_docs, args: {q: refunds}}
          - {name: lookup_order, args: {order_id: A-1}}
          - {name: lookup_order, args: {order_id: A-3}}
          - {name: Write, args: {path: a.txt}}
      - when: {tool_result: lookup_order}
        tool_calls: [{name: lookup_order, args: {order_id: A-2}}]
      - text: done
    expect:
      - called: {tool: search_docs, with: {q: refunds}}
      - called: {tool: Write, where: own, times: 1}
      - called: {tool: lookup_order, where: served, times: 3}
      - not_called: {tool: lookup_order, where: own}
      - not_called: {tool: Write, where: served}
      - order: [search_docs, lookup_order, Write, lookup_order]
      - trajectory:
          match: strict
          calls: [search_docs, {tool: lookup_order, with: {order_id: A-1}}, {tool: lookup_order, with: {order_id: A-3}}, Write, {tool: lookup_order, with: {order_id: A-2}}]
      - trajectory: {match: strict, where: own, calls: [search_docs, Write]}
`, agentBinary(t))
}

// Every tool call of an agent program is in its transcript, wherever it
// ran: the agent's own tools (seen on the model wire, with the results
// it sent back) beside dryfire's, named as the suite knows them
// (dryfire_lookup_order is lookup_order, in the script and the checks),
// in the model's order (its turn, then its place in the answer), never
// the order the calls arrived in; the JSON report marks the agent's own.
// Before, the own calls were missing (called failed: "no tool was called
// at all") and served ones were in arrival order.
func TestOwnToolsInTheTranscript(t *testing.T) {
	dir := t.TempDir()
	suites := writeSuite(t, dir, "own.dryfire.yaml", ownToolsSuite(t))
	var first string
	for run := range 3 {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv(), Concurrency: 1 + run*3})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Cases[0]
		if c.Status != report.Passed {
			t.Fatalf("%s: %s\n%s", c.Status, c.Reason, stableJSON(t, rep))
		}
		var got []string
		for _, tc := range c.ToolCalls {
			got = append(got, fmt.Sprintf("%d %s %s %s %t where=%q outcome=%q %q", tc.Turn, tc.ID, tc.Tool, tc.Args, tc.Rule != "", tc.Where, tc.Outcome, tc.Result))
		}
		want := []string{
			`1 call_1_1 search_docs {"q":"refunds"} false where="own" outcome="" "own search_docs {\"q\":\"refunds\"}"`,
			`1 call_1_2 lookup_order {"order_id":"A-1"} true where="" outcome="return" "{\"tier\":\"gold\"}"`,
			`1 call_1_3 lookup_order {"order_id":"A-3"} true where="" outcome="return" "{\"tier\":\"none\"}"`,
			`1 call_1_4 Write {"path":"a.txt"} false where="own" outcome="" "own Write {\"path\":\"a.txt\"}"`,
			`2 call_2_1 lookup_order {"order_id":"A-2"} true where="" outcome="return" "{\"tier\":\"none\"}"`,
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("the transcript:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		js := stableJSON(t, rep)
		if !strings.Contains(js, `"where": "own"`) {
			t.Errorf("the JSON report does not mark the agent's own calls:\n%s", js)
		}
		var back report.Report
		if err := json.Unmarshal([]byte(js), &back); err != nil || back.Cases[0].ToolCalls[0].Where != "own" {
			t.Errorf("the JSON report read back: %v %+v", err, back.Cases[0].ToolCalls)
		}
		if run == 0 {
			first = js
		} else if js != first {
			t.Errorf("run %d differs from the first", run+1)
		}
	}
}
