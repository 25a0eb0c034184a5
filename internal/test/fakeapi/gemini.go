package fakeapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"net/http"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewGemini serves the Gemini API (generativelanguage, v1beta and v1): POST
// /v1beta/models/MODEL:generateContent (JSON), :streamGenerateContent
// (?alt=sse: a data: event per GenerateContentResponse, lines ended by
// \r\n as the real API ends them; without alt=sse, a JSON array of them)
// and :countTokens, from brain.
//
// It checks a request the way the real API does and refuses it with the
// real status and google.rpc.Status body, {"error":{"code":400,"message":…,
// "status":"INVALID_ARGUMENT"}}: a body that is not JSON, unknown
// top-level fields, no contents, a content whose role is neither user nor
// model, a content without parts, a part with no data (or more than one
// kind), a functionCall whose args are not an object, a functionResponse
// whose response is not an object or that answers no functionCall of the
// model content just before it, function declarations without a name.
// With RequireKey it wants x-goog-api-key (or ?key=) and answers 400
// INVALID_ARGUMENT "API key not valid" for a wrong one, 403
// PERMISSION_DENIED for none, as the real API does.
//
// Answers are deterministic: the responseId is a hash of the request,
// usage comes from the Turn or from sizes, function calls carry no id
// (as the API's do).
func NewGemini(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	return start(geminiHandler(brain, cfg.key), cfg)
}

// geminiKeys are the top-level fields of a GenerateContentRequest, in
// both spellings the API reads.
var geminiKeys = map[string]bool{
	"contents": true, "tools": true, "toolConfig": true, "tool_config": true, "safetySettings": true, "safety_settings": true,
	"systemInstruction": true, "system_instruction": true, "generationConfig": true, "generation_config": true,
	"cachedContent": true, "cached_content": true, "model": true, "labels": true,
}

// geminiPartKinds are the data fields a part holds exactly one of.
var geminiPartKinds = []string{"text", "inlineData", "inline_data", "functionCall", "function_call", "functionResponse", "function_response",
	"fileData", "file_data", "executableCode", "executable_code", "codeExecutionResult", "code_execution_result"}

// geminiHandler serves the Gemini API's routes (wire.GeminiPath: Vertex
// AI's too), wanting key when it is set.
func geminiHandler(brain Brain, key string) *handler {
	return &handler{api: wire.Gemini, check: func(r *http.Request) *fault {
		if _, _, ok := wire.GeminiPath(r.URL.Path); !ok {
			return &fault{status: http.StatusNotFound, msg: "Not Found"}
		}
		if r.Method != http.MethodPost {
			return &fault{status: http.StatusMethodNotAllowed, msg: "Method Not Allowed"}
		}
		return geminiAuth(r, key)
	}, answer: func(w http.ResponseWriter, r *http.Request, data []byte) (*wire.Reply, *fault) {
		modelName, method, _ := wire.GeminiPath(r.URL.Path)
		top, f := checkGemini(data, method == "countTokens")
		if f != nil {
			return nil, f
		}
		if method == "countTokens" {
			send(w, wire.Gemini.Answer(http.StatusOK, wire.GeminiCount(data), nil))
			return nil, nil
		}
		turn, err := brain.Next(conversation(wire.Gemini, r, data))
		if err != nil {
			return nil, &fault{status: http.StatusInternalServerError, msg: "fake model: " + err.Error()}
		}
		sum := sha256.Sum256(top)
		rep := reply(data, modelName, turn)
		rep.ID, rep.Stream, rep.Array = hex.EncodeToString(sum[:8]), method == "streamGenerateContent", r.URL.Query().Get("alt") != "sse"
		for i := range rep.Calls { // no ids, as the API's calls; no arguments are {}
			rep.Calls[i].ID = ""
			if strings.TrimSpace(rep.Calls[i].Args) == "" {
				rep.Calls[i].Args = "{}"
			}
		}
		return rep, nil
	}, finish: func(_ *http.Request, body []byte, events [][]byte) ([]byte, [][]byte) {
		for i, ev := range events {
			events[i] = append(bytes.TrimSuffix(ev, []byte("\n\n")), "\r\n\r\n"...) // as the API ends its lines
		}
		return body, events
	}}
}

