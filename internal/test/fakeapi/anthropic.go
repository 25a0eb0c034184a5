package fakeapi

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	dmodel "github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewAnthropic serves the Anthropic Messages API (POST /v1/messages, JSON
// or, with "stream": true, an event stream) from brain.
//
// It checks a request the way the real API does and refuses it with the
// real status and error body, {"type":"error","error":{"type":
// "invalid_request_error","message":…}}, and the real API's messages:
// missing or invalid model and max_tokens, unknown top-level keys, empty
// messages, a first message that is not the user's, roles that do not
// alternate, a "system" (or any other) role in messages, empty content,
// unknown content blocks, a tool_use whose input is not an object, a
// tool_result that answers no tool_use of the assistant message just
// before it, a tool_use the next user message leaves unanswered (its
// tool_result blocks must come first), a thinking block that does not come
// back as it was sent, tools without an object input_schema. With
// RequireKey it also wants x-api-key (or Authorization: Bearer) and
// answers 401 authentication_error without it. A missing anthropic-version
// header is refused, as the real API does.
//
// Answers are real-shaped messages and deterministic: the same request
// gets the same bytes (ids are hashes of the request, usage comes from
// the Turn or from sizes). A turn longer than the request's max_tokens is
// cut there, with stop_reason max_tokens.
func NewAnthropic(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	return start(anthropicHandler(brain, cfg.key), cfg)
}

func anthropicHandler(brain Brain, key string) *handler {
	return &handler{api: wire.Anthropic, check: func(r *http.Request) *fault {
		if r.URL.Path != "/v1/messages" {
			return &fault{status: http.StatusNotFound, typ: "not_found_error", msg: "Not Found"}
		}
		if r.Method != http.MethodPost {
			return &fault{status: http.StatusMethodNotAllowed, msg: "Method Not Allowed"}
		}
		if f := anthropicAuth(r, key); f != nil {
			return f
		}
		if r.Header.Get("Anthropic-Version") == "" {
			return invalid("anthropic-version: header is required")
		}
		return nil
	}, answer: func(_ http.ResponseWriter, r *http.Request, data []byte) (*wire.Reply, *fault) {
		body, f := parseAnthropicRequest(data)
		if f != nil {
			return nil, f
		}
		turn, err := brain.Next(conversation(wire.Anthropic, r, data))
		if err != nil {
			return nil, &fault{status: http.StatusInternalServerError, typ: "api_error", code: fakeBrain, msg: "fake model: " + err.Error()}
		}
		return anthropicReply(body, turn)
	}}
}

func anthropicAuth(r *http.Request, want string) *fault {
	if want == "" {
		return nil
	}
	key := r.Header.Get("X-Api-Key")
	if key == "" {
		if b, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
			key = b
		}
	}
	switch {
	case key == "":
		return &fault{status: http.StatusUnauthorized, typ: "authentication_error", msg: "x-api-key header is required"}
	case key != want:
		return &fault{status: http.StatusUnauthorized, typ: "authentication_error", msg: "invalid x-api-key"}
	}
	return nil
}

// anthropicKeys are the top-level keys the Messages API accepts.
var anthropicKeys = map[string]bool{
	"model": true, "messages": true, "max_tokens": true, "system": true,
	"metadata": true, "stop_sequences": true, "stream": true, "temperature": true,
	"top_p": true, "top_k": true, "tools": true, "tool_choice": true,
	"thinking": true, "service_tier": true, "container": true, "mcp_servers": true,
	"context_management": true, "output_config": true, "output_format": true,
	"inference_geo": true,
}

// anthropicBlockTags are the content block types a request may hold.
var anthropicBlockTags = []string{
	"text", "image", "document", "search_result", "thinking", "redacted_thinking",
	"tool_use", "tool_result", "server_tool_use", "web_search_tool_result",
}

