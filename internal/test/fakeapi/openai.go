package fakeapi

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	dmodel "github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Created is the fixed creation time of every answer (Unix seconds), so
// that the same request always gets the same bytes.
const Created = 1700000000

// NewOpenAIChat serves OpenAI Chat Completions at POST
// /v1/chat/completions (so a client's base URL is server.URL + "/v1"), and as Azure
// OpenAI does (azure.go) at /openai/deployments/D/chat/completions?api-version=V
// and /openai/v1/chat/completions with the key in api-key
// (AZURE_OPENAI_ENDPOINT is server.URL). It
// rejects what the real API rejects — a missing model, no messages, an
// unknown role or parameter, a tool message that answers no tool call of
// the assistant message before it, a tool call left unanswered, arguments
// that are not a string, a tool without a name or with a bad schema — with
// status 400 and the real error body {"error":{"message","type","param",
// "code"}}, and answers everything else from brain with a chat.completion
// whose bytes depend only on the request.
func NewOpenAIChat(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	return start(openAIHandler(wire.OpenAIChat, chatPath, cfg.key, brain, func(req map[string]any, conv Conversation) (func(*wire.Reply, Turn), *fault) {
		if e := checkChat(req, conv.Messages); e != nil {
			return nil, e
		}
		stream, _ := streamFlag(req)
		includeUsage, e := streamOptions(req, stream)
		return func(r *wire.Reply, _ Turn) {
			r.Stream, r.IncludeUsage, r.Fingerprint = stream, includeUsage, "fp_"+digest([]byte(conv.Model), "fingerprint")[:10]
		}, e
	}), cfg)
}

// chatPath is the Chat Completions route.
const chatPath = "/v1/chat/completions"

// openAIHandler is what the Chat and Responses servers share: the route
// (path, or Azure OpenAI's form of it), the key, the JSON body, the
// error shape, the brain's answer; check checks the body (conv: as wire
// reads it) and says how its answer differs from reply's.
func openAIHandler(api wire.API, path, key string, brain Brain, check func(req map[string]any, conv Conversation) (func(*wire.Reply, Turn), *fault)) *handler {
	return &handler{api: api, check: func(r *http.Request) *fault {
		azure, versioned := azureRoute(r.URL.Path, path)
		switch {
		case r.Method != http.MethodPost || r.URL.Path != path && !azure:
			return &fault{status: http.StatusNotFound, msg: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)}
		case !azure:
			return checkBearer(r, key)
		// Azure OpenAI: the version in the query, the key in api-key.
		case versioned && r.URL.Query().Get("api-version") == "":
			return &fault{status: http.StatusNotFound, msg: "Resource not found"}
		case key != "" && r.Header.Get("Api-Key") != key:
			return &fault{status: http.StatusUnauthorized, msg: "Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}
		}
		return nil
	}, answer: func(w http.ResponseWriter, r *http.Request, body []byte) (*wire.Reply, *fault) {
		req := decodeObject(body)
		if req == nil {
			return nil, &fault{msg: "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)"}
		}
		conv := conversation(api, r, body)
		dress, f := check(req, conv)
		if f != nil {
			return nil, f
		}
		turn, err := brain.Next(conv)
		if err != nil {
			return nil, brainError(err)
		}
		rep := reply(body, conv.Model, turn)
		dress(rep, turn)
		w.Header().Set("X-Request-Id", "req_"+digest(body, "request")[:32])
		return rep, nil
	}, finish: func(r *http.Request, data []byte, events [][]byte) ([]byte, [][]byte) {
		if azure, _ := azureRoute(r.URL.Path, path); azure && path == chatPath {
			return azureChat(data, events)
		}
		return data, events
	}}
}

