package wire

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// chatCall speaks OpenAI Chat Completions (also any OpenAI-compatible
// server: Ollama, vLLM, LM Studio, OpenRouter).
//
// Wire decisions (the user-facing ones belong in docs/cassettes.md too):
//
//   - The system prompt is the first message, {"role":"system"}.
//   - A tool error goes back as the tool message's content, prefixed with
//     "Error: " (see toolResultText): Chat Completions has no error flag, and
//     without a marker the model cannot tell a failed call from one that
//     returned the same words.
//   - Every key of agent.params is sent as is, after the keys the loop
//     writes. The loop's own keys (model, messages, tools) and stream: true
//     streams (see stream.go); the loop's own keys are refused with a
//     clear error before any call (see checkParams).
//   - A response is read leniently, because compatible servers differ:
//     missing usage is zero, absent or null content is no text, an empty
//     tool_calls list is none, arguments sent as an object are used as its
//     JSON text, empty arguments are "{}", and a missing or repeated call id
//     is replaced by call_<turn>_<n>, which is the same on every run.
//   - finish_reason length cutting a tool call's arguments is an error (the
//     call is not run); cutting text, a refusal, or content_filter are
//     notes on a turn that is still an answer.
//
// It writes a call to url (of the model) with header.
func (c *caller) chatCall(url func(model string) (string, error), header http.Header) func(*model.Request) (*post, error) {
	return func(req *model.Request) (*post, error) {
		body, err := chatBody(req)
		if err != nil {
			return nil, err
		}
		to, err := url(req.Model)
		return &post{to, header, body, func(d []byte) (*model.Response, error) {
			return parseChat(c.o.Provider, d, assistantTurns(req.Messages)+1)
		}}, err
	}
}

// chatBody is the request body of one call, keys in a fixed order.
func chatBody(req *model.Request) ([]byte, error) {
	body, err := chatRequest(req, false)
	if err != nil {
		return nil, err
	}
	params := req.Params
	if _, set := params["stream_options"]; streamed(params) && !set {
		params = maps.Clone(params)
		params["stream_options"] = map[string]any{"include_usage": true}
	}
	body = appendParams(body, params, nil)
	return body.MarshalJSON()
}

// chatRequest is a request's model, messages and tools as Chat
// Completions takes them, or (ollama) as Ollama's chat does: an
// assistant's content text even with tool calls, its calls without an
// id, their arguments an object, a tool result naming its tool instead of
// its call, a tool's description always.
func chatRequest(req *model.Request, ollama bool) (jsonObject, error) {
	msgs := make([]any, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, jsonObject{{"role", "system"}, {"content", req.System}})
	}
	names := map[string]string{} // call id → tool name
	for i, m := range req.Messages {
		switch m.Role {
		case model.User:
			msgs = append(msgs, jsonObject{{"role", "user"}, {"content", m.Text}})
		case model.Assistant:
			var content any = m.Text
			if m.Text == "" && len(m.ToolCalls) > 0 && !ollama {
				content = nil
			}
			var calls []any
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
				if !ollama {
					calls = append(calls, jsonObject{{"id", c.ID}, {"type", "function"}, {"function", jsonObject{{"name", c.Name}, {"arguments", argsText(c.Args)}}}})
					continue
				}
				args, err := toolInput(c)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				calls = append(calls, jsonObject{{"function", jsonObject{{"name", c.Name}, {"arguments", args}}}})
			}
			msg := jsonObject{{"role", "assistant"}, {"content", content}}
			if calls != nil {
				msg = append(msg, jsonKV{"tool_calls", calls})
			}
			msgs = append(msgs, msg)
		case model.ToolRole:
			if ollama {
				msgs = append(msgs, jsonObject{{"role", "tool"}, {"content", toolResultText(m)}, {"tool_name", names[m.CallID]}})
			} else {
				msgs = append(msgs, jsonObject{{"role", "tool"}, {"tool_call_id", m.CallID}, {"content", toolResultText(m)}})
			}
		default:
			return nil, fmt.Errorf("message %d has role %q, which the %s provider cannot send", i, m.Role, map[bool]string{false: "openai", true: "ollama"}[ollama])
		}
	}
	body := jsonObject{{"model", req.Model}, {"messages", msgs}}
	if len(req.Tools) > 0 {
		tools := make([]any, len(req.Tools))
		for i, t := range req.Tools {
			fn := jsonObject{{"name", t.Name}}
			if t.Description != "" || ollama {
				fn = append(fn, jsonKV{"description", t.Description})
			}
			tools[i] = jsonObject{{"type", "function"}, {"function", append(fn, jsonKV{"parameters", schemaOf(t)})}}
		}
		body = append(body, jsonKV{"tools", tools})
	}
	return body, nil
}

