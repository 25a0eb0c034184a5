package fakeapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// post sends body to the fake's /v1/messages with the usual headers (a
// header set to "" is left out) and returns the status, body and headers.
func anthPost(t *testing.T, srv *fakeapi.Server, body string, header map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Anthropic-Version", "2023-06-01")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data), resp.Header
}

func anthErr(typ, msg string) string {
	b, _ := json.Marshal(msg)
	return `{"type":"error","error":{"type":"` + typ + `","message":` + string(b) + `}}`
}

// anthScript answers conversations that start with "Refund A-1".
var anthScript = fakeapi.Script{
	"Refund A-1": {
		{Text: "Looking it up.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-1"}`}, {Name: "issue_refund", Args: `{"order_id": "A-1"}`}}},
		{Text: "Done: refunded."},
	},
}

// Messages used by the rejection table.
const (
	anthUser1   = `{"role":"user","content":"Refund A-1"}`
	anthToolUse = `{"role":"assistant","content":[{"type":"text","text":"Looking it up."},{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":{"order_id":"A-1"}}]}`
	anthResult1 = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"gold"}]}`
)

func anthRequest(msgs ...string) string {
	return `{"model":"claude-test","max_tokens":100,"messages":[` + strings.Join(msgs, ",") + `]}`
}

func TestAnthropicRejects(t *testing.T) {
	const invalid = "invalid_request_error"
	tests := []struct {
		name   string
		body   string
		header map[string]string
		status int
		typ    string
		msg    string
	}{
		{"max_tokens missing", `{"model":"claude-test","messages":[` + anthUser1 + `]}`, nil, 400, invalid, "max_tokens: Field required"},
		{"max_tokens a string", `{"model":"claude-test","max_tokens":"100","messages":[` + anthUser1 + `]}`, nil, 400, invalid, "max_tokens: Input should be a valid integer"},
		{"max_tokens zero", `{"model":"claude-test","max_tokens":0,"messages":[` + anthUser1 + `]}`, nil, 400, invalid, "max_tokens: Input should be greater than or equal to 1"},
		{"max_tokens fractional", `{"model":"claude-test","max_tokens":1.5,"messages":[` + anthUser1 + `]}`, nil, 400, invalid, "max_tokens: Input should be a valid integer, got a number with a fractional part"},
		{"model missing", `{"max_tokens":100,"messages":[` + anthUser1 + `]}`, nil, 400, invalid, "model: Field required"},
		{"model not a string", `{"model":7,"max_tokens":100,"messages":[` + anthUser1 + `]}`, nil, 400, invalid, "model: Input should be a valid string"},
		{"unknown key", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"temprature":0}`, nil, 400, invalid, "temprature: Extra inputs are not permitted"},
		{"messages missing", `{"model":"claude-test","max_tokens":100}`, nil, 400, invalid, "messages: Field required"},
		{"messages empty", anthRequest(), nil, 400, invalid, "messages: at least one message is required"},
		{"first message assistant", anthRequest(`{"role":"assistant","content":"Hi"}`, anthUser1), nil, 400, invalid, `messages: first message must use the "user" role`},
		{"two user messages", anthRequest(anthUser1, anthUser1), nil, 400, invalid, `messages: roles must alternate between "user" and "assistant", but found multiple "user" roles in a row`},
		{"two assistant messages", anthRequest(anthUser1, `{"role":"assistant","content":"a"}`, `{"role":"assistant","content":"b"}`), nil, 400, invalid, `messages: roles must alternate between "user" and "assistant", but found multiple "assistant" roles in a row`},
		{"system role", anthRequest(`{"role":"system","content":"Be brief."}`, anthUser1), nil, 400, invalid, "messages: Unexpected role \"system\". The Messages API accepts a top-level `system` parameter, not \"system\" as an input message role."},
		{"tool role", anthRequest(anthUser1, anthToolUse, `{"role":"tool","content":"gold"}`), nil, 400, invalid, "messages.2.role: Input should be 'user' or 'assistant'"},
		{"role missing", anthRequest(`{"content":"x"}`), nil, 400, invalid, "messages.0.role: Field required"},
		{"content missing", anthRequest(`{"role":"user"}`), nil, 400, invalid, "messages.0.content: Field required"},
		{"empty content", anthRequest(`{"role":"user","content":""}`), nil, 400, invalid, "messages.0: all messages must have non-empty content except for the optional final assistant message"},
		{"empty content list", anthRequest(anthUser1, `{"role":"assistant","content":[]}`, anthUser1), nil, 400, invalid, "messages.1: all messages must have non-empty content except for the optional final assistant message"},
		{"empty text block", anthRequest(`{"role":"user","content":[{"type":"text","text":""}]}`), nil, 400, invalid, "messages: text content blocks must be non-empty"},
		{"tool_result for an unknown tool_use", anthRequest(anthUser1, anthToolUse, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"gold"},{"type":"tool_result","tool_use_id":"toolu_9","content":"x"}]}`), nil, 400, invalid,
			"messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: toolu_9. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_result without any tool_use", anthRequest(`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"gold"}]}`), nil, 400, invalid,
			"messages.0.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_result answering an older tool_use", anthRequest(anthUser1, anthToolUse, anthResult1, `{"role":"assistant","content":"ok"}`, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"again"}]}`), nil, 400, invalid,
			"messages.4.content.0: unexpected `tool_use_id` found in `tool_result` blocks: toolu_1. Each `tool_result` block must have a corresponding `tool_use` block in the previous message."},
		{"tool_use unanswered", anthRequest(anthUser1, anthToolUse, `{"role":"user","content":"and?"}`), nil, 400, invalid,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"tool_use left last", anthRequest(anthUser1, anthToolUse), nil, 400, invalid,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"tool_result after text", anthRequest(anthUser1, anthToolUse, `{"role":"user","content":[{"type":"text","text":"here"},{"type":"tool_result","tool_use_id":"toolu_1","content":"gold"}]}`), nil, 400, invalid,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_1. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"one of two tool_uses unanswered", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"t","input":{}},{"type":"tool_use","id":"b","name":"t","input":{}}]}`, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"b"}]}`), nil, 400, invalid,
			"messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: a. Each `tool_use` block must have a corresponding `tool_result` block in the next message."},
		{"unknown block type", anthRequest(`{"role":"user","content":[{"type":"video","url":"x"}]}`), nil, 400, invalid,
			"messages.0.content.0: Input tag 'video' found using 'type' does not match any of the expected tags: 'text', 'image', 'document', 'search_result', 'thinking', 'redacted_thinking', 'tool_use', 'tool_result', 'server_tool_use', 'web_search_tool_result'"},
		{"block without type", anthRequest(`{"role":"user","content":[{"text":"x"}]}`), nil, 400, invalid, "messages.0.content.0: Unable to extract tag using discriminator 'type'"},
		{"text block without text", anthRequest(`{"role":"user","content":[{"type":"text"}]}`), nil, 400, invalid, "messages.0.content.0.text.text: Field required"},
		{"tool_use input a string", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":"{\"order_id\":\"A-1\"}"}]}`, anthResult1), nil, 400, invalid,
			"messages.1.content.0.tool_use.input: Input should be a valid dictionary"},
		{"tool_use input missing", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"lookup_order"}]}`, anthResult1), nil, 400, invalid,
			"messages.1.content.0.tool_use.input: Field required"},
		{"tool_use without id", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"tool_use","name":"lookup_order","input":{}}]}`, anthResult1), nil, 400, invalid,
			"messages.1.content.0.tool_use.id: Field required"},
		{"tool_result without tool_use_id", anthRequest(anthUser1, anthToolUse, `{"role":"user","content":[{"type":"tool_result","content":"gold"}]}`), nil, 400, invalid,
			"messages.2.content.0.tool_result.tool_use_id: Field required"},
		{"is_error not a boolean", anthRequest(anthUser1, anthToolUse, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"x","is_error":"yes"}]}`), nil, 400, invalid,
			"messages.2.content.0.tool_result.is_error: Input should be a valid boolean"},
		{"tool_use in a user message", anthRequest(`{"role":"user","content":[{"type":"tool_use","id":"toolu_1","name":"t","input":{}}]}`), nil, 400, invalid,
			"messages.0.content.0: `tool_use` blocks are only allowed in assistant messages"},
		{"tool_result in an assistant message", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"toolu_1"}]}`), nil, 400, invalid,
			"messages.1.content.0: `tool_result` blocks are only allowed in user messages"},
		{"thinking block changed", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"thinking","thinking":"edited","signature":"c2lnbmF0dXJl"},{"type":"text","text":"Hi"}]}`, anthUser1), nil, 400, invalid,
			"messages.1.content.0: Invalid `signature` in `thinking` block"},
		{"thinking block without signature", anthRequest(anthUser1, `{"role":"assistant","content":[{"type":"thinking","thinking":"hm"}]}`, anthUser1), nil, 400, invalid,
			"messages.1.content.0.thinking.signature: Field required"},
		{"tool without input_schema", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"lookup_order"}]}`, nil, 400, invalid, "tools.0.custom.input_schema: Field required"},
		{"input_schema not an object", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"lookup_order","input_schema":"object"}]}`, nil, 400, invalid, "tools.0.custom.input_schema: Input should be a valid dictionary"},
		{"input_schema without type", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"lookup_order","input_schema":{"properties":{}}}]}`, nil, 400, invalid, "tools.0.custom.input_schema.type: Field required"},
		{"input_schema of an array", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"b","input_schema":{"type":"array"}}]}`, nil, 400, invalid, "tools.1.custom.input_schema.type: Input should be 'object'"},
		{"tool name with a dot", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"orders.lookup","input_schema":{"type":"object"}}]}`, nil, 400, invalid, "tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'"},
		{"tool names repeated", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"name":"a","input_schema":{"type":"object"}},{"name":"a","input_schema":{"type":"object"}}]}`, nil, 400, invalid, "tools: Tool names must be unique."},
		{"tool without name", `{"model":"claude-test","max_tokens":100,"messages":[` + anthUser1 + `],"tools":[{"input_schema":{"type":"object"}}]}`, nil, 400, invalid, "tools.0.custom.name: Field required"},
		{"system not text", `{"model":"claude-test","max_tokens":100,"system":7,"messages":[` + anthUser1 + `]}`, nil, 400, invalid, "system: Input should be a valid string"},
		{"stream not a boolean", `{"model":"claude-test","max_tokens":100,"stream":"yes","messages":[` + anthUser1 + `]}`, nil, 400, invalid, "stream: Input should be a valid boolean"},
		{"not JSON", `{"model":`, nil, 400, invalid, "There was an error parsing the body of your request: it is not valid JSON"},
		{"not an object", `[1]`, nil, 400, invalid, "Input should be a valid dictionary or object to extract fields from"},
		{"anthropic-version missing", anthRequest(anthUser1), map[string]string{"Anthropic-Version": ""}, 400, invalid, "anthropic-version: header is required"},
		{"script has no such conversation", anthRequest(`{"role":"user","content":"Hello?"}`), nil, 500, "api_error", `fake model: no script for a conversation starting "Hello?"`},
	}
	srv := fakeapi.NewAnthropic(anthScript)
	defer srv.Close()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, h := anthPost(t, srv, tt.body, tt.header)
			if status != tt.status || body != anthErr(tt.typ, tt.msg) {
				t.Errorf("got %d %s\nwant %d %s", status, body, tt.status, anthErr(tt.typ, tt.msg))
			}
			if h.Get("Content-Type") != "application/json" || h.Get("X-Should-Retry") != "false" {
				t.Errorf("headers %v, want JSON and x-should-retry: false", h)
			}
		})
	}
}

