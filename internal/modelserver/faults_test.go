package modelserver

import (
	"github.com/dryfire-dev/dryfire/internal/wire"
	"net/http/httptest"
	"testing"
	"time"
)

// A fault's error answer is in its API's shape, with the error type that
// API gives the status, the wait in both headers the SDKs read, and no
// x-should-retry: the client decides by the status.
func TestWriteFault(t *testing.T) {
	for _, tt := range []struct {
		api                 wire.API
		status              int
		retry               time.Duration
		retryAfter, retryMS string
		body                string
	}{
		{wire.OpenAIChat, 429, 1500 * time.Millisecond, "2", "1500", `{"error":{"message":"Rate limit reached for requests (a fault the case declares: model_faults)","type":"requests","param":null,"code":"rate_limit_exceeded"}}`},
		{wire.Anthropic, 429, 0, "0", "0", `{"type":"error","error":{"type":"rate_limit_error","message":"Number of requests has exceeded your rate limit (a fault the case declares: model_faults)"}}`},
		{wire.Anthropic, 529, -1, "", "", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded (a fault the case declares: model_faults)"}}`},
		{wire.OpenAIResponses, 503, -1, "", "", `{"error":{"message":"The server is overloaded or not ready yet. (a fault the case declares: model_faults)","type":"server_error","param":null,"code":null}}`},
		{wire.Anthropic, 500, -1, "", "", `{"type":"error","error":{"type":"api_error","message":"Internal server error (a fault the case declares: model_faults)"}}`},
		{wire.OpenAIChat, 400, -1, "", "", `{"error":{"message":"Bad Request (a fault the case declares: model_faults)","type":"invalid_request_error","param":null,"code":null}}`},
	} {
		w := httptest.NewRecorder()
		writeFault(w, tt.api, &Fault{Status: tt.status, RetryAfter: tt.retry, CutAfter: -1})
		h := w.Header()
		if w.Code != tt.status || w.Body.String() != tt.body || h.Get("Retry-After") != tt.retryAfter || h.Get("Retry-After-Ms") != tt.retryMS || h.Get("X-Should-Retry") != "" {
			t.Errorf("%s %d: %d %s, Retry-After %q, retry-after-ms %q, x-should-retry %q", tt.api, tt.status, w.Code, w.Body, h.Get("Retry-After"), h.Get("Retry-After-Ms"), h.Get("X-Should-Retry"))
		}
	}
}

// A cut passes the first n events of a stream, across writes and with
// CRLF line ends, or half a body of known length.
func TestCutWriter(t *testing.T) {
	for _, tt := range []struct {
		name   string
		ct     string
		length string
		n      int
		writes []string
		want   string
		cut    bool
	}{
		{"two of three", "text/event-stream", "", 2, []string{"data: 1\n\n", "data: 2\n", "\ndata: 3\n\n"}, "data: 1\n\ndata: 2\n\n", true},
		{"crlf", "text/event-stream", "", 1, []string{"data: 1\r\n\r\ndata: 2\r\n\r\n"}, "data: 1\r\n\r\n", true},
		{"none", "text/event-stream", "", 0, []string{"data: 1\n\n"}, "", true},
		{"shorter than the cut", "text/event-stream", "", 5, []string{"data: 1\n\n"}, "data: 1\n\n", false},
		{"a body", "application/json", "10", 3, []string{"0123456789"}, "01234", true},
	} {
		rec := httptest.NewRecorder()
		c := &cutWriter{ResponseWriter: rec, events: tt.n, bytes: -1}
		c.Header().Set("Content-Type", tt.ct)
		if tt.length != "" {
			c.Header().Set("Content-Length", tt.length)
		}
		c.WriteHeader(200)
		for _, s := range tt.writes {
			c.Write([]byte(s))
		}
		if rec.Body.String() != tt.want || c.cut != tt.cut {
			t.Errorf("%s: passed %q, cut %v", tt.name, rec.Body, c.cut)
		}
	}
}
