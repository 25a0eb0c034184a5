package fakeapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// The answers keep to the APIs' own definitions where the fakes once did
// not: Chat's system_fingerprint is a string (never null) in answers and
// chunks; a Response carries the fields its schema requires, echoing the
// request's tools, tool_choice, temperature, top_p and metadata (with the
// API's defaults), and usage.input_tokens_details.cache_write_tokens.
// The conformance tests (internal/test/conformance) check every field
// against the official types; this pins the ones that were wrong.
func TestAnswersKeepToTheSpec(t *testing.T) {
	t.Run("chat", func(t *testing.T) {
		s := fakeapi.NewOpenAIChat(streamScript)
		defer s.Close()
		plain := `{"model":"gpt-test","messages":[{"role":"user","content":"Refund A-991."}]}`
		_, _, whole := postRaw(t, s, "/v1/chat/completions", plain, nil)
		bodies := []string{string(whole)}
		_, _, stream := postRaw(t, s, "/v1/chat/completions", withStream(plain, `"stream":true,"stream_options":{"include_usage":true}`), nil)
		for _, ev := range parseSSE(t, stream) {
			if ev.data != "[DONE]" {
				bodies = append(bodies, ev.data)
			}
		}
		for _, b := range bodies {
			fp, ok := decode(t, b)["system_fingerprint"]
			if _, isString := fp.(string); ok && !isString {
				t.Errorf("system_fingerprint is %v, not a string, in %s", fp, b)
			}
		}
	})
	t.Run("responses", func(t *testing.T) {
		s := fakeapi.NewOpenAIResponses(streamScript)
		defer s.Close()
		tools := `"tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object","properties":{}},"strict":false}]`
		for _, tt := range []struct {
			name, body string
			want       map[string]any
		}{
			{"defaults", `{"model":"gpt-test","input":"Refund A-991."}`,
				map[string]any{"tools": []any{}, "tool_choice": "auto", "temperature": 1.0, "top_p": 1.0, "metadata": map[string]any{}}},
			{"echoed", `{"model":"gpt-test","input":"Refund A-991.",` + tools + `,"tool_choice":"required","temperature":0,"top_p":0.5,"metadata":{"k":"v"}}`,
				map[string]any{"tool_choice": "required", "temperature": 0.0, "top_p": 0.5, "metadata": map[string]any{"k": "v"}}},
		} {
			_, _, whole := postRaw(t, s, "/v1/responses", tt.body, nil)
			objects := []map[string]any{decode(t, string(whole))}
			_, _, stream := postRaw(t, s, "/v1/responses", withStream(tt.body, `"stream":true`), nil)
			for _, ev := range parseSSE(t, stream) {
				if strings.HasPrefix(ev.name, "response.") {
					if r, ok := decode(t, ev.data)["response"].(map[string]any); ok {
						objects = append(objects, r)
					}
				}
			}
			if len(objects) < 3 {
				t.Fatalf("%s: %d response objects in the answer and the stream", tt.name, len(objects))
			}
			for i, r := range objects {
				for k, want := range tt.want {
					if got, _ := json.Marshal(r[k]); string(got) != string(mustJSON(want)) {
						t.Errorf("%s, object %d: %s = %s, want %s", tt.name, i, k, got, mustJSON(want))
					}
				}
				if _, ok := r["tools"].([]any); !ok {
					t.Errorf("%s, object %d: tools %v", tt.name, i, r["tools"])
				}
			}
			usage, _ := objects[0]["usage"].(map[string]any)
			details, _ := usage["input_tokens_details"].(map[string]any)
			if _, ok := details["cache_write_tokens"]; !ok {
				t.Errorf("%s: no usage.input_tokens_details.cache_write_tokens: %v", tt.name, usage)
			}
		}
	})
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
