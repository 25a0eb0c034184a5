package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// anthExchange is one HTTP request a test transport saw.
type anthExchange struct {
	URL    string
	Header http.Header
	Body   []byte
}

// anthWire records the requests that go through it; with canned set it
// answers them itself, else it passes them on.
type anthWire struct {
	mu       sync.Mutex
	seen     []anthExchange
	canned   func(n int) (int, string)
	requests int
}

func (w *anthWire) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	w.mu.Lock()
	w.seen = append(w.seen, anthExchange{URL: r.URL.String(), Header: r.Header.Clone(), Body: body})
	n := w.requests
	w.requests++
	w.mu.Unlock()
	if w.canned != nil {
		status, answer := w.canned(n)
		return &http.Response{StatusCode: status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(answer)), Request: r}, nil
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	return http.DefaultTransport.RoundTrip(r2)
}

func (w *anthWire) bodies() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out [][]byte
	for _, e := range w.seen {
		out = append(out, e.Body)
	}
	return out
}

// anthWaits records the anthWaits between attempts.
type anthWaits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *anthWaits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

// anthropicModel is the Anthropic provider talking to baseURL through w.
func anthropicModel(t *testing.T, baseURL, key string, w *anthWire, retries int, s *anthWaits) model.Model {
	t.Helper()
	if s == nil {
		s = &anthWaits{}
	}
	m, err := wire.New(wire.Options{
		Provider: provider.Anthropic,
		Model:    "claude-test",
		BaseURL:  baseURL,
		APIKey:   key,
		Client:   &http.Client{Transport: w},
		Retries:  retries,
		Timeout:  10 * time.Second,
		Sleep:    s.sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// canned answers every request with status and body.
func anthCanned(status int, body string) *anthWire {
	return &anthWire{canned: func(int) (int, string) { return status, body }}
}

const anthInput = "Please refund order A-991."

// anthBrain is the fake model of the multi-turn refund conversation.
var anthBrain = fakeapi.Script{anthInput: {
	{
		Thinking: "The order must be looked up before the refund.",
		Text:     "Let me check the order.",
		ToolCalls: []fakeapi.ToolCall{
			{Name: "lookup_order", Args: `{"order_id":"A-991"}`},
			{Name: "issue_refund", Args: `{"order_id":"A-991"}`},
		},
	},
	{Text: "Retrying the refund.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
	{Text: "Your refund is on its way."},
}}

// refundTools is a mock session for the refund conversation: the first
// refund times out.
func anthTools(t *testing.T) *tool.Recorder {
	t.Helper()
	src := `version: 1
agent: {provider: anthropic, model: claude-test}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
  issue_refund:
    - sequence: [{error: timeout}, {return: {ok: true}}]
cases:
  - name: c
    input: Please refund order A-991.
`
	s, ds := spec.Parse("s.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("suite does not load:\n%v", ds)
	}
	return tool.NewRecorder(mock.NewSession(mock.Compile(s).ForCase(s.Cases[0]), nil), tool.RecorderOptions{})
}

var anthConfig = agent.Config{
	Model:  "claude-test",
	System: "You are a support agent.",
	Input:  anthInput,
	Tools: []model.ToolDef{
		{Name: "lookup_order", Description: "Find an order", InputSchema: map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}}},
		{Name: "issue_refund", InputSchema: map[string]any{"type": "object"}},
	},
	MaxTurns: 5,
}

// anthWantRequest3 pins the anthWire shape of the last request of the
// refund conversation: system, tools, the thinking block sent back as it
// came, tool results grouped in one user message, the error as is_error.
const anthWantRequest3 = `{
  "max_tokens": 4096,
  "messages": [
    {
      "content": "Please refund order A-991.",
      "role": "user"
    },
    {
      "content": [
        {
          "signature": "E1A2NX0p9IU1anzQWCsSs/oaGF3EO8PNC8SaMHZsExg=",
          "thinking": "The order must be looked up before the refund.",
          "type": "thinking"
        },
        {
          "text": "Let me check the order.",
          "type": "text"
        },
        {
          "caller": {
            "type": "direct"
          },
          "id": "toolu_01icxQFMaPGBTZoBeihb9bIQ",
          "input": {
            "order_id": "A-991"
          },
          "name": "lookup_order",
          "type": "tool_use"
        },
        {
          "caller": {
            "type": "direct"
          },
          "id": "toolu_01ehoasX8mxFspRsW2CPbPLb",
          "input": {
            "order_id": "A-991"
          },
          "name": "issue_refund",
          "type": "tool_use"
        }
      ],
      "role": "assistant"
    },
    {
      "content": [
        {
          "content": "{\"tier\":\"gold\"}",
          "tool_use_id": "toolu_01icxQFMaPGBTZoBeihb9bIQ",
          "type": "tool_result"
        },
        {
          "content": "timeout",
          "is_error": true,
          "tool_use_id": "toolu_01ehoasX8mxFspRsW2CPbPLb",
          "type": "tool_result"
        }
      ],
      "role": "user"
    },
    {
      "content": [
        {
          "text": "Retrying the refund.",
          "type": "text"
        },
        {
          "caller": {
            "type": "direct"
          },
          "id": "toolu_01KtvUgk7JpFLJpIP0dcgPg6",
          "input": {
            "order_id": "A-991"
          },
          "name": "issue_refund",
          "type": "tool_use"
        }
      ],
      "role": "assistant"
    },
    {
      "content": [
        {
          "content": "{\"ok\":true}",
          "tool_use_id": "toolu_01KtvUgk7JpFLJpIP0dcgPg6",
          "type": "tool_result"
        }
      ],
      "role": "user"
    }
  ],
  "model": "claude-test",
  "system": "You are a support agent.",
  "temperature": 0,
  "tools": [
    {
      "description": "Find an order",
      "input_schema": {
        "properties": {
          "order_id": {
            "type": "string"
          }
        },
        "type": "object"
      },
      "name": "lookup_order"
    },
    {
      "input_schema": {
        "type": "object"
      },
      "name": "issue_refund"
    }
  ]
}`

func anthIndent(t *testing.T, b []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	out, _ := json.MarshalIndent(v, "", "  ")
	return string(out)
}

func TestAnthropicAgentConversation(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthBrain, fakeapi.RequireKey("sk-test"))
	defer srv.Close()
	w := &anthWire{}
	m := anthropicModel(t, srv.URL, "sk-test", w, 0, nil)
	tools := anthTools(t)
	cfg := anthConfig
	cfg.Params = map[string]any{"temperature": json.Number("0")}
	tr, err := agent.Run(context.Background(), m, tools, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Output != "Your refund is on its way." || tr.Turns != 3 {
		t.Errorf("output %q after %d turns", tr.Output, tr.Turns)
	}
	if tr.Usage.InputTokens <= 0 || tr.Usage.OutputTokens <= 0 {
		t.Errorf("usage %+v", tr.Usage)
	}

	// The tool calls ran in order, under the ids the API gave them.
	type call struct {
		ID, Name, Args, Content string
		IsError                 bool
		Turn                    int
	}
	var calls []call
	for _, r := range tools.Records() {
		calls = append(calls, call{r.ID, r.Name, r.Call.Args, r.Result.Content, r.Result.IsError, r.Turn})
	}
	wantCalls := []call{
		{"toolu_01icxQFMaPGBTZoBeihb9bIQ", "lookup_order", `{"order_id":"A-991"}`, `{"tier":"gold"}`, false, 1},
		{"toolu_01ehoasX8mxFspRsW2CPbPLb", "issue_refund", `{"order_id":"A-991"}`, "timeout", true, 1},
		{"toolu_01KtvUgk7JpFLJpIP0dcgPg6", "issue_refund", `{"order_id":"A-991"}`, `{"ok":true}`, false, 2},
	}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}

	bodies := w.bodies()
	if len(bodies) != 3 || srv.Requests() != 3 {
		t.Fatalf("%d requests sent, %d served; want 3", len(bodies), srv.Requests())
	}
	if diff := cmp.Diff(anthWantRequest3, anthIndent(t, bodies[2])); diff != "" {
		t.Errorf("request 3 (-want +got):\n%s", diff)
	}
	for i, e := range w.seen {
		if e.URL != srv.URL+"/v1/messages" || e.Header.Get("X-Api-Key") != "sk-test" || e.Header.Get("Anthropic-Version") != "2023-06-01" || e.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %d: %s %v", i+1, e.URL, e.Header)
		}
	}
}

