package modelserver

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// Claude Code 2.1.328's side calls, as its requests carry them: a token
// count (its SDK posts to /v1/messages/count_tokens?beta=true) and the
// session title request to its small model (querySource
// generate_session_title: a system prompt of its own, a json_schema
// output format with a "title").
const (
	countTokensBody = `{"model":"claude-opus-5-5","messages":[{"role":"user","content":"a tool result to size"}],"tools":[]}`
	titleBody       = `{"model":"claude-haiku-4-5","max_tokens":32000,"stream":true,` +
		`"system":[{"type":"text","text":"x-anthropic-billing-header: cc_version=2.1.328.593; cc_entrypoint=sdk-cli;"},` +
		`{"type":"text","text":"You are naming a coding session so the user can pick it out of a long list of sessions. Return JSON with a single \"title\" field."}],` +
		`"messages":[{"role":"user","content":"<session>\nFix calc.py\n</session>\nWrite the title in the predominant language of the session."}],` +
		`"output_config":{"format":{"type":"json_schema","schema":{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}}}}`
	conversationBody = `{"model":"claude-opus-5-5","max_tokens":128000,"system":[{"type":"text","text":"You are a Claude agent."}],` +
		`"messages":[{"role":"user","content":"Fix calc.py"}]}`
)

func postSide(t *testing.T, url, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(url+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// deltas joins a streamed Messages answer's text deltas.
func deltas(stream string) string {
	var b strings.Builder
	for _, l := range strings.Split(stream, "\n") {
		var ev struct {
			Delta struct{ Text string } `json:"delta"`
		}
		if d, ok := strings.CutPrefix(l, "data: "); ok && json.Unmarshal([]byte(d), &ev) == nil {
			b.WriteString(ev.Delta.Text)
		}
	}
	return b.String()
}

func TestSideCallsTakeNoScriptTurn(t *testing.T) {
	ep, err := New(Options{Scripted: true, Script: []*spec.Turn{{Text: "Fixed."}}, SideCalls: model.SideCallsClaudeCode})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ep)
	defer srv.Close()

	status, body := postSide(t, srv.URL, "/v1/messages/count_tokens?beta=true", countTokensBody)
	var count map[string]any
	if err := json.Unmarshal([]byte(body), &count); status != 200 || err != nil || len(count) != 1 {
		t.Fatalf("count_tokens: %d %s", status, body)
	}
	if n, _ := count["input_tokens"].(float64); n != float64((len(countTokensBody)+3)/4) {
		t.Errorf("count_tokens: input_tokens %v, want %d (about four bytes a token of the request)", count["input_tokens"], (len(countTokensBody)+3)/4)
	}
	if _, again := postSide(t, srv.URL, "/v1/messages/count_tokens", countTokensBody); again != body {
		t.Errorf("count_tokens is not deterministic: %s, then %s", body, again)
	}

	status, body = postSide(t, srv.URL, "/v1/messages?beta=true", titleBody)
	if text := deltas(body); status != 200 || !strings.Contains(body, "event: message_stop") || text != model.SideTitle {
		t.Fatalf("session title: %d, text %q, want %q:\n%s", status, text, model.SideTitle, body)
	}

	status, body = postSide(t, srv.URL, "/v1/messages", conversationBody)
	if status != 200 || !strings.Contains(body, `"Fixed."`) {
		t.Fatalf("the conversation's request is not served the script's turn: %d %s", status, body)
	}
	o := ep.End()
	if o.Turns != 1 || o.Unserved != nil || o.Script != nil {
		t.Errorf("turns %d, unserved %v, script error %v; want the one turn served to the conversation", o.Turns, o.Unserved, o.Script)
	}
	var sides []string
	for _, c := range o.Calls {
		sides = append(sides, c.Side)
	}
	if want := []string{"token count, anthropic-count-tokens", "token count, anthropic-count-tokens", "Claude Code's session title", ""}; strings.Join(sides, "|") != strings.Join(want, "|") {
		t.Errorf("calls' side: %q, want %q", sides, want)
	}
	if len(o.Served) != 1 || o.Served[0].Turn != 1 || o.Served[0].Request != 1 {
		t.Errorf("served: %+v, want request 1 → turn 1", o.Served)
	}
}

// Without the preset, a title request is a request of the conversation:
// it takes the script's turn (agent.side_calls: none).
func TestSideCallsPresetOff(t *testing.T) {
	ep, err := New(Options{Scripted: true, Script: []*spec.Turn{{Text: "Fixed."}}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	if status, body := postSide(t, srv.URL, "/v1/messages/count_tokens", countTokensBody); status != 200 || !strings.Contains(body, `"input_tokens"`) {
		t.Fatalf("count_tokens without a preset: %d %s", status, body)
	}
	if _, body := postSide(t, srv.URL, "/v1/messages", titleBody); !strings.Contains(body, "Fixed.") {
		t.Fatalf("title request without the preset: %s", body)
	}
}

// Under a cassette, a token count is answered by dryfire: never sent
// live, never recorded.
func TestCountTokensNeverRecorded(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	ep, err := New(Options{Config: cassette.Config{File: file, Root: dir, SuiteFile: "s.yaml", Case: "c", Mode: cassette.All}, Env: []string{"ANTHROPIC_API_KEY=sk-ant-test"},
		BaseURLs: map[string]string{"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(ep)
	defer srv.Close()
	if status, body := postSide(t, srv.URL, "/v1/messages/count_tokens?beta=true", countTokensBody); status != 200 || !strings.Contains(body, `"input_tokens"`) {
		t.Fatalf("count_tokens under a cassette: %d %s", status, body)
	}
	o := ep.End()
	if o.Sent != 0 || o.Recorded != 0 || o.Turns != 0 {
		t.Errorf("sent %d, recorded %d, turns %d; want none", o.Sent, o.Recorded, o.Turns)
	}
}
