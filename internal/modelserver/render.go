package modelserver

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// A scripted turn in each API's wire format, as the real API answers:
// the same keys in the same order, a stream's full event sequence (Chat
// Completions chunks, a usage chunk when asked for, data: [DONE];
// Responses and Anthropic events named by event: lines). The bytes depend
// only on the turn, the request's number and the request itself: ids are
// dryfire's and numbered, the time is fixed, usage is about four bytes a
// token. internal/test/fakeapi imitates the same APIs strictly, and its
// tests and the conformance tests are the check of these shapes.

// scriptCreated is the creation time every scripted answer carries
// (2026-01-01T00:00:00Z): a fixed time, for answers the same every run.
const scriptCreated = 1767225600

// piece bounds the bytes of text or arguments one streamed delta carries.
const piece = 12

// jsonContentType and streamContentType are the Content-Types of answers.
var (
	jsonContentType   = []string{"application/json"}
	streamContentType = []string{"text/event-stream; charset=utf-8"}
)

// scriptedCall is a turn's tool call as the wire shows it.
type scriptedCall struct {
	id, name, args string
}

// render is the answer of turn t to request n (from 1) of api.
func render(api API, w *wireRequest, body []byte, t *spec.Turn, n int) answer {
	if api == GeminiCountTokens {
		a := renderGeminiCount(body)
		a.status, a.header, a.length = 200, jsonContentType, []string{strconv.Itoa(len(a.body))}
		return a
	}
	calls := make([]scriptedCall, len(t.ToolCalls))
	out := len(t.Text)
	for i, c := range t.ToolCalls {
		calls[i] = scriptedCall{id: c.ID, name: c.Name, args: model.ArgsJSON(c)}
		out += len(c.Name) + len(calls[i].args)
	}
	u := model.Usage{InputTokens: max(1, (len(body)+3)/4), OutputTokens: max(1, (out+3)/4)}
	var a answer
	switch api {
	case OpenAIChat:
		a = renderChat(w, t.Text, calls, u, n)
	case OpenAIResponses:
		a = renderResponses(w, t.Text, calls, u, n)
	case Gemini:
		a = renderGemini(w, t.Text, calls, u, n)
	default:
		a = renderAnthropic(w, t.Text, calls, u, n)
	}
	a.status, a.usage = 200, u
	if a.streamed {
		a.header = streamContentType
	} else {
		a.header = jsonContentType
		a.length = []string{strconv.Itoa(len(a.body))}
	}
	return a
}

// pieces cuts s into pieces of at most piece bytes, on rune boundaries.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(piece, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 {
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// marshal is JSON without HTML escaping and without a trailing newline.
func marshal(v any) []byte {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	e.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// event is one server-sent event: an event: line unless name is "", one
// data: line, a blank line.
func event(name string, data []byte) []byte {
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// withType is the object of fields with "type" (and "sequence_number"
// when seq >= 0) first, as the APIs order their events.
func withType(typ string, seq int, fields any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(marshal(typ))
	if seq >= 0 {
		b.WriteString(`,"sequence_number":`)
		b.WriteString(strconv.Itoa(seq))
	}
	if fields != nil {
		if f := marshal(fields); len(f) > 2 {
			b.WriteByte(',')
			b.Write(f[1 : len(f)-1])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Chat Completions

type (
	chatFunction struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	chatToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatMessage struct {
		Role        string         `json:"role"`
		Content     *string        `json:"content"`
		Refusal     *string        `json:"refusal"`
		ToolCalls   []chatToolCall `json:"tool_calls,omitempty"`
		Annotations []any          `json:"annotations"`
	}
	chatChoice struct {
		Index        int         `json:"index"`
		Message      chatMessage `json:"message"`
		Logprobs     any         `json:"logprobs"`
		FinishReason string      `json:"finish_reason"`
	}
	chatUsage struct {
		PromptTokens            int            `json:"prompt_tokens"`
		CompletionTokens        int            `json:"completion_tokens"`
		TotalTokens             int            `json:"total_tokens"`
		PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
		CompletionTokensDetails map[string]int `json:"completion_tokens_details"`
	}
	chatCompletion struct {
		ID          string       `json:"id"`
		Object      string       `json:"object"`
		Created     int64        `json:"created"`
		Model       string       `json:"model"`
		Choices     []chatChoice `json:"choices"`
		Usage       chatUsage    `json:"usage"`
		ServiceTier string       `json:"service_tier"`
		Fingerprint string       `json:"system_fingerprint"`
	}
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
		ID          string            `json:"id"`
		Object      string            `json:"object"`
		Created     int64             `json:"created"`
		Model       string            `json:"model"`
		ServiceTier string            `json:"service_tier"`
		Fingerprint string            `json:"system_fingerprint"`
		Choices     []chatChunkChoice `json:"choices"`
		Usage       json.RawMessage   `json:"usage,omitempty"`
	}
)

// fingerprint is the system_fingerprint of every scripted completion.
const fingerprint = "fp_dryfire"

func renderChat(w *wireRequest, text string, calls []scriptedCall, u model.Usage, n int) answer {
	msg := chatMessage{Role: "assistant", Annotations: []any{}}
	if text != "" || len(calls) == 0 {
		msg.Content = &text
	}
	finish := "stop"
	for _, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: c.id, Type: "function", Function: chatFunction{Name: c.name, Arguments: c.args}})
		finish = "tool_calls"
	}
	usage := chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens,
		PromptTokensDetails:     map[string]int{"audio_tokens": 0, "cached_tokens": 0},
		CompletionTokensDetails: map[string]int{"accepted_prediction_tokens": 0, "audio_tokens": 0, "reasoning_tokens": 0, "rejected_prediction_tokens": 0}}
	id := "chatcmpl-dryfire-" + strconv.Itoa(n)
	if !w.stream {
		return answer{body: marshal(chatCompletion{ID: id, Object: "chat.completion", Created: scriptCreated, Model: w.model,
			Choices: []chatChoice{{Message: msg, FinishReason: finish}}, Usage: usage, ServiceTier: "default", Fingerprint: fingerprint})}
	}
	var events [][]byte
	var null json.RawMessage
	if w.includeUsage {
		null = json.RawMessage("null")
	}
	send := func(choices []chatChunkChoice, usage json.RawMessage) {
		events = append(events, event("", marshal(chatChunk{ID: id, Object: "chat.completion.chunk", Created: scriptCreated, Model: w.model,
			ServiceTier: "default", Fingerprint: fingerprint, Choices: choices, Usage: usage})))
	}
	delta := func(d chatDelta) { send([]chatChunkChoice{{Delta: d}}, null) }
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
	send([]chatChunkChoice{{FinishReason: &finish}}, null)
	if w.includeUsage {
		send([]chatChunkChoice{}, marshal(usage))
	}
	events = append(events, []byte("data: [DONE]\n\n"))
	return answer{events: events, streamed: true}
}

