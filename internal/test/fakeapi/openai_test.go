package fakeapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// Set UPDATE_GOLDEN=1 to rewrite the golden files.
var updateGolden = os.Getenv("UPDATE_GOLDEN") != ""

// post sends body to the server's path and returns the status and body.
func oaiPost(t *testing.T, s *fakeapi.Server, path, key, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(data)
}

// golden compares got with testdata/name, or rewrites it when UPDATE_GOLDEN is set.
func oaiGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden {
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

func oaiIndent(t *testing.T, s string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, []byte(s), "", "  "); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	return b.String() + "\n"
}

// oaiBrain answers from a Script and keeps the conversations it saw.
type oaiBrain struct {
	fakeapi.Script
	mu    sync.Mutex
	convs []fakeapi.Conversation
}

func (b *oaiBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	b.mu.Lock()
	b.convs = append(b.convs, c)
	b.mu.Unlock()
	return b.Script.Next(c)
}

var oaiScript = fakeapi.Script{
	"Refund A-991.": {
		{Text: "Looking it up.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}, {Name: "issue_refund", Args: `{"order_id":"A-991"}`}}, Thinking: "The user wants a refund."},
		{Text: "Done: refund issued."},
	},
}

// errBody is the API's error body.
func oaiErr(msg string, param, code any) string {
	type e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]e{"error": {msg, "invalid_request_error", param, code}})
	return strings.TrimSuffix(b.String(), "\n")
}

const chatTurn2 = `{"model":"gpt-test","messages":[
 {"role":"system","content":"Be brief."},
 {"role":"user","content":"Refund A-991."},
 {"role":"assistant","content":"Looking it up.","tool_calls":[
   {"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":\"A-991\"}"}},
   {"id":"call_2","type":"function","function":{"name":"issue_refund","arguments":"{\"order_id\":\"A-991\"}"}}]},
 {"role":"tool","tool_call_id":"call_1","content":"{\"tier\":\"gold\"}"},
 {"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"Error: timeout"}]}],
 "tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}}}},
          {"type":"function","function":{"name":"issue_refund"}}],
 "temperature":0}`