func TestAnthropicAuth(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthScript, fakeapi.RequireKey("sk-test"))
	defer srv.Close()
	tests := []struct {
		name   string
		header map[string]string
		status int
		body   string
	}{
		{"no key", nil, 401, anthErr("authentication_error", "x-api-key header is required")},
		{"wrong key", map[string]string{"X-Api-Key": "sk-other"}, 401, anthErr("authentication_error", "invalid x-api-key")},
		{"x-api-key", map[string]string{"X-Api-Key": "sk-test"}, 200, ""},
		{"bearer", map[string]string{"Authorization": "Bearer sk-test"}, 200, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body, _ := anthPost(t, srv, anthRequest(anthUser1), tt.header)
			if status != tt.status || (tt.body != "" && body != tt.body) {
				t.Errorf("got %d %s, want %d %s", status, body, tt.status, tt.body)
			}
		})
	}

	// Without RequireKey any request passes: replays never reach it.
	open := fakeapi.NewAnthropic(anthScript)
	defer open.Close()
	if status, body, _ := anthPost(t, open, anthRequest(anthUser1), nil); status != 200 {
		t.Errorf("without RequireKey: %d %s", status, body)
	}
}

func TestAnthropicRoutes(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthScript)
	defer srv.Close()
	resp, err := srv.Client().Post(srv.URL+"/v1/complete", "application/json", strings.NewReader(anthRequest(anthUser1)))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 404 || string(body) != anthErr("not_found_error", "Not Found") {
		t.Errorf("unknown path: %d %s", resp.StatusCode, body)
	}
	resp, err = srv.Client().Get(srv.URL + "/v1/messages")
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 405 || string(body) != anthErr("invalid_request_error", "Method Not Allowed") {
		t.Errorf("GET: %d %s", resp.StatusCode, body)
	}
}

