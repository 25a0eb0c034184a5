package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// worldAgent is a drill's agent that makes no model call. Over MCP when
// the case's name says mcp, else over HTTP (POST /tools/NAME), it looks
// order A-991 up and refunds it (request_id req-1), retrying a retryable
// error once with the same request_id; then, through the world's own
// routes, it opens a ticket named after the case (POST /ops, as actor
// agent), advances the virtual clock an hour (the ticket's escalation
// fires) and reads the final state (GET /world/state). It prints what it
// saw. With differ it is another agent: it refunds 100, not 120.
func worldAgent(args []string) (string, error) {
	ctx := context.Background()
	amount := 120
	if len(args) > 0 && args[0] == "differ" {
		amount = 100
	}
	name := os.Getenv("DRYFIRE_CASE")
	toolsURL := os.Getenv("DRYFIRE_TOOLS_URL")
	base := strings.TrimSuffix(toolsURL, "/tools")
	var session *mcp.ClientSession
	if strings.Contains(name, "mcp") {
		client := mcp.NewClient(&mcp.Implementation{Name: "world-agent", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: os.Getenv("DRYFIRE_MCP_URL"), MaxRetries: -1}, nil)
		if err != nil {
			return "", err
		}
		defer s.Close()
		session = s
	}
	call := func(tool string, a map[string]any) (string, bool, error) {
		if session == nil {
			body, _ := json.Marshal(a)
			var res struct {
				Content string `json:"content"`
				IsError bool   `json:"is_error"`
			}
			err := postJSON(toolsURL+"/"+tool, "", body, &res)
			return res.Content, res.IsError, err
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: a})
		if err != nil {
			return "", false, err
		}
		return res.Content[0].(*mcp.TextContent).Text, res.IsError, nil
	}
	if _, isErr, err := call("lookup_order", map[string]any{"order_id": "A-991"}); err != nil || isErr {
		return "", fmt.Errorf("lookup_order: %v (error result: %v)", err, isErr)
	}
	refund := map[string]any{"order_id": "A-991", "amount": amount, "request_id": "req-1"}
	var got struct {
		RefundID string `json:"refund_id"`
		Error    *struct {
			Code      string `json:"code"`
			Retryable bool   `json:"retryable"`
		} `json:"error"`
	}
	for try := 0; try < 2; try++ {
		text, _, err := call("issue_refund", refund)
		if err != nil {
			return "", err
		}
		got.Error = nil
		if err := json.Unmarshal([]byte(text), &got); err != nil {
			return "", fmt.Errorf("issue_refund answered %q: %v", text, err)
		}
		if got.Error == nil || !got.Error.Retryable {
			break
		}
	}
	if got.Error != nil {
		return "", fmt.Errorf("issue_refund: %s", got.Error.Code)
	}
	var op struct {
		Status string `json:"status"`
	}
	if err := postJSON(base+"/ops/tickets/tickets.open", "", []byte(`{"arguments": {"subject": `+strconv.Quote(name)+`}, "actorId": "agent"}`), &op); err != nil || op.Status != "ok" {
		return "", fmt.Errorf("POST /ops/tickets/tickets.open: %v (%s)", err, op.Status)
	}
	var now map[string]any
	if err := postJSON(base+"/world/clock/advance", "", []byte(`{"by": "1h"}`), &now); err != nil {
		return "", err
	}
	var state struct {
		Tickets struct {
			Queue []struct {
				Subject  string `json:"subject"`
				Priority string `json:"priority"`
			} `json:"queue"`
		} `json:"tickets"`
	}
	if err := getJSON(base+"/world/state", &state); err != nil {
		return "", err
	}
	q := state.Tickets.Queue
	if len(q) == 0 {
		return "", fmt.Errorf("no ticket in the queue")
	}
	return fmt.Sprintf("refund %s; queue %d; ticket %q is %s", got.RefundID, len(q), q[0].Subject, q[0].Priority), nil
}

