package modelserver

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The Gemini API (generativelanguage): POST {base}/v1beta/models/{model}:
// generateContent, :streamGenerateContent (?alt=sse: a server-sent event
// per GenerateContentResponse) and :countTokens, the key in
// x-goog-api-key or ?key=. The official SDKs (google-genai, @google/genai)
// read the base URL from GOOGLE_GEMINI_BASE_URL. Vertex AI's paths
// (/v1/projects/P/locations/L/publishers/google/models/M:…) are not
// served.

// geminiRoute is the Gemini route as Routes and Paths list it.
const geminiRoute = "/v1beta/models/{model}:*"

// geminiVersions are the API versions whose paths are served.
var geminiVersions = []string{"/v1beta/", "/v1/", "/v1alpha/"}

// geminiPath reads a Gemini route: /VERSION/models/MODEL:METHOD (or
// tunedModels/MODEL), METHOD one of the three served.
func geminiPath(path string) (modelName, method string, ok bool) {
	var rest string
	for _, v := range geminiVersions {
		if r, found := strings.CutPrefix(path, v); found {
			rest = r
			break
		}
	}
	var name string
	switch {
	case strings.HasPrefix(rest, "models/"):
		name = rest[len("models/"):]
	case strings.HasPrefix(rest, "tunedModels/"):
		name = rest
	default:
		return "", "", false
	}
	i := strings.LastIndexByte(name, ':')
	if i <= 0 || strings.Contains(name[:i], "/") && !strings.HasPrefix(name, "tunedModels/") {
		return "", "", false
	}
	switch method = name[i+1:]; method {
	case "generateContent", "streamGenerateContent", "countTokens":
		return name[:i], method, true
	}
	return "", "", false
}

// geminiRequest reads a generateContent (or countTokens) body: its
// conversation, with the model and stream of its path. Both of the
// JSON spellings the API reads are read (camelCase, snake_case).
func geminiRequest(w *wireRequest, m map[string]any, u *url.URL) {
	name, method, _ := geminiPath(u.Path)
	w.model, w.stream = name, method == "streamGenerateContent"
	w.array = w.stream && u.Query().Get("alt") != "sse"
	if g, ok := field(m, "generateContentRequest", "generate_content_request").(map[string]any); ok {
		m = g // countTokens with a whole request
	}
	for _, t := range list(m["tools"]) {
		tm, _ := t.(map[string]any)
		for _, f := range list(field(tm, "functionDeclarations", "function_declarations")) {
			fm, _ := f.(map[string]any)
			if name, _ := fm["name"].(string); name != "" {
				w.req.Tools = append(w.req.Tools, model.ToolDef{Name: name})
			}
		}
	}
	if si, ok := field(m, "systemInstruction", "system_instruction").(map[string]any); ok {
		w.req.System = partsText(si["parts"])
	} else if s, ok := field(m, "systemInstruction", "system_instruction").(string); ok {
		w.req.System = s
	}
	w.req.Messages = geminiContents(m["contents"])
}

// field is m's value under either spelling of a key.
func field(m map[string]any, camel, snake string) any {
	if v, ok := m[camel]; ok {
		return v
	}
	return m[snake]
}

