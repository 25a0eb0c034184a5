package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewOllama serves Ollama's own API (POST /api/chat, no key) from brain.
// It refuses, with Ollama's {"error": "…"} and status 400, a body that is
// not JSON, a missing model, messages that are not a list of objects with
// a known role, a tool call whose arguments are not an object, a tool
// result without tool_name or naming no tool called before it, and tools
// without a function name. It answers as Ollama does, streamed (a JSON
// object a line) unless the request says "stream": false; tool calls
// carry no id.
func NewOllama(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	return start(&handler{api: wire.Ollama, check: func(r *http.Request) *fault {
		if r.URL.Path != wire.OllamaRoute || r.Method != http.MethodPost {
			return &fault{status: http.StatusNotFound, msg: "404 page not found"}
		}
		return nil
	}, answer: func(_ http.ResponseWriter, r *http.Request, data []byte) (*wire.Reply, *fault) {
		var req map[string]any
		if json.Unmarshal(data, &req) != nil || req == nil {
			return nil, invalid("invalid character in request body")
		}
		if msg := checkOllama(req); msg != "" {
			return nil, invalid("%s", msg)
		}
		conv := conversation(wire.Ollama, r, data)
		turn, err := brain.Next(conv)
		if err != nil {
			return nil, &fault{status: http.StatusInternalServerError, msg: "fake model: " + err.Error()}
		}
		rep := reply(data, conv.Model, turn)
		for i := range rep.Calls {
			rep.Calls[i].ID = ""
		}
		rep.Stream = req["stream"] != false
		return rep, nil
	}}, cfg)
}

// checkOllama checks a chat request as Ollama does: the message is why
// it is refused ("": it is not).
func checkOllama(req map[string]any) string {
	if m, _ := req["model"].(string); m == "" {
		return "model is required"
	}
	msgs, ok := req["messages"].([]any)
	if !ok && req["messages"] != nil {
		return "messages must be an array"
	}
	called := map[string]int{}
	for i, raw := range msgs {
		m, ok := raw.(map[string]any)
		if !ok {
			return fmt.Sprintf("messages[%d] must be an object", i)
		}
		switch role, _ := m["role"].(string); role {
		case "system", "user":
		case "assistant":
			for _, tc := range list(m["tool_calls"]) {
				f, _ := tc.(map[string]any)["function"].(map[string]any)
				name, _ := f["name"].(string)
				if _, ok := f["arguments"].(map[string]any); name == "" || !ok {
					return fmt.Sprintf("messages[%d]: a tool call needs a function name and arguments that are an object", i)
				}
				called[name]++
			}
		case "tool":
			name, _ := m["tool_name"].(string)
			if called[name] == 0 {
				return fmt.Sprintf("messages[%d]: a tool result's tool_name %q names no tool called before it", i, name)
			}
			called[name]--
		default:
			return fmt.Sprintf("messages[%d]: invalid role %q (want system, user, assistant or tool)", i, role)
		}
	}
	for i, t := range list(req["tools"]) {
		f, _ := t.(map[string]any)["function"].(map[string]any)
		if name, _ := f["name"].(string); strings.TrimSpace(name) == "" {
			return fmt.Sprintf("tools[%d]: a tool needs a function name", i)
		}
	}
	return ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
