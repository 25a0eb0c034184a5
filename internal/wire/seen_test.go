package wire

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Every API's answer, streamed or not (a Gemini stream as SSE or as one
// JSON array), shows its tool calls in their order with their own ids
// (Response), and every API's request the results sent back
// (model.SeenOf): what a case's transcript reads off the wire.
func TestSeenOnTheWire(t *testing.T) {
	calls := []tool.Call{{ID: "call_1_1", Name: "search_docs", Args: `{"q":"refunds"}`}, {ID: "call_b", Name: "mcp__dryfire__lookup_order", Args: `{"order_id":"A-1"}`}}
	requests := map[API]string{
		OpenAIChat: `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"call_0","type":"function","function":{"name":"Write","arguments":"{}"}}]},
			{"role":"tool","tool_call_id":"call_0","content":"written"}]}`,
		OpenAIResponses: `{"model":"m","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"call_0","name":"Write","arguments":"{}"},
			{"type":"function_call_output","call_id":"call_0","output":"written"}]}`,
		Anthropic: `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call_0","name":"Write","input":{}}]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_0","content":"written"}]}]}`,
		Gemini: `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"id":"call_0","name":"Write","args":{}}}]},
			{"role":"user","parts":[{"functionResponse":{"id":"call_0","name":"Write","response":{"result":"written"}}}]}]}`,
	}
	for _, api := range []API{OpenAIChat, OpenAIResponses, Anthropic, Gemini} {
		for _, mode := range []string{"json", "stream", "array"} {
			if mode == "array" && api != Gemini {
				continue
			}
			t.Run(fmt.Sprintf("%s %s", api, mode), func(t *testing.T) {
				body, events := api.Reply(&Reply{ID: "x", Model: "m", Text: "Looking.", Calls: calls, Stream: mode != "json", Array: mode == "array", Usage: model.Usage{InputTokens: 1, OutputTokens: 1}})
				a := &model.Answer{Status: 200, Body: body, Events: events, Streamed: events != nil}
				resp, err := api.Response(a)
				if err != nil {
					t.Fatal(err)
				}
				path := "/v1/x"
				if api == Gemini {
					path = "/v1beta/models/m:generateContent"
				}
				req, err := api.Request(&model.Call{HTTP: httptest.NewRequest("POST", path, nil), Body: []byte(requests[api])})
				if err != nil {
					t.Fatal(err)
				}
				got, results := model.SeenOf(req, resp)
				if diff := cmp.Diff(calls, got); diff != "" {
					t.Errorf("calls (-want +got):\n%s", diff)
				}
				if len(results) != 1 || results[0].CallID != "call_0" || !strings.Contains(results[0].Text, "written") {
					t.Errorf("results %+v", results)
				}
			})
		}
	}
}

// Every API's request shows the tools it offers, each with its
// description and input schema (what agent.offered_tools compares with
// the suite's declarations); an entry that is not a tool is skipped, not
// a panic.
func TestOfferedOnTheWire(t *testing.T) {
	schema := `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`
	for _, tt := range []struct {
		api        API
		path, body string
	}{
		{OpenAIChat, "/v1/chat/completions", `{"messages":[],"tools":[1,{"type":"function","function":{"name":"lookup","description":"Look up.","parameters":` + schema + `}}]}`},
		{OpenAIResponses, "/v1/responses", `{"input":"hi","tools":[1,{"type":"function","name":"lookup","description":"Look up.","parameters":` + schema + `}]}`},
		{Anthropic, "/v1/messages", `{"messages":[],"tools":[1,{"name":"lookup","description":"Look up.","input_schema":` + schema + `}]}`},
		{Gemini, "/v1beta/models/m:generateContent", `{"contents":[],"tools":[1,{"functionDeclarations":[1,{"name":"lookup","description":"Look up.","parametersJsonSchema":` + schema + `}]}]}`},
		{Ollama, "/api/chat", `{"model":"m","messages":[],"tools":[1,{"type":"function","function":{"name":"lookup","description":"Look up.","parameters":` + schema + `}}]}`},
		{Bedrock, "/model/m/converse", `{"messages":[],"toolConfig":{"tools":[1,{"toolSpec":{"name":"lookup","description":"Look up.","inputSchema":{"json":` + schema + `}}}]}}`},
	} {
		t.Run(string(tt.api), func(t *testing.T) {
			req, err := tt.api.Request(&model.Call{HTTP: httptest.NewRequest("POST", tt.path, nil), Body: []byte(tt.body)})
			if err != nil {
				t.Fatal(err)
			}
			if len(req.Tools) != 1 {
				t.Fatalf("tools %+v, want lookup alone", req.Tools)
			}
			d := req.Tools[0]
			if got := fmt.Sprintf("%s %q %v", d.Name, d.Description, d.InputSchema); got != `lookup "Look up." map[properties:map[id:map[type:string]] required:[id] type:object]` {
				t.Errorf("read %s", got)
			}
		})
	}
}