// copyWorld copies the support-desk world of examples/world into dir.
func copyWorld(t testing.TB, dir string) {
	t.Helper()
	for _, f := range []string{"support.world.yaml", "behaviors.star"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "world", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeWorldSuite writes a world suite into dir, the support-desk world
// beside it, and loads it and its world.
func writeWorldSuite(t testing.TB, dir, name, text string) ([]*spec.Suite, world.Worlds) {
	t.Helper()
	copyWorld(t, dir)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	suites, ds := spec.LoadFiles([]string{path}, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	sw, ds := world.AttachSuite(suites[0], world.Cache{}, "")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return suites, world.Worlds{suites[0]: sw}
}

// isolationSuite has n drills of worldAgent, half over MCP and half over
// HTTP: some with a drill override that makes the first refund busy, some
// with the same rule per test (setup), one with its own seed and the
// supervisor as its actor.
func isolationSuite(command string, n int) string {
	var b strings.Builder
	b.WriteString(`version: 1
world: support.world.yaml
agent:
  command: ` + command + `
cases:
`)
	for i := range n {
		transport := "http"
		if i%2 == 0 {
			transport = "mcp"
		}
		name := fmt.Sprintf("drill %02d over %s", i, transport)
		refunds := 1
		fmt.Fprintf(&b, "  - name: %s\n    input: Refund A-991 and open a ticket.\n", name)
		busy := `[{id: busy, operation: refunds/refunds.create, times: 1, outcome: {kind: error, code: UNAVAILABLE, message: busy, retryable: true}}]`
		switch i % 4 {
		case 1:
			fmt.Fprintf(&b, "    toolOverrides: %s\n", busy)
			refunds = 2
		case 2:
			fmt.Fprintf(&b, "    setup: {scenario: {toolOverrides: %s}}\n", busy)
			refunds = 2
		case 3:
			b.WriteString("    seed: 7\n    actor: supervisor\n")
		}
		fmt.Fprintf(&b, `    expect:
      - called: {operation: refunds/refunds.create, times: %d}
      - called: {operation: tickets/tickets.open, actor: agent, times: 1}
      - state: {path: tickets.queue, count: 1}
      - state: {path: tickets.queue, contains: {subject: %s, priority: high}}
      - state: {path: refunds.refunds.R-1.amount, equals: 120}
      - event: {type: refund.created, data: {order_id: A-991}, count: 1}
      - output: {contains: queue 1}
`, refunds, strconv.Quote(name))
	}
	return b.String()
}

// Existing agents in world drills: each drill gets its own world, served
// over MCP, /tools, /ops and the control routes; the report carries the
// drill fields; concurrent drills (-j 8) never share state, and the same
// seed gives byte-identical evidence and verdicts at -j 1 and -j 8.
func TestCommandWorldDrillsIsolatedAndDeterministic(t *testing.T) {
	dir := t.TempDir()
	const n = 16
	suites, worlds := writeWorldSuite(t, dir, "drills.dryfire.yaml", isolationSuite(fmt.Sprintf("[%q, world]", agentBinary(t)), n))
	run := func(j int) (*report.Report, string) {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Concurrency: j, Record: cassette.None, Env: commandEnv()})
		if err != nil {
			t.Fatal(err)
		}
		return rep, stableJSON(t, rep)
	}
	rep, parallel := run(8)
	for i, c := range rep.Cases {
		if c.Status != report.Passed || c.Verdict != report.Passed {
			t.Fatalf("%s: %s %s (verdict %q)\nstderr: %s\n%s", c.Name, c.Status, c.Reason, c.Verdict, c.Stderr, stableJSON(t, &report.Report{Cases: []report.Case{c}}))
		}
		wantSeed := int64(42)
		if i%4 == 3 {
			wantSeed = 7
		}
		if c.Seed == nil || *c.Seed != wantSeed || !strings.HasPrefix(c.BuildHash, "sha256:") || len(c.Build) == 0 || len(c.Events) == 0 {
			t.Errorf("%s: seed %v, build hash %q, %d bytes of build, %d events", c.Name, c.Seed, c.BuildHash, len(c.Build), len(c.Events))
		}
		// The evidence is this drill's alone: its own sequence, its own
		// ticket, one refund.
		var ops []string
		for k, e := range c.Evidence {
			if e.Seq != k+1 {
				t.Errorf("%s: evidence[%d].seq = %d", c.Name, k, e.Seq)
			}
			op := e.Operation + " " + e.Actor + " " + e.Outcome
			if e.Override != nil {
				op += fmt.Sprintf(" (%s, scope %s)", e.Override.ID, e.Override.Scope)
			}
			ops = append(ops, op)
		}
		actor := "agent"
		if i%4 == 3 {
			actor = "supervisor"
		}
		want := []string{"orders/orders.get " + actor + " behavior"}
		switch i % 4 {
		case 1:
			want = append(want, "refunds/refunds.create agent error (busy, scope drill)")
		case 2:
			want = append(want, "refunds/refunds.create agent error (busy, scope test)")
		}
		want = append(want, "refunds/refunds.create "+actor+" behavior", "tickets/tickets.open agent behavior")
		// The ticket's escalation, scheduled by the call that opened it
		// (its seq in the id), then the world's morning escalation.
		want = append(want, fmt.Sprintf("tickets/tickets.escalate event:tickets/tickets.open#%d behavior", len(want)),
			"tickets/tickets.escalate event:morning-escalation behavior")
		if diff := cmp.Diff(want, ops); diff != "" {
			t.Errorf("%s: evidence (-want +got):\n%s", c.Name, diff)
		}
		queue, _ := c.State["tickets"].(map[string]any)["queue"].([]any)
		if len(queue) != 1 || queue[0].(map[string]any)["subject"] != c.Name {
			t.Errorf("%s: the queue is %v", c.Name, queue)
		}
		wantOut := fmt.Sprintf("refund R-1; queue 1; ticket %q is high", c.Name)
		if c.Output != wantOut {
			t.Errorf("%s: output %q, want %q", c.Name, c.Output, wantOut)
		}
		if len(c.ToolCalls) != len(c.Evidence)-2 {
			t.Errorf("%s: %d tool calls for %d operations of the agent", c.Name, len(c.ToolCalls), len(c.Evidence)-2)
		}
	}
	if _, serial := run(1); serial != parallel {
		t.Errorf("-j 1 and -j 8 give different reports:\n%s", cmp.Diff(serial, parallel))
	}
	if _, again := run(8); again != parallel {
		t.Errorf("a second -j 8 run differs:\n%s", cmp.Diff(parallel, again))
	}
}

// worldBrain is the model of the recorded world drills: it looks the
// order up, refunds it, retries the busy refund with the same request_id,
// and answers.
var worldBrain = fakeapi.Script{
	"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "Order A-991 was delivered; refunding it.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120,"request_id":"req-1"}`}}},
		{Text: "The refund service is busy; trying again.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120,"request_id":"req-1"}`}}},
		{Text: "Your refund R-1 is on its way."},
	},
}