// Responses

type (
	responseText struct {
		Type        string `json:"type"`
		Annotations []any  `json:"annotations"`
		Logprobs    []any  `json:"logprobs"`
		Text        string `json:"text"`
	}
	responseMessage struct {
		ID      string         `json:"id"`
		Type    string         `json:"type"`
		Status  string         `json:"status"`
		Content []responseText `json:"content"`
		Role    string         `json:"role"`
	}
	responseFunctionCall struct {
		ID        string `json:"id"`
		Type      string `json:"type"`
		Status    string `json:"status"`
		Arguments string `json:"arguments"`
		CallID    string `json:"call_id"`
		Name      string `json:"name"`
		Namespace string `json:"namespace,omitempty"` // of a tool offered in a namespace
	}
	responseFunctionTool struct {
		Type        string `json:"type"`
		Description any    `json:"description"`
		Name        string `json:"name"`
		Parameters  any    `json:"parameters"`
		Strict      bool   `json:"strict"`
	}
	responseUsage struct {
		InputTokens         int            `json:"input_tokens"`
		InputTokensDetails  map[string]int `json:"input_tokens_details"`
		OutputTokens        int            `json:"output_tokens"`
		OutputTokensDetails map[string]int `json:"output_tokens_details"`
		TotalTokens         int            `json:"total_tokens"`
	}
	responseObject struct {
		ID                 string         `json:"id"`
		Object             string         `json:"object"`
		CreatedAt          int64          `json:"created_at"`
		Status             string         `json:"status"`
		Background         bool           `json:"background"`
		Error              any            `json:"error"`
		IncompleteDetails  any            `json:"incomplete_details"`
		Instructions       any            `json:"instructions"`
		Model              string         `json:"model"`
		Output             []any          `json:"output"`
		ParallelToolCalls  bool           `json:"parallel_tool_calls"`
		PreviousResponseID any            `json:"previous_response_id"`
		Store              bool           `json:"store"`
		Temperature        any            `json:"temperature"`
		ToolChoice         any            `json:"tool_choice"`
		Tools              []any          `json:"tools"`
		TopP               any            `json:"top_p"`
		Usage              *responseUsage `json:"usage"`
		Metadata           any            `json:"metadata"`
	}
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
	responsesWhole struct {
		Response responseObject `json:"response"`
	}
)

// echoed is a request key as a response object shows it: its value, or
// the API's default when absent or null.
func echoed(req map[string]any, key string, def any) any {
	if v, ok := req[key]; ok && v != nil {
		return v
	}
	return def
}

