package wire

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// ReadRequest reads a request of api at u leniently: what it cannot
// read is left out (a strict reading is the real API's; the script
// answers what it can). Its Params are the body's top-level keys (a
// Responses answer repeats some), with "stream": true for a Gemini
// stream. It fails only on a body that is not a JSON object (ErrNotJSON).
func ReadRequest(api API, u *url.URL, body []byte) (*model.Request, error) {
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil || m == nil {
		return nil, ErrNotJSON
	}
	w := &model.Request{Params: m}
	w.Model, _ = m["model"].(string)
	api.codec().read(w, m, u, body)
	if _, _, _, m, method, ok := VertexPath(u.Path); ok && w.Model == "" {
		w.Model = m // Vertex AI's Messages: the model is the path's
		if method == "streamRawPredict" {
			w.Params["stream"] = true
		}
	}
	return w, nil
}

type notJSON struct{}

func (notJSON) Error() string { return "the request body is not a JSON object" }

// Code implements model.Coded: the script cannot answer it.
func (notJSON) Code() (string, string) { return model.CodeNoTurn, "" }

// ErrNotJSON is a request body that is not a JSON object.
var ErrNotJSON error = notJSON{}

func readChat(w *model.Request, m map[string]any, _ *url.URL, _ []byte) {
	w.Tools = readChatTools(m)
	w.Messages, w.System = readChatMessages(m["messages"])
}

func readResponses(w *model.Request, m map[string]any, _ *url.URL, _ []byte) {
	w.Tools = namedTools(m["tools"], true)
	system, _ := m["instructions"].(string)
	w.Messages, w.System = responsesInput(m["input"], system)
}

func readAnthropic(w *model.Request, m map[string]any, _ *url.URL, _ []byte) {
	w.Tools = namedTools(m["tools"], false)
	w.System = blocksText(m["system"])
	w.Messages = readAnthropicMessages(m["messages"])
}

func readChatTools(m map[string]any) []model.ToolDef {
	var out []model.ToolDef
	for _, t := range list(m["tools"]) {
		tm, _ := t.(map[string]any)
		f, ok := tm["function"].(map[string]any)
		if !ok {
			f, _ = tm["custom"].(map[string]any)
		}
		if name, _ := f["name"].(string); name != "" {
			out = append(out, toolDef(f, name, "parameters"))
		}
	}
	for _, f := range list(m["functions"]) { // the deprecated form
		fm, _ := f.(map[string]any)
		if name, _ := fm["name"].(string); name != "" {
			out = append(out, toolDef(fm, name, "parameters"))
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
					in.Name = nsName(ns, in.Name)
					out = append(out, in)
				}
				continue
			}
			if typ != "function" && typ != "custom" {
				continue
			}
		}
		if name, _ := tm["name"].(string); name != "" {
			out = append(out, toolDef(tm, name, "parameters", "input_schema"))
		}
	}
	return out
}

// toolDef is a tool as a request offers it: its description and the
// first of the schema keys it has (each API names its own).
func toolDef(m map[string]any, name string, schemaKeys ...string) model.ToolDef {
	d := model.ToolDef{Name: name}
	d.Description, _ = m["description"].(string)
	for _, k := range schemaKeys {
		if v, ok := m[k]; ok {
			d.InputSchema = v
			break
		}
	}
	return d
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
func blocksText(v any) string { return joinedText(v, "\n") }

// joinedText is blocksText with its blocks joined by sep.
func joinedText(v any, sep string) string {
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
		return strings.Join(parts, sep)
	}
	return ""
}

// callArgs is a call's arguments as text: a string as it is (Chat's and
// Responses' arguments), an object as canonical JSON, none as def.
func callArgs(v any, def string) string {
	switch a := v.(type) {
	case nil:
		return def
	case string:
		return a
	}
	return value.Canonical(v)
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

// readChatMessages are Chat's messages; the system and developer
// messages are the system prompt, joined by blank lines.
func readChatMessages(v any) (out []model.Message, system string) {
	var sys []string
	for _, raw := range list(v) {
		m, _ := raw.(map[string]any)
		role, _ := m["role"].(string)
		switch role {
		case "system", "developer":
			sys = append(sys, blocksText(m["content"]))
		case "user":
			out = append(out, model.Message{Role: model.User, Text: blocksText(m["content"])})
		case "assistant":
			a := model.Message{Role: model.Assistant, Text: blocksText(m["content"])}
			for _, c := range list(m["tool_calls"]) {
				cm, _ := c.(map[string]any)
				f, _ := cm["function"].(map[string]any)
				id, _ := cm["id"].(string)
				name, _ := f["name"].(string)
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name, Args: callArgs(f["arguments"], "")})
			}
			out = append(out, a)
		case "tool", "function":
			id, _ := m["tool_call_id"].(string)
			out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(m["content"])})
		}
	}
	return out, strings.Join(sys, "\n\n")
}

