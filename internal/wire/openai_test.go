package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
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

// Set UPDATE_GOLDEN=1 to rewrite the golden files.
var oaiUpdate = os.Getenv("UPDATE_GOLDEN") != ""

// oaiGolden compares got with testdata/name, or rewrites it.
func oaiGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if oaiUpdate {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to write it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// exchange is one HTTP exchange seen by oaiCapture.
type exchange struct {
	URL      string
	Header   http.Header
	Body     []byte
	Response []byte
}

// oaiCapture is a transport that keeps every request and response body.
type oaiCapture struct {
	mu  sync.Mutex
	log []exchange
}

func (c *oaiCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(r)
	ex := exchange{URL: r.URL.String(), Header: r.Header.Clone(), Body: body}
	if err == nil {
		data, rerr := io.ReadAll(resp.Body)
		resp.Body.Close()
		if rerr != nil {
			return nil, rerr
		}
		resp.Body = io.NopCloser(bytes.NewReader(data))
		ex.Response = data
	}
	c.mu.Lock()
	c.log = append(c.log, ex)
	c.mu.Unlock()
	return resp, err
}

func (c *oaiCapture) exchanges() []exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]exchange(nil), c.log...)
}

// oaiSleeps records the waits between attempts instead of waiting.
type oaiSleeps struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *oaiSleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return nil
}

