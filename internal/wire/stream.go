package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Streaming in the built-in loop (agent.params.stream: true). The call is
// sent with stream: true and its answer read as the event stream it is;
// the transport records and replays the stream byte for byte, as the
// model endpoint does for a client's stream. The events are then folded
// into the answer the API gives unstreamed, and read by the same parser,
// so that a streamed and an unstreamed run of a case have one transcript:
//
//   - Chat Completions: each chunk's delta appended (content, refusal, and
//     tool_calls by index: id and name from the first delta, arguments
//     concatenated), the last finish_reason, the usage chunk. The loop asks
//     for the usage chunk (stream_options.include_usage) unless
//     agent.params sets stream_options itself.
//   - Anthropic Messages: message_start's message, each content block from
//     content_block_start with its deltas (text, input_json, thinking,
//     signature, citations), message_delta's stop reason and usage.
//   - Responses: the response of the terminal event (response.completed,
//     response.incomplete or response.failed).
//
// A stream with an error event is that error; a stream that ends before its
// last event ([DONE], message_stop, the terminal response) was cut short,
// and is tried again as a dropped connection is.

// maxStreamEvents bounds the events one answer may have.
const maxStreamEvents = 1 << 20

// streamed says whether agent.params asks for streamed answers.
func streamed(params map[string]any) bool {
	s, _ := params["stream"].(bool)
	return s
}

// checkStream refuses a stream param that is not a boolean.
func checkStream(params map[string]any) error {
	if s, ok := params["stream"]; ok {
		if _, isBool := s.(bool); !isBool {
			return fmt.Errorf("agent.params.stream is %v, not true or false", s)
		}
	}
	return nil
}

// sseEvent is one server-sent event: its name (event:) and data (data:
// lines joined with newlines).
type sseEvent struct {
	name string
	data string
}

// readEvents reads an event stream: comments and other fields are
// skipped, an event without data is dropped, as EventSource does.
func readEvents(data []byte) ([]sseEvent, error) {
	var out []sseEvent
	var name string
	var lines []string
	has := false
	flush := func() {
		if has {
			out = append(out, sseEvent{name: name, data: strings.Join(lines, "\n")})
		}
		name, lines, has = "", lines[:0], false
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) == 0 {
			flush()
			if len(out) > maxStreamEvents {
				return nil, fmt.Errorf("the stream has more than %d events (the bound of one answer)", maxStreamEvents)
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			lines, has = append(lines, string(value)), true
		}
	}
	flush()
	return out, nil
}

// errStreamCut is a stream that ended before its last event.
var errStreamCut = fmt.Errorf("the answer's event stream ended before its last event: %w", io.ErrUnexpectedEOF)

// foldEvents hands the data of each event of a stream to add until add
// says the answer is whole; a stream that ends before is cut
// (errStreamCut).
func foldEvents(data []byte, add func(data string) (whole bool, err error)) error {
	events, err := readEvents(data)
	if err != nil {
		return err
	}
	for _, e := range events {
		if whole, err := add(e.data); whole || err != nil {
			return err
		}
	}
	return errStreamCut
}

// foldChat folds Chat Completions chunks into a chat.completion object.
func foldChat(data []byte) ([]byte, error) {
	var f chatFold
	if err := foldEvents(data, func(d string) (bool, error) { return d == "[DONE]", f.add(d) }); err != nil {
		return nil, err
	}
	return f.answer()
}

// chatFold is a Chat Completions answer being folded from its chunks.
type chatFold struct {
	text, refusal       strings.Builder
	hasText, hasRefusal bool
	calls               []*chatFoldCall
	finish              string
	usage               json.RawMessage
}

type chatFoldCall struct {
	id, name string
	args     strings.Builder
}

