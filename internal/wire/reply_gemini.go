package wire

import (
	"bytes"
	"encoding/json"
)

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
		Thought      bool                `json:"thought,omitempty"` // read, never written
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
		// read, never written
		ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
		ToolUsePromptTokenCount int `json:"toolUsePromptTokenCount,omitempty"`
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

// writeGemini writes r as a GenerateContentResponse, or streamed: a
// chunk per piece of text, one per function call (the API sends a call
// whole), the last with the finish reason; each chunk's usageMetadata
// the counts so far (the prompt's from the first).
func writeGemini(r *Reply) (body []byte, events [][]byte) {
	id, text, u := r.ID, r.Text, r.Usage
	var parts []geminiPart
	if text != "" || len(r.Calls) == 0 {
		parts = append(parts, geminiPart{Text: &text})
	}
	for _, c := range r.Calls {
		parts = append(parts, geminiPart{FunctionCall: &geminiFunctionCall{ID: c.ID, Name: c.Name, Args: json.RawMessage(c.Args)}})
	}
	prompt := []geminiModality{{Modality: "TEXT", TokenCount: u.InputTokens}}
	usage := geminiUsage{PromptTokenCount: u.InputTokens, CandidatesTokenCount: u.OutputTokens, TotalTokenCount: u.InputTokens + u.OutputTokens, PromptTokensDetails: prompt}
	if !r.Stream {
		return marshal(geminiResponse{Candidates: []geminiCandidate{{Content: geminiContent{Parts: parts, Role: "model"}, FinishReason: "STOP"}},
			UsageMetadata: usage, ModelVersion: r.Model, ResponseID: id}), nil
	}
	var chunks [][]geminiPart
	if text != "" || len(r.Calls) == 0 {
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
		events = append(events, marshal(geminiResponse{Candidates: []geminiCandidate{cand}, UsageMetadata: so, ModelVersion: r.Model, ResponseID: id}))
	}
	if r.Array {
		return append(append([]byte("["), bytes.Join(events, []byte(","))...), ']'), nil
	}
	for i, ev := range events {
		events[i] = Frame("", ev)
	}
	return nil, events
}

// GeminiCount answers countTokens: about four bytes a token of the
// body, as the scripted usage counts.
func GeminiCount(body []byte) []byte {
	n := max(1, (len(body)+3)/4)
	return marshal(geminiTokenCount{TotalTokens: n, PromptTokensDetails: []geminiModality{{Modality: "TEXT", TokenCount: n}}})
}
