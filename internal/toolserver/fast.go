package toolserver

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// The tools/call fast path.
//
// go-sdk v1.8.0 spends most of a tools/call over streamable HTTP on
// things a mock has no use for: every JSON decode goes through
// segmentio's streaming Decoder over a bytes.Reader, which allocates a
// fresh 32 KiB buffer (about six decodes per call: ~200 KB and ~170 µs
// of allocation and GC per call on this box); each message crosses three
// goroutines (HTTP handler, connection reader, async request handler) and
// back through channels; each POST makes a new logical stream with a
// crypto-random id; and a stateless (2026-07-28) request builds and tears
// down a whole session (~470 KB per call). So /mcp answers the one hot,
// simple message itself: a single tools/call, in a session go-sdk opened
// (legacy) or in the 2026-07-28 era, whose headers and params are exactly
// what the protocol asks for, no more. It answers the same bytes go-sdk
// would (JSON response mode). Anything else — another method, a batch, a
// header or _meta that is missing, wrong or unusual, params it does not
// know — goes to go-sdk, which answers it or says what is wrong.

// mcpCallRequest is a tools/call as the fast path reads it.
type mcpCallRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      json.RawMessage `json:"_meta"`
		// Features the fast path leaves to go-sdk.
		Task           json.RawMessage `json:"task"`
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	} `json:"params"`
}

// requestMeta is the _meta of a request, as far as the fast path reads
// it.
type requestMeta struct {
	ProtocolVersion    string          `json:"io.modelcontextprotocol/protocolVersion"`
	ClientCapabilities json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
	ClientInfo         json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
	// LogLevel is a 2026-07-28 request's logging level (that era has no
	// logging/setLevel).
	LogLevel string `json:"io.modelcontextprotocol/logLevel"`
	// ProgressToken asks for progress notifications during the call.
	ProgressToken json.RawMessage `json:"progressToken"`
}

var legacyVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}

var cacheControl = []string{"no-cache, no-transform"}

// fastCall answers r when it is a plain tools/call the fast path takes,
// and reports whether it did. When it did not, r is as it came (its body
// restored) for go-sdk.
// hs is the request's session (nil: none, or one go-sdk has and the
// scope does not know).
func (h mcpHandler) fastCall(w http.ResponseWriter, r *http.Request, hs *httpSession) bool {
	s := h.s
	ss, modern, ok := h.fastHeaders(r.Header, hs)
	if !ok {
		return false
	}
	in := bufs.Get().(*bytes.Buffer)
	in.Reset()
	defer bufs.Put(in)
	var req mcpCallRequest
	var meta requestMeta
	if !fastRequest(r, in, modern, &req, &meta) {
		return false
	}
	if s.asks.may(req.Params.Name) {
		// Its rules may ask the client something: go-sdk's (ask.go).
		r.Body = io.NopCloser(bytes.NewReader(bytes.Clone(in.Bytes())))
		return false
	}
	s.fastCalls.Add(1)
	res := s.answer(r.Context(), ss, req.Params.Name, req.Params.Arguments)
	h.writeFastAnswer(w, hs, &req, &meta, res, modern)
	return true
}

// fastHeaders says whether the fast path may take a request with these
// headers: a tools/call of the 2026-07-28 era, or of an earlier one in a
// session the scope knows (ss); modern is the era.
func (h mcpHandler) fastHeaders(hdr http.Header, hs *httpSession) (ss *mcp.ServerSession, modern, ok bool) {
	// Header values by their canonical keys, as net/http's server stores
	// them (Get would canonicalize each key again).
	version := first(hdr["Mcp-Protocol-Version"])
	modern = version == modernVersion
	switch {
	case modern:
		if h.s.noFastModern || first(hdr["Mcp-Method"]) != "tools/call" {
			return nil, false, false
		}
	case version == "" || slices.Contains(legacyVersions, version):
		if hs == nil {
			return nil, false, false
		}
		ss = hs.ss
	default:
		return nil, false, false
	}
	if !isJSONType(hdr["Content-Type"]) || !accepts(hdr["Accept"]) || len(hdr["Last-Event-Id"]) > 0 {
		return nil, false, false
	}
	return ss, modern, true
}

// fastRequest reads r's body into in and decodes it into req and meta,
// and reports whether it is a plain tools/call the fast path answers;
// when it is not, r's body is restored for go-sdk.
func fastRequest(r *http.Request, in *bytes.Buffer, modern bool, req *mcpCallRequest, meta *requestMeta) bool {
	if _, err := in.ReadFrom(io.LimitReader(r.Body, maxBody+1)); err != nil || in.Len() > maxBody {
		r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(bytes.Clone(in.Bytes())), r.Body))
		return false
	}
	body := in.Bytes()
	restore := func() bool {
		r.Body = io.NopCloser(bytes.NewReader(bytes.Clone(body)))
		return false
	}
	if !bytes.Contains(body, []byte(`"tools/call"`)) {
		return restore()
	}
	if !scanCall(body, req, meta) || req.JSONRPC != "2.0" || req.Method != "tools/call" || !validRPCID(req.ID) ||
		req.Params.Name == "" || req.Params.Task != nil || req.Params.InputResponses != nil || req.Params.RequestState != nil {
		return restore()
	}
	if modern {
		if meta.ProtocolVersion != modernVersion || first(r.Header["Mcp-Name"]) != req.Params.Name ||
			!isJSONObject(meta.ClientCapabilities) || (meta.ClientInfo != nil && !isJSONObject(meta.ClientInfo)) {
			return restore()
		}
	} else if meta.ProtocolVersion != "" || meta.LogLevel != "" {
		return restore()
	}
	if meta.ProgressToken != nil && !validRPCID(meta.ProgressToken) ||
		meta.LogLevel != "" && levelRank[meta.LogLevel] == 0 {
		return restore()
	}
	return true
}