const worldModelSuite = `version: 1
world: support.world.yaml
scenario: refunds-down
agent:
  provider: openai
  command: %s
cases:
  - name: refund over mcp
    input: Please refund order A-991.
    expect:
      - called: {operation: refunds/refunds.create, times: 2}
      - called: {operation: refunds/refunds.create, outcome: error, times: 1}
      - state: {path: refunds.refunds.R-1.amount, equals: 120}
      - event: {type: refund.created, data: {order_id: A-991}, count: 1}
      - order: [lookup_order, issue_refund]
      - output: {contains: R-1}
      - max_turns: 4
  - name: refund over http
    input: Please refund order A-991.
    seed: 9
    expect:
      - called: {operation: refunds/refunds.create, outcome: receipt, times: 0}
      - state: {path: /refunds/refunds/R-1/order_id, equals: A-991}
      - state: {path: refunds.refunds, count: 1}
  - name: a wrong expectation fails the drill
    input: Please refund order A-991.
    expect:
      - state: {path: refunds.refunds, count: 0}
      - not_called: {operation: refunds/refunds.create, outcome: behavior}
`

// An existing agent that calls a model, in world drills: recorded once
// against the fake upstream, then replayed offline to the same report;
// the report's drill fields, verdicts and evidence; the world checks on
// the final world.
func TestCommandWorldDrillsRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.NewOpenAIChat(worldBrain, fakeapi.RequireKey(testOpenAIKey))
	defer srv.Close()
	suites, worlds := writeWorldSuite(t, dir, "support.dryfire.yaml", fmt.Sprintf(worldModelSuite, fmt.Sprintf("[%q, loop, bycase]", agentBinary(t))))
	recorded, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.Once,
		Env: commandEnv("OPENAI_API_KEY="+testOpenAIKey, "OPENAI_BASE_URL="+srv.URL+"/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(); n != 12 {
		t.Errorf("%d requests while recording, want 12", n)
	}
	for i, want := range []report.Status{report.Passed, report.Passed, report.Failed} {
		c := recorded.Cases[i]
		if c.Status != want || c.Verdict != want {
			t.Fatalf("%s: %s %s (verdict %q), want %s\nstderr: %s", c.Name, c.Status, c.Reason, c.Verdict, want, c.Stderr)
		}
	}
	c := recorded.Cases[0]
	var got []string
	for k, tc := range c.ToolCalls {
		e := c.Evidence[k]
		line := fmt.Sprintf("turn %d: %s %s -> %s | %s %s", tc.Turn, tc.Tool, tc.Args, tc.Result, e.Operation, e.Outcome)
		if e.Override != nil {
			line += fmt.Sprintf(" (%s, scope %s, remaining %d)", e.Override.ID, e.Override.Scope, *e.Override.Remaining)
		}
		got = append(got, line)
	}
	want := []string{
		`turn 1: lookup_order {"order_id":"A-991"} -> {"customer":"ada","order_id":"A-991","status":"delivered","total":120} | orders/orders.get behavior`,
		`turn 2: issue_refund {"amount":120,"order_id":"A-991","request_id":"req-1"} -> {"error":{"code":"UNAVAILABLE","message":"Try again","retryable":true}} | refunds/refunds.create error (refunds-busy, scope scenario, remaining 0)`,
		`turn 3: issue_refund {"amount":120,"order_id":"A-991","request_id":"req-1"} -> {"refund_id":"R-1","status":"pending"} | refunds/refunds.create behavior`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls and evidence (-want +got):\n%s", diff)
	}
	if c.Seed == nil || *c.Seed != 42 || *recorded.Cases[1].Seed != 9 || c.BuildHash == "" || c.Output != "Your refund R-1 is on its way." || c.Turns != 4 {
		t.Errorf("seed %v / %v, build hash %q, output %q, turns %d", c.Seed, recorded.Cases[1].Seed, c.BuildHash, c.Output, c.Turns)
	}
	if refunds := c.State["refunds"].(map[string]any)["refunds"].(map[string]any); len(refunds) != 1 {
		t.Errorf("final state: %v", c.State)
	}
	f := recorded.Cases[2]
	if f.Reason != "2 of 2 checks failed" || !strings.Contains(f.Checks[0].Message, "expected refunds.refunds to hold 0 entries; it holds 1") {
		t.Errorf("the failing drill: %q %+v", f.Reason, f.Checks)
	}
	if f.Status != report.Failed {
		t.Errorf("the failing drill: %s", f.Status)
	}

	conns := srv.Conns()
	replayed, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stableJSON(t, withoutRecordedNotes(recorded)), stableJSON(t, replayed)); diff != "" {
		t.Errorf("replay differs from the recording run (-recorded +replayed):\n%s", diff)
	}
	if srv.Conns() != conns {
		t.Errorf("replaying opened connections to the upstream")
	}
}

