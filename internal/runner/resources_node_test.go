package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/report"
)

// TestMCPResourcesNode: the MCP TypeScript SDK's client reads a suite's
// resources (fixed and templated), gets its prompt with arguments and
// completes an argument, under agent.command; the report's mcp record
// holds each, and read / not_read / prompted checks pass and fail on them.
func TestMCPResourcesNode(t *testing.T) {
	dir := filepath.Join("..", "..", "e2e", "node")
	npm.Ready(t, dir, "the Node MCP clients")
	script, err := filepath.Abs(filepath.Join(dir, "mcp-resources-agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	suites := writeSuite(t, t.TempDir(), "resources.dryfire.yaml", `version: 1
agent:
  command: [node, `+script+`]
resources:
  - uri: docs://refund-policy
    text: Refunds within 30 days.
  - uri: docs://shipping
    text: Ships in a day.
  - uri_template: "orders://{order_id}"
    answers:
      - when: {order_id: A-991}
        json: {tier: gold}
    text: "Order {{order_id}}: standard."
prompts:
  - name: refund_request
    arguments:
      - {name: order_id, required: true, complete: [A-991, A-992, B-1]}
      - {name: reason}
    messages:
      - {role: user, text: "Refund {{order_id}}, {{reason}}."}
cases:
  - name: reads what it should
    input: A-991
    expect:
      - read: docs://refund-policy
      - read: {uri: "orders://A-991", times: 1}
      - not_read: docs://shipping
      - prompted: {name: refund_request, with: {order_id: A-991}}
      - output: {contains: "order: application/json {\"tier\":\"gold\"}"}
      - output: {contains: "prompt: user: Refund A-991, late."}
      - output: {contains: "complete: A-991 A-992"}
  - name: checks that fail
    input: B-1
    expect:
      - read: docs://shipping
      - not_read: docs://refund-policy
      - prompted: {name: refund_request, with: {order_id: A-991}}
      - output: {contains: "order: text/plain Order B-1: standard."}
`)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	ok, bad := rep.Cases[0], rep.Cases[1]
	if ok.Status != report.Passed {
		t.Errorf("%s: %s %s\n%+v\n%s\n%s", ok.Name, ok.Status, ok.Reason, ok.Checks, ok.Output, ok.Stderr)
	}
	var uses []string
	for _, u := range ok.MCP {
		uses = append(uses, u.Method+" "+u.URI+u.Name)
	}
	if got, want := strings.Join(uses, "; "), "resources/read docs://refund-policy; resources/read orders://A-991; prompts/get refund_request; completion/complete refund_request"; got != want {
		t.Errorf("mcp record:\n got %s\nwant %s", got, want)
	}
	if bad.Status != report.Failed {
		t.Fatalf("%s: %s %s, want failed", bad.Name, bad.Status, bad.Reason)
	}
	var verdicts []string
	for _, c := range bad.Checks {
		verdicts = append(verdicts, c.Check+" → "+c.Message)
	}
	want := []string{
		`read: "docs://shipping" → expected a read of resource docs://shipping; the agent read: docs://refund-policy, orders://B-1`,
		`not_read: "docs://refund-policy" → expected no read of resource docs://refund-policy; it was read 1 time`,
		"prompted: {name: refund_request, with: {order_id: A-991}} → expected a get of prompt refund_request(order_id=A-991); the agent got: refund_request(order_id=B-1, reason=late)",
		`output: {contains: "order: text/plain Order B-1: standard."} → `,
	}
	for i, w := range want {
		if i >= len(verdicts) || !strings.HasPrefix(verdicts[i], w) {
			t.Errorf("check %d: %q, want %q", i, verdicts[i], w)
		}
	}
	if !bad.Checks[3].Passed {
		t.Errorf("the output check failed: %+v", bad.Checks[3])
	}
}