// chatChunkRead is the part of a chunk the fold reads: not chatChunk, since
// compatible servers send what dryfire does not read (id, created, model,
// service_tier, role, a call's type) in other types.
type chatChunkRead struct {
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content   *string         `json:"content"`
			Refusal   json.RawMessage `json:"refusal"`
			ToolCalls []struct {
				Index    int               `json:"index"`
				ID       string            `json:"id"`
				Function chatDeltaFunction `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// add folds one chunk in ([DONE] ends the stream: nothing to fold).
func (f *chatFold) add(data string) error {
	if data == "[DONE]" {
		return nil
	}
	var chunk chatChunkRead
	if err := json.Unmarshal([]byte(data), &chunk); err != nil {
		return fmt.Errorf("a chunk of the stream is not JSON (%v): %s", err, excerptString(data))
	}
	if len(chunk.Error) > 0 && string(chunk.Error) != "null" {
		typ, msg := errorOf([]byte(data))
		return fmt.Errorf("the answer's stream carries an error: %s", joinNonEmpty(": ", typ, msg))
	}
	if len(chunk.Usage) > 0 && string(chunk.Usage) != "null" {
		f.usage = chunk.Usage
	}
	for _, ch := range chunk.Choices {
		if ch.Index != 0 {
			continue // the loop asks for one choice
		}
		if d := ch.Delta.Content; d != nil {
			f.text.WriteString(*d)
			f.hasText = true
		}
		var refusal string
		if d := ch.Delta.Refusal; len(d) > 0 && string(d) != "null" && json.Unmarshal(d, &refusal) == nil {
			f.refusal.WriteString(refusal)
			f.hasRefusal = true
		}
		for _, tc := range ch.Delta.ToolCalls {
			if tc.Index < 0 || tc.Index > len(f.calls) || tc.Index >= 1024 {
				return fmt.Errorf("a chunk of the stream continues tool call %d, which was never started: %s", tc.Index, excerptString(data))
			}
			if tc.Index == len(f.calls) {
				f.calls = append(f.calls, &chatFoldCall{})
			}
			c := f.calls[tc.Index]
			if tc.ID != "" {
				c.id = tc.ID
			}
			c.name += tc.Function.Name
			c.args.WriteString(tc.Function.Arguments)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			f.finish = *ch.FinishReason
		}
	}
	return nil
}

// answer is the folded chat.completion.
func (f *chatFold) answer() ([]byte, error) {
	msg := chatMessage{Role: "assistant", Content: []byte("null")}
	if f.hasText {
		msg.Content = marshal(f.text.String())
	}
	if f.hasRefusal {
		msg.Refusal = new(f.refusal.String())
	}
	for _, c := range f.calls {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: c.id, Type: "function", Function: chatFunction{Name: c.name, Arguments: marshal(c.args.String())}})
	}
	out := chatCompletion{Object: "chat.completion", Choices: []chatChoice{{Message: msg, FinishReason: f.finish}}}
	json.Unmarshal(f.usage, &out.Usage)
	return marshal(out), nil
}

// foldAnthropic folds a Messages stream into a message object.
func foldAnthropic(data []byte) ([]byte, error) {
	var f anthropicFold
	if err := foldEvents(data, f.add); err != nil {
		return nil, err
	}
	return f.answer()
}

// anthropicEvent is the part of a Messages stream event the fold reads.
type anthropicEvent struct {
	Type         string                     `json:"type"`
	Index        int                        `json:"index"`
	Message      map[string]json.RawMessage `json:"message"`
	ContentBlock map[string]json.RawMessage `json:"content_block"`
	Delta        map[string]json.RawMessage `json:"delta"`
	Usage        map[string]json.RawMessage `json:"usage"`
}

// anthropicFold is a message being folded from its events.
type anthropicFold struct {
	message map[string]json.RawMessage
	blocks  []map[string]json.RawMessage
	partial []*strings.Builder // input_json_delta text, per block
}

// add folds one event in; stop is message_stop.
func (f *anthropicFold) add(data string) (stop bool, err error) {
	var ev anthropicEvent
	if err := json.Unmarshal([]byte(data), &ev); err != nil {
		return false, fmt.Errorf("an event of the stream is not JSON (%v): %s", err, excerptString(data))
	}
	switch ev.Type {
	case "error":
		typ, msg := errorOf([]byte(data))
		return false, fmt.Errorf("the answer's stream carries an error: %s", joinNonEmpty(": ", typ, msg))
	case "message_start":
		f.message = ev.Message
	case "content_block_start":
		if ev.Index != len(f.blocks) || ev.ContentBlock == nil {
			return false, fmt.Errorf("content block %d starts out of order (after %d blocks)", ev.Index, len(f.blocks))
		}
		f.blocks = append(f.blocks, ev.ContentBlock)
		f.partial = append(f.partial, &strings.Builder{})
	case "content_block_delta", "content_block_stop":
		if ev.Index < 0 || ev.Index >= len(f.blocks) {
			return false, fmt.Errorf("a %s event names content block %d, which was never started", ev.Type, ev.Index)
		}
		f.block(&ev)
	case "message_delta":
		if f.message == nil {
			return false, errors.New("the stream's message_delta comes before its message_start")
		}
		f.messageDelta(&ev)
	case "message_stop":
		return f.message != nil, nil
	}
	return false, nil
}

// block folds a content block's delta or stop in.
func (f *anthropicFold) block(ev *anthropicEvent) {
	b := f.blocks[ev.Index]
	if ev.Type == "content_block_stop" {
		if p := f.partial[ev.Index]; p.Len() > 0 {
			b["input"] = json.RawMessage(p.String())
		}
		return
	}
	var typ string
	json.Unmarshal(ev.Delta["type"], &typ)
	switch typ {
	case "text_delta":
		appendString(b, "text", ev.Delta["text"])
	case "thinking_delta":
		appendString(b, "thinking", ev.Delta["thinking"])
	case "signature_delta":
		appendString(b, "signature", ev.Delta["signature"])
	case "input_json_delta":
		var s string
		json.Unmarshal(ev.Delta["partial_json"], &s)
		f.partial[ev.Index].WriteString(s)
	case "citations_delta":
		var list []json.RawMessage
		json.Unmarshal(b["citations"], &list)
		b["citations"], _ = json.Marshal(append(list, ev.Delta["citation"]))
	}
}

// messageDelta folds message_delta's stop reason and usage in.
func (f *anthropicFold) messageDelta(ev *anthropicEvent) {
	for k, v := range ev.Delta {
		f.message[k] = v
	}
	if len(ev.Usage) == 0 {
		return
	}
	var u map[string]json.RawMessage
	json.Unmarshal(f.message["usage"], &u)
	if u == nil {
		u = map[string]json.RawMessage{}
	}
	for k, v := range ev.Usage {
		u[k] = v
	}
	f.message["usage"], _ = json.Marshal(u)
}

// answer is the folded message.
func (f *anthropicFold) answer() ([]byte, error) {
	blocks := f.blocks
	if blocks == nil {
		blocks = []map[string]json.RawMessage{}
	}
	content, err := json.Marshal(blocks)
	if err != nil {
		return nil, err
	}
	f.message["content"] = content
	return json.Marshal(f.message)
}

// appendString appends the JSON string add to the string field key of b.
func appendString(b map[string]json.RawMessage, key string, add json.RawMessage) {
	var s, a string
	json.Unmarshal(b[key], &s)
	json.Unmarshal(add, &a)
	b[key], _ = json.Marshal(s + a)
}

// foldResponses takes the response of a Responses stream's terminal event.
func foldResponses(data []byte) ([]byte, error) {
	var ev struct {
		Type     string          `json:"type"`
		Response json.RawMessage `json:"response"`
	}
	err := foldEvents(data, func(d string) (bool, error) {
		ev.Type, ev.Response = "", nil
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			return false, fmt.Errorf("an event of the stream is not JSON (%v): %s", err, excerptString(d))
		}
		if ev.Type == "error" {
			typ, msg := errorOf([]byte(d))
			return false, fmt.Errorf("the answer's stream carries an error: %s", joinNonEmpty(": ", typ, msg))
		}
		return terminal[ev.Type], nil
	})
	if err != nil {
		return nil, err
	}
	return ev.Response, nil
}
