package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// talkBrain plays both sides of a refund conversation: the agent (it
// answers the last user message, calling issue_refund for an order
// number) and, for requests with the simulated user's system prompt, the
// user (by how many replies of the agent the conversation holds).
type talkBrain struct{}

func (talkBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	if strings.Contains(c.System, "You are playing the user") {
		switch strings.Count(c.FirstUser(), "[agent] ") {
		case 1:
			return fakeapi.Turn{Text: "My order is A-1."}, nil
		case 2:
			return fakeapi.Turn{Text: "Thanks, that is all. DONE"}, nil
		}
		return fakeapi.Turn{Text: "Hello?"}, nil
	}
	last, after := "", 0
	for _, m := range c.Messages {
		switch m.Role {
		case "user":
			last, after = m.Text, 0
		case "assistant":
			after++
		}
	}
	switch {
	case strings.Contains(last, "A-1") && after == 0:
		return fakeapi.Turn{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-1"}`}}}, nil
	case strings.Contains(last, "A-1"):
		return fakeapi.Turn{Text: "Refund R-7 is done."}, nil
	case strings.Contains(last, "refund"):
		return fakeapi.Turn{Text: "What is your order number?"}, nil
	}
	return fakeapi.Turn{Text: "You're welcome."}, nil
}

const talkSuite = `version: 1
agent:
  provider: anthropic
  model: agent-model
  system: You are a support agent.
tools:
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  issue_refund: [{return: {refund_id: R-7}}]
cases:
  - name: scripted user
    input: I want a refund.
    user:
      - {say: My order is A-1., when: order number}
      - {say: Please email me., when: "(?i)email"}
      - Thanks!
    expect:
      - output: {contains: order number, turn: 1}
      - output: {contains: R-7, turn: 2}
      - output: {contains: welcome}
      - called: {tool: issue_refund, times: 1}
  - name: model-driven user
    input: I want a refund.
    user:
      model: user-model
      instructions: You are Ana. Your order is A-1 and you want it refunded. Say DONE when it is.
      stop_when: DONE
      max_turns: 4
    expect:
      - output: {contains: R-7, turn: any}
      - output: {contains: R-7, turn: last}
`

// A program in a conversation: it answers each user message (JSON lines
// on stdin and stdout), and refunds an order through its tools.
const talkProgram = `import json, os, sys, urllib.request
for line in sys.stdin:
    msg = json.loads(line)
    if "A-1" in msg["text"]:
        req = urllib.request.Request(os.environ["DRYFIRE_TOOLS_URL"] + "/issue_refund", data=b'{"order_id":"A-1"}', headers={"Content-Type": "application/json"})
        urllib.request.urlopen(req).read()
        reply = "Refund R-7 is done."
    elif msg["turn"] == 1:
        reply = "What is your order number?"
    else:
        reply = "Bye."
    print(json.dumps({"text": reply}), flush=True)
`

const talkCommandSuite = `version: 1
agent: {command: [python3, agent.py], provider: anthropic}
mocks:
  issue_refund: [{return: {refund_id: R-7}}]
cases:
  - name: a program talks with a model-driven user
    input: I want a refund.
    user:
      model: user-model
      instructions: You are Ana. Your order is A-1 and you want it refunded. Say DONE when it is.
      stop_when: DONE
    expect:
      - output: {contains: R-7, turn: 2}
      - called: {tool: issue_refund, times: 1}
  - name: a program talks with a scripted user
    input: I want a refund.
    user: [My order is A-1., Thanks.]
    expect:
      - output: {equals: What is your order number?, turn: 1}
      - output: {equals: Bye., turn: 3}
`

// Conversations of three turns with a scripted and a model-driven user,
// for the built-in loop and for an agent.command program, recorded
// against a local Anthropic API, then replayed offline twice: the same
// reports, byte for byte (durations aside).
func TestE2EConversations(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	dir := t.TempDir()
	srv := fakeapi.NewAnthropic(talkBrain{}, fakeapi.RequireKey(e2eAnthropicKey))
	defer srv.Close()
	os.WriteFile(filepath.Join(dir, "talk.dryfire.yaml"), []byte(talkSuite), 0o644)
	os.WriteFile(filepath.Join(dir, "program.dryfire.yaml"), []byte(talkCommandSuite), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.py"), []byte(talkProgram), 0o644)
	base := "ANTHROPIC_BASE_URL=" + srv.URL
	suites := []string{"talk.dryfire.yaml", "program.dryfire.yaml"}

	code, out, errOut := runEnv(t, dir, bin, cleanEnv(base, "ANTHROPIC_API_KEY="+e2eAnthropicKey), append([]string{"run", "-v", "--json", "recorded.json"}, suites...)...)
	if code != 0 || errOut != "" {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"note: user turn 2 (talk.dryfire.yaml:16) was skipped: the agent's reply does not match /(?i)email/",
		`note: the simulated user ended the conversation after 1 message(s): "Thanks, that is all. DONE" matches stop_when /DONE/`,
		"note: recorded 2 model calls of the simulated user into cassettes/talk/model-driven-user.json",
		"note: recorded 2 model calls of the simulated user into cassettes/program/a-program-talks-with-a-model-driven-user.json",
		"4 passed, 0 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("recording output lacks %q:\n%s", want, out)
		}
	}
	// The user's calls are in the case's cassette, apart from the
	// agent's: the agent's interactions hold none of the user's requests.
	for _, f := range []string{"cassettes/talk/model-driven-user.json", "cassettes/program/a-program-talks-with-a-model-driven-user.json"} {
		var cas struct {
			Interactions     []json.RawMessage `json:"interactions"`
			UserRules        []string          `json:"user_rules"`
			UserInteractions []json.RawMessage `json:"user_interactions"`
		}
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || json.Unmarshal(data, &cas) != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(cas.UserInteractions) != 2 || len(cas.UserRules) == 0 {
			t.Errorf("%s: %d user interactions, rules %v; want 2 and the anthropic rules", f, len(cas.UserInteractions), cas.UserRules)
		}
		for i, it := range cas.Interactions {
			if strings.Contains(string(it), "You are playing the user") {
				t.Errorf("%s: agent interaction %d is the user's", f, i+1)
			}
		}
		for i, it := range cas.UserInteractions {
			if !strings.Contains(string(it), "You are playing the user") {
				t.Errorf("%s: user interaction %d is not the user's", f, i+1)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "cassettes", "*", "*.user.json")); len(m) > 0 {
		t.Errorf("user cassettes of their own: %v", m)
	}
	rec := stableReport(t, filepath.Join(dir, "recorded.json"))
	var report struct {
		Cases []struct {
			Conversation []struct {
				Role      string `json:"role"`
				Turn      int    `json:"turn"`
				Text      string `json:"text"`
				ModelTurn int    `json:"model_turn"`
			} `json:"conversation"`
		} `json:"cases"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "recorded.json"))
	if err := json.Unmarshal(data, &report); err != nil || len(report.Cases) != 4 {
		t.Fatalf("the report: %v", err)
	}
	var got []string
	for _, m := range report.Cases[0].Conversation {
		got = append(got, fmt.Sprintf("%s %d %q %d", m.Role, m.Turn, m.Text, m.ModelTurn))
	}
	want := []string{`user 1 "I want a refund." 0`, `agent 1 "What is your order number?" 1`, `user 2 "My order is A-1." 0`, `agent 2 "Refund R-7 is done." 3`, `user 3 "Thanks!" 0`, `agent 3 "You're welcome." 4`}
	if !slices.Equal(got, want) {
		t.Errorf("the scripted conversation:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	srv.Close()

	var first []byte
	for i := range 2 {
		code, out, errOut = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), append([]string{"run", "--json", "replayed.json", "--html", "replayed.html"}, suites...)...)
		if code != 0 || errOut != "" {
			t.Fatalf("replay %d: exit %d\n%s%s", i+1, code, out, errOut)
		}
		if got := stableReport(t, filepath.Join(dir, "replayed.json")); got != rec {
			t.Errorf("replay %d: the report differs from the recording's:\n%s\n---\n%s", i+1, got, rec)
		}
		data, _ := os.ReadFile(filepath.Join(dir, "replayed.json"))
		if i == 0 {
			first = data
		} else if string(stripDurations(data)) != string(stripDurations(first)) {
			t.Errorf("two replays differ:\n%s\n---\n%s", data, first)
		}
	}

	// A program that breaks the protocol.
	os.WriteFile(filepath.Join(dir, "agent.py"), []byte("import sys\nfor line in sys.stdin:\n    print('plain text', flush=True)\n"), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "program.dryfire.yaml", "--filter", "scripted")
	if code != 1 || !strings.Contains(out, `error: the agent's reply to turn 1 is not a JSON line {"text": "..."} (DRYFIRE_CONVERSATION=jsonl): plain text`) {
		t.Errorf("a program that does not speak the protocol: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(dir, "agent.py"), []byte("import json, sys\nsys.stdin.readline()\nprint(json.dumps({'text': 'What is your order number?'}), flush=True)\n"), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "program.dryfire.yaml", "--filter", "scripted")
	if code != 1 || !strings.Contains(out, "error: the agent exited before it replied to turn 2") || !strings.Contains(out, `agent 1: "What is your order number?"`) {
		t.Errorf("a program that leaves after one turn: exit %d\n%s", code, out)
	}

	// The user's instructions changed: its request strays from its
	// recording, and the case fails saying where.
	os.WriteFile(filepath.Join(dir, "talk.dryfire.yaml"), []byte(strings.Replace(talkSuite, "You are Ana.", "You are Bo.", 1)), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "talk.dryfire.yaml", "--filter", "model-driven")
	if code != 1 || !strings.Contains(out, "the simulated user's model request 1 differs from the recording in cassettes/talk/model-driven-user.json (the simulated user's part)") ||
		!strings.Contains(out, "the simulated user sent something else than when the case was recorded") {
		t.Errorf("changed instructions: exit %d\n%s", code, out)
	}

	// The user says less than when it was recorded: its unplayed call
	// fails the case, as the agent's do.
	os.WriteFile(filepath.Join(dir, "talk.dryfire.yaml"), []byte(strings.Replace(talkSuite, "max_turns: 4", "max_turns: 1", 1)), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "talk.dryfire.yaml", "--filter", "model-driven")
	if code != 1 || !strings.Contains(out, "1 of 2 interactions recorded in cassettes/talk/model-driven-user.json (the simulated user's part) was not played") {
		t.Errorf("a user that says less: exit %d\n%s", code, out)
	}

	// A cassette recorded before the case had a model-driven user: in
	// mode none the user's part is missing, and the message says so.
	os.WriteFile(filepath.Join(dir, "talk.dryfire.yaml"), []byte(talkSuite), 0o644)
	file := filepath.Join(dir, "cassettes/talk/model-driven-user.json")
	data, _ = os.ReadFile(file)
	i := strings.Index(string(data), ",\n  \"user_rules\"")
	if i < 0 {
		t.Fatalf("no user part in %s", data)
	}
	os.WriteFile(file, append(data[:i:i], "\n}\n"...), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "talk.dryfire.yaml", "--filter", "model-driven")
	if code != 3 || !strings.Contains(out, "no recording of the simulated user: cassettes/talk/model-driven-user.json holds none") {
		t.Errorf("a cassette without the user's part: exit %d\n%s", code, out)
	}

	// Trials: each trial's cassette holds its user's part; replayed
	// offline, trial by trial.
	srv2 := fakeapi.NewAnthropic(talkBrain{}, fakeapi.RequireKey(e2eAnthropicKey))
	defer srv2.Close()
	trials := []string{"run", "talk.dryfire.yaml", "--filter", "model-driven", "--trials", "2"}
	code, out, _ = runEnv(t, dir, bin, cleanEnv("ANTHROPIC_BASE_URL="+srv2.URL, "ANTHROPIC_API_KEY="+e2eAnthropicKey), trials...)
	if code != 0 || !strings.Contains(out, "(2/2 trials passed)") {
		t.Errorf("recording 2 trials: exit %d\n%s", code, out)
	}
	srv2.Close()
	if c, err := os.ReadFile(filepath.Join(dir, "cassettes/talk/model-driven-user.trial-2.json")); err != nil || !strings.Contains(string(c), `"user_interactions": [`) {
		t.Errorf("trial 2's cassette: %v\n%s", err, c)
	}
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), trials...)
	if code != 0 || !strings.Contains(out, "1 passed, 0 failed") {
		t.Errorf("replaying 2 trials: exit %d\n%s", code, out)
	}
}

// stripDurations is a JSON report without its duration_ms values.
func stripDurations(data []byte) []byte {
	return regexp.MustCompile(`"duration_ms": [0-9.e+-]+`).ReplaceAll(data, []byte(`"duration_ms": 0`))
}
