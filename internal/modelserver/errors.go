package modelserver

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Error codes of the answers dryfire gives instead of the model's (the
// OpenAI body's "code"; the Anthropic body has no code, its message says
// the same).
const (
	CodeMismatch    = "dryfire_cassette_mismatch"   // the request differs from the recorded one
	CodeBeyond      = "dryfire_cassette_beyond"     // more requests than recorded
	CodeNoCassette  = "dryfire_no_cassette"         // mode none and no cassette
	CodeBadCassette = "dryfire_cassette_unreadable" // not a cassette of this case
	CodeNoLive      = "dryfire_live_unavailable"    // would go live, but may not (no key, mode none)
	CodeUpstream    = "dryfire_upstream_unreachable"
	CodeNoTurn      = "dryfire_script_no_turn"          // no turn of the case's script answers the request
	CodeNotOffered  = "dryfire_script_tool_not_offered" // the turn calls a tool the request does not offer
)

// errorInfo is an error answer, whatever the API's shape.
type errorInfo struct {
	typ   string // OpenAI type / Anthropic error type
	msg   string
	param string // OpenAI param, "" is null
	code  string // OpenAI code, "" is null
	// fault: a declared fault's answer, sent without x-should-retry (the
	// client decides by the status, as with the real API's).
	fault bool
}

