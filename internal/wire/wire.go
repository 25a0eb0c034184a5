package wire

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// The seam's view of an API (model.Wire): what the model Recorder and
// the script model need of it.

// The codes of answers dryfire gives instead of the model's.
const (
	CodeUpstream = "dryfire_upstream_unreachable" // a live call got no answer
)

// Wire is the API as the model seam takes it: the same value, made an
// interface once (a string's conversion would allocate on every call).
func (api API) Wire() model.Wire {
	if c, ok := codecs[api]; ok {
		return c.wire
	}
	return api
}

// String implements model.Wire: the API's name in reports.
func (api API) String() string { return string(api) }

// Request implements model.Wire: ReadRequest.
func (api API) Request(c *model.Call) (*model.Request, error) {
	return ReadRequest(api, c.HTTP.URL, c.Body)
}

// Script implements model.Wire: a scripted turn as the API answers it,
// with dryfire's ids (numbered by the request), a fixed time
// (2026-01-01T00:00:00Z), and usage of about four bytes a token; r nil
// is a token count's answer.
func (api API) Script(c *model.Call, req *model.Request, r *model.Response) *model.Answer {
	if r == nil && api == AnthropicCountTokens {
		return model.NewAnswer(200, "application/json", marshal(map[string]int{"input_tokens": max(1, (len(c.Body)+3)/4)}), nil)
	}
	if r == nil {
		return model.NewAnswer(200, "application/json", GeminiCount(c.Body), nil)
	}
	out := len(r.Text)
	for _, tc := range r.ToolCalls {
		out += len(tc.Name) + len(tc.Args)
	}
	u := model.Usage{InputTokens: max(1, (len(c.Body)+3)/4), OutputTokens: max(1, (out+3)/4)}
	stream := req.Params["stream"] == true
	so, _ := req.Params["stream_options"].(map[string]any)
	body, events := api.Reply(&Reply{ID: "dryfire_" + strconv.Itoa(c.N), Model: req.Model, Created: 1767225600, Text: r.Text, Calls: r.ToolCalls,
		Usage: u, Stream: stream, IncludeUsage: so["include_usage"] == true, Fingerprint: "fp_dryfire", Echo: req.Params,
		Array: stream && api == Gemini && c.HTTP.URL.Query().Get("alt") != "sse"})
	a := api.Answer(200, body, events)
	a.Usage = u
	return a
}

// Answer is an answer of api: a JSON body, or events of its stream's
// Content-Type.
func (api API) Answer(status int, body []byte, events [][]byte) *model.Answer {
	ct := "application/json"
	if events != nil {
		ct = api.codec().streamType
	}
	return model.NewAnswer(status, ct, body, events)
}

// Response implements model.Wire: an answer read as the built-in loop
// reads it, a stream folded first.
func (api API) Response(a *model.Answer) (*model.Response, error) {
	c := api.codec()
	if c.parse == nil {
		return &model.Response{Usage: api.Usage(a)}, nil
	}
	data, streamed := c.stream(a, a.Bytes())
	if streamed {
		var err error
		if data, err = c.fold(data); err != nil {
			return nil, err
		}
	}
	return c.parse(data)
}

// geminiStream: a Gemini stream asked for without alt=sse is one JSON
// array of its chunks, read as their events.
func geminiStream(a *model.Answer, data []byte) ([]byte, bool) {
	if events, ok := geminiArrayEvents(data); ok && !a.Streamed {
		return events, true
	}
	return data, a.Streamed
}

// Error implements model.Wire: an error in the API's own shape:
// {"error":{"message","type","param","code"}} for OpenAI,
// {"type":"error","error":{"type","message"}} for Anthropic,
// {"error":{"code","message","status"}} for Gemini. A 4xx goes with
// x-should-retry: false, so that SDKs give up at once, unless it is a
// fault's (e.Fault), whose type and message are the API's own for the
// status.
func (api API) Error(status int, e model.ErrorInfo) *model.Answer {
	if e.Fault {
		f := faultError(api, status)
		e.Type, e.Code, e.Message = f.Type, f.Code, f.Message+" (a fault the case declares: model_faults)"
	}
	if e.Type == "" {
		e.Type = "invalid_request_error"
	}
	a := model.NewAnswer(status, "application/json", api.codec().errBody(status, e), nil)
	if api == Bedrock {
		a.Header.Set("X-Amzn-Errortype", bedrockErrorType(status))
	}
	if status/100 == 4 && !e.Fault {
		a.Header.Set("X-Should-Retry", "false")
	}
	return a
}

func openAIErrorBody(_ int, e model.ErrorInfo) []byte {
	return []byte(`{"error":{"message":` + quote(e.Message) + `,"type":` + quote(e.Type) + `,"param":` + nullable(e.Param) + `,"code":` + nullable(e.Code) + "}}")
}

func anthropicErrorBody(_ int, e model.ErrorInfo) []byte {
	return []byte(`{"type":"error","error":{"type":` + quote(e.Type) + `,"message":` + quote(e.Message) + "}}")
}

