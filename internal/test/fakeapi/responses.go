package fakeapi

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewOpenAIResponses serves the OpenAI Responses API at POST /v1/responses
// (so a client's base URL is server.URL + "/v1"). It rejects what the real
// API rejects — a missing model or input, an unknown parameter or item
// type, a function_call_output whose call_id no earlier function_call has,
// a function_call left without output, tools in the nested Chat
// Completions shape, a strict tool whose schema is not strict, a reasoning
// item it would have to look up while store is false — with the real
// status and error body, and answers everything else from brain with a
// response object whose bytes depend only on the request. A turn's
// Thinking becomes a reasoning item, with encrypted_content when the
// request includes "reasoning.encrypted_content".
func NewOpenAIResponses(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	h := openAIHandler(wire.OpenAIResponses, responsesPath, cfg.key, brain, func(req map[string]any, _ Conversation) (func(*wire.Reply, Turn), *fault) {
		r, e := checkResponses(req)
		return func(rep *wire.Reply, t Turn) {
			rep.Stream, rep.Echo, rep.Thinking = r.stream, req, t.Thinking
			if t.Thinking != "" {
				rep.ThinkingTokens = (len(t.Thinking) + 3) / 4
				if r.encrypted {
					rep.Signature = "gAAAAB" + digest([]byte(t.Thinking), "encrypted")
				}
			}
		}, e
	})
	return start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && r.URL.Path == responsesPath && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			serveWebSocket(h, cfg.key, w, r)
			return
		}
		h.ServeHTTP(w, r)
	}), cfg)
}

// responsesPath is the Responses API's route.
const responsesPath = "/v1/responses"

// responsesKeys are the request's known fields; client_metadata is what
// Codex CLI sends (its installation and session), which the API takes.
var responsesKeys = []string{"background", "client_metadata", "conversation", "include", "input", "instructions",
	"max_output_tokens", "max_tool_calls", "metadata", "model", "parallel_tool_calls",
	"previous_response_id", "prompt", "prompt_cache_key", "prompt_cache_retention", "reasoning",
	"safety_identifier", "service_tier", "store", "stream", "stream_options", "temperature", "text",
	"tool_choice", "tools", "top_logprobs", "top_p", "truncation", "user"}

var responsesItemTypes = []string{"additional_tools", "agent_message", "apply_patch_call", "apply_patch_call_output",
	"code_interpreter_call", "compaction", "compaction_trigger", "computer_call",
	"computer_call_output", "custom_tool_call", "custom_tool_call_output", "file_search_call",
	"function_call", "function_call_output", "image_generation_call", "item_reference",
	"local_shell_call", "local_shell_call_output", "mcp_approval_request", "mcp_approval_response",
	"mcp_call", "mcp_list_tools", "message", "multi_agent_call", "multi_agent_call_output",
	"program", "program_output", "reasoning", "shell_call", "shell_call_output", "tool_search_call",
	"tool_search_output", "web_search_call"}

var responsesRoles = []string{"assistant", "system", "developer", "user"}

var responsesIncludes = []string{"file_search_call.results", "web_search_call.results", "web_search_call.action.sources",
	"message.input_image.image_url", "computer_call_output.output.image_url", "code_interpreter_call.outputs",
	"reasoning.encrypted_content", "message.output_text.logprobs"}

var responsesToolTypes = []string{"function", "file_search", "computer_use_preview", "web_search", "web_search_preview",
	"mcp", "code_interpreter", "image_generation", "local_shell", "shell", "custom", "apply_patch", "namespace"}

var inputParts = []string{"input_text", "input_image", "input_file", "scoped_content", "input_audio"}
var outputParts = []string{"output_text", "refusal"}
var allParts = []string{"input_text", "input_image", "input_audio", "output_text", "refusal", "input_file",
	"computer_screenshot", "summary_text", "encrypted_content"}

// responsesRequest is what the server keeps of a valid request.
type responsesRequest struct {
	store     bool
	encrypted bool // include has reasoning.encrypted_content
	stream    bool
}