// A world drill whose agent strays from its recording still reports its
// drill fields, the evidence up to there included.
func TestCommandWorldDrillReplayMismatch(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.NewOpenAIChat(worldBrain, fakeapi.RequireKey(testOpenAIKey))
	defer srv.Close()
	suites, worlds := writeWorldSuite(t, dir, "support.dryfire.yaml", fmt.Sprintf(worldModelSuite, fmt.Sprintf("[%q, loop, http]", agentBinary(t))))
	rec, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.Once, Filter: mustRE(t, "^refund over http$"),
		Env: commandEnv("OPENAI_API_KEY="+testOpenAIKey, "OPENAI_BASE_URL="+srv.URL+"/v1")})
	if err != nil || rec.Cases[0].Status != report.Passed {
		t.Fatalf("%v %+v", err, rec.Cases)
	}
	// The tool's answer changes (another scenario): the second model
	// request carries another tool result than the recorded one.
	text := strings.Replace(fmt.Sprintf(worldModelSuite, fmt.Sprintf("[%q, loop, http]", agentBinary(t))), "scenario: refunds-down\n", "", 1)
	suites, worlds = writeWorldSuite(t, dir, "support.dryfire.yaml", text)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.None, Filter: mustRE(t, "^refund over http$"), Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Failed || c.Verdict != report.Failed || c.Replay == "" || len(c.Evidence) != 2 || c.BuildHash == "" || c.State == nil {
		t.Errorf("%s %q (verdict %q), replay %q, %d evidence entries", c.Status, c.Reason, c.Verdict, c.Replay, len(c.Evidence))
	}
}

// The world routes of a drill answer only under its own prefix, and end
// with it: a late call is refused.
func TestCommandWorldDrillEnds(t *testing.T) {
	dir := t.TempDir()
	suites, worlds := writeWorldSuite(t, dir, "env.dryfire.yaml", `version: 1
world: support.world.yaml
agent:
  command: [`+strconv.Quote(agentBinary(t))+`, env]
cases:
  - name: the env
    input: hi
    expect:
      - state: {path: tickets.queue, count: 0}
`)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Passed || c.Verdict != report.Passed || len(c.Evidence) != 0 || c.Evidence == nil {
		t.Fatalf("%s %s (verdict %q), evidence %v", c.Status, c.Reason, c.Verdict, c.Evidence)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(c.Output), &env); err != nil {
		t.Fatal(err)
	}
	base := strings.TrimSuffix(env["DRYFIRE_TOOLS_URL"], "/tools")
	if !strings.HasSuffix(base, "/cases/"+spec.CaseID("env.dryfire.yaml", "the env")) || env["DRYFIRE_MCP_URL"] != base+"/mcp" {
		t.Errorf("URLs %q %q", env["DRYFIRE_TOOLS_URL"], env["DRYFIRE_MCP_URL"])
	}
	// The run is over: the server is gone.
	if resp, err := http.Get(base + "/world/state"); err == nil {
		resp.Body.Close()
		t.Errorf("the drill's world still answers after the run: %s", resp.Status)
	}
}

func mustRE(t testing.TB, re string) *regexp.Regexp {
	t.Helper()
	r, err := regexp.Compile(re)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
