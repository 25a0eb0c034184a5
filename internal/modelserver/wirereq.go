package modelserver

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// wireRequest is what a scripted answer needs of a request in an API's
// wire format: the conversation as the script's guards read it (a
// provider-neutral model.Request), the model to echo and how to answer
// (streamed, with a usage chunk).
type wireRequest struct {
	req          model.Request
	model        string
	stream       bool
	includeUsage bool // chat: stream_options.include_usage
	// array: a Gemini stream asked for without alt=sse, answered as one
	// JSON array of its chunks.
	array bool
	// echo are the request's keys a Responses object repeats.
	echo map[string]any
}

// parseRequest reads a request of api at u leniently: what it cannot
// read is left out (a strict reading is the real API's; the script
// answers what it can). It fails only on a body that is not a JSON
// object.
func parseRequest(api API, u *url.URL, body []byte) (*wireRequest, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, errNotJSON
	}
	w := &wireRequest{echo: m}
	w.model, _ = m["model"].(string)
	w.stream, _ = m["stream"].(bool)
	if so, ok := m["stream_options"].(map[string]any); ok {
		w.includeUsage, _ = so["include_usage"].(bool)
	}
	switch api {
	case OpenAIChat:
		w.req.Tools = chatTools(m)
		w.req.Messages = chatMessages(m["messages"])
	case OpenAIResponses:
		w.req.Tools = namedTools(m["tools"], true)
		w.req.System, _ = m["instructions"].(string)
		w.req.Messages = responsesInput(m["input"])
	case Anthropic:
		w.req.Tools = namedTools(m["tools"], false)
		w.req.System = blocksText(m["system"])
		w.req.Messages = anthropicMessages(m["messages"])
	case Gemini, GeminiCountTokens:
		geminiRequest(w, m, u)
	}
	return w, nil
}

type notJSON struct{}

func (notJSON) Error() string { return "the request body is not a JSON object" }

var errNotJSON error = notJSON{}

func chatTools(m map[string]any) []model.ToolDef {
	var out []model.ToolDef
	for _, t := range list(m["tools"]) {
		tm, _ := t.(map[string]any)
		f, _ := tm["function"].(map[string]any)
		if name, _ := f["name"].(string); name != "" {
			out = append(out, model.ToolDef{Name: name})
		}
	}
	for _, f := range list(m["functions"]) { // the deprecated form
		fm, _ := f.(map[string]any)
		if name, _ := fm["name"].(string); name != "" {
			out = append(out, model.ToolDef{Name: name})
		}
	}
	return out
}

// namedTools are tools with a name at the top (Anthropic's; Responses'
// function tools when functions is set).
//
// A Responses namespace's tools are named NAMESPACE__NAME (Codex's MCP
// server "dryfire" is the namespace mcp__dryfire: mcp__dryfire__TOOL, as
// Claude Code names it), its calls carrying the namespace apart.
func namedTools(v any, functions bool) []model.ToolDef {
	var out []model.ToolDef
	for _, t := range list(v) {
		tm, _ := t.(map[string]any)
		if functions {
			typ, _ := tm["type"].(string)
			if ns, _ := tm["name"].(string); typ == "namespace" && ns != "" {
				for _, in := range namedTools(tm["tools"], true) {
					out = append(out, model.ToolDef{Name: nsName(ns, in.Name)})
				}
				continue
			}
			if typ != "function" && typ != "custom" {
				continue
			}
		}
		if name, _ := tm["name"].(string); name != "" {
			out = append(out, model.ToolDef{Name: name})
		}
	}
	return out
}

// nsName is the name of tool name of namespace ns.
func nsName(ns, name string) string { return ns + "__" + name }

// splitNS is the namespace and name a Responses call of tool name is
// made with: the namespace of the request's tools that holds it, or
// none.
func splitNS(tools []any, name string) (ns, inner string) {
	for _, t := range tools {
		tm, _ := t.(map[string]any)
		n, _ := tm["name"].(string)
		if tm["type"] != "namespace" || !strings.HasPrefix(name, n+"__") {
			continue
		}
		for _, in := range list(tm["tools"]) {
			im, _ := in.(map[string]any)
			if iname, _ := im["name"].(string); nsName(n, iname) == name {
				return n, iname
			}
		}
	}
	return "", name
}

