package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// A policy check judges every call of the transcript, the agent's own
// included: an agent program whose identity check is a tool of its own
// (verify_identity, which dryfire never serves) passes when it checks
// the order before refunding it, and fails, naming the rule and the
// call, when it refunds first or checks another order.
func TestPolicyOverTheAgentsOwnTools(t *testing.T) {
	dir := t.TempDir()
	suites := writeSuite(t, dir, "policy.dryfire.yaml", fmt.Sprintf(`version: 1
agent:
  provider: script
  command: [%q, loop, http]
  env: {TEST_OWN: verify_identity}
tools:
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  issue_refund: [{return: {refund_id: R-1}}]
cases:
  - name: identity first
    input: Refund A-1.
    script:
      - tool_calls: [{name: verify_identity, args: {order_id: A-1}}]
      - tool_calls: [{name: issue_refund, args: {order_id: A-1}}]
      - text: done
    expect: &policy
      - policy: {name: identity before refund, calls: issue_refund, preceded_by: {tool: verify_identity, where: own}, same: [order_id]}
  - name: refund first
    input: Refund A-1.
    script:
      - tool_calls: [{name: issue_refund, args: {order_id: A-1}}]
      - tool_calls: [{name: verify_identity, args: {order_id: A-1}}]
      - text: done
    expect: *policy
  - name: another order checked
    input: Refund A-1.
    script:
      - tool_calls: [{name: verify_identity, args: {order_id: B-2}}]
      - tool_calls: [{name: issue_refund, args: {order_id: A-1}}]
      - text: done
    expect: *policy
`, agentBinary(t)))
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv(), Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		status report.Status
		msg    string
	}{
		{report.Passed, `policy "identity before refund" held: 1 call of issue_refund: it came after verify_identity (the agent's own) with the same order_id`},
		{report.Failed, `expected every issue_refund to come after verify_identity (the agent's own) with the same order_id (policy "identity before refund"); call 1 (issue_refund {"order_id":"A-1"}, turn 1) did not: no verify_identity (the agent's own) came before it`},
		{report.Failed, `expected every issue_refund to come after verify_identity (the agent's own) with the same order_id (policy "identity before refund"); call 2 (issue_refund {"order_id":"A-1"}, turn 2) did not: 1 call of verify_identity (the agent's own) before it, none with the same order_id`},
	}
	for i, c := range rep.Cases {
		var calls []string
		for _, tc := range c.ToolCalls {
			calls = append(calls, tc.Tool+"/"+tc.Where)
		}
		if c.Status != want[i].status || len(c.Checks) != 1 || c.Checks[0].Message != want[i].msg {
			t.Errorf("%s: %s (calls %s): %+v\nwant %s: %s", c.Name, c.Status, strings.Join(calls, " "), c.Checks, want[i].status, want[i].msg)
		}
	}
}

// A suite's invariants are every case's checks too, after its own,
// marked as invariants: a case that breaks one fails.
func TestInvariantsAreEveryCasesChecks(t *testing.T) {
	dir := t.TempDir()
	suites := writeSuite(t, dir, "inv.dryfire.yaml", `version: 1
agent: {provider: script}
mocks:
  lookup_order: [{return: {card: "4111 1111"}}]
  send_email: [{return: sent}]
invariants:
  - not_leaked: "4111 1111"
  - not_called: delete_account
cases:
  - name: keeps them
    input: hi
    script: [{tool_calls: [{name: lookup_order, args: {}}]}, {text: done}]
    expect: [{called: lookup_order}]
  - name: leaks the card
    input: hi
    script: [{tool_calls: [{name: lookup_order, args: {}}]}, {tool_calls: [{name: send_email, args: {body: "card 4111 1111"}}]}, {text: done}]
`)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		var cs []string
		for _, ch := range c.Checks {
			cs = append(cs, fmt.Sprintf("%s %v %v", ch.Check, ch.Invariant, ch.Passed))
		}
		got = append(got, string(c.Status)+": "+strings.Join(cs, "; "))
	}
	want := []string{
		`passed: called: lookup_order false true; not_leaked: "4111 1111" true true; not_called: delete_account true true`,
		`failed: not_leaked: "4111 1111" true false; not_called: delete_account true true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
