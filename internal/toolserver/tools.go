package toolserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// HTTP tools: GET /tools and POST /tools/{name}. The call path is kept
// lean (a pooled buffer for the body and one for the answer, no
// reflection): a later benchmark holds it to tens of thousands of calls a
// second on one core.

var jsonType = []string{"application/json"}

// makeList makes the GET /tools body (Scope.listBody).
func (s *Scope) makeList() []byte {
	type wire struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"input_schema"`
		OutputSchema json.RawMessage `json:"output_schema,omitempty"`
		Operation    string          `json:"operation,omitempty"`
	}
	tools := make([]wire, len(s.tools))
	for i, t := range s.tools {
		tools[i] = wire{t.Name, t.Description, t.InputSchema, t.OutputSchema, t.Operation}
	}
	b, err := json.Marshal(struct {
		Tools []wire `json:"tools"`
	}{tools})
	if err != nil {
		panic(err) // schemas are canonical JSON already
	}
	return b
}

var bufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// serveCall answers POST /tools/{name}: the body is the arguments (a JSON
// object; empty means {}), the answer {"content": ..., "is_error": ...}
// with status 200 for every tool outcome, errors and unmatched calls
// included. A body that is not JSON at all is the client's bug, not a
// tool call: 400, and it is not recorded.
func (s *Scope) serveCall(w http.ResponseWriter, r *http.Request, name string) {
	in := bufs.Get().(*bytes.Buffer)
	in.Reset()
	defer bufs.Put(in)
	if err := readArgs(w, r, in); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			writeError(w, http.StatusRequestEntityTooLarge, "invalid_request", fmt.Sprintf("the arguments exceed %d bytes", maxBody))
			return
		}
		writeError(w, http.StatusBadRequest, "invalid_request", "reading the arguments: "+err.Error())
		return
	}
	args := in.Bytes()
	memo := s.memoOn()
	if memo {
		if e := s.memo.lookup(name, args); e != nil {
			if e.http == nil { // kept by an MCP call
				e = &memoEntry{res: e.res, http: appendToolAnswer(nil, e.res)}
				s.memo.keep(name, args, e.res, e.http)
			}
			writeJSON(w, http.StatusOK, e.http)
			return
		}
	}
	text := callArgs(args)
	v, valid, perr := value.ParseChecked(text)
	if !valid && len(bytes.TrimSpace(args)) > 0 && !json.Valid(args) {
		writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("the body of POST /tools/%s must be the arguments as JSON (an object); got %s", name, describeBody(args)))
		return
	}
	res := s.answerParsed(r.Context(), nil, name, text, v, perr)

	out := bufs.Get().(*bytes.Buffer)
	out.Reset()
	defer bufs.Put(out)
	out.Write(appendToolAnswer(out.AvailableBuffer(), res))
	if memo && s.set.Pure(name) {
		s.memo.keep(name, args, res, out.Bytes())
	}
	writeJSON(w, http.StatusOK, out.Bytes())
}

// appendToolAnswer appends the POST /tools/{name} answer of res.
func appendToolAnswer(b []byte, res tool.Result) []byte {
	b = append(b, `{"content":`...)
	b = value.AppendString(b, res.Content)
	if res.IsError {
		return append(b, `,"is_error":true}`...)
	}
	return append(b, `,"is_error":false}`...)
}

// readArgs reads r's body into in, at most maxBody bytes (more is a
// *http.MaxBytesError); a body of known length, as clients send one, in
// one read.
func readArgs(w http.ResponseWriter, r *http.Request, in *bytes.Buffer) error {
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		in.Grow(int(n))
		b := in.AvailableBuffer()[:n]
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return err
		}
		in.Write(b)
		return nil
	}
	_, err := in.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody))
	return err
}

// describeBody quotes the start of a body that is not JSON.
func describeBody(b []byte) string {
	const n = 60
	if len(b) > n {
		return strconv.Quote(string(b[:n])) + "..."
	}
	return strconv.Quote(string(b))
}

// writeJSON writes a JSON answer. net/http adds Content-Length for a body
// written in one piece.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header()["Content-Type"] = jsonType
	w.WriteHeader(status)
	w.Write(body)
}

// writeError answers {"error": {"type": ..., "message": ...}}, the shape
// OpenAI's and Anthropic's clients both print the message of.
func writeError(w http.ResponseWriter, status int, typ, msg string) {
	b := append([]byte(`{"error":{"type":`), strconv.Quote(typ)...)
	b = append(b, `,"message":`...)
	b = value.AppendString(b, msg)
	b = append(b, "}}"...)
	writeJSON(w, status, b)
}
