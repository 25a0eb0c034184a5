package wire

import "encoding/json"

// Wire shapes of a message and its stream events, in the API's key order;
// a message as written and as read (parseAnthropic).
type (
	anthMessage struct {
		ID           string          `json:"id"`
		Type         string          `json:"type"`
		Role         string          `json:"role"`
		Model        string          `json:"model"`
		Content      json.RawMessage `json:"content"`
		StopReason   *string         `json:"stop_reason"`
		StopSequence *string         `json:"stop_sequence"`
		StopDetails  any             `json:"stop_details"`
		Container    any             `json:"container"`
		Diagnostics  any             `json:"diagnostics"`
		Usage        anthUsage       `json:"usage"`
		Error        *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error,omitempty"` // read, never written
	}
	anthUsage struct {
		InputTokens              int               `json:"input_tokens"`
		CacheCreationInputTokens int               `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int               `json:"cache_read_input_tokens"`
		CacheCreation            anthCacheCreation `json:"cache_creation"`
		OutputTokens             int               `json:"output_tokens"`
		OutputTokensDetails      anthOutputDetails `json:"output_tokens_details"`
		ServerToolUse            any               `json:"server_tool_use"`
		ServiceTier              string            `json:"service_tier"`
		InferenceGeo             any               `json:"inference_geo"`
		Speed                    string            `json:"speed"`
	}
	anthCacheCreation struct {
		Ephemeral1h int `json:"ephemeral_1h_input_tokens"`
		Ephemeral5m int `json:"ephemeral_5m_input_tokens"`
	}
	anthOutputDetails struct {
		ThinkingTokens int `json:"thinking_tokens"`
	}
	// anthText is a text block; without citations the API leaves the key
	// out (@ai-sdk/anthropic refuses a null).
	anthText struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	anthToolUse struct {
		Type   string          `json:"type"`
		ID     string          `json:"id"`
		Name   string          `json:"name"`
		Input  json.RawMessage `json:"input"`
		Caller *anthCaller     `json:"caller,omitempty"` // an answer's, not a request's
	}
	anthCaller struct {
		Type string `json:"type"`
	}
	anthThinking struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
)

// direct says a tool_use block was called by the model itself.
var direct = &anthCaller{Type: "direct"}

// writeAnthropic writes r as a message (a Thinking first, as a thinking
// block signed by r.Signature), or streamed: message_start (the input's
// usage), each content block (start, deltas, stop) with a ping after the
// first start, message_delta (stop reason, usage), message_stop. A
// tool_use block's input comes as input_json_delta pieces, the first
// empty.
func writeAnthropic(r *Reply) (body []byte, events [][]byte) {
	stop := "end_turn"
	content := []any{}
	if r.Thinking != "" {
		content = append(content, anthThinking{Type: "thinking", Thinking: r.Thinking, Signature: r.Signature})
	}
	if r.Text != "" {
		content = append(content, anthText{Type: "text", Text: r.Text})
	}
	for _, c := range r.Calls {
		content = append(content, anthToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: json.RawMessage(c.Args), Caller: direct})
		stop = "tool_use"
	}
	if r.Stop != "" {
		stop = r.Stop
	}
	m := anthMessage{ID: "msg_" + r.ID, Type: "message", Role: "assistant", Model: r.Model, Content: marshal(content), StopReason: &stop,
		Usage: anthUsage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens, OutputTokensDetails: anthOutputDetails{r.ThinkingTokens},
			ServiceTier: "standard", Speed: "standard"}}
	if !r.Stream {
		return marshal(m), nil
	}
	emit := func(typ string, fields any) { events = append(events, Frame(typ, withType(typ, -1, fields))) }
	block := func(typ string, i int, key string, v any) { emit(typ, jsonObject{{"index", i}, {key, v}}) }
	delta := func(i int, typ, key, v string) {
		block("content_block_delta", i, "delta", jsonObject{{"type", typ}, {key, v}})
	}
	start := m
	start.Content, start.StopReason = json.RawMessage("[]"), nil
	start.Usage.OutputTokens = 1
	emit("message_start", jsonObject{{"message", start}})
	pinged := false
	ping := func() {
		if !pinged {
			events = append(events, Frame("ping", []byte(`{"type": "ping"}`)))
			pinged = true
		}
	}
	for i, b := range content {
		switch b := b.(type) {
		case anthThinking:
			block("content_block_start", i, "content_block", anthThinking{Type: "thinking"})
			ping()
			for _, p := range pieces(b.Thinking) {
				delta(i, "thinking_delta", "thinking", p)
			}
			delta(i, "signature_delta", "signature", b.Signature)
		case anthText:
			block("content_block_start", i, "content_block", anthText{Type: "text"})
			ping()
			for _, p := range pieces(b.Text) {
				delta(i, "text_delta", "text", p)
			}
		case anthToolUse:
			block("content_block_start", i, "content_block", anthToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}"), Caller: direct})
			ping()
			delta(i, "input_json_delta", "partial_json", "")
			for _, p := range pieces(string(b.Input)) {
				delta(i, "input_json_delta", "partial_json", p)
			}
		}
		emit("content_block_stop", jsonObject{{"index", i}})
	}
	ping()
	u := m.Usage
	emit("message_delta", jsonObject{
		{"delta", jsonObject{{"stop_reason", stop}, {"stop_sequence", nil}, {"stop_details", nil}, {"container", nil}}},
		{"usage", jsonObject{{"input_tokens", u.InputTokens}, {"cache_creation_input_tokens", 0}, {"cache_read_input_tokens", 0},
			{"output_tokens", u.OutputTokens}, {"output_tokens_details", u.OutputTokensDetails}, {"server_tool_use", nil}}}})
	emit("message_stop", nil)
	return nil, events
}
