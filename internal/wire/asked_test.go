package wire_test

import (
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// ReadRequest keeps what the model is shown: Chat's and the Responses'
// system and developer messages (the system prompt), each call's
// arguments, an Anthropic tool result's is_error; a run of Responses
// assistant items is one assistant turn, and Anthropic's text blocks of
// one answer are one text.
func TestReadRequestKeepsWhatTheModelIsShown(t *testing.T) {
	call := func(id, name, args string) []tool.Call { return []tool.Call{{ID: id, Name: name, Args: args}} }
	tests := []struct {
		api        wire.API
		path, body string
		system     string
		want       []model.Message
	}{
		{wire.OpenAIChat, "/v1/chat/completions", `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"developer","content":[{"type":"text","text":"No refunds."}]},
			{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]},
			{"role":"tool","tool_call_id":"c1","content":"ok"}]}`,
			"Be brief.\n\nNo refunds.", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, ToolCalls: call("c1", "f", `{"a":1}`)}, {Role: model.ToolRole, CallID: "c1", Text: "ok"}}},
		{wire.OpenAIResponses, "/v1/responses", `{"model":"m","instructions":"Be brief.","input":[{"role":"developer","content":"No refunds."},{"role":"user","content":"hi"},
			{"type":"reasoning","summary":[]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Looking."}]},
			{"type":"function_call","call_id":"c1","name":"f","arguments":"{\"a\":1}"},{"type":"function_call_output","call_id":"c1","output":"ok"}]}`,
			"Be brief.\n\nNo refunds.", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, Text: "Looking.", ToolCalls: call("c1", "f", `{"a":1}`)}, {Role: model.ToolRole, CallID: "c1", Text: "ok"}}},
		{wire.Anthropic, "/v1/messages", `{"model":"m","max_tokens":9,"messages":[{"role":"user","content":"hi"},
			{"role":"assistant","content":[{"type":"text","text":"Let me "},{"type":"text","text":"look."},{"type":"tool_use","id":"t1","name":"f","input":{"b":2,"a":1}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"timeout","is_error":true}]}]}`,
			"", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, Text: "Let me look.", ToolCalls: call("t1", "f", `{"a":1,"b":2}`)}, {Role: model.ToolRole, CallID: "t1", Text: "timeout", IsError: true}}},
		{wire.Gemini, "/v1beta/models/m:generateContent", `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"f","args":{"a":1}}}]},
			{"role":"user","parts":[{"functionResponse":{"name":"f","response":{"ok":true}}}]}]}`,
			"", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, ToolCalls: call("f", "f", `{"a":1}`)}, {Role: model.ToolRole, CallID: "f", Text: `{"ok":true}`}}},
		{wire.Ollama, "/api/chat", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"","tool_calls":[{"function":{"name":"f","arguments":{"a":1}}}]},
			{"role":"tool","tool_name":"f","content":"ok"}]}`,
			"", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, ToolCalls: call("f#1.0", "f", `{"a":1}`)}, {Role: model.ToolRole, CallID: "f#1.0", Text: "ok"}}},
		{wire.Bedrock, "/model/m/converse", `{"messages":[{"role":"user","content":[{"text":"hi"}]},{"role":"assistant","content":[{"toolUse":{"toolUseId":"u1","name":"f","input":{"a":1}}}]},
			{"role":"user","content":[{"toolResult":{"toolUseId":"u1","content":[{"text":"no"}],"status":"error"}}]}]}`,
			"", []model.Message{{Role: model.User, Text: "hi"}, {Role: model.Assistant, ToolCalls: call("u1", "f", `{"a":1}`)}, {Role: model.ToolRole, CallID: "u1", Text: "no", IsError: true}}},
	}
	for _, tt := range tests {
		req, err := wire.ReadRequest(tt.api, &url.URL{Path: tt.path}, []byte(tt.body))
		if err != nil {
			t.Fatalf("%s: %v", tt.api, err)
		}
		if req.System != tt.system {
			t.Errorf("%s: system %q, want %q", tt.api, req.System, tt.system)
		}
		if diff := cmp.Diff(tt.want, req.Messages); diff != "" {
			t.Errorf("%s: messages (-want +got):\n%s", tt.api, diff)
		}
	}
}
