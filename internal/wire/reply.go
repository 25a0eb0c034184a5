package wire

import (
	"bytes"
	"strconv"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// Reply is a model's turn as an API answers it: what the model says, and
// what the answer object says around it. The script model's answers
// (internal/modelserver) and the test fakes' (internal/test/fakeapi) are
// written from one, by the same code, as the real API writes them: the
// same keys in the same order, a stream's whole event sequence, text and
// arguments streamed in pieces of at most Piece bytes.
type Reply struct {
	// ID names the answer; each API's ids are made of it (chatcmpl-ID,
	// resp_ID, msg_ID, fc_ID_N, …).
	ID      string
	Model   string
	Created int64 // Unix seconds
	Text    string
	Calls   []tool.Call
	Usage   model.Usage
	// Thinking is a thinking block (Anthropic, signed by Signature) or a
	// reasoning item's summary (Responses, its encrypted_content
	// Signature when not empty); ThinkingTokens counts it in the usage.
	Thinking, Signature string
	ThinkingTokens      int
	// Stop is the stop reason when it is not the usual one (Anthropic's
	// max_tokens: the turn was cut there).
	Stop string
	// Stream answers as an event stream; IncludeUsage ends a Chat
	// Completions stream with its usage chunk.
	Stream, IncludeUsage bool
	// Fingerprint is Chat Completions' system_fingerprint.
	Fingerprint string
	// Echo are the request's keys a Responses object repeats.
	Echo map[string]any
	// Array answers a Gemini stream as one JSON array of its chunks (a
	// stream asked for without alt=sse).
	Array bool
	// NoOutput is a Responses answer without output items: a Responses
	// WebSocket's warm-up (generate: false).
	NoOutput bool
}

// Piece bounds the bytes of text or arguments one streamed delta carries.
const Piece = 12

// pieces cuts s into pieces of at most Piece bytes, on rune boundaries;
// "" gives none.
func pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := min(Piece, len(s))
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

// marshal is JSON without HTML escaping and without a trailing newline,
// of a value that always encodes.
func marshal(v any) []byte {
	b, _ := Marshal(v)
	return b
}

// Frame is one server-sent event: an event: line unless name is "", one
// data: line, a blank line.
func Frame(name string, data []byte) []byte {
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString("\n\n")
	return b.Bytes()
}

// withType is the object of fields (a struct, in field order) with
// "type" (and "sequence_number" when seq >= 0) first, as the APIs order
// their events.
func withType(typ string, seq int, fields any) []byte {
	var b bytes.Buffer
	b.WriteString(`{"type":`)
	b.Write(marshal(typ))
	if seq >= 0 {
		b.WriteString(`,"sequence_number":`)
		b.WriteString(strconv.Itoa(seq))
	}
	if fields != nil {
		if f := marshal(fields); len(f) > 2 {
			b.WriteByte(',')
			b.Write(f[1 : len(f)-1])
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Reply writes r as api answers it: a JSON body, or a stream's events
// when r.Stream (a Gemini stream answered as an array is a body).
func (api API) Reply(r *Reply) (body []byte, events [][]byte) { return api.codec().reply(r) }
