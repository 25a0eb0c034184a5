package fakeapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

const responsesTurn2 = `{"model":"gpt-test","instructions":"Be brief.","input":[
 {"type":"message","role":"user","content":[{"type":"input_text","text":"Refund A-991."}]},
 {"id":"rs_1","type":"reasoning","summary":[{"type":"summary_text","text":"The user wants a refund."}],"encrypted_content":"gAAAAB00"},
 {"id":"msg_1","type":"message","status":"completed","content":[{"type":"output_text","annotations":[],"logprobs":[],"text":"Looking it up."}],"role":"assistant"},
 {"id":"fc_1","type":"function_call","status":"completed","arguments":"{\"order_id\":\"A-991\"}","call_id":"call_1","name":"lookup_order"},
 {"type":"function_call","call_id":"call_2","name":"issue_refund","arguments":"{\"order_id\":\"A-991\"}"},
 {"type":"function_call_output","call_id":"call_1","output":"{\"tier\":\"gold\"}"},
 {"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"Error: timeout"}]}],
 "tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}},"required":["order_id"],"additionalProperties":false}},
          {"type":"function","name":"issue_refund","parameters":{"type":"object","properties":{}},"strict":false}],
 "store":false}`

func TestResponsesAnswers(t *testing.T) {
	brain := &oaiBrain{Script: oaiScript}
	s := fakeapi.NewOpenAIResponses(brain)
	defer s.Close()

	first := `{"model":"gpt-test","instructions":"Be brief.","input":"Refund A-991.","include":["reasoning.encrypted_content"],"store":false}`
	status, body1 := oaiPost(t, s, "/v1/responses", "", first)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body1)
	}
	if _, again := oaiPost(t, s, "/v1/responses", "", first); again != body1 {
		t.Errorf("the same request got different bytes:\n%s\n%s", body1, again)
	}
	oaiGolden(t, "responses_tool_calls.json", oaiIndent(t, body1))

	// Without the include, the reasoning item has no encrypted_content.
	_, plain := oaiPost(t, s, "/v1/responses", "", `{"model":"gpt-test","input":"Refund A-991."}`)
	var r struct {
		Output []map[string]any `json:"output"`
	}
	if err := json.Unmarshal([]byte(plain), &r); err != nil || len(r.Output) != 4 || r.Output[0]["type"] != "reasoning" {
		t.Fatalf("output %v (%v)", r.Output, err)
	}
	if _, ok := r.Output[0]["encrypted_content"]; ok {
		t.Errorf("encrypted_content without the include: %v", r.Output[0])
	}

	status, body2 := oaiPost(t, s, "/v1/responses", "", responsesTurn2)
	if status != 200 {
		t.Fatalf("status %d: %s", status, body2)
	}
	oaiGolden(t, "responses_text.json", oaiIndent(t, body2))

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
	if diff := cmp.Diff(want, brain.convs[len(brain.convs)-1]); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
}