// checkResponses validates a request as the API does.
func checkResponses(req map[string]any) (responsesRequest, *fault) {
	var r responsesRequest
	if _, e := requiredModel(req, true); e != nil {
		return r, e
	}
	rawInput, ok := req["input"]
	if !ok {
		return r, missing("input")
	}
	moved := &fault{code: "unsupported_parameter", msg: "Unsupported parameter: 'messages'. In the Responses API, this parameter has moved to 'input'. Try again with the new parameter. See the API documentation for more information: https://platform.openai.com/docs/api-reference/responses/create."}
	if e := unknownKeys(req, responsesKeys, map[string]*fault{"messages": moved}); e != nil {
		return r, e
	}
	stream, e := streamFlag(req)
	if e != nil {
		return r, e
	}
	if _, e := streamOptions(req, stream); e != nil {
		return r, e
	}
	r.stream = stream
	r.store = true // the API's default
	if s, ok := req["store"]; ok && s != nil {
		b, ok := s.(bool)
		if !ok {
			return r, invalidType("store", "a boolean", s)
		}
		r.store = b
	}
	if inc, ok := req["include"]; ok && inc != nil {
		list, ok := inc.([]any)
		if !ok {
			return r, invalidType("include", "an array of strings", inc)
		}
		for i, v := range list {
			s, _ := v.(string)
			if !slices.Contains(responsesIncludes, s) {
				return r, &fault{param: fmt.Sprintf("include[%d]", i), code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", s, quotedList(responsesIncludes))}
			}
			r.encrypted = r.encrypted || s == "reasoning.encrypted_content"
		}
	}
	if ins, ok := req["instructions"]; ok && ins != nil {
		if _, ok := ins.(string); !ok {
			return r, invalidType("instructions", "a string", ins)
		}
	}
	if id, ok := req["previous_response_id"]; ok && id != nil {
		return r, &fault{param: "previous_response_id", code: "previous_response_not_found", msg: fmt.Sprintf("Previous response with id '%v' not found.", id)}
	}
	if id, ok := req["conversation"]; ok && id != nil {
		return r, &fault{status: http.StatusNotFound, msg: fmt.Sprintf("Conversation with id '%v' not found.", id)}
	}
	noInput := &fault{code: "missing_required_parameter", msg: `One of "input" or "previous_response_id" or 'prompt' or 'conversation' must be provided.`}
	switch in := rawInput.(type) {
	case string:
		if in == "" {
			return r, noInput
		}
	case []any:
		if len(in) == 0 {
			return r, noInput
		}
		if e := r.items(in); e != nil {
			return r, e
		}
	default:
		return r, invalidType("input", "one of a string or array of input items", rawInput)
	}
	return r, responsesTools(req)
}

// items checks the input items.
func (r *responsesRequest) items(input []any) *fault {
	var calls []string // call_ids of function_call items so far
	answered := map[string]bool{}
	for i, raw := range input {
		at := fmt.Sprintf("input[%d]", i)
		it, ok := raw.(map[string]any)
		if !ok {
			return invalidType(at, "an input item", raw)
		}
		typ := "message"
		if t, ok := it["type"]; ok {
			s, _ := t.(string)
			if !slices.Contains(responsesItemTypes, s) {
				return &fault{param: at, code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", s, quotedList(responsesItemTypes))}
			}
			typ = s
		}
		switch typ {
		case "message":
			s, _ := it["role"].(string)
			if !slices.Contains(responsesRoles, s) {
				return &fault{param: at, code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", s, quotedList(responsesRoles))}
			}
			if e := messageContent(it, at, s); e != nil {
				return e
			}
		case "function_call":
			id, e := requiredString(it, at+".call_id", "call_id")
			if e == nil {
				_, e = requiredString(it, at+".name", "name")
			}
			if e == nil {
				_, e = requiredString(it, at+".arguments", "arguments")
			}
			if e != nil {
				return e
			}
			calls = append(calls, id)
		case "function_call_output":
			id, e := requiredString(it, at+".call_id", "call_id")
			if e != nil {
				return e
			}
			out, ok := it["output"]
			if !ok {
				return missing(at + ".output")
			}
			if e := outputText(out, at+".output"); e != nil {
				return e
			}
			if !slices.Contains(calls, id) {
				return &fault{param: "input", msg: fmt.Sprintf("No tool call found for function call output with call_id %s.", id)}
			}
			answered[id] = true
		case "reasoning":
			if _, ok := it["summary"]; !ok {
				return missing(at + ".summary")
			}
			enc, _ := it["encrypted_content"].(string)
			if !r.store && enc == "" {
				id, _ := it["id"].(string)
				return &fault{status: http.StatusNotFound, param: "input", msg: fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)}
			}
			if !followedByAnswer(input, i) {
				id, _ := it["id"].(string)
				return &fault{param: "input", msg: fmt.Sprintf("Item '%s' of type 'reasoning' was provided without its required following item.", id)}
			}
		case "item_reference":
			id, _ := it["id"].(string)
			if !r.store {
				return &fault{status: http.StatusNotFound, param: "input", msg: fmt.Sprintf("Item with id '%s' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input.", id)}
			}
			return &fault{status: http.StatusNotFound, param: "input", msg: fmt.Sprintf("Item with id '%s' not found.", id)}
		}
	}
	for _, id := range calls {
		if !answered[id] {
			return &fault{param: "input", msg: fmt.Sprintf("No tool output found for function call %s.", id)}
		}
	}
	return nil
}

// followedByAnswer says whether the item after input[i] is what a
// reasoning item must precede: an assistant message or a function call.
func followedByAnswer(input []any, i int) bool {
	if i+1 >= len(input) {
		return false
	}
	next, _ := input[i+1].(map[string]any)
	switch next["type"] {
	case "function_call":
		return true
	case "message", nil:
		return next["role"] == "assistant"
	}
	return false
}

// messageContent checks a message item's content: a string or parts of
// the kinds its role may send.
func messageContent(it map[string]any, at, role string) *fault {
	raw, ok := it["content"]
	if !ok {
		return missing(at + ".content")
	}
	switch v := raw.(type) {
	case string:
		return nil
	case []any:
		allowed := inputParts
		if role == "assistant" {
			allowed = outputParts
		}
		for j, p := range v {
			pat := fmt.Sprintf("%s.content[%d]", at, j)
			part, ok := p.(map[string]any)
			if !ok {
				return invalidType(pat, "an object", p)
			}
			typ, _ := part["type"].(string)
			if !slices.Contains(allParts, typ) {
				return &fault{param: pat + ".type", code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", typ, quotedList(allParts))}
			}
			if !slices.Contains(allowed, typ) {
				return &fault{param: pat, code: "invalid_value", msg: fmt.Sprintf("Invalid value: '%s'. Supported values are: %s.", typ, quotedList(allowed))}
			}
			var e *fault
			switch typ {
			case "input_text", "output_text":
				_, e = requiredString(part, pat+".text", "text")
			case "refusal":
				_, e = requiredString(part, pat+".refusal", "refusal")
			}
			if e != nil {
				return e
			}
		}
		return nil
	}
	return invalidType(at+".content", "one of a string or array of input content", raw)
}

// outputText checks a function_call_output's output: a string or a list
// of objects.
func outputText(raw any, at string) *fault {
	switch v := raw.(type) {
	case string:
		return nil
	case []any:
		for j, p := range v {
			if _, ok := p.(map[string]any); !ok {
				return invalidType(fmt.Sprintf("%s[%d]", at, j), "an object", p)
			}
		}
		return nil
	}
	return invalidType(at, "one of a string or array of objects", raw)
}

// responsesTools validates the tools. A function tool is strict unless
// it says "strict": false, as in the API.
func responsesTools(req map[string]any) *fault {
	return eachTool(req, "an array of tools", responsesToolTypes, func(at, typ string, t map[string]any) *fault {
		if typ == "namespace" {
			// A namespace of function tools (Codex CLI's MCP servers):
			// named, its tools checked as the top level's are.
			if _, e := toolName(t, at+".name"); e != nil {
				return e
			}
			return responsesTools(map[string]any{"tools": t["tools"]})
		}
		if typ != "function" {
			return nil
		}
		name, e := toolName(t, at+".name")
		if e != nil {
			return e
		}
		strict := true
		if s, ok := t["strict"]; ok && s != nil {
			b, ok := s.(bool)
			if !ok {
				return invalidType(at+".strict", "a boolean", s)
			}
			strict = b
		}
		return schemaObject(t["parameters"], name, at+".parameters", strict)
	})
}
