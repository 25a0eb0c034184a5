package fakeapi

import "encoding/json"

// Anthropic Messages streaming: every event named by an event: line, its
// data an object whose "type" is that name, as the real API streams them.

type (
	anthStartMessage struct {
		ID           string          `json:"id"`
		Type         string          `json:"type"`
		Role         string          `json:"role"`
		Model        string          `json:"model"`
		Content      []any           `json:"content"`
		StopReason   *string         `json:"stop_reason"`
		StopSequence *string         `json:"stop_sequence"`
		StopDetails  any             `json:"stop_details"`
		Container    any             `json:"container"`
		Diagnostics  any             `json:"diagnostics"`
		Usage        anthropicOutUse `json:"usage"`
	}
	anthMessageStart struct {
		Message anthStartMessage `json:"message"`
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
	anthThinkingDelta struct {
		Type     string `json:"type"`
		Thinking string `json:"thinking"`
	}
	anthSignatureDelta struct {
		Type      string `json:"type"`
		Signature string `json:"signature"`
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
	// anthOutputUsage is message_delta's usage: the totals so far.
	anthOutputUsage struct {
		InputTokens              int               `json:"input_tokens"`
		CacheCreationInputTokens int               `json:"cache_creation_input_tokens"`
		CacheReadInputTokens     int               `json:"cache_read_input_tokens"`
		OutputTokens             int               `json:"output_tokens"`
		OutputTokensDetails      anthOutputDetails `json:"output_tokens_details"`
		ServerToolUse            any               `json:"server_tool_use"`
	}
	anthMessageDelta struct {
		Delta anthStopDelta   `json:"delta"`
		Usage anthOutputUsage `json:"usage"`
	}
)

// anthPing is the keep-alive event as the API words it.
var anthPing = []byte(`{"type": "ping"}`)

// anthropicStream streams a message: message_start (usage with the input
// tokens), each content block (start, deltas, stop) with a ping after the
// first start, message_delta (stop reason, output tokens), message_stop.
// A tool_use block's input comes as input_json_delta pieces of its JSON,
// the first one empty.
func anthropicStream(s *sse, m anthropicOut) {
	emit := func(typ string, fields any) { s.event(typ, withType(typ, -1, fields)) }
	start := m.Usage
	start.OutputTokens = 1
	emit("message_start", anthMessageStart{anthStartMessage{ID: m.ID, Type: m.Type, Role: m.Role, Model: m.Model,
		Content: []any{}, Usage: start}})
	pinged := false
	ping := func() {
		if !pinged {
			s.event("ping", anthPing)
			pinged = true
		}
	}
	for i, block := range m.Content {
		switch b := block.(type) {
		case anthropicOutThinking:
			emit("content_block_start", anthBlockStart{i, anthropicOutThinking{Type: "thinking"}})
			ping()
			for _, p := range pieces(b.Thinking) {
				emit("content_block_delta", anthBlockDelta{i, anthThinkingDelta{"thinking_delta", p}})
			}
			emit("content_block_delta", anthBlockDelta{i, anthSignatureDelta{"signature_delta", b.Signature}})
		case anthropicOutText:
			emit("content_block_start", anthBlockStart{i, anthropicOutText{Type: "text"}})
			ping()
			for _, p := range pieces(b.Text) {
				emit("content_block_delta", anthBlockDelta{i, anthTextDelta{"text_delta", p}})
			}
		case anthropicOutToolUse:
			emit("content_block_start", anthBlockStart{i, anthropicOutToolUse{Type: "tool_use", ID: b.ID, Name: b.Name, Input: json.RawMessage("{}"), Caller: directCaller}})
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
	emit("message_delta", anthMessageDelta{anthStopDelta{StopReason: m.StopReason},
		anthOutputUsage{u.InputTokens, u.CacheCreationInputTokens, u.CacheReadInputTokens, u.OutputTokens, u.OutputTokensDetails, nil}})
	emit("message_stop", nil)
}
