package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// geminiCallPrefix starts the ids dryfire gives calls that came without
// one: they are not sent back.
const geminiCallPrefix = "call_"

// geminiCall speaks the Gemini API: POST
// {base}/v1beta/models/{model}:generateContent with x-goog-api-key (when
// there is a key), or with params.stream: true
// :streamGenerateContent?alt=sse, folded into the same answer (see
// gemini_stream.go).
//
// The body has contents, systemInstruction (when set) and tools (one tool
// of functionDeclarations, each with its JSON Schema as
// parametersJsonSchema); the params that are request fields (toolConfig,
// safetySettings, cachedContent, labels) go at the top, every other into
// generationConfig (temperature: 0 is generationConfig.temperature; a
// generationConfig param is merged in, the others over it). The keys the loop
// owns — contents, tools, systemInstruction — may not be set in params.
//
// Messages: the user input is a user content with a text part; an
// assistant turn is sent as the content the API returned for it
// (Message.Raw, so that thought signatures survive), else as a model
// content of a text part and functionCall parts; the tool results that
// follow it are one user content of functionResponse parts, named after
// their call, the output under "result" (an error under "error"), with
// the call's id when the API gave it one.
//
// The answer: the first candidate's text parts (thoughts aside) joined
// make Text, its functionCall parts make ToolCalls (an id of the API's,
// else call_TURN_N; Args the compact JSON of args), usage is
// promptTokenCount (with toolUsePromptTokenCount) and candidatesTokenCount
// with thoughtsTokenCount, Raw the candidate's content. finishReason
// MAX_TOKENS is an answer with a note (a call cut off there is an error);
// a prompt blocked, or a candidate without content, is an error.

func (c *caller) geminiCall(req *model.Request) (*post, error) {
	name := c.model(req)
	if name == "" {
		return nil, errors.New("provider gemini needs a model: set agent.model (for example gemini-2.5-flash)")
	}
	body, err := geminiBody(req, req.Params)
	if err != nil {
		return nil, err
	}
	header := http.Header{"Accept": {"application/json"}}
	url := func(method string) string { return geminiURL(c.o.BaseURL, name, method) }
	switch {
	case c.o.Provider == provider.VertexGemini:
		url = func(method string) string {
			return vertexURL(c.o.BaseURL, c.o.Getenv, "google", name, method)
		}
		if c.o.APIKey != "" {
			header.Set("Authorization", "Bearer "+c.o.APIKey)
		}
	case c.o.APIKey != "":
		header.Set("X-Goog-Api-Key", c.o.APIKey)
	}
	to := url("generateContent")
	if streamed(req.Params) {
		to = url("streamGenerateContent")
		if strings.Contains(to, "?") {
			to += "&alt=sse"
		} else {
			to += "?alt=sse"
		}
		header.Set("Accept", "text/event-stream")
	}
	return &post{to, header, body, func(d []byte) (*model.Response, error) { return parseGemini(d, assistantTurns(req.Messages)+1, false) }}, nil
}

// geminiURL is the endpoint of a method of model under base: the host
// root, or a base that already ends in a version (/v1beta, /v1).
func geminiURL(base, model, method string) string {
	if base == "" {
		base = DefaultGeminiBaseURL
	}
	return withQuery(base, func(b string) string {
		b = strings.TrimRight(b, "/")
		if !strings.HasSuffix(b, "/v1beta") && !strings.HasSuffix(b, "/v1") && !strings.HasSuffix(b, "/v1alpha") {
			b += "/v1beta"
		}
		return b + "/models/" + url.PathEscape(model) + ":" + method
	})
}

// geminiTop are the fields of a GenerateContentRequest that params may
// set at the top of the body.
var geminiTop = map[string]bool{"toolConfig": true, "safetySettings": true, "cachedContent": true, "labels": true,
	"tool_config": true, "safety_settings": true, "cached_content": true}

// geminiBody is the request body: the owned keys, the request fields of
// params in key order, then generationConfig (map keys sorted by the
// encoder).
func geminiBody(req *model.Request, params map[string]any) ([]byte, error) {
	contents, err := geminiContents(req.Messages)
	if err != nil {
		return nil, err
	}
	body := jsonObject{{"contents", contents}}
	if req.System != "" {
		body = append(body, jsonKV{"systemInstruction", jsonObject{{"parts", []any{jsonObject{{"text", req.System}}}}}})
	}
	if len(req.Tools) > 0 {
		decls := make([]any, len(req.Tools))
		for i, t := range req.Tools {
			d := jsonObject{{"name", t.Name}}
			if t.Description != "" {
				d = append(d, jsonKV{"description", t.Description})
			}
			schema := objectSchema(t.InputSchema)
			if schema == nil {
				schema = map[string]any{"type": "object"}
			}
			decls[i] = append(d, jsonKV{"parametersJsonSchema", schema})
		}
		body = append(body, jsonKV{"tools", []any{jsonObject{{"functionDeclarations", decls}}}})
	}
	// The request's own fields go at the top; any other param
	// (temperature, maxOutputTokens, …) into generationConfig.
	gen := map[string]any{}
	if g, ok := params["generationConfig"].(map[string]any); ok {
		maps.Copy(gen, g)
	}
	var top []string
	for k, v := range params {
		switch {
		case k == "stream" || k == "generationConfig":
		case geminiTop[k]:
			top = append(top, k)
		default:
			gen[k] = v
		}
	}
	slices.Sort(top)
	for _, k := range top {
		body = append(body, jsonKV{k, params[k]})
	}
	if len(gen) > 0 {
		body = append(body, jsonKV{"generationConfig", gen})
	}
	data, err := Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("encoding the gemini request: %w", err)
	}
	return data, nil
}

