package fakeapi

import (
	"encoding/json"
)

// Chat Completions streaming: data-only events, chat.completion.chunk
// objects, then data: [DONE], as the real API streams them.

type (
	chatDeltaFunction struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	}
	chatDeltaCall struct {
		Index    int               `json:"index"`
		ID       string            `json:"id,omitempty"`
		Type     string            `json:"type,omitempty"`
		Function chatDeltaFunction `json:"function"`
	}
	chatDelta struct {
		Role      string          `json:"role,omitempty"`
		Content   *string         `json:"content,omitempty"`
		Refusal   json.RawMessage `json:"refusal,omitempty"`
		ToolCalls []chatDeltaCall `json:"tool_calls,omitempty"`
	}
	chatChunkChoice struct {
		Index        int       `json:"index"`
		Delta        chatDelta `json:"delta"`
		Logprobs     any       `json:"logprobs"`
		FinishReason *string   `json:"finish_reason"`
	}
	chatChunk struct {
		ID                string            `json:"id"`
		Object            string            `json:"object"`
		Created           int64             `json:"created"`
		Model             string            `json:"model"`
		ServiceTier       string            `json:"service_tier"`
		SystemFingerprint string            `json:"system_fingerprint,omitempty"`
		Choices           []chatChunkChoice `json:"choices"`
		// Usage is null in every chunk but the last when the request asks
		// for stream_options.include_usage, and absent otherwise.
		Usage json.RawMessage `json:"usage,omitempty"`
	}
)

// chatStream streams a completion: a first chunk with the role, the text
// in pieces, each tool call (its id and name first, then its arguments in
// pieces), a chunk with the finish reason, the usage chunk when asked
// for, and [DONE].
func chatStream(c chatCompletionOut, includeUsage bool) streamAnswer {
	return func(s *sse) {
		var null json.RawMessage
		if includeUsage {
			null = json.RawMessage("null")
		}
		send := func(choices []chatChunkChoice, usage json.RawMessage) {
			data, _ := marshal(chatChunk{ID: c.ID, Object: "chat.completion.chunk", Created: c.Created, Model: c.Model,
				ServiceTier: c.ServiceTier, SystemFingerprint: c.SystemFingerprint, Choices: choices, Usage: usage})
			s.event("", data)
		}
		delta := func(d chatDelta) { send([]chatChunkChoice{{Delta: d}}, null) }
		msg := c.Choices[0].Message
		empty := ""
		delta(chatDelta{Role: "assistant", Content: &empty, Refusal: json.RawMessage("null")})
		if msg.Content != nil {
			for _, p := range pieces(*msg.Content) {
				delta(chatDelta{Content: &p})
			}
		}
		for i, tc := range msg.ToolCalls {
			delta(chatDelta{ToolCalls: []chatDeltaCall{{Index: i, ID: tc.ID, Type: "function", Function: chatDeltaFunction{Name: tc.Function.Name}}}})
			for _, p := range pieces(tc.Function.Arguments) {
				delta(chatDelta{ToolCalls: []chatDeltaCall{{Index: i, Function: chatDeltaFunction{Arguments: p}}}})
			}
		}
		finish := c.Choices[0].FinishReason
		send([]chatChunkChoice{{FinishReason: &finish}}, null)
		if includeUsage {
			usage, _ := marshal(c.Usage)
			send([]chatChunkChoice{}, usage)
		}
		s.w.Write([]byte("data: [DONE]\n\n"))
		s.rc.Flush()
	}
}

// Responses streaming: named events, each data object with "type" and
// "sequence_number" first, as the real API streams them; no [DONE].