func renderResponses(w *wireRequest, text string, calls []scriptedCall, u model.Usage, n int) answer {
	ns := strconv.Itoa(n)
	output := []any{}
	if text != "" || len(calls) == 0 {
		output = append(output, responseMessage{ID: "msg_dryfire_" + ns, Type: "message", Status: "completed", Role: "assistant",
			Content: []responseText{{Type: "output_text", Annotations: []any{}, Logprobs: []any{}, Text: text}}})
	}
	for i, c := range calls {
		space, name := splitNS(list(w.echo["tools"]), c.name)
		output = append(output, responseFunctionCall{ID: "fc_dryfire_" + ns + "_" + strconv.Itoa(i+1), Type: "function_call", Status: "completed",
			Arguments: c.args, CallID: c.id, Name: name, Namespace: space})
	}
	tools := []any{}
	for _, t := range list(w.echo["tools"]) {
		tm, _ := t.(map[string]any)
		if tm["type"] != "function" {
			tools = append(tools, t)
			continue
		}
		strict, ok := tm["strict"].(bool)
		if !ok {
			strict = true // the API's default
		}
		name, _ := tm["name"].(string)
		tools = append(tools, responseFunctionTool{Type: "function", Description: tm["description"], Name: name, Parameters: tm["parameters"], Strict: strict})
	}
	store, _ := echoed(w.echo, "store", true).(bool)
	r := responseObject{
		ID: "resp_dryfire_" + ns, Object: "response", CreatedAt: scriptCreated, Status: "completed",
		Instructions: echoed(w.echo, "instructions", nil), Model: w.model, Output: output, ParallelToolCalls: true,
		PreviousResponseID: echoed(w.echo, "previous_response_id", nil), Store: store,
		Temperature: echoed(w.echo, "temperature", 1), ToolChoice: echoed(w.echo, "tool_choice", "auto"),
		Tools: tools, TopP: echoed(w.echo, "top_p", 1), Metadata: echoed(w.echo, "metadata", map[string]any{}),
		Usage: &responseUsage{InputTokens: u.InputTokens, InputTokensDetails: map[string]int{"cache_write_tokens": 0, "cached_tokens": 0},
			OutputTokens: u.OutputTokens, OutputTokensDetails: map[string]int{"reasoning_tokens": 0}, TotalTokens: u.InputTokens + u.OutputTokens},
	}
	if !w.stream {
		return answer{body: marshal(r)}
	}
	return responsesStream(r)
}

// responsesStream streams a response: created, in_progress, each output
// item (added, its deltas, done), completed.
func responsesStream(r responseObject) answer {
	var events [][]byte
	seq := 0
	emit := func(typ string, fields any) {
		events = append(events, event(typ, withType(typ, seq, fields)))
		seq++
	}
	start := r
	start.Status, start.Output, start.Usage = "in_progress", []any{}, nil
	emit("response.created", responsesWhole{start})
	emit("response.in_progress", responsesWhole{start})
	for i, item := range r.Output {
		switch it := item.(type) {
		case responseMessage:
			added := it
			added.Status, added.Content = "in_progress", []responseText{}
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
			added.Status, added.Arguments = "in_progress", ""
			emit("response.output_item.added", responsesItemEvent{i, added})
			for _, p := range pieces(it.Arguments) {
				emit("response.function_call_arguments.delta", responsesArgsDelta{it.ID, i, p})
			}
			emit("response.function_call_arguments.done", responsesArgsDone{it.ID, it.Name, i, it.Arguments})
			emit("response.output_item.done", responsesItemEvent{i, it})
		}
	}
	emit("response.completed", responsesWhole{r})
	return answer{events: events, streamed: true}
}

// Anthropic Messages

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

func renderAnthropic(w *wireRequest, text string, calls []scriptedCall, u model.Usage, n int) answer {
	stop := "end_turn"
	content := []any{}
	if text != "" {
		content = append(content, anthText{Type: "text", Text: text})
	}
	for _, c := range calls {
		content = append(content, anthToolUse{Type: "tool_use", ID: c.id, Name: c.name, Input: json.RawMessage(c.args), Caller: direct})
		stop = "tool_use"
	}
	m := anthMessage{ID: "msg_dryfire_" + strconv.Itoa(n), Type: "message", Role: "assistant", Model: w.model, Content: content,
		StopReason: &stop, Usage: anthUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ServiceTier: "standard", Speed: "standard"}}
	if !w.stream {
		return answer{body: marshal(m)}
	}
	var events [][]byte
	emit := func(typ string, fields any) { events = append(events, event(typ, withType(typ, -1, fields))) }
	start := m
	start.Content, start.StopReason = []any{}, nil
	start.Usage.OutputTokens = 1
	emit("message_start", anthMessageStart{start})
	pinged := false
	ping := func() {
		if !pinged {
			events = append(events, event("ping", []byte(`{"type": "ping"}`)))
			pinged = true
		}
	}
	for i, block := range content {
		switch b := block.(type) {
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
	emit("message_delta", anthMessageDelta{anthStopDelta{StopReason: stop}, anthDeltaUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens}})
	emit("message_stop", nil)
	return answer{events: events, streamed: true}
}
