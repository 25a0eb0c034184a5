package toolserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// go-sdk refuses some JSON-RPC messages before they reach the server with
// a plain-text HTTP error ("JSON RPC not handled" for an unknown method in
// a legacy era, "session not found", "malformed payload", a header it
// wants). A client reading JSON-RPC cannot tell those from a broken
// server, and the streamable HTTP transport answers a JSON-RPC request
// with JSON. rpcErrorWriter holds back such a refusal and writes it as a
// JSON-RPC error instead: an unknown method is -32601 with HTTP 200 before
// 2026-07-28, a normal answer as any other server gives it (2026-07-28
// keeps go-sdk's 404); a body that is not JSON -32700; an unknown session
// -32001 with 404; anything else -32600 with go-sdk's status. The error
// carries the request's id when the body is one request, else null, and
// go-sdk's text as its message.
type rpcErrorWriter struct {
	http.ResponseWriter
	status int          // go-sdk's refusal status, 0 when it did not refuse
	text   bytes.Buffer // go-sdk's refusal text
	wrote  bool         // the answer has started going out as it was
}

// maxRefusal bounds the refusal text kept for the error message.
const maxRefusal = 4 << 10

func (w *rpcErrorWriter) WriteHeader(code int) {
	if !w.wrote && w.status == 0 && code >= 400 && strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
		w.status = code
		return
	}
	if w.status == 0 {
		w.wrote = true
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *rpcErrorWriter) Write(b []byte) (int, error) {
	if w.status != 0 {
		if room := maxRefusal - w.text.Len(); room > 0 {
			w.text.Write(b[:min(len(b), room)])
		}
		return len(b), nil
	}
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (w *rpcErrorWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok && w.status == 0 {
		f.Flush()
	}
}

func (w *rpcErrorWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// finish writes a held-back refusal of body as a JSON-RPC error.
func (w *rpcErrorWriter) finish(body []byte, modern bool) {
	if w.status == 0 {
		return
	}
	msg := strings.TrimSpace(w.text.String())
	status, code := w.status, -32600
	switch {
	case strings.HasPrefix(msg, "JSON RPC not handled"):
		code = -32601
		if !modern {
			status = http.StatusOK
		}
	case strings.HasPrefix(msg, "malformed payload"):
		code = -32700
	case status == http.StatusNotFound:
		code = -32001
	}
	writeRPCError(w.ResponseWriter, status, requestID(body), code, msg)
}

// writeRPCError writes a JSON-RPC error answering the request with id
// (null when nil).
func writeRPCError(w http.ResponseWriter, status int, id json.RawMessage, code int, msg string) {
	data := rpcErrorLine(id, code, msg)
	h := w.Header()
	h.Del("X-Content-Type-Options")
	h.Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(data[:len(data)-1])
}

// requestID is the id of body when it is one JSON-RPC request with a
// valid id, else nil.
func requestID(body []byte) json.RawMessage {
	var req struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &req) != nil || !validRPCID(req.ID) {
		return nil
	}
	return req.ID
}

// modernRequest reports whether req is of the 2026-07-28 era or later: its
// _meta names the protocol version (earlier eras have no such field).
func modernRequest(req mcp.Request) bool {
	p := req.GetParams()
	if p == nil || reflect.ValueOf(p).IsNil() {
		return false
	}
	v, _ := p.GetMeta()[metaProtocolVersion].(string)
	return v >= "2026-07-28"
}

// legacyResult is res as versions before 2026-07-28 define it: go-sdk
// writes ttlMs and cacheScope into every cacheable result (tools/list,
// resources/list, …), which those versions do not declare.
func legacyResult(res mcp.Result) mcp.Result {
	if _, ok := res.(mcp.CacheableResult); !ok {
		return res
	}
	return withoutCacheFields{res}
}

type withoutCacheFields struct{ mcp.Result }

func (r withoutCacheFields) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	return dropKeys(data, "ttlMs", "cacheScope")
}

// dropKeys is the JSON object data without the given top-level keys, the
// others in their order.
func dropKeys(data []byte, keys ...string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return data, err
	}
	out := []byte{'{'}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if k := t.(string); !slices.Contains(keys, k) {
			if len(out) > 1 {
				out = append(out, ',')
			}
			kj, _ := json.Marshal(k)
			out = append(append(append(out, kj...), ':'), v...)
		}
	}
	return append(out, '}'), nil
}
