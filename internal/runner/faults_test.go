package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/report"
)

// faultsSuite runs e2e/node-models/faults.mjs on both APIs, with the
// faults given (indented for a case) on each case.
func faultsSuite(script, faults string) string {
	return `version: 1
agent:
  command: [node, ` + script + `]
cases:
  - name: openai
    input: openai
` + faults + `    expect:
      - output: {contains: "four"}
  - name: anthropic
    input: anthropic
` + faults + `    expect:
      - output: {contains: "four"}
`
}

// Requests 1 (turn 1) 429 with Retry-After, 3 (turn 2, a stream) dropped,
// 5 (turn 3, a stream) cut after two events, 7 (turn 4) overloaded after
// a delay: every turn comes in two requests.
const nodeFaults = `    model_faults:
      - {request: 1, status: 429, retry_after: 0.2}
      - {request: 3, drop: true}
      - {request: 5, cut_after: 2}
      - {request: 7, status: 529, retry_after: 0.05, delay_ms: 100}
`

var fourTurns = []fakeapi.Turn{{Text: "one"}, {Text: "two, streamed"}, {Text: "three, streamed at length"}, {Text: "four"}}

// The official openai and @anthropic-ai/sdk Node clients, with their
// default retries, recover from a 429 with Retry-After, a dropped
// connection and a 529 by themselves, and the agent from a stream cut
// mid-way; each fault is in the case's report. The faults never reach the
// cassette: recorded with them, replayed with them and without, the
// cassette holds one interaction per turn and every run passes.
func TestModelFaultsNodeClients(t *testing.T) {
	dir := filepath.Join("..", "..", "e2e", "node-models")
	npm.Ready(t, dir, "the official SDK clients")
	script, err := filepath.Abs(filepath.Join(dir, "faults.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	brain := fakeapi.Script{"openai": fourTurns, "anthropic": fourTurns}
	oai, anth := fakeapi.NewOpenAIChat(brain), fakeapi.NewAnthropic(brain)
	defer oai.Close()
	defer anth.Close()
	work := t.TempDir()
	withFaults := writeSuite(t, work, "faults.dryfire.yaml", faultsSuite(script, nodeFaults))

	check := func(what string, rep *report.Report, faults bool) {
		t.Helper()
		for _, c := range rep.Cases {
			if c.Status != report.Passed || c.Turns != 4 {
				t.Errorf("%s, %s: %s (%d turns) %s\n%s\n%s", what, c.Name, c.Status, c.Turns, c.Reason, c.Replay, c.Stderr)
				continue
			}
			var out struct {
				Texts []string
				Log   []string
			}
			if err := json.Unmarshal([]byte(c.Output), &out); err != nil {
				t.Fatalf("%s, %s: output %q: %v", what, c.Name, c.Output, err)
			}
			if got := strings.Join(out.Texts, "|"); got != "one|two, streamed|three, streamed at length|four" {
				t.Errorf("%s, %s: texts %q", what, c.Name, got)
			}
			if !faults {
				if len(c.ModelFaults) != 0 || len(out.Log) != 0 {
					t.Errorf("%s, %s: faults %+v, log %q", what, c.Name, c.ModelFaults, out.Log)
				}
				continue
			}
			// Only the cut stream reached the agent's own code.
			if len(out.Log) != 1 || !strings.HasPrefix(out.Log[0], "turn 3: ") {
				t.Errorf("%s, %s: the agent saw %q", what, c.Name, out.Log)
			}
			var got []string
			for _, f := range c.ModelFaults {
				if !f.Retried || f.API != map[string]string{"openai": "openai-chat", "anthropic": "anthropic"}[c.Name] {
					t.Errorf("%s, %s: %+v", what, c.Name, f)
				}
				got = append(got, f.Fault)
			}
			want := []string{"answered 429 with Retry-After: 0.2 s", "connection dropped before an answer",
				"answer cut after 2 stream events, connection closed", "delayed 100 ms, then answered 529 with Retry-After: 0.05 s"}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s, %s: faults\n%s\nwant\n%s", what, c.Name, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		}
	}
	start := time.Now()
	rec, err := runner.Run(context.Background(), withFaults, runner.Options{Record: cassette.Once,
		Env: commandEnv("OPENAI_BASE_URL="+oai.URL+"/v1", "ANTHROPIC_BASE_URL="+anth.URL)})
	if err != nil {
		t.Fatal(err)
	}
	check("recording", rec, true)
	// The cut stream went live too (its answer was dropped), the other
	// faults never did.
	if n, m := oai.Requests(), anth.Requests(); n != 5 || m != 5 {
		t.Errorf("recording: %d and %d requests upstream, want 5 each (4 turns and the cut one)", n, m)
	}
	for _, name := range []string{"openai", "anthropic"} {
		tape, err := cassette.Load(filepath.Join(work, "cassettes", "faults", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		if n := len(tape.Interactions); n != 4 {
			t.Errorf("%s: %d interactions recorded, want 4", name, n)
		}
	}
	rep, err := runner.Run(context.Background(), withFaults, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	check("replay", rep, true)
	plain := writeSuite(t, work, "faults.dryfire.yaml", faultsSuite(script, ""))
	rep, err = runner.Run(context.Background(), plain, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	check("replay without faults", rep, false)
	t.Logf("3 runs in %s", time.Since(start).Round(time.Millisecond))
}

// The built-in loop's client meets the same faults, as HTTP answers and
// connection errors, and retries them (a JSON answer cut mid-body too);
// the recording holds the turns only, and replays with the faults.
func TestModelFaultsBuiltInLoop(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			srv := p.start(brain)
			defer srv.Close()
			dir := t.TempDir()
			suites := writeSuite(t, dir, "loop.dryfire.yaml", `version: 1
agent:
  provider: `+p.name+`
  model: test-model
tools:
  lookup_order:
    input_schema: {type: object, properties: {order_id: {type: string}}}
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order: [{return: {tier: gold}}]
  issue_refund: [{return: {ok: true}}]
cases:
  - name: refund
    input: Please refund order A-991.
    model_faults:
      - {request: 1, status: 429, retry_after: 0.01}
      - {request: 2, status: 500, retry_after: 0.01}
      - {request: 4, cut_after: 1}
      - {request: 6, drop: true}
      - {request: 9, status: 503}
    expect:
      - output: {contains: done}
`)
			env := commandEnv(keyEnv(p.name)+"="+p.key, baseEnv(p.name)+"="+p.base(srv))
			for _, mode := range []cassette.Mode{cassette.Once, cassette.None} {
				rep, err := runner.Run(context.Background(), suites, runner.Options{Record: mode, Env: env})
				if err != nil {
					t.Fatal(err)
				}
				c := rep.Cases[0]
				if c.Status != report.Passed || c.Turns != 3 {
					t.Fatalf("%s: %s (%d turns) %s\n%s", mode, c.Status, c.Turns, c.Reason, c.Replay)
				}
				var got []string
				for _, f := range c.ModelFaults {
					got = append(got, fmt.Sprintf("%d %s retried=%v", f.Request, f.Fault, f.Retried))
				}
				want := []string{"1 answered 429 with Retry-After: 0.01 s retried=true", "2 answered 500 with Retry-After: 0.01 s retried=true",
					"4 answer cut half-way through its body (no stream), connection closed retried=true", "6 connection dropped before an answer retried=true"}
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s: faults\n%s", mode, strings.Join(got, "\n"))
				}
				if !slices.Contains(c.Notes, "model_faults: model request 9 never came: the agent made fewer model requests") {
					t.Errorf("%s: notes %q", mode, c.Notes)
				}
			}
			if n := srv.Requests(); n != 4 {
				t.Errorf("%d requests upstream, want 4 (3 turns and the cut one)", n)
			}
		})
	}
}