// TestAnthropicRawRoundTrip: the content array of an answer is the next
// request's assistant message, byte for byte (the fake server refuses a
// thinking block that comes back changed).
func TestAnthropicRawRoundTrip(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthBrain)
	defer srv.Close()
	w := &anthWire{}
	m := anthropicModel(t, srv.URL, "", w, 0, nil)
	req := &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: anthInput}}}
	resp, err := m.Generate(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(resp.Raw, []byte(`[{"type":"thinking","thinking":"The order must be looked up before the refund.","signature":"`)) {
		t.Fatalf("Raw = %s", resp.Raw)
	}
	if resp.Text != "Let me check the order." || len(resp.ToolCalls) != 2 {
		t.Fatalf("response %+v", resp)
	}
	req.Messages = append(req.Messages, model.Message{Role: model.Assistant, Text: resp.Text, ToolCalls: resp.ToolCalls, Raw: resp.Raw})
	for _, c := range resp.ToolCalls {
		req.Messages = append(req.Messages, model.Message{Role: model.ToolRole, CallID: c.ID, Text: "ok"})
	}
	if _, err := m.Generate(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	var sent struct {
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(w.bodies()[1], &sent); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sent.Messages[1].Content, resp.Raw) {
		t.Errorf("assistant content sent back\n got %s\nwant %s", sent.Messages[1].Content, resp.Raw)
	}
}

func TestAnthropicMaxTokensAndParams(t *testing.T) {
	tests := []struct {
		name   string
		params map[string]any
		want   map[string]any // keys of the body besides model and messages
	}{
		{"default", nil, map[string]any{"max_tokens": float64(wire.DefaultMaxTokens)}},
		{"override", map[string]any{"max_tokens": json.Number("256")}, map[string]any{"max_tokens": float64(256)}},
		{"passthrough", map[string]any{
			"temperature":    json.Number("0.2"),
			"top_k":          5,
			"stop_sequences": []any{"END"},
			"metadata":       map[string]any{"user_id": "u-1"},
			"tool_choice":    map[string]any{"type": "auto"},
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": json.Number("1024")},
		}, map[string]any{
			"max_tokens":     float64(wire.DefaultMaxTokens),
			"temperature":    0.2,
			"top_k":          float64(5),
			"stop_sequences": []any{"END"},
			"metadata":       map[string]any{"user_id": "u-1"},
			"tool_choice":    map[string]any{"type": "auto"},
			"thinking":       map[string]any{"type": "enabled", "budget_tokens": float64(1024)},
		}},
	}
	srv := fakeapi.NewAnthropic(fakeapi.Script{"hi": {{Text: "hello"}}})
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &anthWire{}
			m := anthropicModel(t, srv.URL, "", w, 0, nil)
			resp, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Params: tt.params, Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if resp.Text != "hello" || resp.Notes != nil {
				t.Errorf("response %+v", resp)
			}
			var body map[string]any
			if err := json.Unmarshal(w.bodies()[0], &body); err != nil {
				t.Fatal(err)
			}
			if body["model"] != "claude-test" {
				t.Errorf("model %v", body["model"])
			}
			delete(body, "model")
			delete(body, "messages")
			if diff := cmp.Diff(tt.want, body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
		})
	}
}

