package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// AnthropicVersion is the anthropic-version header every call carries.
const AnthropicVersion = "2023-06-01"

// anthropicOwned are the body keys the loop sets and params may not.
var anthropicOwned = map[string]string{
	"model":    "set agent.model instead",
	"system":   "set agent.system instead",
	"messages": "the loop builds them from the case input and the tool results",
	"tools":    "the loop builds them from the suite's mocks",
}

// anthropicCall speaks the Anthropic Messages API:
// POST {base}/v1/messages with x-api-key (when there is a key) and
// anthropic-version.
//
// The body has model, max_tokens, system (when set), messages and tools
// (when there are any); every key of params is passed through unchanged.
// max_tokens is DefaultMaxTokens unless params sets it. The keys the loop
// owns — model, system, messages, tools, stream — may not be set in
// params: that is an error before any call, never silently ignored or
// overridden (the loop would otherwise send something other than what the
// suite says, or get a stream it cannot read).
//
// Messages: the user input is a user message; an assistant turn is sent as
// the content array the API returned for it (Message.Raw, so that thinking
// blocks survive), else as a text block and tool_use blocks; the tool
// results that follow an assistant turn are one user message of
// tool_result blocks, with is_error: true for errors (the way Anthropic
// takes tool errors).
//
// The answer: text blocks joined make Text, tool_use blocks make ToolCalls
// (Args is the compact JSON of input), usage is input_tokens (plus the
// cache_creation_input_tokens and cache_read_input_tokens that Anthropic
// counts apart) and output_tokens, Raw is the content array as received.
// stop_reason max_tokens with no tool call is still an answer (the text so
// far) with a note saying it was cut short; a tool call cut short at
// max_tokens is an error, since its input may be incomplete.

func (c *caller) anthropicCall(req *model.Request) (*post, error) {
	body, maxTokens, err := anthropicBody(req, c.model(req))
	if err != nil {
		return nil, err
	}
	stream := streamed(req.Params)
	header := http.Header{"Anthropic-Version": {AnthropicVersion}, "Accept": {"application/json"}}
	if stream {
		header.Set("Accept", "text/event-stream")
	}
	to := anthropicURL(c.o.BaseURL)
	if c.o.Provider == provider.VertexAnthropic {
		method := "rawPredict"
		if stream {
			method = "streamRawPredict"
		}
		to, body = vertexURL(c.o.BaseURL, c.o.Getenv, "anthropic", c.model(req), method), vertexBody(body)
		if c.o.APIKey != "" {
			header.Set("Authorization", "Bearer "+c.o.APIKey)
		}
	} else if c.o.APIKey != "" {
		header.Set("X-Api-Key", c.o.APIKey)
	}
	return &post{to, header, body, func(d []byte) (*model.Response, error) { return parseAnthropic(d, maxTokens) }}, nil
}

// anthropicURL is the messages endpoint under base, the host root (a base
// that already ends in /v1, or in a slash, is taken as meant).
func anthropicURL(base string) string {
	if base == "" {
		base = DefaultAnthropicBaseURL
	}
	return withQuery(base, func(base string) string {
		base = strings.TrimRight(base, "/")
		if strings.HasSuffix(base, "/v1/messages") {
			return base
		}
		return strings.TrimSuffix(base, "/v1") + "/v1/messages"
	})
}

// Wire shapes of a request.
type (
	anthropicMessage struct {
		Role    string `json:"role"`
		Content any    `json:"content"` // a string, []any of blocks, or json.RawMessage
	}
	anthropicToolResult struct {
		Type      string `json:"type"`
		ToolUseID string `json:"tool_use_id"`
		Content   string `json:"content,omitempty"`
		IsError   bool   `json:"is_error,omitempty"`
	}
	anthropicTool struct {
		Name        string `json:"name"`
		Description string `json:"description,omitempty"`
		InputSchema any    `json:"input_schema"`
	}
)