func TestResponsesRejections(t *testing.T) {
	s := fakeapi.NewOpenAIResponses(oaiScript, fakeapi.RequireKey("sk-test-123456"))
	defer s.Close()
	user := `{"role":"user","content":"Refund A-991."}`
	call := `{"type":"function_call","call_id":"call_1","name":"f","arguments":"{}"}`
	out := `{"type":"function_call_output","call_id":"call_1","output":"ok"}`
	input := func(items ...string) string { return `{"model":"m","input":[` + strings.Join(items, ",") + `]}` }
	withTools := func(tools string) string { return `{"model":"m","input":"hi","tools":` + tools + `}` }
	itemTypes := "'additional_tools', 'agent_message', 'apply_patch_call', 'apply_patch_call_output', 'code_interpreter_call', 'compaction', 'compaction_trigger', 'computer_call', 'computer_call_output', 'custom_tool_call', 'custom_tool_call_output', 'file_search_call', 'function_call', 'function_call_output', 'image_generation_call', 'item_reference', 'local_shell_call', 'local_shell_call_output', 'mcp_approval_request', 'mcp_approval_response', 'mcp_call', 'mcp_list_tools', 'message', 'multi_agent_call', 'multi_agent_call_output', 'program', 'program_output', 'reasoning', 'shell_call', 'shell_call_output', 'tool_search_call', 'tool_search_output', and 'web_search_call'"

	tests := []struct {
		name, path, key, body string
		status                int
		want                  string
	}{
		{"no key", "/v1/responses", "", input(user), 401,
			oaiErr("You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys.", nil, nil)},
		{"path without /v1", "/responses", "sk-test-123456", input(user), 404,
			oaiErr("Invalid URL (POST /responses)", nil, nil)},
		{"missing model", "", "", `{"input":"hi"}`, 400,
			oaiErr("Missing required parameter: 'model'.", "model", "missing_required_parameter")},
		{"missing input", "", "", `{"model":"m"}`, 400,
			oaiErr("Missing required parameter: 'input'.", "input", "missing_required_parameter")},
		{"empty input", "", "", `{"model":"m","input":[]}`, 400,
			oaiErr(`One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`, nil, "missing_required_parameter")},
		{"messages instead of input", "", "", `{"model":"m","input":"hi","messages":[]}`, 400,
			oaiErr("Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create.", nil, "unsupported_parameter")},
		{"a Chat parameter", "", "", `{"model":"m","input":"hi","max_tokens":5}`, 400,
			oaiErr("Unknown parameter: 'max_tokens'.", "max_tokens", "unknown_parameter")},
		{"input of the wrong type", "", "", `{"model":"m","input":{"a":1}}`, 400,
			oaiErr("Invalid type for 'input': expected one of a string or array of input items, but got an object instead.", "input", "invalid_type")},
		{"unknown item type", "", "", input(`{"type":"tool_result"}`), 400,
			oaiErr("Invalid value: 'tool_result'. Supported values are: "+itemTypes+".", "input[0]", "invalid_value")},
		{"unknown role", "", "", input(`{"role":"tool","content":"x"}`), 400,
			oaiErr("Invalid value: 'tool'. Supported values are: 'assistant', 'system', 'developer', and 'user'.", "input[0]", "invalid_value")},
		{"message without content", "", "", input(`{"role":"user"}`), 400,
			oaiErr("Missing required parameter: 'input[0].content'.", "input[0].content", "missing_required_parameter")},
		{"assistant with input_text", "", "", input(user, `{"role":"assistant","content":[{"type":"input_text","text":"x"}]}`), 400,
			oaiErr("Invalid value: 'input_text'. Supported values are: 'output_text' and 'refusal'.", "input[1].content[0]", "invalid_value")},
		{"output without its call", "", "", input(user, out), 400,
			oaiErr("No tool call found for function call output with call_id call_1.", "input", nil)},
		{"call without its output", "", "", input(user, call), 400,
			oaiErr("No tool output found for function call call_1.", "input", nil)},
		{"arguments as an object", "", "", input(user, `{"type":"function_call","call_id":"call_1","name":"f","arguments":{}}`, out), 400,
			oaiErr("Invalid type for 'input[1].arguments': expected a string, but got an object instead.", "input[1].arguments", "invalid_type")},
		{"call without call_id", "", "", input(user, `{"type":"function_call","name":"f","arguments":"{}"}`), 400,
			oaiErr("Missing required parameter: 'input[1].call_id'.", "input[1].call_id", "missing_required_parameter")},
		{"reasoning by id with store false", "", "", `{"model":"m","store":false,"input":[` + user + `,{"id":"rs_1","type":"reasoning","summary":[]}]}`, 404,
			oaiErr("Item with id 'rs_1' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", "input", nil)},
		{"reasoning without what follows it", "", "", input(user, `{"id":"rs_1","type":"reasoning","summary":[]}`, `{"role":"user","content":"and?"}`), 400,
			oaiErr("Item 'rs_1' of type 'reasoning' was provided without its required following item.", "input", nil)},
		{"previous_response_id", "", "", `{"model":"m","input":"hi","previous_response_id":"resp_1"}`, 400,
			oaiErr("Previous response with id 'resp_1' not found.", "previous_response_id", "previous_response_not_found")},
		{"tool in the Chat shape", "", "", withTools(`[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]`), 400,
			oaiErr("Missing required parameter: 'tools[0].name'.", "tools[0].name", "missing_required_parameter")},
		{"tool without type", "", "", withTools(`[{}]`), 400,
			oaiErr("Missing required parameter: 'tools[0].type'.", "tools[0].type", "missing_required_parameter")},
		{"strict by default", "", "", withTools(`[{"type":"function","name":"f","parameters":{"type":"object","properties":{"a":{"type":"string"}}}}]`), 400,
			oaiErr("Invalid schema for function 'f': In context=(), 'additionalProperties' is required to be supplied and to be false.", "tools[0].parameters", "invalid_function_parameters")},
		{"strict needs every property required", "", "", withTools(`[{"type":"function","name":"f","strict":true,"parameters":{"type":"object","properties":{"a":{"type":"string"},"b":{}},"required":["a"],"additionalProperties":false}}]`), 400,
			oaiErr("Invalid schema for function 'f': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'b'.", "tools[0].parameters", "invalid_function_parameters")},
		{"include unknown", "", "", `{"model":"m","input":"hi","include":["reasoning.summary"]}`, 400,
			oaiErr("Invalid value: 'reasoning.summary'. Supported values are: 'file_search_call.results', 'web_search_call.results', 'web_search_call.action.sources', 'message.input_image.image_url', 'computer_call_output.output.image_url', 'code_interpreter_call.outputs', 'reasoning.encrypted_content', and 'message.output_text.logprobs'.", "include[0]", "invalid_value")},
		{"store not a boolean", "", "", `{"model":"m","input":"hi","store":"no"}`, 400,
			oaiErr("Invalid type for 'store': expected a boolean, but got a string instead.", "store", "invalid_type")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path, key := tt.path, tt.key
			if path == "" {
				path, key = "/v1/responses", "sk-test-123456"
			}
			status, body := oaiPost(t, s, path, key, tt.body)
			if status != tt.status || body != tt.want {
				t.Errorf("got %d %s\nwant %d %s", status, body, tt.status, tt.want)
			}
		})
	}
	// What the API accepts passes: a reasoning item carried by value, or by
	// id while store is on; a non-strict schema said so.
	for _, ok := range []string{
		`{"model":"m","store":false,"input":[` + user + `,{"id":"rs_1","type":"reasoning","summary":[],"encrypted_content":"gAAAAB00"},` + call + `,` + out + `]}`,
		`{"model":"m","input":[` + user + `,{"id":"rs_1","type":"reasoning","summary":[]},` + call + `,` + out + `]}`,
		withTools(`[{"type":"function","name":"f","strict":false,"parameters":{"type":"object","properties":{"a":{}}}}]`),
	} {
		if status, body := oaiPost(t, s, "/v1/responses", "sk-test-123456", ok); status != 200 && !strings.Contains(body, "fake_brain") {
			t.Errorf("valid request refused: %s\n%s", body, ok)
		}
	}
}

func TestResponsesFaults(t *testing.T) {
	s := fakeapi.NewOpenAIResponses(oaiScript)
	defer s.Close()
	s.Fail(fakeapi.Fault{Status: 503})
	body := `{"model":"m","input":"Refund A-991."}`
	status, got := oaiPost(t, s, "/v1/responses", "", body)
	if want := `{"error":{"message":"injected fault 503","type":"server_error","param":null,"code":null}}`; status != 503 || got != want {
		t.Errorf("%d %s, want 503 %s", status, got, want)
	}
	if status, _ := oaiPost(t, s, "/v1/responses", "", body); status != 200 {
		t.Errorf("after the fault: status %d", status)
	}
}
