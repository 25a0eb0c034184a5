package modelserver

import (
	"bytes"
	"encoding/json"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// wireUsage is a usage object of any of the APIs.
type wireUsage struct {
	PromptTokens             *int `json:"prompt_tokens"`     // Chat
	CompletionTokens         *int `json:"completion_tokens"` // Chat
	InputTokens              *int `json:"input_tokens"`      // Responses, Anthropic
	OutputTokens             *int `json:"output_tokens"`     // Responses, Anthropic
	CacheCreationInputTokens int  `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int  `json:"cache_read_input_tokens"`
}

// geminiUsageMetadata is a Gemini answer's usageMetadata (a stream's
// chunks each carry the counts so far).
type geminiUsageMetadata struct {
	PromptTokenCount     *int `json:"promptTokenCount"`
	CandidatesTokenCount *int `json:"candidatesTokenCount"`
	ThoughtsTokenCount   int  `json:"thoughtsTokenCount"`
	ToolUsePromptTokens  int  `json:"toolUsePromptTokenCount"`
}

// into reads u into the totals: the prompt's tokens (with the tool-use
// prompt's) in, the candidates' and thoughts' out; a count that is
// absent leaves the total as it is.
func (u *geminiUsageMetadata) into(t *model.Usage) {
	if u == nil {
		return
	}
	if u.PromptTokenCount != nil {
		t.InputTokens = *u.PromptTokenCount + u.ToolUsePromptTokens
	}
	if u.CandidatesTokenCount != nil || u.ThoughtsTokenCount != 0 {
		t.OutputTokens = deref(u.CandidatesTokenCount) + u.ThoughtsTokenCount
	}
}

// geminiUsageOf reads the tokens of a Gemini answer: a body's
// usageMetadata (of each element, for a stream answered as a JSON
// array), or the last a stream's chunks say.
func geminiUsageOf(rs *cassette.Response) model.Usage {
	var t model.Usage
	type chunk struct {
		UsageMetadata *geminiUsageMetadata `json:"usageMetadata"`
	}
	if !rs.Streamed() {
		if !bytes.Contains(rs.Body, []byte(`"usageMetadata"`)) {
			return t
		}
		var one chunk
		if json.Unmarshal(rs.Body, &one) == nil {
			one.UsageMetadata.into(&t)
			return t
		}
		var all []chunk
		if json.Unmarshal(rs.Body, &all) == nil {
			for _, c := range all {
				c.UsageMetadata.into(&t)
			}
		}
		return t
	}
	for _, ev := range rs.Events {
		if !bytes.Contains(ev, []byte(`"usageMetadata"`)) {
			continue
		}
		// The API ends its lines with \r\n.
		_, _, data, hasData, ok := cassette.ParseEvent(bytes.ReplaceAll(ev, []byte("\r\n"), []byte("\n")))
		var c chunk
		if ok && hasData && json.Unmarshal([]byte(data), &c) == nil {
			c.UsageMetadata.into(&t)
		}
	}
	return t
}

// into reads u into the totals: Chat's and the Responses' counts as they
// are, Anthropic's input with its cache reads and writes (as the built-in
// loop counts it). A count that is absent leaves the total as it is: an
// Anthropic stream says the input in message_start, the output in
// message_delta.
func (u *wireUsage) into(api wire.API, t *model.Usage) {
	if u == nil {
		return
	}
	switch {
	case u.PromptTokens != nil || u.CompletionTokens != nil:
		t.InputTokens, t.OutputTokens = deref(u.PromptTokens), deref(u.CompletionTokens)
		return
	case api == wire.Anthropic:
		if u.InputTokens != nil {
			t.InputTokens = *u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens
		}
	case u.InputTokens != nil:
		t.InputTokens = *u.InputTokens
	}
	if u.OutputTokens != nil {
		t.OutputTokens = *u.OutputTokens
	}
}

func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// usageOf reads the tokens of an answer: the usage of a JSON body, or of a
// stream's events (Chat: the chunk with usage; Responses: the usage of
// response.completed, .incomplete or .failed; Anthropic: message_start's
// input and message_delta's output; Gemini: usageMetadata). Zero when it
// says nothing.
func usageOf(api wire.API, rs *cassette.Response) model.Usage {
	switch api {
	case wire.Gemini:
		return geminiUsageOf(rs)
	case wire.GeminiCountTokens:
		return model.Usage{} // a count spends nothing
	}
	var t model.Usage
	if !rs.Streamed() {
		if !hasUsage(rs.Body) {
			return t
		}
		var v struct {
			Usage *wireUsage `json:"usage"`
		}
		if json.Unmarshal(rs.Body, &v) == nil {
			v.Usage.into(api, &t)
		}
		return t
	}
	for _, ev := range rs.Events {
		if !hasUsage(ev) {
			continue
		}
		_, _, data, hasData, ok := cassette.ParseEvent(ev)
		if !ok || !hasData {
			continue
		}
		var v struct {
			Usage    *wireUsage                  `json:"usage"`
			Message  *struct{ Usage *wireUsage } `json:"message"`
			Response *struct{ Usage *wireUsage } `json:"response"`
		}
		if json.Unmarshal([]byte(data), &v) != nil {
			continue
		}
		v.Usage.into(api, &t)
		if v.Message != nil {
			v.Message.Usage.into(api, &t)
		}
		if v.Response != nil {
			v.Response.Usage.into(api, &t)
		}
	}
	return t
}

// hasUsage says whether data has a "usage" key with an object: the
// events of a stream that say nothing ("usage":null) are not decoded.
func hasUsage(data []byte) bool {
	key := []byte(`"usage"`)
	for {
		i := bytes.Index(data, key)
		if i < 0 {
			return false
		}
		data = data[i+len(key):]
		rest := bytes.TrimLeft(data, " \t\r\n")
		if len(rest) > 0 && rest[0] == ':' {
			rest = bytes.TrimLeft(rest[1:], " \t\r\n")
			if len(rest) > 0 && rest[0] == '{' {
				return true
			}
		}
	}
}
