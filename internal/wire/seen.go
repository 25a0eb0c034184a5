package wire

import (
	"bytes"
	"encoding/json"
)

// The answer as read for a case's transcript (Response): a Gemini stream
// asked for without alt=sse is one JSON array of its chunks.

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
		var compact bytes.Buffer // an event's data is one line
		if json.Compact(&compact, c) == nil {
			b.Write(Frame("", compact.Bytes()))
		}
	}
	return b.Bytes(), true
}