// Blocks only one side of the conversation may send.
var (
	anthUserOnlyBlocks      = map[string]bool{"tool_result": true, "image": true, "document": true, "search_result": true}
	anthAssistantOnlyBlocks = map[string]bool{"tool_use": true, "thinking": true, "redacted_thinking": true, "server_tool_use": true, "web_search_tool_result": true}
)

var anthToolName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,128}$`)

// A parsed request.
type (
	anthropicRequest struct {
		canonical []byte // the body re-encoded: keys sorted, compact
		messages  []byte // the messages re-encoded
		model     string
		maxTokens int
		msgs      []anthropicMsg
		stream    bool
	}
	anthropicMsg struct {
		role   string
		blocks []anthropicBlock
		// text is set for string content
		text     string
		isString bool
	}
	anthropicBlock struct {
		typ      string
		text     string
		id       string // tool_use id, tool_result tool_use_id
		thinking string
		sig      string
	}
)

// parseAnthropicRequest checks a request body like the API does.
func parseAnthropicRequest(data []byte) (*anthropicRequest, *fault) {
	v, ok := decodeJSON(data)
	if !ok {
		return nil, invalid("There was an error parsing the body of your request: it is not valid JSON")
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("Input should be a valid dictionary or object to extract fields from")
	}
	req := &anthropicRequest{}
	req.canonical, _ = wire.Marshal(top)
	req.messages, _ = wire.Marshal(top["messages"])

	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !anthropicKeys[k] {
			return nil, invalid("%s: Extra inputs are not permitted", k)
		}
	}

	model, f := anthField[string](top, "", "model", true)
	if f != nil {
		return nil, f
	}
	if model == "" {
		return nil, invalid("model: String should have at least 1 character")
	}
	req.model = model

	// max_tokens
	mt, ok := top["max_tokens"]
	if !ok {
		return nil, invalid("max_tokens: Field required")
	}
	num, ok := mt.(json.Number)
	if !ok {
		return nil, invalid("max_tokens: Input should be a valid integer")
	}
	n, err := strconv.ParseInt(num.String(), 10, 64)
	if err != nil {
		f, ferr := num.Float64()
		if ferr != nil || f != float64(int64(f)) {
			return nil, invalid("max_tokens: Input should be a valid integer, got a number with a fractional part")
		}
		n = int64(f)
	}
	if n < 1 {
		return nil, invalid("max_tokens: Input should be greater than or equal to 1")
	}
	req.maxTokens = int(min(n, 1<<31-1))

	// system
	if sv, ok := top["system"]; ok {
		if f := anthSystem(sv); f != nil {
			return nil, f
		}
	}

	// messages, shape
	list, f := anthField[[]any](top, "", "messages", true)
	if f != nil {
		return nil, f
	}
	for i, mv := range list {
		m, f := parseAnthropicMsg(i, mv)
		if f != nil {
			return nil, f
		}
		req.msgs = append(req.msgs, m)
	}

	// tools
	if tv, ok := top["tools"]; ok {
		if f := checkAnthropicTools(tv); f != nil {
			return nil, f
		}
	}

	if sv, ok := top["stream"]; ok && sv != nil {
		s, ok := sv.(bool)
		if !ok {
			return nil, invalid("stream: Input should be a valid boolean")
		}
		req.stream = s
	}

	// messages, meaning
	if f := checkAnthropicConversation(req.msgs); f != nil {
		return nil, f
	}
	return req, nil
}

// anthField is m's key (under at, "" at the top): refused as the API
// refuses a required one missing, or one that is not a T (a string,
// list, dictionary or boolean).
func anthField[T any](m map[string]any, at, key string, required bool) (T, *fault) {
	var v T
	if at != "" {
		at += "."
	}
	raw, ok := m[key]
	if !ok {
		if required {
			return v, invalid("%s%s: Field required", at, key)
		}
		return v, nil
	}
	v, ok = raw.(T)
	if !ok {
		kind := map[string]string{"string": "string", "[]interface {}": "list", "map[string]interface {}": "dictionary", "bool": "boolean"}[fmt.Sprintf("%T", v)]
		return v, invalid("%s%s: Input should be a valid %s", at, key, kind)
	}
	return v, nil
}

func anthSystem(v any) *fault {
	switch s := v.(type) {
	case string:
		return nil
	case []any:
		for i, b := range s {
			bm, ok := b.(map[string]any)
			if !ok {
				return invalid("system.%d: Input should be a valid dictionary", i)
			}
			if bm["type"] != "text" {
				return invalid("system.%d.type: Input should be 'text'", i)
			}
			t, ok := bm["text"].(string)
			if !ok {
				return invalid("system.%d.text: Field required", i)
			}
			if t == "" {
				return invalid("system: text content blocks must be non-empty")
			}
		}
		return nil
	}
	return invalid("system: Input should be a valid string")
}

func parseAnthropicMsg(i int, v any) (anthropicMsg, *fault) {
	var m anthropicMsg
	obj, ok := v.(map[string]any)
	if !ok {
		return m, invalid("messages.%d: Input should be a valid dictionary", i)
	}
	rv, ok := obj["role"]
	if !ok {
		return m, invalid("messages.%d.role: Field required", i)
	}
	role, _ := rv.(string)
	switch role {
	case "user", "assistant":
	case "system":
		return m, invalid(`messages: Unexpected role "system". The Messages API accepts a top-level ` + "`system`" + ` parameter, not "system" as an input message role.`)
	default:
		return m, invalid("messages.%d.role: Input should be 'user' or 'assistant'", i)
	}
	m.role = role
	cv, ok := obj["content"]
	if !ok {
		return m, invalid("messages.%d.content: Field required", i)
	}
	switch c := cv.(type) {
	case string:
		m.text, m.isString = c, true
		return m, nil
	case []any:
		for k, bv := range c {
			b, f := parseAnthropicBlock(fmt.Sprintf("messages.%d.content.%d", i, k), bv)
			if f != nil {
				return m, f
			}
			if role == "user" && anthAssistantOnlyBlocks[b.typ] {
				return m, invalid("messages.%d.content.%d: `%s` blocks are only allowed in assistant messages", i, k, b.typ)
			}
			if role == "assistant" && anthUserOnlyBlocks[b.typ] {
				return m, invalid("messages.%d.content.%d: `%s` blocks are only allowed in user messages", i, k, b.typ)
			}
			m.blocks = append(m.blocks, b)
		}
		return m, nil
	}
	return m, invalid("messages.%d.content: Input should be a valid string or a valid list", i)
}

func parseAnthropicBlock(at string, v any) (anthropicBlock, *fault) {
	var b anthropicBlock
	obj, ok := v.(map[string]any)
	if !ok {
		return b, invalid("%s: Input should be a valid dictionary", at)
	}
	tv, ok := obj["type"]
	if !ok {
		return b, invalid("%s: Unable to extract tag using discriminator 'type'", at)
	}
	typ, _ := tv.(string)
	if !slices.Contains(anthropicBlockTags, typ) {
		tags := "'" + strings.Join(anthropicBlockTags, "', '") + "'"
		return b, invalid("%s: Input tag '%v' found using 'type' does not match any of the expected tags: %s", at, tv, tags)
	}
	b.typ = typ
	at += "." + typ
	str := func(key string) (string, *fault) { return anthField[string](obj, at, key, true) }
	var f *fault
	switch typ {
	case "text":
		b.text, f = str("text")
	case "thinking":
		if b.thinking, f = str("thinking"); f == nil {
			b.sig, f = str("signature")
		}
	case "redacted_thinking":
		_, f = str("data")
	case "tool_use":
		if b.id, f = str("id"); f == nil {
			_, f = str("name")
		}
		if f == nil {
			_, f = anthField[map[string]any](obj, at, "input", true)
		}
	case "tool_result":
		if b.id, f = str("tool_use_id"); f != nil {
			return b, f
		}
		if _, f = anthField[bool](obj, at, "is_error", false); f != nil {
			return b, f
		}
		if cv, ok := obj["content"]; ok {
			switch c := cv.(type) {
			case string:
			case []any:
				for k, iv := range c {
					inner, f := parseAnthropicBlock(fmt.Sprintf("%s.content.%d", at, k), iv)
					if f != nil {
						return b, f
					}
					if inner.typ == "text" && inner.text == "" {
						return b, invalid("messages: text content blocks must be non-empty")
					}
				}
			default:
				return b, invalid("%s.content: Input should be a valid string or a valid list", at)
			}
		}
	}
	return b, f
}

func checkAnthropicTools(v any) *fault {
	list, f := anthField[[]any](map[string]any{"tools": v}, "", "tools", true)
	if f != nil {
		return f
	}
	var names []string
	for i, tv := range list {
		t, ok := tv.(map[string]any)
		if !ok {
			return invalid("tools.%d: Input should be a valid dictionary", i)
		}
		if typ, ok := t["type"]; ok && typ != "custom" {
			// Server tools (web_search_…, bash_…) have their own shapes;
			// this server runs none of them.
			return invalid("tools.%d.type: this fake server knows custom tools only, not %v", i, typ)
		}
		at := fmt.Sprintf("tools.%d.custom", i)
		name, f := anthField[string](t, at, "name", true)
		if f != nil {
			return f
		}
		if !anthToolName.MatchString(name) {
			return invalid("%s.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'", at)
		}
		if _, f := anthField[string](t, at, "description", false); f != nil {
			return f
		}
		schema, f := anthField[map[string]any](t, at, "input_schema", true)
		if f != nil {
			return f
		}
		st, ok := schema["type"]
		if !ok {
			return invalid("%s.input_schema.type: Field required", at)
		}
		if st != "object" {
			return invalid("%s.input_schema.type: Input should be 'object'", at)
		}
		if slices.Contains(names, name) {
			return invalid("tools: Tool names must be unique.")
		}
		names = append(names, name)
	}
	return nil
}

// checkAnthropicConversation checks what the messages mean together.
func checkAnthropicConversation(msgs []anthropicMsg) *fault {
	if len(msgs) == 0 {
		return invalid("messages: at least one message is required")
	}
	if msgs[0].role != "user" {
		return invalid(`messages: first message must use the "user" role`)
	}
	for i, m := range msgs {
		if i > 0 && msgs[i-1].role == m.role {
			return invalid(`messages: roles must alternate between "user" and "assistant", but found multiple %q roles in a row`, m.role)
		}
		last := i == len(msgs)-1
		if (m.isString && m.text == "" || !m.isString && len(m.blocks) == 0) && !(last && m.role == "assistant") {
			return invalid("messages.%d: all messages must have non-empty content except for the optional final assistant message", i)
		}
		for k, b := range m.blocks {
			if b.typ == "text" && b.text == "" {
				return invalid("messages: text content blocks must be non-empty")
			}
			if b.typ == "thinking" && b.sig != anthThinkingSignature(b.thinking) {
				return invalid("messages.%d.content.%d: Invalid `signature` in `thinking` block", i, k)
			}
		}
	}
	for i, m := range msgs {
		var uses []string // tool_use ids of the assistant message before
		if i > 0 {
			uses = anthToolUseIDs(msgs[i-1])
		}
		if m.role == "user" {
			for k, b := range m.blocks {
				if b.typ == "tool_result" && !slices.Contains(uses, b.id) {
					return invalid("messages.%d.content.%d: unexpected `tool_use_id` found in `tool_result` blocks: %s. Each `tool_result` block must have a corresponding `tool_use` block in the previous message.", i, k, b.id)
				}
			}
			var answered []string
			for _, b := range m.blocks {
				if b.typ != "tool_result" {
					break
				}
				answered = append(answered, b.id)
			}
			if missing := slices.DeleteFunc(slices.Clone(uses), func(id string) bool { return slices.Contains(answered, id) }); len(missing) > 0 {
				return anthUnanswered(i-1, missing)
			}
		}
		if m.role == "assistant" && i == len(msgs)-1 {
			if ids := anthToolUseIDs(m); len(ids) > 0 {
				return anthUnanswered(i, ids)
			}
		}
	}
	return nil
}

func anthUnanswered(i int, ids []string) *fault {
	return invalid("messages.%d: `tool_use` ids were found without `tool_result` blocks immediately after: %s. Each `tool_use` block must have a corresponding `tool_result` block in the next message.", i, strings.Join(ids, ", "))
}

func anthToolUseIDs(m anthropicMsg) []string {
	if m.role != "assistant" {
		return nil
	}
	var ids []string
	for _, b := range m.blocks {
		if b.typ == "tool_use" {
			ids = append(ids, b.id)
		}
	}
	return ids
}

// anthThinkingSignature is the signature the server gives a thinking block,
// and wants back with it.
func anthThinkingSignature(thinking string) string {
	sum := sha256.Sum256([]byte("dryfire fake thinking\x00" + thinking))
	return base64.StdEncoding.EncodeToString(sum[:])
}

// anthropicID is prefix + "01" + 22 characters derived from parts.
func anthropicID(prefix string, parts ...[]byte) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	h := sha256.New()
	h.Write([]byte(prefix))
	for _, p := range parts {
		h.Write([]byte{0})
		h.Write(p)
	}
	sum := h.Sum(nil)
	id := make([]byte, 22)
	for i := range id {
		id[i] = alphabet[int(sum[i])%len(alphabet)]
	}
	return prefix + "01" + string(id)
}

// anthTokens is a stand-in token count for n bytes of text.
func anthTokens(n int) int { return max(1, (n+3)/4) }

// anthropicReply is the message the server answers turn with.
func anthropicReply(req *anthropicRequest, turn Turn) (*wire.Reply, *fault) {
	r := &wire.Reply{ID: strings.TrimPrefix(anthropicID("msg_", req.canonical), "msg_"), Model: req.model, Stream: req.stream}
	size := len(turn.Thinking) + len(turn.Text)
	for i, c := range turn.ToolCalls {
		args := strings.TrimSpace(c.Args)
		if args == "" {
			args = "{}"
		}
		in := decodeObject([]byte(args))
		if in == nil {
			return nil, &fault{status: http.StatusInternalServerError, typ: "api_error", code: fakeBrain,
				msg: fmt.Sprintf("fake model: the arguments of tool call %d (%s) are not a JSON object: %s", i, c.Name, c.Args)}
		}
		input, _ := wire.Marshal(in)
		id := c.ID
		if id == "" {
			id = anthropicID("toolu_", req.messages, []byte(strconv.Itoa(i)))
		}
		r.Calls = append(r.Calls, tool.Call{ID: id, Name: c.Name, Args: string(input)})
		size += len(c.Name) + len(input)
	}
	used := turn.OutputTokens
	if used == 0 {
		used = anthTokens(size)
	}
	r.Thinking, r.Text = turn.Thinking, turn.Text
	if used > req.maxTokens {
		// Cut where max_tokens runs out: the thinking and text first,
		// the tool calls after them.
		r.Stop = "max_tokens"
		budget := req.maxTokens * 4
		r.Thinking = anthCut(r.Thinking, budget)
		budget -= len(r.Thinking)
		r.Text = anthCut(r.Text, budget)
		budget -= len(r.Text)
		if budget <= 0 {
			r.Calls = nil
		}
		used = req.maxTokens
	}
	if r.Thinking != "" {
		r.Signature, r.ThinkingTokens = anthThinkingSignature(r.Thinking), anthTokens(len(r.Thinking))
	}
	r.Usage = dmodel.Usage{InputTokens: turn.InputTokens, OutputTokens: used}
	if r.Usage.InputTokens == 0 {
		r.Usage.InputTokens = anthTokens(len(req.canonical))
	}
	return r, nil
}

// anthCut shortens s to at most n bytes, on a rune boundary.
func anthCut(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