// geminiContents converts the conversation; the tool results after an
// assistant turn are one user content.
func geminiContents(msgs []model.Message) ([]any, error) {
	out := []any{}
	names := map[string]string{} // call id → tool name
	var results []any
	flush := func() {
		if len(results) > 0 {
			out = append(out, jsonObject{{"role", "user"}, {"parts", results}})
			results = nil
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case model.User:
			flush()
			out = append(out, jsonObject{{"role", "user"}, {"parts", []any{jsonObject{{"text", m.Text}}}}})
		case model.Assistant:
			flush()
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
			if len(m.Raw) > 0 {
				if !json.Valid(m.Raw) {
					return nil, fmt.Errorf("message %d: the assistant turn's raw content is not JSON", i)
				}
				out = append(out, m.Raw)
				continue
			}
			parts := []any{}
			if m.Text != "" {
				parts = append(parts, jsonObject{{"text", m.Text}})
			}
			for _, c := range m.ToolCalls {
				args, err := toolInput(c)
				if err != nil {
					return nil, fmt.Errorf("message %d: %w", i, err)
				}
				fc := jsonObject{}
				if !strings.HasPrefix(c.ID, geminiCallPrefix) {
					fc = append(fc, jsonKV{"id", c.ID})
				}
				parts = append(parts, jsonObject{{"functionCall", append(fc, jsonKV{"name", c.Name}, jsonKV{"args", args})}})
			}
			out = append(out, jsonObject{{"role", "model"}, {"parts", parts}})
		case model.ToolRole:
			key := "result"
			if m.IsError {
				key = "error"
			}
			fr := jsonObject{}
			if m.CallID != "" && !strings.HasPrefix(m.CallID, geminiCallPrefix) {
				fr = append(fr, jsonKV{"id", m.CallID})
			}
			fr = append(fr, jsonKV{"name", names[m.CallID]}, jsonKV{"response", jsonObject{{key, m.Text}}})
			results = append(results, jsonObject{{"functionResponse", fr}})
		default:
			return nil, fmt.Errorf("message %d has role %q, which the gemini provider cannot send", i, m.Role)
		}
	}
	flush()
	return out, nil
}

// geminiReply is the part of a GenerateContentResponse the loop reads:
// not geminiResponse, since compatible servers send what dryfire does not
// read in other types, and the content goes back as it came (Raw).
type geminiReply struct {
	Candidates []struct {
		Content      json.RawMessage `json:"content"`
		FinishReason string          `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
}

// parseGemini reads an answer to the turn-th request; answer keeps the
// ids the answer's calls have (a case's transcript reads it so), else
// the built-in loop gives a call without one, or with one that looks
// like its own, its own.
func parseGemini(data []byte, turn int, answer bool) (*model.Response, error) {
	var gr geminiReply
	if err := json.Unmarshal(data, &gr); err != nil {
		return nil, fmt.Errorf("gemini: the answer is not a GenerateContentResponse (%v): %s", err, excerpt(data))
	}
	if len(gr.Candidates) == 0 {
		if gr.PromptFeedback != nil && gr.PromptFeedback.BlockReason != "" {
			return nil, fmt.Errorf("gemini blocked the prompt (promptFeedback.blockReason %s)", gr.PromptFeedback.BlockReason)
		}
		return nil, fmt.Errorf("gemini: the answer has no candidates: %s", excerpt(data))
	}
	cand := gr.Candidates[0]
	var content geminiContent
	if len(cand.Content) == 0 || string(cand.Content) == "null" || json.Unmarshal(cand.Content, &content) != nil {
		return nil, fmt.Errorf("gemini answered no content (finishReason %s): %s", cand.FinishReason, excerpt(data))
	}
	r := &model.Response{Raw: bytes.Clone(cand.Content)}
	var text strings.Builder
	seen := map[string]bool{}
	for _, p := range content.Parts {
		if p.Text != nil && !p.Thought {
			text.WriteString(*p.Text)
		}
		if fc := p.FunctionCall; fc != nil {
			id := fc.ID
			if !answer && (id == "" || seen[id] || strings.HasPrefix(id, geminiCallPrefix)) || id == "" {
				id = fmt.Sprintf("%s%d_%d", geminiCallPrefix, turn, len(r.ToolCalls)+1)
			}
			seen[id] = true
			args := "{}"
			if len(fc.Args) > 0 && string(fc.Args) != "null" {
				var b bytes.Buffer
				if json.Compact(&b, fc.Args) == nil {
					args = b.String()
				}
			}
			r.ToolCalls = append(r.ToolCalls, tool.Call{ID: id, Name: fc.Name, Args: args})
		}
	}
	r.Text = text.String()
	if u := gr.UsageMetadata; u != nil {
		r.Usage = model.Usage{InputTokens: u.PromptTokenCount + u.ToolUsePromptTokenCount, OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount}
	}
	switch cand.FinishReason {
	case "MAX_TOKENS":
		r.Notes = append(r.Notes, "gemini stopped at the token limit (finishReason MAX_TOKENS): the answer is cut short; raise generationConfig.maxOutputTokens in agent.params")
	case "SAFETY", "RECITATION", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII":
		r.Notes = append(r.Notes, "gemini withheld content (finishReason "+cand.FinishReason+"): the answer may be incomplete")
	case "MALFORMED_FUNCTION_CALL":
		return nil, fmt.Errorf("gemini wrote a malformed function call (finishReason MALFORMED_FUNCTION_CALL): %s", excerpt(data))
	}
	return r, nil
}