var (
	anthMsgID  = regexp.MustCompile(`^msg_01[0-9A-Za-z]{22}$`)
	anthToolID = regexp.MustCompile(`^toolu_01[0-9A-Za-z]{22}$`)
)

func TestAnthropicAnswerShape(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthScript)
	defer srv.Close()
	status, body, _ := anthPost(t, srv, anthRequest(anthUser1), nil)
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var m struct {
		ID      string `json:"id"`
		Content []struct {
			ID string `json:"id"`
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	if !anthMsgID.MatchString(m.ID) || len(m.Content) != 3 || !anthToolID.MatchString(m.Content[1].ID) || !anthToolID.MatchString(m.Content[2].ID) || m.Content[1].ID == m.Content[2].ID {
		t.Fatalf("ids: %s", body)
	}
	want := `{"id":"` + m.ID + `","type":"message","role":"assistant","model":"claude-test","content":[` +
		`{"type":"text","text":"Looking it up."},` +
		`{"type":"tool_use","id":"` + m.Content[1].ID + `","name":"lookup_order","input":{"order_id":"A-1"},"caller":{"type":"direct"}},` +
		`{"type":"tool_use","id":"` + m.Content[2].ID + `","name":"issue_refund","input":{"order_id":"A-1"},"caller":{"type":"direct"}}],` +
		`"stop_reason":"tool_use","stop_sequence":null,"stop_details":null,"container":null,"diagnostics":null,` +
		`"usage":{"input_tokens":23,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"output_tokens":19,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":null,"service_tier":"standard","inference_geo":null,"speed":"standard"}}`
	if body != want {
		t.Errorf("answer\n got %s\nwant %s", body, want)
	}

	// The next turn: end_turn, text only.
	next := anthRequest(anthUser1,
		`{"role":"assistant","content":[{"type":"text","text":"Looking it up."},{"type":"tool_use","id":"`+m.Content[1].ID+`","name":"lookup_order","input":{"order_id":"A-1"}},{"type":"tool_use","id":"`+m.Content[2].ID+`","name":"issue_refund","input":{"order_id":"A-1"}}]}`,
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"`+m.Content[1].ID+`","content":"gold"},{"type":"tool_result","tool_use_id":"`+m.Content[2].ID+`","content":[{"type":"text","text":"timeout"}],"is_error":true}]}`)
	status, body, _ = anthPost(t, srv, next, nil)
	if status != 200 || !strings.Contains(body, `"content":[{"type":"text","text":"Done: refunded."}],"stop_reason":"end_turn","stop_sequence":null`) {
		t.Errorf("turn 2: %d %s", status, body)
	}
}

func TestAnthropicIsDeterministic(t *testing.T) {
	a := fakeapi.NewAnthropic(anthScript)
	defer a.Close()
	b := fakeapi.NewAnthropic(anthScript)
	defer b.Close()
	req := `{"model":"claude-test","max_tokens":100,"system":"Be kind.","tools":[{"name":"lookup_order","input_schema":{"type":"object"}}],"messages":[` + anthUser1 + `]}`
	_, first, _ := anthPost(t, a, req, nil)
	for _, srv := range []*fakeapi.Server{a, b, a} {
		if _, again, _ := anthPost(t, srv, req, nil); again != first {
			t.Fatalf("answers differ:\n%s\n%s", first, again)
		}
	}
	// The same request with its keys in another order is the same request.
	reordered := `{"messages":[` + anthUser1 + `],"tools":[{"input_schema":{"type":"object"},"name":"lookup_order"}],"system":"Be kind.","max_tokens":100,"model":"claude-test"}`
	if _, again, _ := anthPost(t, b, reordered, nil); again != first {
		t.Errorf("reordered keys change the answer:\n%s\n%s", first, again)
	}
	// Another request gets another message id.
	_, other, _ := anthPost(t, a, strings.Replace(req, "Be kind.", "Be brief.", 1), nil)
	if other == first {
		t.Error("a different request got the same answer bytes (message ids should differ)")
	}
}

// anthRecorder is a Brain that keeps the conversations it was shown.
type anthRecorder struct {
	fakeapi.Brain
	mu    sync.Mutex
	convs []fakeapi.Conversation
}

func (r *anthRecorder) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	r.mu.Lock()
	r.convs = append(r.convs, c)
	r.mu.Unlock()
	return r.Brain.Next(c)
}

func TestAnthropicConversation(t *testing.T) {
	rec := &anthRecorder{Brain: fakeapi.Script{"Refund A-1": {{Text: "1"}, {Text: "2"}, {Text: "3"}}}}
	srv := fakeapi.NewAnthropic(rec)
	defer srv.Close()
	body := `{"model":"claude-test","max_tokens":100,"system":[{"type":"text","text":"Be kind."},{"type":"text","text":"Be brief."}],
	 "tools":[{"name":"lookup_order","description":"Find an order","input_schema":{"type":"object"}},{"name":"issue_refund","input_schema":{"type":"object"}}],
	 "messages":[` + anthUser1 + `,
	  {"role":"assistant","content":[{"type":"thinking","thinking":"hm","signature":"` + anthThinkingSig(t, srv, "hm") + `"},{"type":"text","text":"Let me "},{"type":"text","text":"look."},{"type":"tool_use","id":"toolu_1","name":"lookup_order","input":{"order_id":"A-1"}},{"type":"tool_use","id":"toolu_2","name":"issue_refund","input":{ "order_id" : "A-1" }}]},
	  {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"gold"},{"type":"tool_result","tool_use_id":"toolu_2","content":[{"type":"text","text":"timeout"}],"is_error":true},{"type":"text","text":"Hurry."}]}]}`
	status, resp, _ := anthPost(t, srv, body, nil)
	if status != 200 {
		t.Fatalf("%d %s", status, resp)
	}
	want := fakeapi.Conversation{
		Model:  "claude-test",
		System: "Be kind.\nBe brief.",
		Tools:  []string{"lookup_order", "issue_refund"},
		Messages: []fakeapi.Msg{
			{Role: "user", Text: "Refund A-1"},
			{Role: "assistant", Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{
				{ID: "toolu_1", Name: "lookup_order", Args: `{"order_id":"A-1"}`},
				{ID: "toolu_2", Name: "issue_refund", Args: `{"order_id":"A-1"}`},
			}},
			{Role: "tool", CallID: "toolu_1", Text: "gold"},
			{Role: "tool", CallID: "toolu_2", Text: "timeout", IsError: true},
			{Role: "user", Text: "Hurry."},
		},
	}
	got := rec.convs[len(rec.convs)-1]
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
	if got.Turns() != 1 || got.FirstUser() != "Refund A-1" {
		t.Errorf("Turns %d, FirstUser %q", got.Turns(), got.FirstUser())
	}
}

// thinkingSig gets the signature the server gives a thinking block, by
// asking it for one.
func anthThinkingSig(t *testing.T, _ *fakeapi.Server, thinking string) string {
	t.Helper()
	srv := fakeapi.NewAnthropic(fakeapi.Script{"think": {{Thinking: thinking, Text: "ok"}}})
	defer srv.Close()
	_, body, _ := anthPost(t, srv, anthRequest(`{"role":"user","content":"think"}`), nil)
	var m struct {
		Content []struct {
			Type, Thinking, Signature string
		}
	}
	if err := json.Unmarshal([]byte(body), &m); err != nil || len(m.Content) == 0 || m.Content[0].Type != "thinking" || m.Content[0].Thinking != thinking {
		t.Fatalf("no thinking block: %s", body)
	}
	return m.Content[0].Signature
}

func TestAnthropicThinkingRoundTrip(t *testing.T) {
	script := fakeapi.Script{"think": {{Thinking: "The user wants X.", Text: "Checking.", ToolCalls: []fakeapi.ToolCall{{ID: "toolu_a", Name: "t", Args: "{}"}}}, {Text: "Done."}}}
	srv := fakeapi.NewAnthropic(script)
	defer srv.Close()
	_, first, _ := anthPost(t, srv, anthRequest(`{"role":"user","content":"think"}`), nil)
	var m struct {
		Content    json.RawMessage `json:"content"`
		StopReason string          `json:"stop_reason"`
	}
	if err := json.Unmarshal([]byte(first), &m); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(m.Content), `[{"type":"thinking","thinking":"The user wants X.","signature":"`) || m.StopReason != "tool_use" {
		t.Fatalf("turn 1: %s", first)
	}
	result := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_a","content":"ok"}]}`
	// Sent back as it came: accepted.
	status, body, _ := anthPost(t, srv, anthRequest(`{"role":"user","content":"think"}`, `{"role":"assistant","content":`+string(m.Content)+`}`, result), nil)
	if status != 200 {
		t.Fatalf("verbatim thinking refused: %d %s", status, body)
	}
	// Edited: refused.
	edited := strings.Replace(string(m.Content), "wants X", "wants Y", 1)
	status, body, _ = anthPost(t, srv, anthRequest(`{"role":"user","content":"think"}`, `{"role":"assistant","content":`+edited+`}`, result), nil)
	if status != 400 || body != anthErr("invalid_request_error", "messages.1.content.0: Invalid `signature` in `thinking` block") {
		t.Errorf("edited thinking: %d %s", status, body)
	}
}