// oaiModel is a real provider talking to base through a capturing client.
func oaiModel(t *testing.T, provider, base, key string) (model.Model, *oaiCapture, *oaiSleeps) {
	t.Helper()
	c, sl := &oaiCapture{}, &oaiSleeps{}
	m, err := wire.New(wire.Options{
		Provider: provider, Model: "gpt-test", BaseURL: base, APIKey: key,
		Client: &http.Client{Transport: c}, Retries: 3, Timeout: 10 * time.Second, Sleep: sl.sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	return m, c, sl
}

const oaiInput = "Please refund order A-991."

// oaiSession is the mock engine of a small suite: a lookup, and a refund
// that fails once with an error and then succeeds.
func oaiSession(t *testing.T) *tool.Recorder {
	t.Helper()
	src := `version: 1
agent: {provider: script}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
  issue_refund:
    - sequence: [{error: timeout}, {return: {ok: true}}]
cases:
  - name: refund
    input: ` + oaiInput + `
    script: [{text: unused}]
`
	s, ds := spec.Parse("s.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("suite does not load:\n%v", ds)
	}
	return tool.NewRecorder(mock.NewSession(mock.Compile(s).ForCase(s.Cases[0]), nil), tool.RecorderOptions{})
}

// oaiBrain is the fake model's side of the refund conversation.
var oaiBrain = fakeapi.Script{oaiInput: {
	{Thinking: "The user wants a refund; look the order up first.", ToolCalls: []fakeapi.ToolCall{
		{Name: "lookup_order", Args: `{"order_id":"A-991"}`},
		{Name: "issue_refund", Args: `{"order_id":"A-991"}`},
	}},
	{Text: "Retrying the refund.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
	{Text: "Your refund is on its way."},
}}

var oaiConfig = agent.Config{
	Model:  "gpt-test",
	System: "You are a support agent.",
	Input:  oaiInput,
	Tools: []model.ToolDef{
		{Name: "lookup_order", Description: "Look up an order.", InputSchema: map[string]any{
			"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"}}},
		{Name: "issue_refund", Description: "Refund an order. <Irreversible> & audited."},
	},
	Params:   map[string]any{"temperature": json.Number("0")},
	MaxTurns: 5,
}

// callSummary is what the mock engine saw of a call.
type callSummary struct {
	Name, Content string
	IsError       bool
	Turn          int
}

func summarize(recs []tool.Record) []callSummary {
	var out []callSummary
	for _, r := range recs {
		out = append(out, callSummary{r.Name, r.Result.Content, r.Result.IsError, r.Turn})
	}
	return out
}

var oaiWantCalls = []callSummary{
	{"lookup_order", `{"tier":"gold"}`, false, 1},
	{"issue_refund", "timeout", true, 1},
	{"issue_refund", `{"ok":true}`, false, 2},
}

// usageOf adds up the usage the server reported in its answers.
func usageOf(t *testing.T, exs []exchange, in, out string) model.Usage {
	t.Helper()
	var u model.Usage
	for _, ex := range exs {
		var r struct {
			Usage map[string]any `json:"usage"`
		}
		if err := json.Unmarshal(ex.Response, &r); err != nil {
			t.Fatal(err)
		}
		u.InputTokens += int(r.Usage[in].(float64))
		u.OutputTokens += int(r.Usage[out].(float64))
	}
	return u
}

// requestsGolden is every request body, indented, for a golden file.
func requestsGolden(t *testing.T, exs []exchange) string {
	t.Helper()
	var b strings.Builder
	for i, ex := range exs {
		var ind bytes.Buffer
		if err := json.Indent(&ind, ex.Body, "", "  "); err != nil {
			t.Fatalf("request %d is not JSON: %v", i+1, err)
		}
		fmt.Fprintf(&b, "# request %d: POST %s\n%s\n", i+1, ex.URL[strings.Index(ex.URL, "/v1"):], ind.String())
	}
	return b.String()
}

// A multi-turn tool conversation over real HTTP: the loop, the provider,
// the strict fake server and the mock engine, with a tool error on the way.
func TestChatConversation(t *testing.T) {
	srv := fakeapi.NewOpenAIChat(oaiBrain, fakeapi.RequireKey("sk-test"))
	defer srv.Close()
	m, c, _ := oaiModel(t, provider.OpenAI, srv.URL+"/v1", "sk-test")
	sess := oaiSession(t)

	tr, err := agent.Run(context.Background(), m, sess, oaiConfig)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Output != "Your refund is on its way." || tr.Turns != 3 {
		t.Errorf("output %q after %d turns", tr.Output, tr.Turns)
	}
	if diff := cmp.Diff(oaiWantCalls, summarize(sess.Records())); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	exs := c.exchanges()
	if len(exs) != 3 {
		t.Fatalf("%d exchanges, want 3", len(exs))
	}
	if want := usageOf(t, exs, "prompt_tokens", "completion_tokens"); tr.Usage != want || want.InputTokens == 0 {
		t.Errorf("usage %+v, want %+v", tr.Usage, want)
	}
	for i, ex := range exs {
		if got := ex.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("request %d: Authorization %q", i+1, got)
		}
	}
	// The call ids are the server's, and the tool results answer them.
	for _, r := range sess.Records() {
		if !strings.HasPrefix(r.ID, "call_") || len(r.ID) != len("call_")+24 {
			t.Errorf("call id %q is not the server's", r.ID)
		}
	}
	// The wire shape, pinned: system first, content null beside tool
	// calls, arguments as strings, the tool error prefixed, params last.
	oaiGolden(t, "openai_chat_requests.golden", requestsGolden(t, exs))
}

// Retries: a 429 with Retry-After, a 500 and a dropped connection are
// retried; the Retry-After wait is honoured.
func TestOpenAIRetries(t *testing.T) {
	for _, tt := range []struct {
		provider string
		start    func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
	}{
		{provider.OpenAI, fakeapi.NewOpenAIChat},
		{provider.OpenAICompatible, fakeapi.NewOpenAIChat},
		{provider.OpenAIResponses, fakeapi.NewOpenAIResponses},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			srv := tt.start(fakeapi.Script{"hi": {{Text: "hello"}}})
			defer srv.Close()
			srv.Fail(fakeapi.Fault{Status: 429, RetryAfter: "2"}, fakeapi.Fault{Status: 500}, fakeapi.Fault{Drop: true})
			m, _, sl := oaiModel(t, tt.provider, srv.URL+"/v1", "")
			r, err := m.Generate(context.Background(), &model.Request{Model: "gpt-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != "hello" || srv.Requests() != 4 {
				t.Errorf("text %q after %d requests; want hello after 4", r.Text, srv.Requests())
			}
			if len(sl.waits) != 3 || sl.waits[0] != 2*time.Second {
				t.Errorf("waits %v; want 3, the first the Retry-After of 2s", sl.waits)
			}

			// When the faults outlast the retries, the last answer is the
			// error, with the server's message and the attempts.
			srv.Fail(fakeapi.Fault{Status: 503, Times: 4})
			_, err = m.Generate(context.Background(), &model.Request{Model: "gpt-test", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			var ae *wire.APIError
			if !errors.As(err, &ae) || ae.Status != 503 || ae.Attempts != 4 || ae.Type != "server_error" || ae.Message != "injected fault 503" {
				t.Fatalf("err = %#v", err)
			}
			if want := tt.provider + " answered 503 Service Unavailable: server_error: injected fault 503 (after 4 attempts)"; err.Error() != want {
				t.Errorf("message\n got %s\nwant %s", err, want)
			}
		})
	}
}

// The server's error body is the reason, and a refusal is not retried.
func TestOpenAIErrors(t *testing.T) {
	chat := fakeapi.NewOpenAIChat(fakeapi.Script{"hi": {{Text: "hello"}}}, fakeapi.RequireKey("sk-test"))
	defer chat.Close()
	resp := fakeapi.NewOpenAIResponses(fakeapi.Script{"hi": {{Text: "hello"}}})
	defer resp.Close()
	hi := []model.Message{{Role: model.User, Text: "hi"}}
	tests := []struct {
		name     string
		provider string
		srv      *fakeapi.Server
		key      string
		req      model.Request
		want     string
		requests int64
	}{
		{"missing key", provider.OpenAI, chat, "", model.Request{Model: "gpt-test", Messages: hi},
			"openai answered 401 Unauthorized: invalid_request_error: You didn't provide an API key.", 1},
		{"unknown param", provider.OpenAI, chat, "sk-test", model.Request{Model: "gpt-test", Messages: hi, Params: map[string]any{"max_token": 5}},
			"openai answered 400 Bad Request: invalid_request_error (unknown_parameter): Unknown parameter: 'max_token'.", 1},
		{"bad tool name", provider.OpenAI, chat, "sk-test", model.Request{Model: "gpt-test", Messages: hi, Tools: []model.ToolDef{{Name: "orders.lookup"}}},
			"openai answered 400 Bad Request: invalid_request_error (invalid_value): Invalid 'tools[0].function.name': string does not match pattern.", 1},
		{"param owned by the loop", provider.OpenAI, chat, "sk-test", model.Request{Model: "gpt-test", Messages: hi, Params: map[string]any{"messages": []any{}}},
			`agent.params sets "messages", which dryfire's loop writes itself on every call; remove it from agent.params`, 0},
		{"stream not a boolean", provider.OpenAI, chat, "sk-test", model.Request{Model: "gpt-test", Messages: hi, Params: map[string]any{"stream": "yes"}},
			"agent.params.stream is yes, not true or false", 0},
		{"instructions param", provider.OpenAIResponses, resp, "", model.Request{Model: "gpt-test", Messages: hi, Params: map[string]any{"instructions": "x"}},
			`agent.params sets "instructions", which dryfire's loop writes itself on every call; remove it from agent.params`, 0},
		{"chat param on responses", provider.OpenAIResponses, resp, "", model.Request{Model: "gpt-test", Messages: hi, Params: map[string]any{"max_tokens": 5}},
			"openai-responses answered 400 Bad Request: invalid_request_error (unknown_parameter): Unknown parameter: 'max_tokens'.", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.srv.Requests()
			m, _, _ := oaiModel(t, tt.provider, tt.srv.URL+"/v1", tt.key)
			_, err := m.Generate(context.Background(), &tt.req)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant %s…", err, tt.want)
			}
			if n := tt.srv.Requests() - before; n != tt.requests {
				t.Errorf("%d requests, want %d", n, tt.requests)
			}
		})
	}
}

