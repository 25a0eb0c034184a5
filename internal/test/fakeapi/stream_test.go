package fakeapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// sseEvent is one parsed server-sent event.
type sseEvent struct {
	name string
	data string
}

// postRaw sends body to path and returns the status, headers and bytes.
func postRaw(t *testing.T, s *fakeapi.Server, path, body string, header map[string]string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
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
	return resp.StatusCode, resp.Header, data
}

// parseSSE reads a stream strictly in the shape the fakes promise: each
// event an optional "event: " line, one "data: " line, a blank line.
func parseSSE(t *testing.T, data []byte) []sseEvent {
	t.Helper()
	s := string(data)
	if !strings.HasSuffix(s, "\n\n") {
		t.Fatalf("the stream does not end with a blank line: %q", s[max(0, len(s)-40):])
	}
	var out []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		lines := strings.Split(block, "\n")
		var ev sseEvent
		if name, ok := strings.CutPrefix(lines[0], "event: "); ok {
			ev.name = name
			lines = lines[1:]
		}
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "data: ") {
			t.Fatalf("event %q is not one optional event: line and one data: line", block)
		}
		ev.data = strings.TrimPrefix(lines[0], "data: ")
		out = append(out, ev)
	}
	return out
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, s)
	}
	return m
}

// goldenBytes compares got with testdata/name, or rewrites it when
// UPDATE_GOLDEN is set.
func goldenBytes(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to write it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", path, diff)
	}
}

