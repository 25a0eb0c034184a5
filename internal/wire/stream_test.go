package wire

import (
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

func sse(events ...string) []byte { return []byte(strings.Join(events, "")) }

// TestFoldChat: two parallel calls whose arguments come in pieces, text in
// pieces, the usage chunk; the folded answer reads as the unstreamed one.
func TestFoldChat(t *testing.T) {
	data := sse(
		"data: {\"id\":\"c1\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Let me \"}}]}\n\n",
		": keep-alive\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"look.\"}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":\"function\",\"function\":{\"name\":\"lookup\",\"arguments\":\"\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"{\\\"id\\\":\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_b\",\"type\":\"function\",\"function\":{\"name\":\"coupon\",\"arguments\":\"{}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"\\\"A-1\\\"}\"}}]}}]}\n\n",
		"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
		"data: {\"choices\":[],\"usage\":{\"prompt_tokens\":12,\"completion_tokens\":5,\"total_tokens\":17}}\n\n",
		"data: [DONE]\n\n",
	)
	folded, err := foldChat(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseChat("openai", folded, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{Text: "Let me look.", ToolCalls: []tool.Call{{ID: "call_a", Name: "lookup", Args: `{"id":"A-1"}`}, {ID: "call_b", Name: "coupon", Args: "{}"}}, Usage: model.Usage{InputTokens: 12, OutputTokens: 5}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("folded answer (-want +got):\n%s", diff)
	}
}

// TestFoldChatLenient: chunks of a compatible server that carry what the
// fold does not read (id, created, model, service_tier, fingerprint, role,
// a call's type) in other types fold as the unstreamed answer reads.
func TestFoldChatLenient(t *testing.T) {
	data := sse(
		"data: {\"id\":7,\"object\":null,\"created\":1733000000.25,\"model\":[\"m\"],\"service_tier\":1,\"system_fingerprint\":false,\"choices\":[{\"index\":0,\"logprobs\":{},\"delta\":{\"role\":1,\"content\":\"ok\"},\"finish_reason\":null}]}\n\n",
		"data: {\"id\":7,\"created\":1733000000.25,\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_a\",\"type\":2,\"function\":{\"name\":\"lookup\",\"arguments\":\"{}\"}}]}}]}\n\n",
		"data: {\"id\":7,\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":1,\"total_tokens\":\"4\"}}\n\n",
		"data: [DONE]\n\n",
	)
	folded, err := foldChat(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseChat("openai-compatible", folded, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := &model.Response{Text: "ok", ToolCalls: []tool.Call{{ID: "call_a", Name: "lookup", Args: "{}"}}, Usage: model.Usage{InputTokens: 3, OutputTokens: 1}}
	if diff := cmp.Diff(want, r); diff != "" {
		t.Errorf("folded answer (-want +got):\n%s", diff)
	}
}

// TestFoldAnthropic: thinking with its signature, text, a tool_use whose
// input comes in pieces; message_delta's stop reason and usage.
func TestFoldAnthropic(t *testing.T) {
	data := sse(
		"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"model\":\"claude-test\",\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":20,\"output_tokens\":1}}}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Look it up.\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"sig==\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
		"event: ping\ndata: {\"type\":\"ping\"}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Let me \"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"look.\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"lookup\",\"input\":{}}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"id\\\": \"}}\n\n",
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"A-1\\\"}\"}}\n\n",
		"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":15}}\n\n",
		"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
	)
	folded, err := foldAnthropic(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseAnthropic(folded, 100)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "Let me look." || len(r.ToolCalls) != 1 || r.ToolCalls[0].ID != "toolu_1" || r.ToolCalls[0].Args != `{"id":"A-1"}` || r.Usage != (model.Usage{InputTokens: 20, OutputTokens: 15}) {
		t.Errorf("folded answer: %+v", r)
	}
	// The thinking block goes back on the next call with its signature.
	if !strings.Contains(string(r.Raw), `"signature":"sig=="`) || !strings.Contains(string(r.Raw), `"thinking":"Look it up."`) {
		t.Errorf("Raw keeps no thinking block: %s", r.Raw)
	}
}

// TestFoldResponses: the terminal event's response is the answer.
func TestFoldResponses(t *testing.T) {
	data := sse(
		"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
		"event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"hi\"}\n\n",
		"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_1\",\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"hi\"}]}],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n",
	)
	folded, err := foldResponses(data)
	if err != nil {
		t.Fatal(err)
	}
	r, err := parseResponses(folded, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Text != "hi" || r.Usage != (model.Usage{InputTokens: 3, OutputTokens: 1}) {
		t.Errorf("folded answer: %+v", r)
	}
}

// TestFoldCutAndErrors: a stream cut before its last event is a dropped
// connection (tried again); an error event is that error.
func TestFoldCutAndErrors(t *testing.T) {
	cut := map[string]func([]byte) ([]byte, error){
		"chat":      foldChat,
		"anthropic": foldAnthropic,
		"responses": foldResponses,
		"gemini":    foldGemini,
	}
	for name, fold := range cut {
		_, err := fold(sse("data: {\"type\":\"message_start\",\"message\":{},\"choices\":[]}\n\n"))
		if !errors.Is(err, io.ErrUnexpectedEOF) || !retryable(err) {
			t.Errorf("%s: a cut stream gives %v, want a retryable unexpected EOF", name, err)
		}
	}
	errs := []struct {
		name string
		fold func([]byte) ([]byte, error)
		data string
		want string
	}{
		{"chat", foldChat, "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\"}}\n\n", "the answer's stream carries an error: server_error: The server had an error"},
		{"anthropic", foldAnthropic, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n", "the answer's stream carries an error: overloaded_error: Overloaded"},
		{"responses", foldResponses, "event: error\ndata: {\"type\":\"error\",\"code\":\"server_error\",\"message\":\"boom\"}\n\n", "the answer's stream carries an error"},
		{"chat, not JSON", foldChat, "data: {nope\n\n", "a chunk of the stream is not JSON"},
		{"anthropic, block never started", foldAnthropic, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", "content block 3, which was never started"},
		{"gemini", foldGemini, "data: {\"error\":{\"code\":503,\"message\":\"The model is overloaded.\",\"status\":\"UNAVAILABLE\"}}\r\n\r\n", "the answer's stream carries an error: UNAVAILABLE: The model is overloaded."},
		{"gemini, not JSON", foldGemini, "data: [1,\r\n\r\n", "a chunk of the stream is not JSON"},
		{"chat, call never started", foldChat, "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":2}]}}]}\n\n", "continues tool call 2, which was never started"},
	}
	for _, tt := range errs {
		_, err := tt.fold([]byte(tt.data))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && retryable(err) {
			t.Errorf("%s: %v is retried", tt.name, err)
		}
	}
}

func FuzzFoldStreams(f *testing.F) {
	f.Add([]byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"))
	f.Add([]byte("event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"))
	f.Add([]byte("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"STOP\"}]}\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fold := range []func([]byte) ([]byte, error){foldChat, foldAnthropic, foldResponses, foldGemini} {
			fold(data)
		}
	})
}

// One reader takes every API's error body: its type and message as
// each API's own shape gives them.
func TestErrorOfEveryAPI(t *testing.T) {
	for _, tt := range []struct{ body, typ, msg string }{
		{`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, "overloaded_error", "Overloaded"},
		{`{"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}}`, "UNAVAILABLE", "The model is overloaded."},
		{`{"error":{"code":429,"message":"Resource has been exhausted."}}`, "(429)", "Resource has been exhausted."},
		{`{"error":"model 'llama9' not found"}`, "", "model 'llama9' not found"},
		{`{"message":"Too many requests, please wait before trying again."}`, "", "Too many requests, please wait before trying again."},
		{`{"Message":"The security token included in the request is invalid."}`, "", "The security token included in the request is invalid."},
		{`{"error":{}}`, "", ""},
	} {
		if typ, msg := errorOf([]byte(tt.body)); typ != tt.typ || msg != tt.msg {
			t.Errorf("errorOf(%s) = %q, %q; want %q, %q", tt.body, typ, msg, tt.typ, tt.msg)
		}
	}
}
