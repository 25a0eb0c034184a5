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