// writeError answers an error in the API's own shape:
// {"error":{"message","type","param","code"}} for OpenAI,
// {"type":"error","error":{"type","message"}} for Anthropic,
// {"error":{"code","message","status"}} for Gemini. A 4xx goes
// with x-should-retry: false, so that SDKs give up at once.
func writeError(w http.ResponseWriter, api wire.API, status int, e errorInfo) {
	var b bytes.Buffer
	if api == wire.Gemini || api == wire.GeminiCountTokens {
		geminiError(&b, status, e)
	} else if api == wire.Anthropic {
		typ := e.typ
		if typ == "" {
			typ = "invalid_request_error"
		}
		b.WriteString(`{"type":"error","error":{"type":`)
		quoteJSON(&b, typ)
		b.WriteString(`,"message":`)
		quoteJSON(&b, e.msg)
		b.WriteString("}}")
	} else {
		typ := e.typ
		if typ == "" {
			typ = "invalid_request_error"
		}
		b.WriteString(`{"error":{"message":`)
		quoteJSON(&b, e.msg)
		b.WriteString(`,"type":`)
		quoteJSON(&b, typ)
		b.WriteString(`,"param":`)
		nullable(&b, e.param)
		b.WriteString(`,"code":`)
		nullable(&b, e.code)
		b.WriteString("}}")
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	if status/100 == 4 && !e.fault {
		h.Set("X-Should-Retry", "false")
	}
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// geminiError is a google.rpc.Status: the HTTP status, the message, the
// status name; dryfire's code (or the error type) as an ErrorInfo's
// reason in its details.
func geminiError(b *bytes.Buffer, status int, e errorInfo) {
	b.WriteString(`{"error":{"code":`)
	b.WriteString(strconv.Itoa(status))
	b.WriteString(`,"message":`)
	quoteJSON(b, e.msg)
	b.WriteString(`,"status":`)
	quoteJSON(b, geminiStatus(status))
	if reason := e.code; reason != "" {
		b.WriteString(`,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":`)
		quoteJSON(b, reason)
		b.WriteString(`,"domain":"dryfire"}]`)
	}
	b.WriteString("}}")
}

func nullable(b *bytes.Buffer, s string) {
	if s == "" {
		b.WriteString("null")
		return
	}
	quoteJSON(b, s)
}

// quoteJSON writes s as a JSON string (no HTML escaping).
func quoteJSON(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte("0123456789abcdef"[r>>4])
			b.WriteByte("0123456789abcdef"[r&0xf])
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// refuse answers a request the recording cannot answer and that may not go
// live, with status 400 (which no SDK retries), and returns the status.
func refuse(w http.ResponseWriter, api wire.API, err error) int {
	info := describe(err)
	writeError(w, api, http.StatusBadRequest, info)
	return http.StatusBadRequest
}

// describe is the error answer for an error of the cassette package.
func describe(err error) errorInfo {
	info := errorInfo{typ: "invalid_request_error", msg: "dryfire: " + err.Error()}
	var re *cassette.ReplayError
	var me *cassette.MissingError
	var fe *cassette.FileError
	var le *cassette.LiveError
	var pe *cassette.PassthroughError
	var nt *model.NoTurnError
	var no *model.ToolNotOfferedError
	switch {
	case errors.As(err, &re):
		info.code = CodeMismatch
		if re.Kind == cassette.Beyond {
			info.code = CodeBeyond
		}
		if (re.Kind == cassette.Mismatch || re.Kind == cassette.NoMatch) && len(re.Diffs) > 0 {
			info.param = param(re.Diffs[0])
		}
	case errors.As(err, &me):
		info.code = CodeNoCassette
	case errors.As(err, &fe):
		info.code = CodeBadCassette
	case errors.As(err, &le), errors.As(err, &pe):
		info.code = CodeNoLive
	case errors.As(err, &nt), errors.Is(err, wire.ErrNotJSON):
		info.code = CodeNoTurn
	case errors.As(err, &no):
		info.code = CodeNotOffered
	}
	return info
}

// param is the field a difference is about, as an OpenAI error names it:
// "$.messages[1].content: recorded …" is messages[1].content.
func param(diff string) string {
	p, ok := strings.CutPrefix(diff, "$")
	if !ok {
		return ""
	}
	p, _, _ = strings.Cut(p, ": recorded ")
	return strings.TrimPrefix(p, ".")
}

// notFound answers a path that is not a model route, in the shape of the
// API it looks like.
func notFound(w http.ResponseWriter, r *http.Request) {
	api := wire.OpenAIChat
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.HasPrefix(r.URL.Path, "/v1/complete") || r.Header.Get("Anthropic-Version") != "":
		api = wire.Anthropic
	case strings.HasPrefix(r.URL.Path, "/v1beta/") || strings.HasPrefix(r.URL.Path, "/v1alpha/") ||
		r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key"):
		api = wire.Gemini
	}
	info := errorInfo{typ: "invalid_request_error", code: "unknown_url",
		msg: "dryfire serves POST /v1/chat/completions, /v1/responses, /v1/messages and /v1beta/models/MODEL:generateContent (:streamGenerateContent, :countTokens) here, not " + r.Method + " " + r.URL.Path}
	if api == wire.Anthropic {
		info.typ = "not_found_error"
	}
	writeError(w, api, http.StatusNotFound, info)
}

// Refuse is a handler that answers every model request with err (in the
// API's shape, status 400): for a case whose endpoint could not be made
// (New's error), so that its agent is told why.
func Refuse(err error) http.Handler {
	info := describe(err)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, ok := wire.RouteOf(r.URL.Path)
		if !ok {
			notFound(w, r)
			return
		}
		writeError(w, api, http.StatusBadRequest, info)
	})
}

// geminiStatus is the google.rpc status name of an HTTP status, as the
// API's error bodies give it.
func geminiStatus(status int) string {
	switch status {
	case 400, 413:
		return "INVALID_ARGUMENT"
	case 401:
		return "UNAUTHENTICATED"
	case 403:
		return "PERMISSION_DENIED"
	case 404:
		return "NOT_FOUND"
	case 409:
		return "ABORTED"
	case 429:
		return "RESOURCE_EXHAUSTED"
	case 499:
		return "CANCELLED"
	case 501:
		return "UNIMPLEMENTED"
	case 502, 503, 529:
		return "UNAVAILABLE"
	case 504:
		return "DEADLINE_EXCEEDED"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "FAILED_PRECONDITION"
}