type (
	responsesDelta struct {
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Delta        string `json:"delta"`
		Logprobs     []any  `json:"logprobs"`
	}
	responsesTextDone struct {
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		ContentIndex int    `json:"content_index"`
		Text         string `json:"text"`
		Logprobs     []any  `json:"logprobs"`
	}
	responsesPart struct {
		ItemID       string       `json:"item_id"`
		OutputIndex  int          `json:"output_index"`
		ContentIndex int          `json:"content_index"`
		Part         responseText `json:"part"`
	}
	responsesItemEvent struct {
		OutputIndex int `json:"output_index"`
		Item        any `json:"item"`
	}
	responsesArgsDelta struct {
		ItemID      string `json:"item_id"`
		OutputIndex int    `json:"output_index"`
		Delta       string `json:"delta"`
	}
	responsesArgsDone struct {
		ItemID      string `json:"item_id"`
		Name        string `json:"name"`
		OutputIndex int    `json:"output_index"`
		Arguments   string `json:"arguments"`
	}
	responsesSummaryPart struct {
		ItemID       string          `json:"item_id"`
		OutputIndex  int             `json:"output_index"`
		SummaryIndex int             `json:"summary_index"`
		Part         responseSummary `json:"part"`
	}
	responsesSummaryDelta struct {
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		SummaryIndex int    `json:"summary_index"`
		Delta        string `json:"delta"`
	}
	responsesSummaryDone struct {
		ItemID       string `json:"item_id"`
		OutputIndex  int    `json:"output_index"`
		SummaryIndex int    `json:"summary_index"`
		Text         string `json:"text"`
	}
	responsesWhole struct {
		Response responseOut `json:"response"`
	}
)

// responsesStream streams a response: created, in_progress, each output
// item (added, its deltas, done), completed.
func responsesStream(r responseOut) streamAnswer {
	return func(s *sse) {
		seq := 0
		emit := func(typ string, fields any) {
			s.event(typ, withType(typ, seq, fields))
			seq++
		}
		start := r
		start.Status = "in_progress"
		start.Output = []any{}
		start.Usage = nil
		emit("response.created", responsesWhole{start})
		emit("response.in_progress", responsesWhole{start})
		for i, item := range r.Output {
			switch it := item.(type) {
			case responseReasoning:
				added := it
				added.Summary = []responseSummary{}
				added.EncryptedContent = ""
				emit("response.output_item.added", responsesItemEvent{i, added})
				for k, sum := range it.Summary {
					emit("response.reasoning_summary_part.added", responsesSummaryPart{it.ID, i, k, responseSummary{Type: sum.Type}})
					for _, p := range pieces(sum.Text) {
						emit("response.reasoning_summary_text.delta", responsesSummaryDelta{it.ID, i, k, p})
					}
					emit("response.reasoning_summary_text.done", responsesSummaryDone{it.ID, i, k, sum.Text})
					emit("response.reasoning_summary_part.done", responsesSummaryPart{it.ID, i, k, sum})
				}
				emit("response.output_item.done", responsesItemEvent{i, it})
			case responseMessage:
				added := it
				added.Status = "in_progress"
				added.Content = []responseText{}
				emit("response.output_item.added", responsesItemEvent{i, added})
				for k, part := range it.Content {
					empty := part
					empty.Text = ""
					emit("response.content_part.added", responsesPart{it.ID, i, k, empty})
					for _, p := range pieces(part.Text) {
						emit("response.output_text.delta", responsesDelta{it.ID, i, k, p, []any{}})
					}
					emit("response.output_text.done", responsesTextDone{it.ID, i, k, part.Text, []any{}})
					emit("response.content_part.done", responsesPart{it.ID, i, k, part})
				}
				emit("response.output_item.done", responsesItemEvent{i, it})
			case responseFunctionCall:
				added := it
				added.Status = "in_progress"
				added.Arguments = ""
				emit("response.output_item.added", responsesItemEvent{i, added})
				for _, p := range pieces(it.Arguments) {
					emit("response.function_call_arguments.delta", responsesArgsDelta{it.ID, i, p})
				}
				emit("response.function_call_arguments.done", responsesArgsDone{it.ID, it.Name, i, it.Arguments})
				emit("response.output_item.done", responsesItemEvent{i, it})
			}
		}
		emit("response.completed", responsesWhole{r})
	}
}