func TestAnthropicMaxTokensCut(t *testing.T) {
	script := fakeapi.Script{
		"long":  {{Text: strings.Repeat("word ", 40)}},
		"tools": {{Text: "ok", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-1"}`}}}},
		"given": {{Text: "short", OutputTokens: 50}},
	}
	srv := fakeapi.NewAnthropic(script)
	defer srv.Close()
	tests := []struct {
		input     string
		maxTokens string
		want      string
	}{
		{"long", "3", `"content":[{"type":"text","text":"word word wo"}],"stop_reason":"max_tokens","stop_sequence":null,"stop_details":null,"container":null,"diagnostics":null,"usage":{"input_tokens":21,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"output_tokens":3,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":null,"service_tier":"standard","inference_geo":null,"speed":"standard"}`},
		{"long", "100", `"stop_reason":"end_turn"`},
		{"tools", "2", `{"type":"text","text":"ok"},{"type":"tool_use",`},
		{"tools", "2", `"stop_reason":"max_tokens"`},
		{"given", "10", `"stop_reason":"max_tokens"`},
		{"given", "50", `"stop_reason":"end_turn","stop_sequence":null,"stop_details":null,"container":null,"diagnostics":null,"usage":{"input_tokens":22,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"output_tokens":50,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":null,"service_tier":"standard","inference_geo":null,"speed":"standard"}`},
	}
	for _, tt := range tests {
		body := `{"model":"claude-test","max_tokens":` + tt.maxTokens + `,"messages":[{"role":"user","content":"` + tt.input + `"}]}`
		status, got, _ := anthPost(t, srv, body, nil)
		if status != 200 || !strings.Contains(got, tt.want) {
			t.Errorf("%s with max_tokens %s: %d %s\nwant it to hold %s", tt.input, tt.maxTokens, status, got, tt.want)
		}
	}
}

func TestAnthropicBrainMistakes(t *testing.T) {
	srv := fakeapi.NewAnthropic(fakeapi.Script{"bad": {{ToolCalls: []fakeapi.ToolCall{{Name: "t", Args: `[1]`}}}}})
	defer srv.Close()
	status, body, h := anthPost(t, srv, anthRequest(`{"role":"user","content":"bad"}`), nil)
	if status != 500 || body != anthErr("api_error", "fake model: the arguments of tool call 0 (t) are not a JSON object: [1]") || h.Get("X-Should-Retry") != "false" {
		t.Errorf("%d %s %v", status, body, h)
	}
}

func TestAnthropicFaults(t *testing.T) {
	srv := fakeapi.NewAnthropic(anthScript)
	defer srv.Close()
	srv.Fail(fakeapi.Fault{Status: 529, Times: 2}, fakeapi.Fault{Status: 429, RetryAfter: "3"}, fakeapi.Fault{Drop: true})
	for i, want := range []struct {
		status int
		body   string
	}{
		{529, anthErr("overloaded_error", "injected fault 529")},
		{529, anthErr("overloaded_error", "injected fault 529")},
		{429, anthErr("rate_limit_error", "injected fault 429")},
	} {
		status, body, h := anthPost(t, srv, anthRequest(anthUser1), nil)
		if status != want.status || body != want.body {
			t.Errorf("request %d: %d %s, want %d %s", i, status, body, want.status, want.body)
		}
		if status == 429 && h.Get("Retry-After") != "3" {
			t.Errorf("Retry-After %q", h.Get("Retry-After"))
		}
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", strings.NewReader(anthRequest(anthUser1)))
	if _, err := srv.Client().Do(req); err == nil || !errors.Is(err, io.EOF) && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("dropped connection: err = %v", err)
	}
	if status, _, _ := anthPost(t, srv, anthRequest(anthUser1), nil); status != 200 {
		t.Errorf("after the faults: %d", status)
	}
	if srv.Requests() != 5 || srv.Conns() < 2 {
		t.Errorf("requests %d, conns %d", srv.Requests(), srv.Conns())
	}
}

func TestAnthropicConcurrentConversations(t *testing.T) {
	script := fakeapi.Script{}
	for _, c := range "abcdefgh" {
		script[string(c)] = []fakeapi.Turn{{Text: "answer " + string(c)}}
	}
	srv := fakeapi.NewAnthropic(script)
	defer srv.Close()
	var wg sync.WaitGroup
	for _, c := range "abcdefgh" {
		wg.Go(func() {
			for range 5 {
				_, body, _ := anthPost(t, srv, anthRequest(`{"role":"user","content":"`+string(c)+`"}`), nil)
				if !bytes.Contains([]byte(body), []byte(`"text":"answer `+string(c)+`"`)) {
					t.Errorf("%c: %s", c, body)
				}
			}
		})
	}
	wg.Wait()
}