// chatResponse is the part of a chat.completion that parseChat reads: not
// chatCompletion, since compatible servers send what dryfire does not read
// (id, created, index, service_tier, detail counts) in other types.
type chatResponse struct {
	Choices []struct {
		Message      chatMessage `json:"message"`
		FinishReason string      `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// parseChat reads a chat.completion; name is the provider's, turn numbers
// the generated call ids.
func parseChat(name string, data []byte, turn int) (*model.Response, error) {
	var cr chatResponse
	if err := json.Unmarshal(data, &cr); err != nil {
		return nil, fmt.Errorf("%s: the answer is not a chat.completion object (%v): %s", name, err, excerpt(data))
	}
	if len(cr.Choices) == 0 {
		if len(cr.Error) > 0 && string(cr.Error) != "null" {
			typ, msg := errorOf(data)
			return nil, fmt.Errorf("%s: the answer carries an error instead of choices: %s", name, joinNonEmpty(": ", typ, msg))
		}
		return nil, fmt.Errorf("%s: the answer has no choices: %s", name, excerpt(data))
	}
	ch := cr.Choices[0]
	r := &model.Response{Text: contentText(ch.Message.Content)}
	if ch.Message.Refusal != nil && *ch.Message.Refusal != "" {
		if r.Text == "" {
			r.Text = *ch.Message.Refusal
		}
		r.Notes = append(r.Notes, name+" refused to answer (refusal): "+excerptString(*ch.Message.Refusal))
	}
	seen := map[string]bool{}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" || seen[id] {
			id = fmt.Sprintf("call_%d_%d", turn, i+1)
		}
		seen[id] = true
		r.ToolCalls = append(r.ToolCalls, tool.Call{ID: id, Name: tc.Function.Name, Args: rawArgs(tc.Function.Arguments)})
	}
	r.Usage = model.Usage{InputTokens: cr.Usage.PromptTokens, OutputTokens: cr.Usage.CompletionTokens}
	switch ch.FinishReason {
	case "length":
		if n := len(r.ToolCalls); n > 0 && !json.Valid([]byte(r.ToolCalls[n-1].Args)) {
			c := r.ToolCalls[n-1]
			return nil, fmt.Errorf("%s stopped at the token limit (finish_reason length) while writing a call to %s (%s): its arguments are cut off (%s), so it is not run; raise max_completion_tokens (or max_tokens) in agent.params", name, c.Name, c.ID, excerptString(c.Args))
		}
		r.Notes = append(r.Notes, name+" stopped at the token limit (finish_reason length): the answer is cut short; raise max_completion_tokens (or max_tokens) in agent.params")
	case "content_filter":
		r.Notes = append(r.Notes, name+" withheld content (finish_reason content_filter): the answer may be incomplete")
	}
	return r, nil
}

// contentText reads a message content: a string, null, absent, or (some
// compatible servers) a list of parts with text.
func contentText(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text + p.Refusal)
		}
		return b.String()
	}
	return string(raw)
}

// rawArgs is the arguments text of a tool call: the string as sent (valid
// JSON or not: the mock engine reports it), an object's JSON text, or "{}"
// when there is nothing.
func rawArgs(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "{}"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if strings.TrimSpace(s) == "" {
			return "{}"
		}
		return s
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) == nil {
		return b.String()
	}
	return string(raw)
}

// argsText is what goes back as the arguments of an earlier call.
func argsText(args string) string {
	if strings.TrimSpace(args) == "" {
		return "{}"
	}
	return args
}

// toolResultText is the content of a tool result for the OpenAI APIs,
// which have no error flag: an error is prefixed with "Error: ", unless
// its text already starts with "error" in any case, so that the model can
// tell a failed call from one that returned the same words.
func toolResultText(m model.Message) string {
	if !m.IsError || strings.HasPrefix(strings.ToLower(m.Text), "error") {
		return m.Text
	}
	return "Error: " + m.Text
}

// schemaOf is a tool's parameters: its input schema, or an object with no
// properties when it declares none.
func schemaOf(t model.ToolDef) any {
	if t.InputSchema == nil {
		return jsonObject{{"type", "object"}, {"properties", jsonObject{}}}
	}
	return objectSchema(t.InputSchema)
}

// objectSchema is a tool's input schema as the APIs accept it: a mapping
// without "type" gets "type": "object" (tool arguments are objects, and
// every provider rejects a tool schema without a type); anything else is
// sent as it is.
func objectSchema(schema any) any {
	m, ok := schema.(map[string]any)
	if !ok {
		return schema
	}
	if _, typed := m["type"]; typed {
		return m
	}
	out := maps.Clone(m)
	out["type"] = "object"
	return out
}

// assistantTurns counts the assistant messages so far.
func assistantTurns(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == model.Assistant {
			n++
		}
	}
	return n
}

// endpoint joins a base URL (which for OpenAI includes /v1) and a path;
// a query of the base (an api-version, say) stays at the end.
func endpoint(base, path string) string {
	if base == "" {
		base = DefaultOpenAIBaseURL
	}
	return withQuery(base, func(b string) string { return strings.TrimRight(b, "/") + "/" + path })
}

// withQuery applies join to the part of base before its query or
// fragment and puts them back after it.
func withQuery(base string, join func(string) string) string {
	i := strings.IndexAny(base, "?#")
	if i < 0 {
		return join(base)
	}
	return join(base[:i]) + base[i:]
}

// openAIHeader authenticates with a bearer key, when there is one (local
// compatible servers need none).
func openAIHeader(key string) http.Header {
	h := http.Header{}
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	return h
}

// checkParams refuses params that would take over what the loop writes.
func checkParams(params map[string]any, owned []string) error {
	for _, k := range owned {
		if _, ok := params[k]; ok {
			return fmt.Errorf("agent.params sets %q, which dryfire's loop writes itself on every call; remove it from agent.params", k)
		}
	}
	return checkStream(params)
}

// appendParams adds every param not in skip, in key order.
func appendParams(body jsonObject, params map[string]any, skip []string) jsonObject {
	keys := make([]string, 0, len(params))
	for k := range params {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		body = append(body, jsonKV{k, params[k]})
	}
	return body
}

// errorOf reads an error body's type and message: OpenAI's
// {"error":{"message","type","param","code"}}, Anthropic's
// {"type":"error","error":{"type","message"}}, Gemini's google.rpc.Status
// {"error":{"code","message","status"}} (its status the type), and the
// shapes compatible servers, Ollama and Bedrock use ({"error":"text"},
// {"message":...}, {"detail":...}).
func errorOf(data []byte) (typ, msg string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(data, &body) != nil {
		return "", ""
	}
	var e struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Status  string `json:"status"`
		Param   any    `json:"param"`
		Code    any    `json:"code"`
	}
	var s string
	switch {
	case len(body.Error) > 0 && json.Unmarshal(body.Error, &e) == nil && e.Status != "":
		return e.Status, e.Message
	case len(body.Error) > 0 && json.Unmarshal(body.Error, &e) == nil && (e.Message != "" || e.Type != ""):
		typ, msg = e.Type, e.Message
		if code := scalarText(e.Code); code != "" && code != typ {
			typ = joinNonEmpty(" ", typ, "("+code+")")
		}
		if p := scalarText(e.Param); p != "" && !strings.Contains(msg, p) {
			msg += " (param: " + p + ")"
		}
		return typ, msg
	case len(body.Error) > 0 && json.Unmarshal(body.Error, &s) == nil:
		return "", s
	case body.Message != "":
		return "", body.Message
	case len(body.Detail) > 0:
		if json.Unmarshal(body.Detail, &s) == nil {
			return "", s
		}
		return "", string(body.Detail)
	}
	return "", ""
}

// scalarText is a string or number as text; "" for null and other values.
func scalarText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return fmt.Sprint(v)
	}
	return ""
}

func joinNonEmpty(sep string, parts ...string) string {
	var out []string
	for _, p := range parts {
		if p != "" {
			out = append(out, p)
		}
	}
	return strings.Join(out, sep)
}

func excerpt(data []byte) string { return excerptString(string(data)) }

func excerptString(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// jsonObject is a JSON object whose keys keep their order, so that a request
// body reads the way the API documents it and is the same bytes every time.
type jsonObject []jsonKV

type jsonKV struct {
	k string
	v any
}

// MarshalJSON writes the keys in order, without HTML escaping.
func (o jsonObject) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := encodeJSON(&b, p.k); err != nil {
			return nil, err
		}
		b.WriteByte(':')
		if err := encodeJSON(&b, p.v); err != nil {
			return nil, fmt.Errorf("%s: %w", p.k, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func encodeJSON(b *bytes.Buffer, v any) error {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// Wire shapes of a chat completion and its chunks, in the API's key order,
// as written and as read (parseChat; a chunk as the stream's fold reads
// it): what compatible servers send in other shapes is read as it comes
// (content a list of parts, arguments an object, detail counts of any
// kind; error instead of choices).
type (
	chatFunction struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a string written
	}
	chatToolCall struct {
		ID       string       `json:"id"`
		Type     string       `json:"type"`
		Function chatFunction `json:"function"`
	}
	chatMessage struct {
		Role        string          `json:"role"`
		Content     json.RawMessage `json:"content"` // a string or null written
		Refusal     *string         `json:"refusal"`
		ToolCalls   []chatToolCall  `json:"tool_calls,omitempty"`
		Annotations any             `json:"annotations"`
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
		PromptTokensDetails     map[string]any `json:"prompt_tokens_details"`
		CompletionTokensDetails map[string]any `json:"completion_tokens_details"`
	}
	chatCompletion struct {
		ID          string          `json:"id"`
		Object      string          `json:"object"`
		Created     int64           `json:"created"`
		Model       string          `json:"model"`
		Choices     []chatChoice    `json:"choices"`
		Usage       chatUsage       `json:"usage"`
		ServiceTier string          `json:"service_tier"`
		Fingerprint string          `json:"system_fingerprint,omitempty"`
		Error       json.RawMessage `json:"error,omitempty"` // read, never written
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
		Fingerprint string            `json:"system_fingerprint,omitempty"`
		Choices     []chatChunkChoice `json:"choices"`
		// Usage is null in every chunk but the last when the request asks
		// for stream_options.include_usage, and absent otherwise.
		Usage json.RawMessage `json:"usage,omitempty"`
	}
)

// writeChat writes r as a chat.completion, or streamed: a first chunk with
// the role, the text in pieces, each tool call (its id and name, then its
// arguments in pieces), a chunk with the finish reason, the usage chunk
// when asked for, and data: [DONE].
func writeChat(r *Reply) (body []byte, events [][]byte) {
	msg := chatMessage{Role: "assistant", Annotations: []any{}}
	if r.Text != "" || len(r.Calls) == 0 {
		msg.Content = marshal(r.Text)
	}
	finish := "stop"
	for _, c := range r.Calls {
		msg.ToolCalls = append(msg.ToolCalls, chatToolCall{ID: c.ID, Type: "function", Function: chatFunction{Name: c.Name, Arguments: marshal(c.Args)}})
		finish = "tool_calls"
	}
	u := r.Usage
	usage := chatUsage{PromptTokens: u.InputTokens, CompletionTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens,
		PromptTokensDetails:     map[string]any{"audio_tokens": 0, "cached_tokens": 0},
		CompletionTokensDetails: map[string]any{"accepted_prediction_tokens": 0, "audio_tokens": 0, "reasoning_tokens": 0, "rejected_prediction_tokens": 0}}
	id := "chatcmpl-" + r.ID
	if !r.Stream {
		return marshal(chatCompletion{ID: id, Object: "chat.completion", Created: r.Created, Model: r.Model,
			Choices: []chatChoice{{Message: msg, FinishReason: finish}}, Usage: usage, ServiceTier: "default", Fingerprint: r.Fingerprint}), nil
	}
	var null json.RawMessage
	if r.IncludeUsage {
		null = json.RawMessage("null")
	}
	send := func(choices []chatChunkChoice, usage json.RawMessage) {
		events = append(events, Frame("", marshal(chatChunk{ID: id, Object: "chat.completion.chunk", Created: r.Created, Model: r.Model,
			ServiceTier: "default", Fingerprint: r.Fingerprint, Choices: choices, Usage: usage})))
	}
	delta := func(d chatDelta) { send([]chatChunkChoice{{Delta: d}}, null) }
	empty := ""
	delta(chatDelta{Role: "assistant", Content: &empty, Refusal: json.RawMessage("null")})
	for _, p := range pieces(r.Text) {
		delta(chatDelta{Content: &p})
	}
	for i, tc := range r.Calls {
		delta(chatDelta{ToolCalls: []chatDeltaCall{{Index: i, ID: tc.ID, Type: "function", Function: chatDeltaFunction{Name: tc.Name}}}})
		for _, p := range pieces(tc.Args) {
			delta(chatDelta{ToolCalls: []chatDeltaCall{{Index: i, Function: chatDeltaFunction{Arguments: p}}}})
		}
	}
	send([]chatChunkChoice{{FinishReason: &finish}}, null)
	if r.IncludeUsage {
		send([]chatChunkChoice{}, marshal(usage))
	}
	return nil, append(events, []byte("data: [DONE]\n\n"))
}