// The fake reads a valid request into a provider-neutral conversation and
// answers real-shaped, byte-identical objects for identical requests.
func TestChatAnswers(t *testing.T) {
	brain := &oaiBrain{Script: oaiScript}
	s := fakeapi.NewOpenAIChat(brain)
	defer s.Close()

	first := `{"model":"gpt-test","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"Refund A-991."}]}`
	status, body1 := oaiPost(t, s, "/v1/chat/completions", "", first)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body1)
	}
	_, again := oaiPost(t, s, "/v1/chat/completions", "", first)
	if again != body1 {
		t.Errorf("the same request got different bytes:\n%s\n%s", body1, again)
	}
	oaiGolden(t, "chat_tool_calls.json", oaiIndent(t, body1))

	status, body2 := oaiPost(t, s, "/v1/chat/completions", "", chatTurn2)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body2)
	}
	oaiGolden(t, "chat_text.json", oaiIndent(t, body2))

	want := fakeapi.Conversation{
		Model:  "gpt-test",
		System: "Be brief.",
		Messages: []fakeapi.Msg{
			{Role: "user", Text: "Refund A-991."},
			{Role: "assistant", Text: "Looking it up.", ToolCalls: []fakeapi.ToolCall{
				{ID: "call_1", Name: "lookup_order", Args: `{"order_id":"A-991"}`},
				{ID: "call_2", Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
			{Role: "tool", CallID: "call_1", Text: `{"tier":"gold"}`},
			{Role: "tool", CallID: "call_2", Text: "Error: timeout"},
		},
		Tools: []string{"lookup_order", "issue_refund"},
	}
	if diff := cmp.Diff(want, brain.convs[2]); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
	if s.Requests() != 3 {
		t.Errorf("%d requests counted, want 3", s.Requests())
	}
}

// Every rejection has the real status and body.
func TestChatRejections(t *testing.T) {
	s := fakeapi.NewOpenAIChat(oaiScript, fakeapi.RequireKey("sk-test-123456"))
	defer s.Close()
	user := `{"role":"user","content":"Refund A-991."}`
	asst := `{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"call_2","type":"function","function":{"name":"f","arguments":"{}"}}]}`
	tool1 := `{"role":"tool","tool_call_id":"call_1","content":"ok"}`
	tool2 := `{"role":"tool","tool_call_id":"call_2","content":"ok"}`
	msgs := func(ms ...string) string { return `{"model":"m","messages":[` + strings.Join(ms, ",") + `]}` }
	withTools := func(tools string) string { return `{"model":"m","messages":[` + user + `],"tools":` + tools + `}` }
	const tooLong = "call_012345678901234567890123456789012345"

	tests := []struct {
		name, path, key, body string
		status                int
		want                  string
	}{
		{"no key", "/v1/chat/completions", "", msgs(user), 401,
			oaiErr("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.", nil, nil)},
		{"wrong key", "/v1/chat/completions", "sk-wrong-987654", msgs(user), 401,
			oaiErr("Incorrect API key provided: sk-********7654. You can find your API key at https://platform.openai.com/account/api-keys.", nil, "invalid_api_key")},
		{"path without /v1", "/chat/completions", "sk-test-123456", msgs(user), 404,
			oaiErr("Invalid URL (POST /chat/completions)", nil, nil)},
		{"not JSON", "/v1/chat/completions", "sk-test-123456", `{"model":`, 400,
			oaiErr("We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)", nil, nil)},
		{"missing model", "", "", `{"messages":[` + user + `]}`, 400,
			oaiErr("you must provide a model parameter", nil, nil)},
		{"missing messages", "", "", `{"model":"m"}`, 400,
			oaiErr("Missing required parameter: 'messages'.", "messages", "missing_required_parameter")},
		{"empty messages", "", "", `{"model":"m","messages":[]}`, 400,
			oaiErr("Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages", "empty_array")},
		{"unknown parameter", "", "", `{"model":"m","messages":[` + user + `],"max_token":5}`, 400,
			oaiErr("Unknown parameter: 'max_token'.", "max_token", "unknown_parameter")},
		{"unknown role", "", "", msgs(`{"role":"bot","content":"x"}`), 400,
			oaiErr("Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.", "messages[0].role", "invalid_value")},
		{"no role", "", "", msgs(`{"content":"x"}`), 400,
			oaiErr("Missing required parameter: 'messages[0].role'.", "messages[0].role", "missing_required_parameter")},
		{"content not text", "", "", msgs(`{"role":"user","content":7}`), 400,
			oaiErr("Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.", "messages[0].content", "invalid_type")},
		{"tool without tool_calls", "", "", msgs(user, tool1), 400,
			oaiErr("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", "messages.[1].role", nil)},
		{"tool answering another id", "", "", msgs(user, asst, `{"role":"tool","tool_call_id":"call_9","content":"ok"}`), 400,
			oaiErr("Invalid parameter: 'tool_call_id' of 'call_9' not found in 'tool_calls' of previous message.", "messages.[2].tool_call_id", nil)},
		{"unanswered tool call", "", "", msgs(user, asst, tool1, `{"role":"user","content":"and?"}`), 400,
			oaiErr("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_2", "messages.[3].role", nil)},
		{"unanswered at the end", "", "", msgs(user, asst), 400,
			oaiErr("An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1, call_2", "messages", nil)},
		{"arguments as an object", "", "", msgs(user, `{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":"f","arguments":{}}}]}`, tool1), 400,
			oaiErr("Invalid type for 'messages[1].tool_calls[0].function.arguments': expected a string, but got an object instead.", "messages[1].tool_calls[0].function.arguments", "invalid_type")},
		{"tool call without type", "", "", msgs(user, `{"role":"assistant","tool_calls":[{"id":"call_1","function":{"name":"f","arguments":"{}"}}]}`, tool1), 400,
			oaiErr("Missing required parameter: 'messages[1].tool_calls[0].type'.", "messages[1].tool_calls[0].type", "missing_required_parameter")},
		{"tool call id too long", "", "", msgs(user, `{"role":"assistant","tool_calls":[{"id":"`+tooLong+`","type":"function","function":{"name":"f","arguments":"{}"}}]}`), 400,
			oaiErr("Invalid 'messages[1].tool_calls[0].id': string too long. Expected a string with maximum length 40, but got a string with length 41 instead.", "messages[1].tool_calls[0].id", "string_above_max_length")},
		{"empty tool_calls", "", "", msgs(user, `{"role":"assistant","content":"hi","tool_calls":[]}`), 400,
			oaiErr("Invalid 'messages[1].tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.", "messages[1].tool_calls", "empty_array")},
		{"assistant without content", "", "", msgs(user, `{"role":"assistant"}`), 400,
			oaiErr("Invalid value for 'content': expected a string, got null.", "messages.[1].content", nil)},
		{"tool without function", "", "", withTools(`[{"type":"function"}]`), 400,
			oaiErr("Missing required parameter: 'tools[0].function'.", "tools[0].function", "missing_required_parameter")},
		{"tool without name", "", "", withTools(`[{"type":"function","function":{"parameters":{}}}]`), 400,
			oaiErr("Missing required parameter: 'tools[0].function.name'.", "tools[0].function.name", "missing_required_parameter")},
		{"tool in the Responses shape", "", "", withTools(`[{"type":"function","name":"f","parameters":{}}]`), 400,
			oaiErr("Missing required parameter: 'tools[0].function'.", "tools[0].function", "missing_required_parameter")},
		{"tool name with a dot", "", "", withTools(`[{"type":"function","function":{"name":"orders.lookup"}}]`), 400,
			oaiErr("Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", "tools[0].function.name", "invalid_value")},
		{"parameters not an object", "", "", withTools(`[{"type":"function","function":{"name":"f","parameters":"x"}}]`), 400,
			oaiErr("Invalid type for 'tools[0].function.parameters': expected an object, but got a string instead.", "tools[0].function.parameters", "invalid_type")},
		{"parameters without type object", "", "", withTools(`[{"type":"function","function":{"name":"f","parameters":{"properties":{}}}}]`), 400,
			oaiErr(`Invalid schema for function 'f': schema must be a JSON Schema of 'type: "object"', got 'type: "None"'.`, "tools[0].function.parameters", "invalid_function_parameters")},
		{"stream not a boolean", "", "", `{"model":"m","messages":[` + user + `],"stream":"yes"}`, 400,
			oaiErr("Invalid type for 'stream': expected a boolean, but got a string instead.", "stream", "invalid_type")},
		{"stream_options without stream", "", "", `{"model":"m","messages":[` + user + `],"stream_options":{"include_usage":true}}`, 400,
			oaiErr("The 'stream_options' parameter is only allowed when 'stream' is enabled.", "stream_options", "invalid_value")},
		{"stream_options unknown", "", "", `{"model":"m","messages":[` + user + `],"stream":true,"stream_options":{"usage":true}}`, 400,
			oaiErr("Unknown parameter: 'stream_options.usage'.", "stream_options.usage", "unknown_parameter")},
		{"no script", "", "", msgs(`{"role":"user","content":"unknown"}`), 400,
			oaiErr(`fake server: the brain has no turn for this conversation: no script for a conversation starting "unknown"`, nil, "fake_brain")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, key := tt.path, tt.key
			if path == "" {
				path, key = "/v1/chat/completions", "sk-test-123456"
			}
			status, body := oaiPost(t, s, path, key, tt.body)
			if status != tt.status || body != tt.want {
				t.Errorf("got %d %s\nwant %d %s", status, body, tt.status, tt.want)
			}
		})
	}
	// The valid variants of the same messages pass.
	for _, ok := range []string{msgs(user, asst, tool1, tool2), msgs(user, asst, tool2, tool1, `{"role":"user","content":"and?"}`)} {
		if status, body := oaiPost(t, s, "/v1/chat/completions", "sk-test-123456", ok); status == 400 && !strings.Contains(body, "fake_brain") {
			t.Errorf("valid request refused: %s\n%s", body, ok)
		}
	}
}

// Injected faults answer in OpenAI's error shape, for as many requests as
// asked, and are counted.
func TestChatFaults(t *testing.T) {
	s := fakeapi.NewOpenAIChat(oaiScript)
	defer s.Close()
	s.Fail(fakeapi.Fault{Status: 429, RetryAfter: "3", Times: 2}, fakeapi.Fault{Status: 500})
	body := `{"model":"m","messages":[{"role":"user","content":"Refund A-991."}]}`
	want := []struct {
		status int
		body   string
	}{
		{429, `{"error":{"message":"injected fault 429","type":"rate_limit_exceeded","param":null,"code":null}}`},
		{429, `{"error":{"message":"injected fault 429","type":"rate_limit_exceeded","param":null,"code":null}}`},
		{500, `{"error":{"message":"injected fault 500","type":"server_error","param":null,"code":null}}`},
	}
	for i, w := range want {
		status, got := oaiPost(t, s, "/v1/chat/completions", "", body)
		if status != w.status || got != w.body {
			t.Errorf("request %d: %d %s, want %d %s", i+1, status, got, w.status, w.body)
		}
	}
	if status, _ := oaiPost(t, s, "/v1/chat/completions", "", body); status != 200 {
		t.Errorf("after the faults: status %d, want 200", status)
	}
	if s.Requests() != 4 {
		t.Errorf("%d requests, want 4", s.Requests())
	}
}