// Compatible servers differ from OpenAI; the provider reads what they send.
func TestChatLenient(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *model.Response
		err  string
	}{
		{"no usage, no ids", `{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[
			{"type":"function","function":{"name":"a","arguments":"{\"x\":1}"}},
			{"id":"","type":"function","function":{"name":"b","arguments":""}}]},"finish_reason":"tool_calls"}]}`,
			&model.Response{ToolCalls: []tool.Call{{ID: "call_2_1", Name: "a", Args: `{"x":1}`}, {ID: "call_2_2", Name: "b", Args: "{}"}}}, ""},
		{"content absent, empty tool_calls", `{"choices":[{"message":{"role":"assistant","tool_calls":[]},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":1}}`,
			&model.Response{Usage: model.Usage{InputTokens: 3, OutputTokens: 1}}, ""},
		{"repeated ids, arguments as an object", `{"choices":[{"message":{"content":"ok","tool_calls":[
			{"id":"0","function":{"name":"a","arguments":{"x": 1}}},{"id":"0","function":{"name":"a","arguments":"not json"}}]}}]}`,
			&model.Response{Text: "ok", ToolCalls: []tool.Call{{ID: "0", Name: "a", Args: `{"x":1}`}, {ID: "call_2_2", Name: "a", Args: "not json"}}}, ""},
		{"fields not read, in other types", `{"id":7,"object":null,"created":1733000000.25,"model":["m"],"service_tier":1,"system_fingerprint":false,
			"choices":[{"index":"0","logprobs":{},"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":"4","prompt_tokens_details":[1]}}`,
			&model.Response{Text: "ok", Usage: model.Usage{InputTokens: 3, OutputTokens: 1}}, ""},
		{"a field read, in another type", `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":"3"}}`, nil,
			"openai-compatible: the answer is not a chat.completion object"},
		{"content as parts", `{"choices":[{"message":{"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}`,
			&model.Response{Text: "ab"}, ""},
		{"refusal", `{"choices":[{"message":{"content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`,
			&model.Response{Text: "I can't help with that.", Notes: []string{"openai-compatible refused to answer (refusal): I can't help with that."}}, ""},
		{"no choices", `{"id":"x","choices":[]}`, nil, `openai-compatible: the answer has no choices: {"id":"x","choices":[]}`},
		{"error with 200", `{"error":{"message":"Provider returned error","code":502}}`, nil,
			"openai-compatible: the answer carries an error instead of choices: (502): Provider returned error"},
		{"truncated tool call", `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"call_1","function":{"name":"a","arguments":"{\"x\": \"ab"}}]},"finish_reason":"length"}]}`, nil,
			`openai-compatible stopped at the token limit (finish_reason length) while writing a call to a (call_1): its arguments are cut off ({"x": "ab), so it is not run; raise max_completion_tokens (or max_tokens) in agent.params`},
		{"text cut short", `{"choices":[{"message":{"content":"The refund is"},"finish_reason":"length"}]}`,
			&model.Response{Text: "The refund is", Notes: []string{"openai-compatible stopped at the token limit (finish_reason length): the answer is cut short; raise max_completion_tokens (or max_tokens) in agent.params"}}, ""},
		{"content filter", `{"choices":[{"message":{"content":null},"finish_reason":"content_filter"}]}`,
			&model.Response{Notes: []string{"openai-compatible withheld content (finish_reason content_filter): the answer may be incomplete"}}, ""},
		{"not JSON", `<html>bad gateway</html>`, nil, "openai-compatible: the answer is not a chat.completion object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "" {
					http.Error(w, "unexpected "+r.URL.Path+" "+r.Header.Get("Authorization"), 500)
					return
				}
				io.WriteString(w, tt.body)
			}))
			defer srv.Close()
			// A trailing slash on the base URL, and no key: no Authorization.
			m, _, _ := oaiModel(t, provider.OpenAICompatible, srv.URL+"/v1/", "")
			req := &model.Request{Model: "llama3", Messages: []model.Message{
				{Role: model.User, Text: "hi"},
				{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "c1", Name: "a", Args: "{}"}}},
				{Role: model.ToolRole, CallID: "c1", Text: "x"},
			}}
			got, err := m.Generate(context.Background(), req)
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("err = %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Error bodies of compatible servers come in other shapes.
func TestOpenAIErrorShapes(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"error":{"message":"Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.","type":"invalid_request_error","param":"messages.[3].role","code":null}}`,
			"openai-compatible answered 400 Bad Request: invalid_request_error: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'. (param: messages.[3].role)"},
		{`{"error":"model 'llama9' not found"}`, "openai-compatible answered 400 Bad Request: model 'llama9' not found"},
		{`{"object":"error","message":"The model does not exist.","type":"NotFoundError","code":404}`, "openai-compatible answered 400 Bad Request: The model does not exist."},
		{`{"detail":"Not Found"}`, "openai-compatible answered 400 Bad Request: Not Found"},
		{`plain text`, "openai-compatible answered 400 Bad Request: plain text"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, tt.body)
		}))
		m, _, _ := oaiModel(t, provider.OpenAICompatible, srv.URL, "")
		_, err := m.Generate(context.Background(), &model.Request{Model: "m", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
		srv.Close()
		if err == nil || err.Error() != tt.want {
			t.Errorf("body %s\n got %v\nwant %s", tt.body, err, tt.want)
		}
	}
}
