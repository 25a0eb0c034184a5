package wire

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Gemini streaming (agent.params.stream: true): the call goes to
// :streamGenerateContent?alt=sse with the same body, and the answer is a
// data: event per GenerateContentResponse. foldGemini folds them into the
// one generateContent gives: the first candidate's parts in order, the
// text of adjacent text parts of one kind (thought or not) joined into one
// part (a thoughtSignature kept), the last finishReason, the last
// usageMetadata, promptFeedback. The stream has no end event: one that
// ends before a chunk with a finishReason (or a blocked prompt) was cut
// short. An event with an error is that error.

// geminiChunk is the part of a streamed GenerateContentResponse the fold
// reads; the rest of its top level is kept from the last chunk.
type geminiChunk struct {
	Candidates []struct {
		Index   int `json:"index"`
		Content *struct {
			Role  string                       `json:"role"`
			Parts []map[string]json.RawMessage `json:"parts"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	Error json.RawMessage `json:"error"`
}

// foldGemini folds a streamGenerateContent event stream.
func foldGemini(data []byte) ([]byte, error) {
	var f geminiFold
	// The stream has no end event: it is whole once a chunk finished it.
	if err := foldEvents(data, func(d string) (bool, error) { return false, f.add(d) }); err != errStreamCut || f.finish == "" && !f.blocked {
		return nil, err
	}
	return f.answer()
}

// geminiFold is an answer being folded from its chunks.
type geminiFold struct {
	top     map[string]json.RawMessage // the last chunk's top level
	role    string
	parts   []map[string]json.RawMessage
	finish  string
	blocked bool
	has     bool // a candidate was seen
}

// add folds one chunk in.
func (f *geminiFold) add(data string) error {
	var c geminiChunk
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return fmt.Errorf("a chunk of the stream is not JSON (%v): %s", err, excerptString(data))
	}
	if len(c.Error) > 0 && string(c.Error) != "null" {
		typ, msg := errorOf([]byte(data))
		return fmt.Errorf("the answer's stream carries an error: %s", joinNonEmpty(": ", typ, msg))
	}
	var top map[string]json.RawMessage
	json.Unmarshal([]byte(data), &top)
	if f.top == nil {
		f.top = top
	} else {
		for k, v := range top {
			if k != "candidates" {
				f.top[k] = v
			}
		}
	}
	if c.PromptFeedback != nil && c.PromptFeedback.BlockReason != "" {
		f.blocked = true
	}
	for _, cand := range c.Candidates {
		if cand.Index != 0 {
			continue // the loop asks for one candidate
		}
		f.has = true
		if cand.FinishReason != "" {
			f.finish = cand.FinishReason
		}
		if cand.Content == nil {
			continue
		}
		if cand.Content.Role != "" {
			f.role = cand.Content.Role
		}
		for _, p := range cand.Content.Parts {
			f.part(p)
		}
	}
	return nil
}

// part appends p, joining it to the last part when both are text of one
// kind and p carries nothing else.
func (f *geminiFold) part(p map[string]json.RawMessage) {
	if n := len(f.parts); n > 0 && textOnly(f.parts[n-1]) && textOnly(p) && thought(f.parts[n-1]) == thought(p) {
		last := f.parts[n-1]
		if _, signed := last["thoughtSignature"]; signed {
			f.parts = append(f.parts, p) // a signature closes its part
			return
		}
		var a, b string
		json.Unmarshal(last["text"], &a)
		json.Unmarshal(p["text"], &b)
		last["text"], _ = Marshal(a + b)
		if s, ok := p["thoughtSignature"]; ok {
			last["thoughtSignature"] = s
		}
		return
	}
	f.parts = append(f.parts, p)
}

// textOnly says whether a part is text, with at most its thought flag
// and signature.
func textOnly(p map[string]json.RawMessage) bool {
	if _, ok := p["text"]; !ok {
		return false
	}
	for k := range p {
		if k != "text" && k != "thought" && k != "thoughtSignature" {
			return false
		}
	}
	return true
}

func thought(p map[string]json.RawMessage) bool {
	return strings.TrimSpace(string(p["thought"])) == "true"
}

// answer is the folded GenerateContentResponse.
func (f *geminiFold) answer() ([]byte, error) {
	out := f.top
	if out == nil {
		out = map[string]json.RawMessage{}
	}
	delete(out, "candidates")
	if f.has {
		parts := f.parts
		if parts == nil {
			parts = []map[string]json.RawMessage{}
		}
		role := f.role
		if role == "" {
			role = "model"
		}
		cand := jsonObject{{"content", jsonObject{{"parts", parts}, {"role", role}}}}
		if f.finish != "" {
			cand = append(cand, jsonKV{"finishReason", f.finish})
		}
		cand = append(cand, jsonKV{"index", 0})
		c, err := Marshal([]any{cand})
		if err != nil {
			return nil, err
		}
		out["candidates"] = c
	}
	return Marshal(out)
}
