package modelserver

import (
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// A scripted turn in each API's wire format, written by internal/wire
// (wire.Reply) as the real API answers. The bytes depend only on the
// turn, the request's number and the request itself: ids are dryfire's
// and numbered, the time is fixed, usage is about four bytes a token.

// scriptCreated is the creation time every scripted answer carries
// (2026-01-01T00:00:00Z): a fixed time, for answers the same every run.
const scriptCreated = 1767225600

// jsonContentType and streamContentType are the Content-Types of answers.
var (
	jsonContentType   = []string{"application/json"}
	streamContentType = []string{"text/event-stream; charset=utf-8"}
)

// fingerprint is the system_fingerprint of every scripted completion.
const fingerprint = "fp_dryfire"

// render is the answer of turn t to request n (from 1) of api.
func render(api wire.API, w *wire.Asked, body []byte, t *spec.Turn, n int) answer {
	a := answer{status: 200}
	if api == wire.GeminiCountTokens {
		a.body = wire.GeminiCount(body)
	} else {
		calls := make([]tool.Call, len(t.ToolCalls))
		out := len(t.Text)
		for i, c := range t.ToolCalls {
			calls[i] = tool.Call{ID: c.ID, Name: c.Name, Args: model.ArgsJSON(c)}
			out += len(c.Name) + len(calls[i].Args)
		}
		a.usage = model.Usage{InputTokens: max(1, (len(body)+3)/4), OutputTokens: max(1, (out+3)/4)}
		a.body, a.events = api.Reply(&wire.Reply{ID: "dryfire_" + strconv.Itoa(n), Model: w.Model, Created: scriptCreated, Text: t.Text, Calls: calls,
			Usage: a.usage, Stream: w.Stream, IncludeUsage: w.IncludeUsage, Fingerprint: fingerprint, Echo: w.Params, Array: w.Array})
	}
	a.streamed = a.events != nil
	if a.streamed {
		a.header = streamContentType
	} else {
		a.header = jsonContentType
		a.length = []string{strconv.Itoa(len(a.body))}
	}
	return a
}