// anthropicBody is the JSON body of req, of the model name, and the
// max_tokens it asks for.
func anthropicBody(req *model.Request, name string) ([]byte, any, error) {
	params := req.Params
	b := make(map[string]any, len(params)+5)
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if why, ok := anthropicOwned[k]; ok {
			return nil, nil, fmt.Errorf("agent.params.%s cannot be set for provider anthropic: %s", k, why)
		}
		b[k] = params[k]
	}
	if name == "" {
		return nil, nil, errors.New("provider anthropic needs a model: set agent.model (for example claude-sonnet-4-5)")
	}
	b["model"] = name
	if _, ok := b["max_tokens"]; !ok {
		b["max_tokens"] = DefaultMaxTokens
	}
	if req.System != "" {
		b["system"] = req.System
	}
	msgs, err := anthropicMessages(req.Messages)
	if err != nil {
		return nil, nil, err
	}
	b["messages"] = msgs
	if len(req.Tools) > 0 {
		tools := make([]anthropicTool, len(req.Tools))
		for i, t := range req.Tools {
			schema := objectSchema(t.InputSchema)
			if schema == nil {
				schema = map[string]any{"type": "object"}
			}
			tools[i] = anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema}
		}
		b["tools"] = tools
	}
	data, err := Marshal(b)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding the anthropic request: %w", err)
	}
	return data, b["max_tokens"], nil
}

// Marshal encodes v as the APIs write JSON: without HTML escaping (text
// reaches the API as written) and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// anthropicMessages converts the conversation. Consecutive user-side
// messages (tool results, then any user text) share one user message, as
// the API wants roles to alternate and tool_result blocks first.
func anthropicMessages(msgs []model.Message) ([]anthropicMessage, error) {
	var out []anthropicMessage
	// toUser adds a block to the user message at the end, starting one
	// if the last message is not the user's.
	toUser := func(block any) {
		n := len(out)
		if n == 0 || out[n-1].Role != string(model.User) {
			out = append(out, anthropicMessage{Role: string(model.User), Content: []any{block}})
			return
		}
		blocks, ok := out[n-1].Content.([]any)
		if !ok {
			blocks = []any{anthText{Type: "text", Text: out[n-1].Content.(string)}}
		}
		out[n-1].Content = append(blocks, block)
	}
	for i, m := range msgs {
		switch m.Role {
		case model.User:
			if n := len(out); n > 0 && out[n-1].Role == string(model.User) {
				toUser(anthText{Type: "text", Text: m.Text})
				continue
			}
			out = append(out, anthropicMessage{Role: string(model.User), Content: m.Text})
		case model.ToolRole:
			toUser(anthropicToolResult{Type: "tool_result", ToolUseID: m.CallID, Content: m.Text, IsError: m.IsError})
		case model.Assistant:
			if len(m.Raw) > 0 {
				if !json.Valid(m.Raw) {
					return nil, fmt.Errorf("message %d: the assistant turn's raw content is not JSON", i)
				}
				out = append(out, anthropicMessage{Role: string(model.Assistant), Content: m.Raw})
				continue
			}
			blocks := []any{}
			if m.Text != "" {
				blocks = append(blocks, anthText{Type: "text", Text: m.Text})
			}
			for _, c := range m.ToolCalls {
				input, err := toolInput(c)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				blocks = append(blocks, anthToolUse{Type: "tool_use", ID: c.ID, Name: c.Name, Input: input})
			}
			out = append(out, anthropicMessage{Role: string(model.Assistant), Content: blocks})
		default:
			return nil, fmt.Errorf("message %d has role %q, which the anthropic provider cannot send", i, m.Role)
		}
	}
	return out, nil
}