// checkBearer is the 401 of a request without the required key.
func checkBearer(r *http.Request, key string) *fault {
	if key == "" {
		return nil
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || strings.TrimSpace(got) == "" {
		return &fault{status: http.StatusUnauthorized, msg: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username. You can obtain an API key from https://platform.openai.com/account/api-keys."}
	}
	if got != key {
		return &fault{status: http.StatusUnauthorized, code: "invalid_api_key", msg: fmt.Sprintf("Incorrect API key provided: %s. You can find your API key at https://platform.openai.com/account/api-keys.", maskKey(got))}
	}
	return nil
}

// maskKey hides a key the way the API does in its messages.
func maskKey(k string) string {
	if len(k) <= 8 {
		return strings.Repeat("*", len(k))
	}
	return k[:3] + strings.Repeat("*", len(k)-7) + k[len(k)-4:]
}

// Chat Completions

var chatKeys = []string{"audio", "frequency_penalty", "function_call", "functions", "logit_bias", "logprobs",
	"max_completion_tokens", "max_tokens", "messages", "metadata", "modalities", "model", "n",
	"parallel_tool_calls", "prediction", "presence_penalty", "prompt_cache_key", "prompt_cache_retention",
	"reasoning_effort", "response_format", "safety_identifier", "seed", "service_tier", "stop", "store",
	"stream", "stream_options", "temperature", "tool_choice", "tools", "top_logprobs", "top_p", "user",
	"verbosity", "web_search_options"}

var chatRoles = []string{"system", "assistant", "user", "function", "tool", "developer"}

// toolNamePattern is what the API allows as a function name.
var toolNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

// checkChat validates a request as the API does; msgs are its
// messages as wire reads them (chatPairing's).
func checkChat(req map[string]any, msgs []Msg) *fault {
	if _, e := requiredModel(req, false); e != nil {
		return e
	}
	rawMsgs, ok := req["messages"]
	if !ok {
		return missing("messages")
	}
	if e := unknownKeys(req, chatKeys, nil); e != nil {
		return e
	}
	if _, e := streamFlag(req); e != nil {
		return e
	}
	list, ok := rawMsgs.([]any)
	if !ok {
		return invalidType("messages", "an array of objects", rawMsgs)
	}
	if len(list) == 0 {
		return &fault{param: "messages", code: "empty_array", msg: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."}
	}
	var index []int // of each of msgs in the request (system messages are not among them)
	for i, raw := range list {
		at := fmt.Sprintf("messages[%d]", i)
		m, ok := raw.(map[string]any)
		if !ok {
			return invalidType(at, "an object", raw)
		}
		role, e := enum(m, at+".role", "role", chatRoles)
		switch {
		case e != nil:
			return e
		case role == "assistant":
			e = chatAssistant(m, at)
		case role == "tool":
			if id, ok := m["tool_call_id"]; !ok {
				e = missing(at + ".tool_call_id")
			} else if _, ok := id.(string); !ok {
				e = invalidType(at+".tool_call_id", "a string", id)
			}
		case role == "function":
			e = &fault{param: at + ".role", msg: "fake server: deprecated 'function' messages are not supported; use tool messages"}
		}
		if e == nil && role != "assistant" {
			e = chatContent(m, at, true)
		}
		if e != nil {
			return e
		}
		if role != "system" && role != "developer" {
			index = append(index, i)
		}
	}
	if e := chatPairing(msgs, index); e != nil {
		return e
	}
	return chatTools(req)
}

// chatContent checks a message's content: a string or a list of parts.
func chatContent(m map[string]any, at string, required bool) *fault {
	raw, ok := m["content"]
	if !ok || raw == nil {
		if required {
			return missing(at + ".content")
		}
		return nil
	}
	switch v := raw.(type) {
	case string:
		return nil
	case []any:
		for j, p := range v {
			pat := fmt.Sprintf("%s.content[%d]", at, j)
			part, ok := p.(map[string]any)
			if !ok {
				return invalidType(pat, "an object", p)
			}
			if _, ok := part["type"]; !ok {
				return missing(pat + ".type")
			}
			if _, ok := part["text"].(string); part["type"] == "text" && !ok {
				return missing(pat + ".text")
			}
		}
		return nil
	}
	return invalidType(at+".content", "one of a string or array of objects", raw)
}

func chatAssistant(m map[string]any, at string) *fault {
	rawCalls, hasCalls := m["tool_calls"]
	calls, ok := rawCalls.([]any)
	switch {
	case !hasCalls || rawCalls == nil:
	case !ok:
		return invalidType(at+".tool_calls", "an array of objects", rawCalls)
	case len(calls) == 0:
		return &fault{param: at + ".tool_calls", code: "empty_array", msg: fmt.Sprintf("Invalid '%s.tool_calls': empty array. Expected an array with minimum length 1, but got an empty array instead.", at)}
	}
	for j, raw := range calls {
		cat := fmt.Sprintf("%s.tool_calls[%d]", at, j)
		call, ok := raw.(map[string]any)
		if !ok {
			return invalidType(cat, "an object", raw)
		}
		id, e := requiredString(call, cat+".id", "id")
		if e != nil {
			return e
		}
		if len(id) > 40 {
			return &fault{param: cat + ".id", code: "string_above_max_length", msg: fmt.Sprintf("Invalid '%s.id': string too long. Expected a string with maximum length 40, but got a string with length %d instead.", cat, len(id))}
		}
		if _, e := enum(call, cat+".type", "type", []string{"function", "custom"}); e != nil {
			return e
		}
		fn, ok := call["function"].(map[string]any)
		if !ok {
			if _, present := call["function"]; present {
				return invalidType(cat+".function", "an object", call["function"])
			}
			return missing(cat + ".function")
		}
		if _, e := requiredString(fn, cat+".function.name", "name"); e != nil {
			return e
		}
		if _, e := requiredString(fn, cat+".function.arguments", "arguments"); e != nil {
			return e
		}
	}
	if raw, ok := m["content"]; (!ok || raw == nil) && len(calls) == 0 {
		return &fault{param: strings.Replace(at, "messages[", "messages.[", 1) + ".content", msg: "Invalid value for 'content': expected a string, got null."}
	}
	return chatContent(m, at, false)
}

// chatPairing checks that tool messages answer the tool calls of the
// assistant message before them, each one, before anything else is said.
// index maps each of msgs to its place in the request (system messages,
// which msgs leaves out, count there).
func chatPairing(msgs []Msg, index []int) *fault {
	var pending []string     // calls of the last assistant message not answered yet
	var open map[string]bool // calls the current run of tool messages may answer
	at := func(i int, field string) string { return fmt.Sprintf("messages.[%d].%s", index[i], field) }
	unanswered := func(param string) *fault {
		return &fault{param: param, msg: "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: " + strings.Join(pending, ", ")}
	}
	for i, m := range msgs {
		switch {
		case m.Role == "tool":
			if open == nil {
				return &fault{param: at(i, "role"), msg: "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."}
			}
			if !open[m.CallID] {
				return &fault{param: at(i, "tool_call_id"), msg: fmt.Sprintf("Invalid parameter: 'tool_call_id' of '%s' not found in 'tool_calls' of previous message.", m.CallID)}
			}
			pending = slices.DeleteFunc(pending, func(id string) bool { return id == m.CallID })
		default:
			if len(pending) > 0 {
				return unanswered(at(i, "role"))
			}
			open = nil
			if m.Role == "assistant" && len(m.ToolCalls) > 0 {
				open = map[string]bool{}
				for _, tc := range m.ToolCalls {
					open[tc.ID] = true
					pending = append(pending, tc.ID)
				}
			}
		}
	}
	if len(pending) > 0 {
		return unanswered("messages")
	}
	return nil
}

// chatTools validates the tools.
func chatTools(req map[string]any) *fault {
	return eachTool(req, "an array of objects", []string{"function", "custom"}, func(at, typ string, t map[string]any) *fault {
		if typ == "custom" {
			custom, _ := t["custom"].(map[string]any)
			_, e := toolName(custom, at+".custom.name")
			return e
		}
		fn, ok := t["function"].(map[string]any)
		if !ok {
			if _, present := t["function"]; present {
				return invalidType(at+".function", "an object", t["function"])
			}
			return missing(at + ".function")
		}
		name, e := toolName(fn, at+".function.name")
		if p, ok := fn["parameters"]; ok && e == nil {
			e = schemaObject(p, name, at+".function.parameters", false)
		}
		return e
	})
}

// eachTool validates a request's tools (what a wrong list is said to
// want, the types allowed); check checks one.
func eachTool(req map[string]any, want string, types []string, check func(at, typ string, t map[string]any) *fault) *fault {
	raw, ok := req["tools"]
	if !ok || raw == nil {
		return nil
	}
	list, ok := raw.([]any)
	if !ok {
		return invalidType("tools", want, raw)
	}
	for i, r := range list {
		at := fmt.Sprintf("tools[%d]", i)
		t, ok := r.(map[string]any)
		if !ok {
			return invalidType(at, "an object", r)
		}
		typ, e := enum(t, at+".type", "type", types)
		if e == nil {
			e = check(at, typ, t)
		}
		if e != nil {
			return e
		}
	}
	return nil
}

// toolName is a tool's name, as strict as the API about it.
func toolName(m map[string]any, at string) (string, *fault) {
	name, e := requiredString(m, at, "name")
	if e != nil {
		return "", e
	}
	if name == "" {
		return "", &fault{param: at, code: "empty_string", msg: fmt.Sprintf("Invalid '%s': empty string. Expected a string with minimum length 1, but got an empty string instead.", at)}
	}
	if len(name) > 64 {
		return "", &fault{param: at, code: "string_above_max_length", msg: fmt.Sprintf("Invalid '%s': string too long. Expected a string with maximum length 64, but got a string with length %d instead.", at, len(name))}
	}
	if !toolNamePattern.MatchString(name) {
		return "", &fault{param: at, code: "invalid_value", msg: fmt.Sprintf("Invalid '%s': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.", at)}
	}
	return name, nil
}

// schemaObject checks a function's parameters: an object schema of type
// object; with strict, also the strict-mode rules at the top level.
func schemaObject(p any, name, at string, strict bool) *fault {
	s, ok := p.(map[string]any)
	if !ok {
		if p == nil && !strict {
			return nil
		}
		return invalidType(at, "an object", p)
	}
	bad := func(format string, args ...any) *fault {
		return &fault{param: at, code: "invalid_function_parameters", msg: fmt.Sprintf("Invalid schema for function '%s': ", name) + fmt.Sprintf(format, args...)}
	}
	if len(s) == 0 && !strict {
		return nil
	}
	if t := s["type"]; t != "object" {
		got := "None"
		if t != nil {
			got = fmt.Sprint(t)
		}
		return bad(`schema must be a JSON Schema of 'type: "object"', got 'type: "%s"'.`, got)
	}
	if !strict {
		return nil
	}
	if s["additionalProperties"] != false {
		return bad("In context=(), 'additionalProperties' is required to be supplied and to be false.")
	}
	props, _ := s["properties"].(map[string]any)
	req, _ := s["required"].([]any)
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if !slices.Contains(req, any(k)) {
			return bad("In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing '%s'.", k)
		}
	}
	return nil
}

// reply is the answer to a request, its bytes a function of the
// request's: ids hashed from it, usage from the turn or from sizes.
func reply(body []byte, model string, t Turn) *wire.Reply {
	in, out := tokens(body, t)
	r := &wire.Reply{ID: digest(body, "reply")[:24], Model: model, Created: Created, Text: t.Text, Usage: dmodel.Usage{InputTokens: in, OutputTokens: out}}
	for i, tc := range t.ToolCalls {
		if tc.ID == "" {
			tc.ID = "call_" + digest(body, fmt.Sprint("call", i))[:24]
		}
		r.Calls = append(r.Calls, tc)
	}
	return r
}

// Shared checks

// requiredModel is the model of a request. Chat Completions and Responses
// word a missing model differently.
func requiredModel(req map[string]any, responses bool) (string, *fault) {
	raw, ok := req["model"]
	if !ok || raw == nil || raw == "" {
		if responses && !ok {
			return "", missing("model")
		}
		if responses && raw == "" {
			return "", &fault{param: "model", code: "model_not_found", msg: "The requested model '' does not exist."}
		}
		return "", &fault{msg: "you must provide a model parameter"}
	}
	s, ok := raw.(string)
	if !ok {
		return "", invalidType("model", "a string", raw)
	}
	return s, nil
}

// unknownKeys refuses a top-level key the API does not know; special maps
// a key to its own error.
func unknownKeys(req map[string]any, known []string, special map[string]*fault) *fault {
	for _, k := range slices.Sorted(maps.Keys(req)) {
		if e, ok := special[k]; ok {
			return e
		}
		if !slices.Contains(known, k) {
			return &fault{param: k, code: "unknown_parameter", msg: fmt.Sprintf("Unknown parameter: '%s'.", k)}
		}
	}
	return nil
}

func missing(param string) *fault {
	return &fault{param: param, code: "missing_required_parameter", msg: fmt.Sprintf("Missing required parameter: '%s'.", param)}
}

func invalidType(param, want string, got any) *fault {
	return &fault{param: param, code: "invalid_type", msg: fmt.Sprintf("Invalid type for '%s': expected %s, but got %s instead.", param, want, jsonKind(got))}
}

// enum reads a required string field with a closed set of values.
func enum(m map[string]any, param, key string, values []string) (string, *fault) {
	raw, ok := m[key]
	if !ok {
		return "", missing(param)
	}
	s, _ := raw.(string)
	if !slices.Contains(values, s) {
		return "", &fault{param: param, code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", s, quotedList(values))}
	}
	return s, nil
}

// requiredString reads a required string field.
func requiredString(m map[string]any, param, key string) (string, *fault) {
	raw, ok := m[key]
	if !ok {
		return "", missing(param)
	}
	s, ok := raw.(string)
	if !ok {
		return "", invalidType(param, "a string", raw)
	}
	return s, nil
}

// quotedList is 'a', 'b', and 'c' — the API's way of listing values.
func quotedList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + v + "'"
	}
	switch len(q) {
	case 1:
		return q[0]
	case 2:
		return q[0] + " and " + q[1]
	}
	return strings.Join(q[:len(q)-1], ", ") + ", and " + q[len(q)-1]
}

// jsonKind names a decoded JSON value's type as the API's messages do.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number:
		if strings.ContainsAny(v.String(), ".eE") {
			return "a decimal number"
		}
		return "an integer"
	case []any:
		return "an array"
	}
	return "an object"
}

// brainError is the answer when the fake model has nothing to say: a
// mistake in the test, so not worth retrying.
func brainError(err error) *fault {
	return &fault{code: fakeBrain, msg: "fake server: the brain has no turn for this conversation: " + err.Error()}
}

// digest is a hex hash of the request and a label: ids that are the same
// for the same request and differ between labels.
func digest(body []byte, label string) string {
	h := sha256.New()
	h.Write(body)
	h.Write([]byte{0})
	h.Write([]byte(label))
	return hex.EncodeToString(h.Sum(nil))
}

// tokens are a turn's usage: as the brain says, else about four bytes a
// token of the request and of the answer.
func tokens(body []byte, t Turn) (in, out int) {
	in, out = t.InputTokens, t.OutputTokens
	if in == 0 {
		in = (len(body) + 3) / 4
	}
	if out == 0 {
		n := len(t.Text) + len(t.Thinking)
		for _, c := range t.ToolCalls {
			n += len(c.Name) + len(c.Args)
		}
		out = max((n+3)/4, 1)
	}
	return in, out
}