// geminiErrorBody is a google.rpc.Status: the HTTP status, the message,
// the status name; dryfire's code (or the error type) as an ErrorInfo's
// reason in its details.
func geminiErrorBody(status int, e model.ErrorInfo) []byte {
	details := ""
	if e.Code != "" {
		details = `,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":` + quote(e.Code) + `,"domain":"dryfire"}]`
	}
	return []byte(`{"error":{"code":` + strconv.Itoa(status) + `,"message":` + quote(e.Message) + `,"status":` + quote(geminiStatus(status)) + details + "}}")
}

// nullable is s as a JSON string, null when "".
func nullable(s string) string {
	if s == "" {
		return "null"
	}
	return quote(s)
}

// quote is s as a JSON string (no HTML escaping).
func quote(s string) string { return value.Canonical(s) }

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

// usage is a usage object of any of the APIs: Chat's prompt and
// completion tokens, the Responses' and Anthropic's input and output
// (Anthropic's cache reads and writes apart), Gemini's usageMetadata.
type usage struct {
	PromptTokens         *int `json:"prompt_tokens"`
	CompletionTokens     *int `json:"completion_tokens"`
	InputTokens          *int `json:"input_tokens"`
	OutputTokens         *int `json:"output_tokens"`
	CacheCreation        int  `json:"cache_creation_input_tokens"`
	CacheRead            int  `json:"cache_read_input_tokens"`
	PromptTokenCount     *int `json:"promptTokenCount"`
	CandidatesTokenCount *int `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int  `json:"thoughtsTokenCount"`
	ToolUsePrompt        int  `json:"toolUsePromptTokenCount"`
}

// usageHolder is where an answer, a stream's event or chunk, holds it.
type usageHolder struct {
	Usage         *usage                  `json:"usage"`
	UsageMetadata *usage                  `json:"usageMetadata"`
	Message       *struct{ Usage *usage } `json:"message"`  // Anthropic's message_start
	Response      *struct{ Usage *usage } `json:"response"` // a Responses stream's last event
}

// into reads u into the totals, as the built-in loop counts them (the
// input with Anthropic's cache reads and writes, Gemini's with its
// tool-use prompt; Gemini's output with its thoughts). A count that is
// absent leaves the total as it is: an Anthropic stream says the input
// in message_start, the output in message_delta.
func (u *usage) into(t *model.Usage) {
	switch {
	case u == nil:
	case u.PromptTokens != nil || u.CompletionTokens != nil:
		t.InputTokens, t.OutputTokens = deref(u.PromptTokens), deref(u.CompletionTokens)
	case u.PromptTokenCount != nil || u.CandidatesTokenCount != nil:
		if u.PromptTokenCount != nil {
			t.InputTokens = *u.PromptTokenCount + u.ToolUsePrompt
		}
		if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != 0 {
			t.OutputTokens = deref(u.CandidatesTokenCount) + u.ThoughtsTokenCount
		}
	default:
		if u.InputTokens != nil {
			t.InputTokens = *u.InputTokens + u.CacheCreation + u.CacheRead
		}
		if u.OutputTokens != nil {
			t.OutputTokens = *u.OutputTokens
		}
	}
}

func (h *usageHolder) into(t *model.Usage) {
	h.Usage.into(t)
	h.UsageMetadata.into(t)
	if h.Message != nil {
		h.Message.Usage.into(t)
	}
	if h.Response != nil {
		h.Response.Usage.into(t)
	}
}

// deref is *p, or T's zero when p is nil.
func deref[T any](p *T) (v T) {
	if p != nil {
		v = *p
	}
	return v
}

// Usage implements model.Wire: the tokens an answer says were used, in a
// body (each element of a Gemini stream answered as a JSON array), or the
// last a stream's events say; zero when it says nothing (a token count
// spends nothing). Only what mentions usage is decoded.
func (api API) Usage(a *model.Answer) model.Usage {
	var t model.Usage
	switch c := api.codec(); {
	case c.parse == nil:
		return t
	case c.usageOfAnswer:
		if r, err := api.Response(a); err == nil {
			t = r.Usage
		}
		return t
	}
	if a.Events == nil {
		var one usageHolder
		var all []usageHolder
		switch {
		case !hasUsage(a.Body):
		case json.Unmarshal(a.Body, &one) == nil:
			one.into(&t)
		case json.Unmarshal(a.Body, &all) == nil:
			for i := range all {
				all[i].into(&t)
			}
		}
		return t
	}
	for _, ev := range a.Events {
		if !hasUsage(ev) {
			continue
		}
		var h usageHolder
		if data, ok := eventData(ev); ok && json.Unmarshal([]byte(data), &h) == nil {
			h.into(&t)
		}
	}
	return t
}

// hasUsage says whether data has a "usage" (or "usageMetadata") key
// with an object: the events of a stream that say nothing
// ("usage":null) are not decoded.
func hasUsage(data []byte) bool {
	for {
		i := bytes.Index(data, []byte(`"usage`))
		if i < 0 {
			return false
		}
		data = bytes.TrimPrefix(data[i+len(`"usage`):], []byte("Metadata"))
		rest := bytes.TrimLeft(bytes.TrimPrefix(data, []byte(`"`)), " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' && bytes.HasPrefix(bytes.TrimLeft(rest[1:], " \t\r\n"), []byte("{")) {
			return true
		}
	}
}

// eventData is the data of one server-sent event.
func eventData(ev []byte) (string, bool) {
	evs, _ := readEvents(ev)
	if len(evs) == 0 {
		return "", false
	}
	return evs[0].data, true
}
