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
	}, answer: func(_ http.ResponseWriter, _ *http.Request, data []byte) (*wire.Reply, *fault) {
		var req map[string]any
		if json.Unmarshal(data, &req) != nil || req == nil {
			return nil, invalid("invalid character in request body")
		}
		conv, msg := ollamaConversation(req)
		if msg != "" {
			return nil, invalid("%s", msg)
		}
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

// ollamaConversation checks a chat request as Ollama does and reads it;
// the message is why it is refused ("": it is not).
func ollamaConversation(req map[string]any) (Conversation, string) {
	var c Conversation
	c.Model, _ = req["model"].(string)
	if c.Model == "" {
		return c, "model is required"
	}
	msgs, ok := req["messages"].([]any)
	if !ok && req["messages"] != nil {
		return c, "messages must be an array"
	}
	called := map[string]int{}
	for i, raw := range msgs {
		m, ok := raw.(map[string]any)
		if !ok {
			return c, fmt.Sprintf("messages[%d] must be an object", i)
		}
		text, _ := m["content"].(string)
		switch role, _ := m["role"].(string); role {
		case "system":
			c.System = text
		case "user":
			c.Messages = append(c.Messages, Msg{Role: "user", Text: text})
		case "assistant":
			a := Msg{Role: "assistant", Text: text}
			for _, tc := range list(m["tool_calls"]) {
				f, _ := tc.(map[string]any)["function"].(map[string]any)
				name, _ := f["name"].(string)
				args, ok := f["arguments"].(map[string]any)
				if name == "" || !ok {
					return c, fmt.Sprintf("messages[%d]: a tool call needs a function name and arguments that are an object", i)
				}
				text, _ := wire.Marshal(args)
				a.ToolCalls = append(a.ToolCalls, ToolCall{Name: name, Args: string(text)})
				called[name]++
			}
			c.Messages = append(c.Messages, a)
		case "tool":
			name, _ := m["tool_name"].(string)
			if called[name] == 0 {
				return c, fmt.Sprintf("messages[%d]: a tool result's tool_name %q names no tool called before it", i, name)
			}
			called[name]--
			c.Messages = append(c.Messages, Msg{Role: "tool", CallID: name, Text: text})
		default:
			return c, fmt.Sprintf("messages[%d]: invalid role %q (want system, user, assistant or tool)", i, role)
		}
	}
	for i, t := range list(req["tools"]) {
		f, _ := t.(map[string]any)["function"].(map[string]any)
		name, _ := f["name"].(string)
		if strings.TrimSpace(name) == "" {
			return c, fmt.Sprintf("tools[%d]: a tool needs a function name", i)
		}
		c.Tools = append(c.Tools, name)
	}
	return c, ""
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}