func TestAnthropicParamsOwnedByTheLoop(t *testing.T) {
	for _, key := range []string{"model", "messages", "system", "tools", "stream"} {
		t.Run(key, func(t *testing.T) {
			w := anthCanned(200, "{}")
			m := anthropicModel(t, "http://fake.invalid", "", w, 0, nil)
			_, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Params: map[string]any{key: "x"}, Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			want := "agent.params." + key + " cannot be set for provider anthropic: "
			if key == "stream" { // the loop streams with stream: true (stream_loop_test.go)
				want = "agent.params.stream is x, not true or false"
			}
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("err = %v", err)
			}
			if w.requests != 0 {
				t.Errorf("%d requests sent", w.requests)
			}
		})
	}
}

func TestAnthropicModelFromOptions(t *testing.T) {
	w := anthCanned(200, `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
	m := anthropicModel(t, "http://fake.invalid", "", w, 0, nil)
	if _, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.User, Text: "hi"}}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(w.bodies()[0], []byte(`"model":"claude-test"`)) {
		t.Errorf("body %s", w.bodies()[0])
	}

	// No model at all: an error before any call.
	m, _ = wire.New(wire.Options{Provider: provider.Anthropic, Client: &http.Client{Transport: w}})
	_, err := m.Generate(context.Background(), &model.Request{Messages: []model.Message{{Role: model.User, Text: "hi"}}})
	if err == nil || !strings.Contains(err.Error(), "set agent.model") || w.requests != 1 {
		t.Errorf("err = %v after %d requests", err, w.requests)
	}
}

func TestAnthropicURLAndHeaders(t *testing.T) {
	tests := []struct {
		base, key, want string
	}{
		{"https://api.example.test", "sk-1", "https://api.example.test/v1/messages"},
		{"https://api.example.test/", "sk-1", "https://api.example.test/v1/messages"},
		{"https://api.example.test/v1", "", "https://api.example.test/v1/messages"},
		{"https://api.example.test/v1/", "", "https://api.example.test/v1/messages"},
		{"https://gw.example.test/anthropic", "", "https://gw.example.test/anthropic/v1/messages"},
		{"", "", "https://api.anthropic.com/v1/messages"},
	}
	for _, tt := range tests {
		w := anthCanned(200, `{"type":"message","role":"assistant","content":[],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`)
		m := anthropicModel(t, tt.base, tt.key, w, 0, nil)
		if _, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}}); err != nil {
			t.Fatal(err)
		}
		e := w.seen[0]
		if e.URL != tt.want {
			t.Errorf("base %q: URL %s, want %s", tt.base, e.URL, tt.want)
		}
		_, hasKey := e.Header["X-Api-Key"]
		if hasKey != (tt.key != "") || e.Header.Get("X-Api-Key") != tt.key || e.Header.Get("Anthropic-Version") != wire.AnthropicVersion {
			t.Errorf("key %q: headers %v", tt.key, e.Header)
		}
	}
}

func TestAnthropicMissingKeyRefused(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthBrain, fakeapi.RequireKey("sk-test"))
	defer srv.Close()
	m := anthropicModel(t, srv.URL, "", &anthWire{}, 3, nil)
	_, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: anthInput}}})
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.Status != 401 || ae.Type != "authentication_error" || srv.Requests() != 1 {
		t.Errorf("err = %v after %d requests", err, srv.Requests())
	}
	if err.Error() != "anthropic answered 401 Unauthorized: authentication_error: x-api-key header is required" {
		t.Errorf("error text %q", err)
	}
}

func TestAnthropicRetriesInjectedFaults(t *testing.T) {
	srv := fakeapi.NewAnthropic(fakeapi.Script{"hi": {{Text: "hello"}}})
	defer srv.Close()
	srv.Fail(fakeapi.Fault{Status: 529}, fakeapi.Fault{Status: 429, RetryAfter: "2"}, fakeapi.Fault{Drop: true}, fakeapi.Fault{Status: 500})
	s := &anthWaits{}
	m := anthropicModel(t, srv.URL, "", &anthWire{}, 4, s)
	resp, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "hello" || srv.Requests() != 5 {
		t.Errorf("text %q after %d requests", resp.Text, srv.Requests())
	}
	if len(s.d) != 4 || s.d[1] != 2*time.Second {
		t.Errorf("anthWaits %v; want 4, the second the 2 s Retry-After asks for", s.d)
	}
}

func TestAnthropicRetriesAreBounded(t *testing.T) {
	srv := fakeapi.NewAnthropic(fakeapi.Script{"hi": {{Text: "hello"}}})
	defer srv.Close()
	srv.Fail(fakeapi.Fault{Status: 529, Times: 10})
	m := anthropicModel(t, srv.URL, "", &anthWire{}, 2, nil)
	_, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
	want := "anthropic answered 529 Overloaded: overloaded_error: injected fault 529 (after 3 attempts)"
	if err == nil || err.Error() != want || srv.Requests() != 3 {
		t.Errorf("err = %v after %d requests; want %q after 3", err, srv.Requests(), want)
	}
}

// TestAnthropicRejectionShown: what the API refuses is an error with its
// message, and is not tried again.
func TestAnthropicRejectionShown(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthBrain)
	defer srv.Close()
	m := anthropicModel(t, srv.URL, "", &anthWire{}, 3, nil)
	_, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{
		{Role: model.User, Text: anthInput},
		{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "toolu_1", Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Role: model.ToolRole, CallID: "toolu_2", Text: "gold"},
	}})
	var ae *wire.APIError
	if !errors.As(err, &ae) || ae.Status != 400 || ae.Attempts != 1 || srv.Requests() != 1 {
		t.Fatalf("err = %#v after %d requests", err, srv.Requests())
	}
	want := "anthropic answered 400 Bad Request: invalid_request_error: messages.2.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_2. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
	if err.Error() != want {
		t.Errorf("error\n got %s\nwant %s", err, want)
	}
}

// TestAnthropicMessages: turns without Raw (another provider's, a script's)
// become text and tool_use blocks; tool results share one user message.
func TestAnthropicMessages(t *testing.T) {
	answer := `{"type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}`
	tests := []struct {
		name string
		msgs []model.Message
		want string // the messages array
		err  string
	}{
		{"tool calls without text", []model.Message{
			{Role: model.User, Text: "hi <b>&</b>"},
			{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "a", Name: "t", Args: `{ "x" : 1 }`}, {ID: "b", Name: "u", Args: ""}}},
			{Role: model.ToolRole, CallID: "a", Text: "one"},
			{Role: model.ToolRole, CallID: "b", Text: "", IsError: true},
			{Role: model.User, Text: "more"},
		}, `[{"role":"user","content":"hi <b>&</b>"},` +
			`{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{"x":1}},{"type":"tool_use","id":"b","name":"u","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"one"},{"type":"tool_result","tool_use_id":"b","is_error":true},{"type":"text","text":"more"}]}]`, ""},
		{"text and a call", []model.Message{
			{Role: model.User, Text: "hi"},
			{Role: model.Assistant, Text: "Sure.", ToolCalls: []tool.Call{{ID: "a", Name: "t", Args: `{}`}}},
			{Role: model.ToolRole, CallID: "a", Text: "done"},
		}, `[{"role":"user","content":"hi"},` +
			`{"role":"assistant","content":[{"type":"text","text":"Sure."},{"type":"tool_use","id":"a","name":"t","input":{}}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":"done"}]}]`, ""},
		{"arguments not an object", []model.Message{
			{Role: model.User, Text: "hi"},
			{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "a", Name: "t", Args: `[1]`}}},
		}, "", "message 1: the arguments of tool call a (t) are not a JSON object: [1]"},
		{"unknown role", []model.Message{{Role: "system", Text: "hi"}}, "", `message 0 has role "system", which the anthropic provider cannot send`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := anthCanned(200, answer)
			m := anthropicModel(t, "http://fake.invalid", "", w, 0, nil)
			_, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: tt.msgs})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err || w.requests != 0 {
					t.Errorf("err = %v after %d requests, want %q before any", err, w.requests, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Messages json.RawMessage `json:"messages"`
			}
			json.Unmarshal(w.bodies()[0], &body)
			if string(body.Messages) != tt.want {
				t.Errorf("messages\n got %s\nwant %s", body.Messages, tt.want)
			}
		})
	}
}

