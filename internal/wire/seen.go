package wire

import (
	"bytes"
	"encoding/json"
)

// The answer as read for a case's transcript (Response): a Gemini answer
// keeps the ids its calls have (parseGemini gives the built-in loop's own
// to those that look like them), and a Gemini stream asked for without
// alt=sse is one JSON array of its chunks.

// geminiArrayEvents are the chunks of a JSON array as an event stream;
// ok is false when data is not one.
func geminiArrayEvents(data []byte) ([]byte, bool) {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '[' {
		return nil, false
	}
	var chunks []json.RawMessage
	if json.Unmarshal(t, &chunks) != nil {
		return nil, false
	}
	var b bytes.Buffer
	for _, c := range chunks {
		var compact bytes.Buffer
		if json.Compact(&compact, c) != nil {
			continue
		}
		b.WriteString("data: ")
		b.Write(compact.Bytes())
		b.WriteString("\n\n")
	}
	return b.Bytes(), true
}

// geminiIDs are the ids of a GenerateContentResponse's function calls,
// in order ("" for one without).
func geminiIDs(data []byte) []string {
	var gr geminiReply
	if json.Unmarshal(data, &gr) != nil || len(gr.Candidates) == 0 {
		return nil
	}
	var content geminiContent
	if json.Unmarshal(gr.Candidates[0].Content, &content) != nil {
		return nil
	}
	var ids []string
	for _, p := range content.Parts {
		if p.FunctionCall != nil {
			ids = append(ids, p.FunctionCall.ID)
		}
	}
	return ids
}
