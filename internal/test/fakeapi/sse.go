package fakeapi

import (
	"bytes"
	"net/http"
	"slices"
	"unicode/utf8"
)

// StreamContentType is the Content-Type of the fakes' event streams, as
// the real APIs send it.
const StreamContentType = "text/event-stream; charset=utf-8"

// PieceSize bounds the bytes of text (or of tool-call arguments) one
// streamed delta carries: a stream's bytes depend only on the answer.
const PieceSize = 12

// streamAnswer is an answer that writes itself as an event stream.
type streamAnswer func(s *sse)

// sse writes server-sent events: an optional event: line, one data: line,
// a blank line, and a flush after each event.
type sse struct {
	w  http.ResponseWriter
	rc *http.ResponseController
	b  bytes.Buffer
	// chunk, when set, rewrites each event's data (Azure OpenAI's chunks).
	chunk func([]byte) []byte
}

func startSSE(w http.ResponseWriter) *sse {
	h := w.Header()
	h.Set("Content-Type", StreamContentType)
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, rc: http.NewResponseController(w)}
}

// event writes one event; name "" writes no event: line.
func (s *sse) event(name string, data []byte) {
	s.b.Reset()
	if name != "" {
		s.b.WriteString("event: ")
		s.b.WriteString(name)
		s.b.WriteByte('\n')
	}
	if s.chunk != nil {
		data = s.chunk(data)
	}
	s.b.WriteString("data: ")
	s.b.Write(data)
	s.b.WriteString("\n\n")
	s.w.Write(s.b.Bytes())
	s.rc.Flush()
}

// pieces cuts s into pieces of at most PieceSize bytes, on rune
// boundaries; "" gives none.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(PieceSize, len(s))
		for n < len(s) && n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		if n == 0 { // a rune longer than a piece
			_, n = utf8.DecodeRuneInString(s)
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// withType is the JSON object of fields (a struct, marshalled in field
// order) with "type" (and "sequence_number", when seq >= 0) put first, as
// the APIs order their events.
func withType(typ string, seq int, fields any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	t, _ := marshal(typ)
	b.Write(t)
	if seq >= 0 {
		b.WriteString(`,"sequence_number":`)
		n, _ := marshal(seq)
		b.Write(n)
	}
	if fields != nil {
		f, _ := marshal(fields)
		if len(f) > 2 {
			b.WriteByte(',')
			b.Write(f[1 : len(f)-1])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// streamFlag reads a request's "stream": absent or false is false.
func streamFlag(req map[string]any) (bool, *apiError) {
	switch v := req["stream"].(type) {
	case nil:
		return false, nil
	case bool:
		return v, nil
	default:
		return false, invalidType("stream", "a boolean", v)
	}
}

// streamOptions checks an OpenAI request's stream_options (allowed only
// with stream: true) and reads include_usage.
func streamOptions(req map[string]any, stream bool) (includeUsage bool, e *apiError) {
	raw, ok := req["stream_options"]
	if !ok || raw == nil {
		return false, nil
	}
	if !stream {
		return false, &apiError{param: "stream_options", code: "invalid_value", msg: "The 'stream_options' parameter is only allowed when 'stream' is enabled."}
	}
	opts, ok := raw.(map[string]any)
	if !ok {
		return false, invalidType("stream_options", "an object", raw)
	}
	for _, k := range sortedKeys(opts) {
		switch k {
		case "include_usage", "include_obfuscation":
			if _, ok := opts[k].(bool); !ok {
				return false, invalidType("stream_options."+k, "a boolean", opts[k])
			}
		default:
			return false, &apiError{param: "stream_options." + k, code: "unknown_parameter", msg: "Unknown parameter: 'stream_options." + k + "'."}
		}
	}
	u, _ := opts["include_usage"].(bool)
	return u, nil
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