// partsText is the text of a content's text parts (thoughts aside),
// joined by newlines.
func partsText(v any) string {
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
func geminiContents(v any) []model.Message {
	var out []model.Message
	pending := map[string][]string{} // name → ids of calls not yet answered
	for _, raw := range list(v) {
		c, _ := raw.(map[string]any)
		parts := list(c["parts"])
		if c["role"] == "model" {
			a := model.Message{Role: model.Assistant, Text: partsText(parts)}
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
				a.ToolCalls = append(a.ToolCalls, tool.Call{ID: id, Name: name})
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
		if t := partsText(parts); t != "" || !results {
			out = append(out, model.Message{Role: model.User, Text: t})
		}
	}
	return out
}

// Gemini answers, in the API's key order.
type (
	geminiFunctionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	}
	geminiPart struct {
		Text         *string             `json:"text,omitempty"`
		FunctionCall *geminiFunctionCall `json:"functionCall,omitempty"`
	}
	geminiContent struct {
		Parts []geminiPart `json:"parts"`
		Role  string       `json:"role"`
	}
	geminiCandidate struct {
		Content      geminiContent `json:"content"`
		FinishReason string        `json:"finishReason,omitempty"`
		Index        int           `json:"index"`
	}
	geminiModality struct {
		Modality   string `json:"modality"`
		TokenCount int    `json:"tokenCount"`
	}
	geminiUsage struct {
		PromptTokenCount     int              `json:"promptTokenCount"`
		CandidatesTokenCount int              `json:"candidatesTokenCount,omitempty"`
		TotalTokenCount      int              `json:"totalTokenCount"`
		PromptTokensDetails  []geminiModality `json:"promptTokensDetails"`
	}
	geminiResponse struct {
		Candidates    []geminiCandidate `json:"candidates"`
		UsageMetadata geminiUsage       `json:"usageMetadata"`
		ModelVersion  string            `json:"modelVersion"`
		ResponseID    string            `json:"responseId"`
	}
	geminiTokenCount struct {
		TotalTokens         int              `json:"totalTokens"`
		PromptTokensDetails []geminiModality `json:"promptTokensDetails"`
	}
)

// renderGemini is a turn as a GenerateContentResponse, or streamed: a
// chunk per piece of text, one per function call (the API sends a call
// whole), the last with the finish reason; each chunk's usageMetadata
// the counts so far (the prompt's from the first).
func renderGemini(w *wireRequest, text string, calls []scriptedCall, u model.Usage, n int) answer {
	id := "dryfire-" + strconv.Itoa(n)
	var parts []geminiPart
	if text != "" || len(calls) == 0 {
		parts = append(parts, geminiPart{Text: &text})
	}
	for _, c := range calls {
		parts = append(parts, geminiPart{FunctionCall: &geminiFunctionCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args)}})
	}
	prompt := []geminiModality{{Modality: "TEXT", TokenCount: u.InputTokens}}
	usage := geminiUsage{PromptTokenCount: u.InputTokens, CandidatesTokenCount: u.OutputTokens, TotalTokenCount: u.InputTokens + u.OutputTokens, PromptTokensDetails: prompt}
	if !w.stream {
		return answer{body: marshal(geminiResponse{Candidates: []geminiCandidate{{Content: geminiContent{Parts: parts, Role: "model"}, FinishReason: "STOP"}},
			UsageMetadata: usage, ModelVersion: w.model, ResponseID: id})}
	}
	var chunks [][]geminiPart
	if text != "" || len(calls) == 0 {
		for _, p := range pieces(text) {
			chunks = append(chunks, []geminiPart{{Text: &p}})
		}
		if text == "" {
			chunks = append(chunks, []geminiPart{{Text: &text}})
		}
	}
	for _, p := range parts {
		if p.FunctionCall != nil {
			chunks = append(chunks, []geminiPart{p})
		}
	}
	var events [][]byte
	out := 0
	for i, c := range chunks {
		for _, p := range c {
			if p.Text != nil {
				out += len(*p.Text)
			} else {
				out += len(p.FunctionCall.Name) + len(p.FunctionCall.Args)
			}
		}
		cand := geminiCandidate{Content: geminiContent{Parts: c, Role: "model"}}
		so := geminiUsage{PromptTokenCount: u.InputTokens, CandidatesTokenCount: max(1, (out+3)/4), PromptTokensDetails: prompt}
		if i == len(chunks)-1 {
			cand.FinishReason, so = "STOP", usage
		}
		so.TotalTokenCount = so.PromptTokenCount + so.CandidatesTokenCount
		events = append(events, marshal(geminiResponse{Candidates: []geminiCandidate{cand}, UsageMetadata: so, ModelVersion: w.model, ResponseID: id}))
	}
	if w.array {
		return answer{body: append(append([]byte("["), bytes.Join(events, []byte(","))...), ']')}
	}
	for i, ev := range events {
		events[i] = event("", ev)
	}
	return answer{events: events, streamed: true}
}

// renderGeminiCount answers countTokens: about four bytes a token of the
// body, as the scripted usage counts.
func renderGeminiCount(body []byte) answer {
	n := max(1, (len(body)+3)/4)
	return answer{body: marshal(geminiTokenCount{TotalTokens: n, PromptTokensDetails: []geminiModality{{Modality: "TEXT", TokenCount: n}}})}
}

// geminiStatus is the google.rpc status name of an HTTP status, as the
// API's error bodies give it.
func geminiStatus(status int) string {
	switch status {
	case 400, 413:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 502, 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}