// streamScript: a turn with thinking, text with a multi-byte rune, and two
// tool calls.
var streamScript = fakeapi.Script{
	"Refund A-991.": {
		{Thinking: "The user wants a refund.", Text: "Looking it up — ok.", ToolCalls: []fakeapi.ToolCall{
			{Name: "lookup_order", Args: `{"order_id":"A-991"}`}, {Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
	},
}

func withStream(body, extra string) string {
	return strings.TrimSuffix(body, "}") + "," + extra + "}"
}

func TestChatStream(t *testing.T) {
	s := fakeapi.NewOpenAIChat(streamScript)
	defer s.Close()
	plain := `{"model":"gpt-test","messages":[{"role":"user","content":"Refund A-991."}],"tools":[{"type":"function","function":{"name":"lookup_order"}},{"type":"function","function":{"name":"issue_refund"}}]}`
	_, _, whole := postRaw(t, s, "/v1/chat/completions", plain, nil)
	want := decode(t, string(whole))["choices"].([]any)[0].(map[string]any)
	for _, usage := range []bool{false, true} {
		name, extra := "chat_stream.sse", `"stream":true`
		if usage {
			name, extra = "chat_stream_usage.sse", `"stream":true,"stream_options":{"include_usage":true}`
		}
		body := withStream(plain, extra)
		status, h, data := postRaw(t, s, "/v1/chat/completions", body, nil)
		if status != 200 || h.Get("Content-Type") != streamContentType {
			t.Fatalf("%d %s\n%s", status, h.Get("Content-Type"), data)
		}
		goldenBytes(t, name, data)
		if _, _, again := postRaw(t, s, "/v1/chat/completions", body, nil); !bytes.Equal(again, data) {
			t.Error("the same request streamed other bytes")
		}
		evs := parseSSE(t, data)
		if last := evs[len(evs)-1]; last != (sseEvent{data: "[DONE]"}) || !bytes.HasSuffix(data, []byte("\n\ndata: [DONE]\n\n")) {
			t.Errorf("the stream ends with %+v, want exactly data: [DONE]", last)
		}
		var text strings.Builder
		type call struct{ ID, Name, Args string }
		var calls []call
		var finish any
		for i, ev := range evs[:len(evs)-1] {
			if ev.name != "" {
				t.Errorf("chunk %d has an event: line", i)
			}
			c := decode(t, ev.data)
			if _, ok := c["error"]; ok {
				t.Errorf("chunk %d has a top-level error key", i)
			}
			if c["object"] != "chat.completion.chunk" {
				t.Errorf("chunk %d: object %v", i, c["object"])
			}
			u, hasUsage := c["usage"]
			lastJSON := i == len(evs)-2
			switch {
			case !usage && hasUsage:
				t.Errorf("chunk %d has usage though the request did not ask for it", i)
			case usage && !hasUsage:
				t.Errorf("chunk %d has no usage key", i)
			case usage && lastJSON:
				if len(c["choices"].([]any)) != 0 || u == nil {
					t.Errorf("the usage chunk: %s", ev.data)
				}
				wu := decode(t, string(whole))["usage"].(map[string]any)
				if m, _ := u.(map[string]any); m["completion_tokens"] != wu["completion_tokens"] || m["prompt_tokens"] == nil {
					t.Errorf("usage %v; the JSON answer's %v", u, wu)
				}
				continue
			case usage && u != nil:
				t.Errorf("chunk %d: usage %v, want null", i, u)
			}
			ch := c["choices"].([]any)[0].(map[string]any)
			d := ch["delta"].(map[string]any)
			if i == 0 && !cmp.Equal(d, map[string]any{"role": "assistant", "content": "", "refusal": nil}) {
				t.Errorf("first delta %v", d)
			}
			if s, ok := d["content"].(string); ok {
				text.WriteString(s)
			}
			for _, tc := range asList(d["tool_calls"]) {
				m := tc.(map[string]any)
				idx := int(m["index"].(float64))
				fn := m["function"].(map[string]any)
				if idx == len(calls) {
					if m["type"] != "function" || m["id"] == nil || fn["name"] == nil || fn["arguments"] != "" {
						t.Errorf("the first fragment of call %d: %v", idx, m)
					}
					calls = append(calls, call{ID: m["id"].(string), Name: fn["name"].(string)})
					continue
				}
				if len(m) != 2 || len(fn) != 1 {
					t.Errorf("a later fragment carries more than index and arguments: %v", m)
				}
				calls[idx].Args += fn["arguments"].(string)
			}
			if ch["finish_reason"] != nil {
				finish = ch["finish_reason"]
			}
		}
		msg := want["message"].(map[string]any)
		if text.String() != msg["content"] || finish != want["finish_reason"] {
			t.Errorf("streamed text %q, finish %v; the JSON answer %q, %v", text.String(), finish, msg["content"], want["finish_reason"])
		}
		for i, tc := range msg["tool_calls"].([]any) {
			fn := tc.(map[string]any)["function"].(map[string]any)
			if i >= len(calls) || calls[i].Name != fn["name"] || calls[i].Args != fn["arguments"] {
				t.Errorf("streamed calls %+v, the JSON answer's %v", calls, msg["tool_calls"])
			}
		}
	}
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func TestResponsesStream(t *testing.T) {
	s := fakeapi.NewOpenAIResponses(streamScript)
	defer s.Close()
	plain := `{"model":"gpt-test","input":"Refund A-991.","include":["reasoning.encrypted_content"],"store":false,"tools":[{"type":"function","name":"lookup_order","parameters":{},"strict":false},{"type":"function","name":"issue_refund","parameters":{},"strict":false}]}`
	_, _, whole := postRaw(t, s, "/v1/responses", plain, nil)
	body := withStream(plain, `"stream":true`)
	status, h, data := postRaw(t, s, "/v1/responses", body, nil)
	if status != 200 || h.Get("Content-Type") != streamContentType {
		t.Fatalf("%d %s\n%s", status, h.Get("Content-Type"), data)
	}
	goldenBytes(t, "responses_stream.sse", data)
	if _, _, again := postRaw(t, s, "/v1/responses", body, nil); !bytes.Equal(again, data) {
		t.Error("the same request streamed other bytes")
	}
	evs := parseSSE(t, data)
	var names []string
	var done []any
	texts := map[string]string{}
	for i, ev := range evs {
		d := decode(t, ev.data)
		if d["type"] != ev.name {
			t.Errorf("event %d: event: %s, data type %v", i, ev.name, d["type"])
		}
		if d["sequence_number"] != float64(i) {
			t.Errorf("event %d: sequence_number %v", i, d["sequence_number"])
		}
		if !strings.HasPrefix(ev.data, `{"type":"`+ev.name+`","sequence_number":`) {
			t.Errorf("event %d does not start with type and sequence_number: %s", i, ev.data)
		}
		names = append(names, ev.name)
		switch ev.name {
		case "response.output_item.done":
			done = append(done, d["item"])
		case "response.output_text.delta", "response.function_call_arguments.delta", "response.reasoning_summary_text.delta":
			texts[d["item_id"].(string)] += d["delta"].(string)
		case "response.output_text.done", "response.reasoning_summary_text.done":
			if texts[d["item_id"].(string)] != d["text"] {
				t.Errorf("%s: deltas give %q, done says %q", ev.name, texts[d["item_id"].(string)], d["text"])
			}
		case "response.function_call_arguments.done":
			if texts[d["item_id"].(string)] != d["arguments"] {
				t.Errorf("arguments: deltas give %q, done says %q", texts[d["item_id"].(string)], d["arguments"])
			}
		case "response.output_item.added":
			item := d["item"].(map[string]any)
			if item["type"] == "function_call" && (item["arguments"] != "" || item["call_id"] == nil || item["name"] == nil) {
				t.Errorf("function_call added: %v", item)
			}
		}
	}
	if names[0] != "response.created" || names[1] != "response.in_progress" || names[len(names)-1] != "response.completed" {
		t.Errorf("events %v", names)
	}
	created := decode(t, evs[0].data)["response"].(map[string]any)
	if created["status"] != "in_progress" || len(created["output"].([]any)) != 0 || created["usage"] != nil {
		t.Errorf("response.created: %s", evs[0].data)
	}
	final := decode(t, evs[len(evs)-1].data)["response"].(map[string]any)
	if !cmp.Equal(final["output"], done) {
		t.Errorf("response.completed's output differs from the items done")
	}
	w := decode(t, string(whole))
	for _, k := range []string{"id", "output", "usage"} {
		delete(w, k)
		delete(final, k)
	}
	if diff := cmp.Diff(w, final); diff != "" {
		t.Errorf("response.completed vs the JSON answer (ids, output and usage aside):\n%s", diff)
	}
	if len(done) != 4 {
		t.Errorf("%d items, want reasoning, message and two calls", len(done))
	}
}

func TestAnthropicStream(t *testing.T) {
	s := fakeapi.NewAnthropic(streamScript)
	defer s.Close()
	plain := `{"model":"claude-test","max_tokens":1000,"messages":[{"role":"user","content":"Refund A-991."}],"tools":[{"name":"lookup_order","input_schema":{"type":"object"}},{"name":"issue_refund","input_schema":{"type":"object"}}]}`
	hdr := map[string]string{"Anthropic-Version": "2023-06-01"}
	_, _, whole := postRaw(t, s, "/v1/messages", plain, hdr)
	body := withStream(plain, `"stream":true`)
	status, h, data := postRaw(t, s, "/v1/messages", body, hdr)
	if status != 200 || h.Get("Content-Type") != streamContentType {
		t.Fatalf("%d %s\n%s", status, h.Get("Content-Type"), data)
	}
	goldenBytes(t, "anthropic_stream.sse", data)
	if _, _, again := postRaw(t, s, "/v1/messages", body, hdr); !bytes.Equal(again, data) {
		t.Error("the same request streamed other bytes")
	}
	evs := parseSSE(t, data)
	var msg map[string]any
	var content []map[string]any
	partial := map[int]string{}
	for i, ev := range evs {
		d := decode(t, ev.data)
		if ev.name == "" || d["type"] != ev.name {
			t.Errorf("event %d: event: %q, data type %v", i, ev.name, d["type"])
		}
		switch ev.name {
		case "message_start":
			msg = d["message"].(map[string]any)
			if len(msg["content"].([]any)) != 0 || msg["stop_reason"] != nil {
				t.Errorf("message_start: %s", ev.data)
			}
		case "content_block_start":
			content = append(content, d["content_block"].(map[string]any))
		case "content_block_delta":
			k := int(d["index"].(float64))
			dl := d["delta"].(map[string]any)
			switch dl["type"] {
			case "text_delta":
				content[k]["text"] = content[k]["text"].(string) + dl["text"].(string)
			case "thinking_delta":
				content[k]["thinking"] = content[k]["thinking"].(string) + dl["thinking"].(string)
			case "signature_delta":
				content[k]["signature"] = dl["signature"]
			case "input_json_delta":
				partial[k] += dl["partial_json"].(string)
			}
		case "content_block_stop":
			k := int(d["index"].(float64))
			if p, ok := partial[k]; ok {
				content[k]["input"] = decode(t, p)
			}
		case "message_delta":
			msg["stop_reason"] = d["delta"].(map[string]any)["stop_reason"]
			msg["usage"].(map[string]any)["output_tokens"] = d["usage"].(map[string]any)["output_tokens"]
		}
	}
	if evs[0].name != "message_start" || evs[len(evs)-1].name != "message_stop" || evs[2].name != "ping" || evs[2].data != `{"type": "ping"}` {
		t.Errorf("events %v", evs)
	}
	w := decode(t, string(whole))
	var got []any
	for _, c := range content {
		got = append(got, c)
	}
	msg["content"] = got
	delete(w, "id")
	delete(msg, "id")
	delete(w, "usage")
	delete(msg, "usage")
	if diff := cmp.Diff(w, msg); diff != "" {
		t.Errorf("the message assembled from the stream vs the JSON answer (-json +stream):\n%s", diff)
	}
}

// streamContentType is the Content-Type of an event stream, as the real
// APIs send it.
const streamContentType = "text/event-stream; charset=utf-8"