func TestAnthropicAnswers(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *model.Response
		err  string
	}{
		{"text blocks joined, usage with cache",
			`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"Hello, "},{"type":"text","text":"world."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":5,"cache_read_input_tokens":100,"output_tokens":7}}`,
			&model.Response{Text: "Hello, world.", Usage: model.Usage{InputTokens: 115, OutputTokens: 7}, Raw: json.RawMessage(`[{"type":"text","text":"Hello, "},{"type":"text","text":"world."}]`)}, ""},
		{"tool calls, compact args",
			`{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":{ "a" : [1, 2] }}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":2}}`,
			&model.Response{ToolCalls: []tool.Call{{ID: "toolu_1", Name: "t", Args: `{"a":[1,2]}`}}, Usage: model.Usage{InputTokens: 1, OutputTokens: 2}, Raw: json.RawMessage(`[{"type":"tool_use","id":"toolu_1","name":"t","input":{ "a" : [1, 2] }}]`)}, ""},
		{"cut at max_tokens: a note",
			`{"type":"message","role":"assistant","content":[{"type":"text","text":"The answer is"}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":4096}}`,
			&model.Response{Text: "The answer is", Usage: model.Usage{InputTokens: 1, OutputTokens: 4096}, Raw: json.RawMessage(`[{"type":"text","text":"The answer is"}]`),
				Notes: []string{"anthropic stopped at max_tokens (4096): the answer is cut short; raise agent.params.max_tokens"}}, ""},
		{"refusal: a note",
			`{"type":"message","role":"assistant","content":[],"stop_reason":"refusal","usage":{"input_tokens":1,"output_tokens":0}}`,
			&model.Response{Usage: model.Usage{InputTokens: 1}, Raw: json.RawMessage(`[]`), Notes: []string{"anthropic refused to answer (stop_reason refusal)"}}, ""},
		{"tool call cut at max_tokens",
			`{"type":"message","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"write_file","input":{}}],"stop_reason":"max_tokens","usage":{"input_tokens":1,"output_tokens":4096}}`,
			nil, "anthropic stopped at max_tokens (4096) while writing a call to write_file (toolu_1): its input may be incomplete, so it is not run; raise agent.params.max_tokens"},
		{"not JSON", `<html>bad gateway</html>`, nil, "anthropic answered 200 OK but the body is not a valid answer: it is not a JSON object"},
		{"no type", `{"content":[]}`, nil, "anthropic answered 200 OK but the body is not a valid answer: `type` is missing (want \"message\")"},
		{"another type", `{"type":"completion","content":[]}`, nil, "anthropic answered 200 OK but the body is not a valid answer: `type` is \"completion\", not \"message\""},
		{"no content", `{"type":"message","role":"assistant","stop_reason":"end_turn"}`, nil, "anthropic answered 200 OK but the body is not a valid answer: `content` is missing"},
		{"content not an array", `{"type":"message","content":"hi"}`, nil, "anthropic answered 200 OK but the body is not a valid answer: `content` is not an array of content blocks"},
		{"tool_use without id", `{"type":"message","content":[{"type":"tool_use","name":"t","input":{}}]}`, nil, "anthropic answered 200 OK but the body is not a valid answer: content.0: a tool_use block without `id`"},
		{"tool_use input a string", `{"type":"message","content":[{"type":"tool_use","id":"x","name":"t","input":"{}"}]}`, nil, "anthropic answered 200 OK but the body is not a valid answer: content.0: the input of tool_use x (t) is not a JSON object"},
		{"text without text", `{"type":"message","content":[{"type":"text"}]}`, nil, "anthropic answered 200 OK but the body is not a valid answer: content.0: a text block without `text`"},
		{"an error with 200", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, nil, "anthropic answered 200 OK: overloaded_error: Overloaded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := anthropicModel(t, "http://fake.invalid", "", anthCanned(200, tt.body), 0, nil)
			got, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Errorf("err = %v, want it to start %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("response (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnthropicCutByTheFake: the fake server cuts a turn at the request's
// max_tokens, as the API does; the provider notes it, or refuses a cut
// tool call.
func TestAnthropicCutByTheFake(t *testing.T) {
	srv := fakeapi.NewAnthropic(fakeapi.Script{
		"essay": {{Text: strings.Repeat("word ", 100)}},
		"tool":  {{Text: "ok", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}}},
	})
	defer srv.Close()
	m := anthropicModel(t, srv.URL, "", &anthWire{}, 0, nil)
	params := map[string]any{"max_tokens": json.Number("5")}
	resp, err := m.Generate(context.Background(), &model.Request{Model: "claude-test", Params: params, Messages: []model.Message{{Role: model.User, Text: "essay"}}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"anthropic stopped at max_tokens (5): the answer is cut short; raise agent.params.max_tokens"}
	if resp.Text != strings.Repeat("word ", 4) || !cmp.Equal(resp.Notes, want) || resp.Usage.OutputTokens != 5 {
		t.Errorf("response %+v", resp)
	}
	_, err = m.Generate(context.Background(), &model.Request{Model: "claude-test", Params: params, Messages: []model.Message{{Role: model.User, Text: "tool"}}})
	if err == nil || !strings.Contains(err.Error(), "while writing a call to lookup_order") {
		t.Errorf("err = %v", err)
	}
}

func TestAnthropicContextCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w := anthCanned(200, "{}")
	m := anthropicModel(t, "http://fake.invalid", "", w, 0, nil)
	if _, err := m.Generate(ctx, &model.Request{Model: "claude-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}}); !errors.Is(err, context.Canceled) || w.requests != 0 {
		t.Errorf("err = %v after %d requests", err, w.requests)
	}
}