func list(v any) []any {
	l, _ := v.([]any)
	return l
}

// blocksText is the text of a content value: a string, or the text of
// its text blocks (text, input_text, output_text), joined by newlines.
func blocksText(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var parts []string
		for _, b := range c {
			bm, _ := b.(map[string]any)
			switch bm["type"] {
			case "text", "input_text", "output_text":
				if s, ok := bm["text"].(string); ok {
					parts = append(parts, s)
				}
			}
		}
		return strings.Join(parts, "\n")
	}
	return ""
}

// resultText is a tool result's content as text: a string, text blocks,
// else its JSON.
func resultText(v any) string {
	switch c := v.(type) {
	case nil:
		return ""
	case string:
		return c
	case []any:
		if t := blocksText(c); t != "" {
			return t
		}
	}
	data, _ := json.Marshal(v)
	return string(data)
}

func chatMessages(v any) []model.Message {
	var out []model.Message
	for _, raw := range list(v) {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		switch role {
		case "user":
			out = append(out, model.Message{Role: model.User, Text: blocksText(m["content"])})
		case "assistant":
			a := model.Message{Role: model.Assistant, Text: blocksText(m["content"])}
			for _, c := range list(m["tool_calls"]) {
				cm, _ := c.(map[string]any)
				f, _ := cm["function"].(map[string]any)
				id, _ := cm["id"].(string)
				name, _ := f["name"].(string)
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name})
			}
			out = append(out, a)
		case "tool", "function":
			id, _ := m["tool_call_id"].(string)
			out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(m["content"])})
		}
	}
	return out
}

func responsesInput(v any) []model.Message {
	if s, ok := v.(string); ok {
		return []model.Message{{Role: model.User, Text: s}}
	}
	var out []model.Message
	for _, raw := range list(v) {
		it, _ := raw.(map[string]any)
		typ, _ := it["type"].(string)
		switch {
		case typ == "function_call" || typ == "custom_tool_call":
			id, _ := it["call_id"].(string)
			name, _ := it["name"].(string)
			if ns, _ := it["namespace"].(string); ns != "" {
				name = nsName(ns, name)
			}
			// Consecutive calls are one assistant turn.
			if n := len(out); n > 0 && out[n-1].Role == model.Assistant && len(out[n-1].ToolCalls) > 0 {
				out[n-1].ToolCalls = append(out[n-1].ToolCalls, tool.Call{ID: id, Name: name})
				continue
			}
			out = append(out, model.Message{Role: model.Assistant, ToolCalls: []tool.Call{{ID: id, Name: name}}})
		case typ == "function_call_output" || typ == "custom_tool_call_output":
			id, _ := it["call_id"].(string)
			out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(it["output"])})
		case typ == "message" || typ == "" && it["role"] != nil:
			switch it["role"] {
			case "user":
				out = append(out, model.Message{Role: model.User, Text: blocksText(it["content"])})
			case "assistant":
				out = append(out, model.Message{Role: model.Assistant, Text: blocksText(it["content"])})
			}
		}
	}
	return out
}

func anthropicMessages(v any) []model.Message {
	var out []model.Message
	for _, raw := range list(v) {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		blocks, isList := m["content"].([]any)
		if !isList {
			r := model.User
			if role == "assistant" {
				r = model.Assistant
			}
			out = append(out, model.Message{Role: r, Text: blocksText(m["content"])})
			continue
		}
		if role == "assistant" {
			a := model.Message{Role: model.Assistant, Text: blocksText(blocks)}
			for _, b := range blocks {
				bm, _ := b.(map[string]any)
				if bm["type"] == "tool_use" {
					id, _ := bm["id"].(string)
					name, _ := bm["name"].(string)
					a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name})
				}
			}
			out = append(out, a)
			continue
		}
		// A user message: its tool results first (as the API requires
		// them), then its text, a user message of its own.
		for _, b := range blocks {
			bm, _ := b.(map[string]any)
			if bm["type"] == "tool_result" {
				id, _ := bm["tool_use_id"].(string)
				out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(bm["content"])})
			}
		}
		if t := blocksText(blocks); t != "" || len(out) == 0 || out[len(out)-1].Role != model.ToolRole {
			out = append(out, model.Message{Role: model.User, Text: t})
		}
	}
	return out
}