func geminiAuth(r *http.Request, want string) *fault {
	if want == "" {
		return nil
	}
	key := r.Header.Get("X-Goog-Api-Key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	switch {
	case key == "":
		return &fault{status: http.StatusForbidden, msg: "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API."}
	case key != want:
		return invalid("API key not valid. Please pass a valid API key.")
	}
	return nil
}

// checkGemini checks a GenerateContentRequest (a countTokens body may
// hold one whole under generateContentRequest); top is the body
// re-encoded.
func checkGemini(data []byte, count bool) ([]byte, *fault) {
	v, ok := decodeJSON(data)
	if !ok {
		return nil, invalid("Invalid JSON payload received. Unexpected token.")
	}
	top, ok := v.(map[string]any)
	if !ok {
		return nil, invalid("Invalid JSON payload received. Expected an object.")
	}
	canonical, _ := wire.Marshal(top)
	if count {
		if g, ok := top["generateContentRequest"].(map[string]any); ok {
			top = g
		} else if _, ok := top["contents"]; !ok {
			return nil, invalid("* CountTokensRequest: contents is required.")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(top)) {
		if !geminiKeys[k] {
			return nil, invalid("Invalid JSON payload received. Unknown name %q: Cannot find field.", k)
		}
	}
	for _, t := range list(top["tools"]) {
		tm, _ := t.(map[string]any)
		for _, d := range list(geminiField(tm, "functionDeclarations", "function_declarations")) {
			dm, _ := d.(map[string]any)
			if name, _ := dm["name"].(string); name == "" {
				return nil, invalid("* GenerateContentRequest.tools[0].function_declarations[0].name: Name cannot be empty.")
			}
		}
	}
	contents := list(top["contents"])
	if len(contents) == 0 {
		return nil, invalid("* GenerateContentRequest.contents: contents is not specified")
	}
	var lastCalls []string // the function calls of the model content just before
	for i, raw := range contents {
		c, ok := raw.(map[string]any)
		if !ok {
			return nil, invalid("Invalid value at 'contents[%d]': expected an object", i)
		}
		role, _ := c["role"].(string)
		if role == "" {
			role = "user"
		}
		if role != "user" && role != "model" && role != "function" {
			return nil, invalid("Please use a valid role: user, model.")
		}
		parts := list(c["parts"])
		if len(parts) == 0 {
			return nil, invalid("* GenerateContentRequest.contents[%d].parts: contents.parts must not be empty.", i)
		}
		var calls []string
		results := 0
		for j, p := range parts {
			pm, ok := p.(map[string]any)
			if !ok {
				return nil, invalid("Invalid value at 'contents[%d].parts[%d]': expected an object", i, j)
			}
			kinds := 0
			for _, k := range geminiPartKinds {
				if _, ok := pm[k]; ok {
					kinds++
				}
			}
			if kinds != 1 {
				return nil, invalid("* GenerateContentRequest.contents[%d].parts[%d].data: required oneof field 'data' must have one initialized field", i, j)
			}
			if fc, ok := geminiField(pm, "functionCall", "function_call").(map[string]any); ok {
				if role != "model" {
					return nil, invalid("* GenerateContentRequest.contents[%d].parts[%d]: a function call must come from the model.", i, j)
				}
				name, _ := fc["name"].(string)
				if _, ok := fc["args"].(map[string]any); !ok && fc["args"] != nil {
					return nil, invalid("Invalid value at 'contents[%d].parts[%d].function_call.args': expected an object", i, j)
				}
				calls = append(calls, name)
			}
			if fr, ok := geminiField(pm, "functionResponse", "function_response").(map[string]any); ok {
				name, _ := fr["name"].(string)
				if _, ok := fr["response"].(map[string]any); !ok {
					return nil, invalid("Invalid value at 'contents[%d].parts[%d].function_response.response': expected an object", i, j)
				}
				k := slices.Index(lastCalls, name)
				if k < 0 {
					return nil, invalid("Please ensure that function response turn comes immediately after a function call turn. And the number of function response parts should be equal to number of function call parts of the function call turn.")
				}
				lastCalls = append(lastCalls[:k:k], lastCalls[k+1:]...)
				results++
			}
		}
		if len(lastCalls) > 0 && results == 0 {
			return nil, invalid("Please ensure that function call turn comes immediately after a user turn or after a function response turn.")
		}
		lastCalls = calls
	}
	return canonical, nil
}

func geminiField(m map[string]any, camel, snake string) any {
	if v, ok := m[camel]; ok {
		return v
	}
	return m[snake]
}