// responsesInput are the Responses input's messages: each run of
// assistant items (messages, calls) one assistant turn; the system and
// developer messages join the instructions, by blank lines.
func responsesInput(v any, instructions string) (out []model.Message, system string) {
	if s, ok := v.(string); ok {
		return []model.Message{{Role: model.User, Text: s}}, instructions
	}
	sys := []string{instructions}
	assistant := func() *model.Message {
		if n := len(out); n == 0 || out[n-1].Role != model.Assistant {
			out = append(out, model.Message{Role: model.Assistant})
		}
		return &out[len(out)-1]
	}
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
			args := it["arguments"]
			if typ == "custom_tool_call" {
				args = it["input"]
			}
			a := assistant()
			a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name, Args: callArgs(args, "")})
		case typ == "function_call_output" || typ == "custom_tool_call_output":
			id, _ := it["call_id"].(string)
			out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(it["output"])})
		case typ == "message" || typ == "" && it["role"] != nil:
			switch text := blocksText(it["content"]); it["role"] {
			case "user":
				out = append(out, model.Message{Role: model.User, Text: text})
			case "assistant":
				a := assistant()
				a.Text = joinNonEmpty("\n", a.Text, text)
			case "system", "developer":
				sys = append(sys, text)
			}
		}
	}
	return out, joinNonEmpty("\n\n", sys...)
}

func readAnthropicMessages(v any) []model.Message {
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
			// An answer's text blocks are one text (as parseAnthropic reads them).
			a := model.Message{Role: model.Assistant, Text: joinedText(blocks, "")}
			for _, b := range blocks {
				bm, _ := b.(map[string]any)
				if bm["type"] == "tool_use" {
					id, _ := bm["id"].(string)
					name, _ := bm["name"].(string)
					a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name, Args: callArgs(bm["input"], "{}")})
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
				isErr, _ := bm["is_error"].(bool)
				out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(bm["content"]), IsError: isErr})
			}
		}
		if t := blocksText(blocks); t != "" || len(out) == 0 || out[len(out)-1].Role != model.ToolRole {
			out = append(out, model.Message{Role: model.User, Text: t})
		}
	}
	return out
}

// geminiRequest reads a generateContent (or countTokens) body: its
// conversation, with the model and stream of its path. Both of the
// JSON spellings the API reads are read (camelCase, snake_case).
func readGemini(w *model.Request, m map[string]any, u *url.URL, _ []byte) {
	name, method, _ := GeminiPath(u.Path)
	w.Model = name
	if method == "streamGenerateContent" {
		m["stream"] = true
	}
	if g, ok := field(m, "generateContentRequest", "generate_content_request").(map[string]any); ok {
		m = g // countTokens with a whole request
	}
	for _, t := range list(m["tools"]) {
		tm, _ := t.(map[string]any)
		for _, f := range list(field(tm, "functionDeclarations", "function_declarations")) {
			fm, _ := f.(map[string]any)
			if name, _ := fm["name"].(string); name != "" {
				w.Tools = append(w.Tools, toolDef(fm, name, "parametersJsonSchema", "parameters_json_schema", "parameters"))
			}
		}
	}
	if si, ok := field(m, "systemInstruction", "system_instruction").(map[string]any); ok {
		w.System = GeminiText(si["parts"])
	} else if s, ok := field(m, "systemInstruction", "system_instruction").(string); ok {
		w.System = s
	}
	w.Messages = readGeminiContents(m["contents"])
}

// field is m's value under either spelling of a key.
func field(m map[string]any, camel, snake string) any {
	if v, ok := m[camel]; ok {
		return v
	}
	return m[snake]
}

// GeminiText is the text of a Gemini content's parts (a list), thoughts
// aside, joined by newlines.
func GeminiText(v any) string {
	var out []string
	for _, p := range list(v) {
		pm, _ := p.(map[string]any)
		if thought, _ := pm["thought"].(bool); thought {
			continue
		}
		if s, ok := pm["text"].(string); ok {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n")
}

// geminiContents are a request's contents as messages: a model content's
// function calls are its tool calls, a user content's function
// responses are tool results (matched to their call by id, else by name
// in order), then its text. A call without an id gets the one the
// script model would have given it.
func readGeminiContents(v any) []model.Message {
	var out []model.Message
	pending := map[string][]string{} // name → ids of calls not yet answered
	for _, raw := range list(v) {
		c, _ := raw.(map[string]any)
		parts := list(c["parts"])
		if c["role"] == "model" {
			a := model.Message{Role: model.Assistant, Text: GeminiText(parts)}
			for _, p := range parts {
				pm, _ := p.(map[string]any)
				fc, ok := field(pm, "functionCall", "function_call").(map[string]any)
				if !ok {
					continue
				}
				name, _ := fc["name"].(string)
				id, _ := fc["id"].(string)
				if id == "" {
					id = name
				}
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name, Args: callArgs(fc["args"], "{}")})
				pending[name] = append(pending[name], id)
			}
			out = append(out, a)
			continue
		}
		results := false
		for _, p := range parts {
			pm, _ := p.(map[string]any)
			fr, ok := field(pm, "functionResponse", "function_response").(map[string]any)
			if !ok {
				continue
			}
			name, _ := fr["name"].(string)
			id, _ := fr["id"].(string)
			if ids := pending[name]; id == "" && len(ids) > 0 {
				id, pending[name] = ids[0], ids[1:]
			}
			out = append(out, model.Message{Role: model.ToolRole, CallID: id, Text: resultText(fr["response"])})
			results = true
		}
		if t := GeminiText(parts); t != "" || !results {
			out = append(out, model.Message{Role: model.User, Text: t})
		}
	}
	return out
}