// toolInput is the arguments of c as the JSON object tool_use.input is.
func toolInput(c tool.Call) (json.RawMessage, error) {
	args := bytes.TrimSpace([]byte(c.Args))
	if len(args) == 0 {
		return json.RawMessage("{}"), nil
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, fmt.Errorf("the arguments of tool call %s (%s) are not a JSON object: %s", c.ID, c.Name, c.Args)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, args); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// BadAnswerError is a 2xx answer that is not what the API promises.
type BadAnswerError struct {
	Provider string
	Problem  string
	Body     string // the start of the body
}

func (e *BadAnswerError) Error() string {
	return fmt.Sprintf("%s answered 200 OK but the body is not a valid answer: %s; the body starts: %s", e.Provider, e.Problem, e.Body)
}

func badAnthropic(data []byte, format string, args ...any) error {
	body := strings.TrimSpace(string(data))
	if len(body) > 200 {
		body = body[:200] + "…"
	}
	if body == "" {
		body = "(empty)"
	}
	return &BadAnswerError{Provider: "anthropic", Problem: fmt.Sprintf(format, args...), Body: body}
}

// parseAnthropic reads a Message; maxTokens is what the request asked for.
func parseAnthropic(data []byte, maxTokens any) (*model.Response, error) {
	var r anthMessage
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, badAnthropic(data, "it is not a JSON object (%v)", err)
	}
	if r.Type == "error" && r.Error != nil {
		return nil, &APIError{Provider: "anthropic", Status: http.StatusOK, Type: r.Error.Type, Message: r.Error.Message, Attempts: 1}
	}
	if r.Type != "message" {
		if r.Type == "" {
			return nil, badAnthropic(data, "`type` is missing (want \"message\")")
		}
		return nil, badAnthropic(data, "`type` is %q, not \"message\"", r.Type)
	}
	if r.Role != "" && r.Role != string(model.Assistant) {
		return nil, badAnthropic(data, "`role` is %q, not \"assistant\"", r.Role)
	}
	if len(r.Content) == 0 || string(r.Content) == "null" {
		return nil, badAnthropic(data, "`content` is missing")
	}
	var blocks []anthropicBlock
	if err := json.Unmarshal(r.Content, &blocks); err != nil {
		return nil, badAnthropic(data, "`content` is not an array of content blocks (%v)", err)
	}
	resp := &model.Response{Raw: append(json.RawMessage(nil), r.Content...)}
	if err := readAnthropicContent(data, blocks, resp); err != nil {
		return nil, err
	}
	resp.Usage = model.Usage{
		InputTokens:  r.Usage.InputTokens + r.Usage.CacheCreationInputTokens + r.Usage.CacheReadInputTokens,
		OutputTokens: r.Usage.OutputTokens,
	}
	if err := anthropicStop(resp, r.StopReason, maxTokens); err != nil {
		return nil, err
	}
	return resp, nil
}

// readAnthropicContent reads a Message's content blocks into resp: the
// text, and the tool calls with their input compacted.
func readAnthropicContent(data []byte, blocks []anthropicBlock, resp *model.Response) error {
	var text strings.Builder
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text == nil {
				return badAnthropic(data, "content.%d: a text block without `text`", i)
			}
			text.WriteString(*b.Text)
		case "tool_use":
			switch {
			case b.ID == "":
				return badAnthropic(data, "content.%d: a tool_use block without `id`", i)
			case b.Name == "":
				return badAnthropic(data, "content.%d: a tool_use block without `name`", i)
			case len(b.Input) == 0 || b.Input[0] != '{':
				return badAnthropic(data, "content.%d: the input of tool_use %s (%s) is not a JSON object", i, b.ID, b.Name)
			}
			var args bytes.Buffer
			if err := json.Compact(&args, b.Input); err != nil {
				return badAnthropic(data, "content.%d: the input of tool_use %s: %v", i, b.ID, err)
			}
			resp.ToolCalls = append(resp.ToolCalls, tool.Call{ID: b.ID, Name: b.Name, Args: args.String()})
		case "":
			return badAnthropic(data, "content.%d: a content block without `type`", i)
		}
		// Other blocks (thinking, redacted_thinking, server tools) are
		// kept in Raw and sent back as they came.
	}
	resp.Text = text.String()
	return nil
}

// anthropicStop notes a stop_reason that cut the answer short, or fails
// when it cut a tool call short (its input may be incomplete).
func anthropicStop(resp *model.Response, stopReason *string, maxTokens any) error {
	stop := ""
	if stopReason != nil {
		stop = *stopReason
	}
	switch stop {
	case "max_tokens":
		if n := len(resp.ToolCalls); n > 0 {
			last := resp.ToolCalls[n-1]
			return fmt.Errorf("anthropic stopped at max_tokens (%v) while writing a call to %s (%s): its input may be incomplete, so it is not run; raise agent.params.max_tokens", maxTokens, last.Name, last.ID)
		}
		resp.Notes = append(resp.Notes, fmt.Sprintf("anthropic stopped at max_tokens (%v): the answer is cut short; raise agent.params.max_tokens", maxTokens))
	case "model_context_window_exceeded":
		if len(resp.ToolCalls) > 0 {
			return errors.New("anthropic stopped because the context window is full (stop_reason model_context_window_exceeded) while writing a tool call: its input may be incomplete, so it is not run")
		}
		resp.Notes = append(resp.Notes, "anthropic stopped because the context window is full (stop_reason model_context_window_exceeded): the answer is cut short")
	case "refusal":
		resp.Notes = append(resp.Notes, "anthropic refused to answer (stop_reason refusal)")
	}
	return nil
}