// writeFastAnswer writes the answer res of a fast-path call: JSON, or an
// event stream when notifications go before it.
func (h mcpHandler) writeFastAnswer(w http.ResponseWriter, hs *httpSession, req *mcpCallRequest, meta *requestMeta, res tool.Result, modern bool) {
	out := bufs.Get().(*bytes.Buffer)
	out.Reset()
	defer bufs.Put(out)
	wh := w.Header()
	wh["Cache-Control"] = cacheControl
	if res.Notices != nil {
		level := meta.LogLevel
		if hs != nil {
			if l := hs.logLevel.Load(); l != nil {
				level = *l
			}
		}
		if b := appendNotices(out.AvailableBuffer(), res.Notices, level, meta.ProgressToken); len(b) > 0 {
			// The notifications, then the answer, as one event stream:
			// in the call's own stream they reach the client before the
			// answer does, as progress must.
			b = append(b, "event: message\ndata: "...)
			b = h.appendRPCResult(b, req.ID, req.Params.Name, res, modern)
			b = append(b, "\n\n"...)
			out.Write(b)
			wh["Content-Type"] = eventStreamType
			w.WriteHeader(http.StatusOK)
			w.Write(out.Bytes())
			return
		}
	}
	out.Write(h.appendRPCResult(out.AvailableBuffer(), req.ID, req.Params.Name, res, modern))
	writeJSON(w, http.StatusOK, out.Bytes())
}

// modernVersion is the MCP era whose requests name their method and tool
// in headers.
const modernVersion = "2026-07-28"

var eventStreamType = []string{"text/event-stream"}

// levelRank orders MCP logging levels, from 1 (debug); 0 is not a level.
var levelRank = map[string]int{"debug": 1, "info": 2, "notice": 3, "warning": 4, "error": 5, "critical": 6, "alert": 7, "emergency": 8}

// appendNotices appends a call's notifications as server-sent events:
// the log messages at or above level (none when the client set no
// level, as go-sdk does), then, when the request carries a progress
// token, one notifications/progress per value, the last value being the
// total.
func appendNotices(b []byte, n *tool.Notices, level string, token json.RawMessage) []byte {
	if min := levelRank[level]; min > 0 {
		for _, l := range n.Log {
			if levelRank[l.Level] < min {
				continue
			}
			// go-sdk's members, in its order: data, level, logger.
			b = append(b, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"data":`...)
			b = append(b, l.Data...)
			b = append(b, `,"level":`...)
			b = value.AppendString(b, l.Level)
			if l.Logger != "" {
				b = append(b, `,"logger":`...)
				b = value.AppendString(b, l.Logger)
			}
			b = append(b, "}}\n\n"...)
		}
	}
	if token != nil && len(n.Progress) > 0 {
		total := n.Progress[len(n.Progress)-1]
		for _, p := range n.Progress {
			b = append(b, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`...)
			b = append(b, token...)
			b = append(b, `,"progress":`...)
			b = strconv.AppendFloat(b, p, 'f', -1, 64)
			b = append(b, `,"total":`...)
			b = strconv.AppendFloat(b, total, 'f', -1, 64)
			b = append(b, "}}\n\n"...)
		}
	}
	return b
}

// appendRPCResult appends the JSON-RPC response to a tools/call, field for
// field what go-sdk writes.
func (h mcpHandler) appendRPCResult(b []byte, id json.RawMessage, name string, res tool.Result, modern bool) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"result":{`...)
	if modern {
		b = append(b, `"_meta":{"io.modelcontextprotocol/serverInfo":`...)
		b = append(b, h.s.serverInfo...)
		b = append(b, "},"...)
	}
	if res.Blocks != nil {
		b = append(b, `"content":`...)
		b = append(b, res.Blocks...)
	} else {
		b = append(b, `"content":[{"type":"text","text":`...)
		b = value.AppendString(b, res.Content)
		b = append(b, "}]"...)
	}
	if h.s.structured[name] && !res.IsError && res.Blocks == nil && isObject(res.Content) {
		b = append(b, `,"structuredContent":`...)
		b = append(b, res.Content...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if modern {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, "}}"...)
}

// validRPCID reports whether a JSON-RPC id is a string or a number.
func validRPCID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	c := id[0]
	return c == '"' || c == '-' || c >= '0' && c <= '9'
}

func isJSONObject(v json.RawMessage) bool { return len(v) > 0 && v[0] == '{' }

func isJSONType(v []string) bool {
	if len(v) != 1 {
		return false
	}
	ct := v[0]
	return ct == "application/json" || strings.HasPrefix(ct, "application/json;")
}

// first is a header's first value, as http.Header.Get gives it.
func first(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[0]
}

// accepts is go-sdk's rule: Accept names JSON and SSE (or wildcards).
func accepts(values []string) bool {
	if len(values) == 1 && (values[0] == "application/json, text/event-stream" || values[0] == "text/event-stream, application/json") {
		return true // what the official clients send
	}
	jsonOK, streamOK := false, false
	for _, value := range values {
		for raw := range strings.SplitSeq(value, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}
