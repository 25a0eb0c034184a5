package runner_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// offeredSuite is an agent program that shows the model dryfire's tools
// under a prefix, with env (TEST_HIDE, TEST_SCHEMA) and offered_tools.
func offeredSuite(t *testing.T, env, mode string) string {
	return fmt.Sprintf(`version: 1
agent:
  provider: script
  command: [%q, loop, http]
  env: {TEST_PREFIX: dryfire_, %s}
  offered_tools: %s
tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
mocks:
  lookup_order:
    - return: {tier: gold}
  get_policy:
    - return: 30 days
cases:
  - name: looks up
    input: Look up A-1.
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
      - text: gold
    expect:
      - called: lookup_order
`, agentBinary(t), env, mode)
}

// The tools an agent program offers its model are compared with the
// suite's: a changed schema and a tool never offered are notes, with the
// differences as a diff by path; strict fails the case with the same
// notes; off compares nothing; an agent that offers them as declared
// (under its own prefix) has no note.
func TestOfferedTools(t *testing.T) {
	changed := `TEST_HIDE: get_policy, TEST_SCHEMA: 'lookup_order={"type":"OBJECT","properties":{"order_id":{"type":"integer"},"note":{"type":"string"}},"required":["order_id"],"additionalProperties":false}'`
	file := filepath.Join(t.TempDir(), "offered.dryfire.yaml")
	wantNotes := []string{
		`offered tools: "dryfire_lookup_order" is offered otherwise than declared at ` + file + `:8: input_schema.properties.note: +{"type":"string"}; input_schema.properties.order_id.type: -"string" +"integer"`,
		`offered tools: "get_policy" is mocked but was never offered to the model (2 requests)`,
	}
	for _, tt := range []struct {
		name, env, mode string
		status          report.Status
		reason          string
		notes           []string
	}{
		{"as declared", `TEST_X: ""`, "note", report.Passed, "", nil},
		{"changed", changed, "note", report.Passed, "", wantNotes},
		{"changed, strict", changed, "strict", report.Failed, "the agent's model requests do not offer the suite's tools as declared (agent.offered_tools: strict; the notes say how)", wantNotes},
		{"changed, off", changed, "off", report.Passed, "", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			suites := writeSuite(t, filepath.Dir(file), filepath.Base(file), offeredSuite(t, tt.env, tt.mode))
			rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Cases[0]
			if c.Status != tt.status || c.Reason != tt.reason {
				t.Errorf("%s %q, want %s %q", c.Status, c.Reason, tt.status, tt.reason)
			}
			if got, want := strings.Join(c.Notes, "\n"), strings.Join(tt.notes, "\n"); got != want {
				t.Errorf("notes:\n%s\nwant\n%s", got, want)
			}
		})
	}
}
