package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// scriptedRefundSuite is refundSuite answered by the cases' scripts: no
// key, no cassette. The suite's script is the default of the cases that
// have none.
func scriptedRefundSuite(command string) string {
	s := refundSuite(command, "")
	s = strings.Replace(s, "  provider: openai\n", "  provider: script\n", 1)
	s = strings.Replace(s, "cases:\n", `script:
  - text: hi
cases:
`, 1)
	refund := `    script:
      - text: Let me look.
        tool_calls: [{name: lookup_order, args: {order_id: A-991}}]
      - when: {tool_result: lookup_order}
        tool_calls: [{name: issue_refund, args: {order_id: A-991}}]
      - when: {tool_result: issue_refund}
        tool_calls: [{name: issue_refund, args: {order_id: A-991}}]
      - when: {tool_result: issue_refund}
        text: Your refund R-1 is done.
    expect:
`
	s = strings.Replace(s, "    input: Please refund order A-991.\n    expect:\n", "    input: Please refund order A-991.\n"+refund, 2)
	return s
}

// A real agent program (the test binary, on Chat Completions) runs its
// scripted cases with no key and no cassette: the script answers, the
// mocks answer the tools, and the report lists each served turn beside
// the request it answered. A cassette left at a case's place is neither
// read nor written.
func TestCommandScripted(t *testing.T) {
	dir := t.TempDir()
	command := fmt.Sprintf("[%q, loop, bycase, prefetch]", agentBinary(t))
	suites := writeSuite(t, dir, "support.dryfire.yaml", scriptedRefundSuite(command))
	stale := filepath.Join(dir, "cassettes", "support", "hi.json")
	os.MkdirAll(filepath.Dir(stale), 0o755)
	os.WriteFile(stale, []byte("not a cassette"), 0o644)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.All, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary.Passed != 3 {
		t.Fatalf("scripted: %+v\n%s", rep.Summary, stableJSON(t, rep))
	}
	if data, _ := os.ReadFile(stale); string(data) != "not a cassette" {
		t.Errorf("the cassette at a scripted case's place was written: %q", data)
	}
	if n := scanSecrets(t, dir); n != 1 {
		t.Errorf("%d files in cassettes/, want only the stale one", n)
	}
	var b bytes.Buffer
	p := report.NewText(&b, report.TextOptions{Verbose: true})
	p.Start(len(rep.Cases))
	for i := range rep.Cases {
		rep.Cases[i].DurationMS = 0
		p.CaseDone(i, &rep.Cases[i])
	}
	golden(t, "testdata/scripted.golden", strings.ReplaceAll(b.String(), dir, "DIR"))
	js := stableJSON(t, rep)
	for _, want := range []string{`"script": [`, `"request": 2,`, `"turn": 2,`, `"api": "openai-chat"`, `"last_message": "tool \"lookup_order\": \"{\\\"tier\\\":\\\"gold\\\"}\""`} {
		if !strings.Contains(js, want) {
			t.Errorf("the JSON report lacks %s:\n%s", want, js)
		}
	}
	if strings.Contains(js, `"cassette":`) {
		t.Errorf("a scripted case names a cassette:\n%s", js)
	}
}

// A script the agent strays from errs the case, saying which request no
// turn answered, what was served and the closest guard; a turn that calls
// a tool the request does not offer errs it too.
func TestCommandScriptErrors(t *testing.T) {
	dir := t.TempDir()
	command := fmt.Sprintf("[%q, loop, http]", agentBinary(t))
	suite := scriptedRefundSuite(command)
	suite = strings.Replace(suite, "      - when: {tool_result: lookup_order}\n", "      - when: {tool_result: get_policy}\n", 1)
	suite = strings.Replace(suite, "script:\n  - text: hi\n", "script:\n  - tool_calls: [{name: send_email}]\n", 1)
	suites := writeSuite(t, dir, "support.dryfire.yaml", suite)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	p := report.NewText(&b, report.TextOptions{})
	p.Start(len(rep.Cases))
	for i := range rep.Cases {
		rep.Cases[i].DurationMS = 0
		rep.Cases[i].Stderr = ""
		p.CaseDone(i, &rep.Cases[i])
	}
	golden(t, "testdata/scripted_errors.golden", strings.ReplaceAll(b.String(), dir, "DIR"))
}

// A script the agent leaves unfinished fails the case, naming the turns
// never served (it passed before: a case whose agent made no model call
// at all passed with turns: 0), unless they are optional; the built-in
// loop's scripted cases alike.
func TestScriptUnservedTurns(t *testing.T) {
	suite := func(agent string) string {
		return `version: 1
agent:
  provider: script
` + agent + `tools:
  lookup_order:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order:
    - return: {tier: gold}
script:
  - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
  - text: Gold.
cases:
  - name: one turn too many
    input: Look up A-1.
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
      - text: Gold.
      - text: never asked
      - when: {tools: []}
        text: A title
  - name: optional turns
    input: Look up A-1.
    script:
      - when: {tools: []}
        optional: true
        text: A title
      - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
      - text: Gold.
      - text: never asked either
        optional: true
  - name: as scripted
    input: Look up A-1.
`
	}
	for _, tc := range []struct{ name, agent string }{
		{"built-in loop", ""},
		{"agent.command", fmt.Sprintf("  command: [%q, loop, http]\n", agentBinary(t))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			suites := writeSuite(t, dir, "lookup.dryfire.yaml", suite(tc.agent))
			rep, err := runner.Run(context.Background(), suites, runner.Options{Env: commandEnv()})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Cases[0]
			want := "script turns 3 and 4 were never served: the agent made 2 model calls (turn 1 (request 1), turn 2 (request 2)); a turn the agent may not ask for is marked optional: true"
			if c.Status != report.Failed || c.Reason != want {
				t.Errorf("%s: %s %q\nwant failed %q", c.Name, c.Status, c.Reason, want)
			}
			for _, c := range rep.Cases[1:] {
				if c.Status != report.Passed {
					t.Errorf("%s: %s %q", c.Name, c.Status, c.Reason)
				}
			}
		})
	}
}
