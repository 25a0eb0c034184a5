package wire

import "encoding/json"

// Wire shapes of a message and its stream events, in the API's key order.
type (
	anthMessage struct {
		ID           string    `json:"id"`
		Type         string    `json:"type"`
		Role         string    `json:"role"`
		Model        string    `json:"model"`
		Content      []any     `json:"content"`
		StopReason   *string   `json:"stop_reason"`
		StopSequence *string   `json:"stop_sequence"`
		StopDetails  any       `json:"stop_details"`
		Container    any       `json:"container"`
		Diagnostics  any       `json:"diagnostics"`
		Usage        anthUsage `json:"usage"`
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
		Caller anthCaller      `json:"caller"`
	}
	anthCaller struct {
		Type string `json:"type"`
	}
	anthThinking struct {
		Type      string `json:"type"`
		Thinking  string `json:"thinking"`
		Signature string `json:"signature"`
	}
	anthThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	anthSignatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
	}
	anthMessageStart struct {
		Message anthMessage `json:"message"`
	}
	anthBlockStart struct {
		Index        int `json:"index"`
		ContentBlock any `json:"content_block"`
	}
	anthBlockDelta struct {
		Index int `json:"index"`
		Delta any `json:"delta"`
	}
	anthBlockStop struct {
		Index int `json:"index"`
	}
	anthTextDelta struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	anthJSONDelta struct {
		Type        string `json:"type"`
		PartialJSON string `json:"partial_json"`
	}
	anthStopDelta struct {
		StopReason   string  `json:"stop_reason"`
		StopSequence *string `json:"stop_sequence"`
		StopDetails  any     `json:"stop_details"`
		Container    any     `json:"container"`
	}
	// anthDeltaUsage is message_delta's usage: the totals so far.
	anthDeltaUsage struct {
		InputTokens              int               `json:"input_tokens"`
		CacheCreationInputTokens int               `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int               `json:"cache_read_input_tokens"`
		OutputTokens             int               `json:"output_tokens"`
		OutputTokensDetails      anthOutputDetails `json:"output_tokens_details"`
		ServerToolUse            any               `json:"server_tool_use"`
	}
	anthMessageDelta struct {
		Delta anthStopDelta  `json:"delta"`
		Usage anthDeltaUsage `json:"usage"`
	}
)

// direct says a tool_use block was called by the model itself.
var direct = anthCaller{Type: "direct"}

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
	m := anthMessage{ID: "msg_" + r.ID, Type: "message", Role: "assistant", Model: r.Model, Content: content, StopReason: &stop,
		Usage: anthUsage{InputTokens: r.Usage.InputTokens, OutputTokens: r.Usage.OutputTokens, OutputTokensDetails: anthOutputDetails{r.ThinkingTokens},
			ServiceTier: "standard", Speed: "standard"}}
	if !r.Stream {
		return marshal(m), nil
	}
	emit := func(typ string, fields any) { events = append(events, Frame(typ, withType(typ, -1, fields))) }
	start := m
	start.Content, start.StopReason = []any{}, nil
	start.Usage.OutputTokens = 1
	emit("message_start", anthMessageStart{start})
	pinged := false
	ping := func() {
		if !pinged {
			events = append(events, Frame("ping", []byte(`{"type": "ping"}`)))
			pinged = true
		}
	}
	for i, block := range content {
		switch b := block.(type) {
		case anthThinking:
			emit("content_block_start", anthBlockStart{i, anthThinking{Type: "thinking"}})
			ping()
			for _, p := range pieces(b.Thinking) {
				emit("content_block_delta", anthBlockDelta{i, anthThinkingDelta{"thinking_delta", p}})
			}
			emit("content_block_delta", anthBlockDelta{i, anthSignatureDelta{"signature_delta", b.Signature}})
		case anthText:
			emit("content_block_start", anthBlockStart{i, anthText{Type: "text"}})
			ping()
			for _, p := range pieces(b.Text) {
				emit("content_block_delta", anthBlockDelta{i, anthTextDelta{"text_delta", p}})
			}
		case anthToolUse:
			emit("content_block_start", anthBlockStart{i, anthToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}"), Caller: direct}})
			ping()
			emit("content_block_delta", anthBlockDelta{i, anthJSONDelta{"input_json_delta", ""}})
			for _, p := range pieces(string(b.Input)) {
				emit("content_block_delta", anthBlockDelta{i, anthJSONDelta{"input_json_delta", p}})
			}
		}
		emit("content_block_stop", anthBlockStop{i})
	}
	ping()
	u := m.Usage
	emit("message_delta", anthMessageDelta{anthStopDelta{StopReason: stop}, anthDeltaUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, OutputTokensDetails: u.OutputTokensDetails}})
	emit("message_stop", nil)
	return nil, events
}
