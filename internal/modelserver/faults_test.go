package modelserver

import (
	"net/http"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
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
		e := mustNew(t, Options{Scripted: true, Script: []*spec.Turn{{Text: "hi"}},
			Faults: []model.Fault{{Request: 1, Status: tt.status, RetryAfter: tt.retry, CutAfter: -1}}})
		r := post(t, http.DefaultClient, serve(t, e, ""), tt.api, conversation(tt.api, false)[0])
		h := r.header
		if r.status != tt.status || string(r.body) != tt.body || h.Get("Retry-After") != tt.retryAfter || h.Get("Retry-After-Ms") != tt.retryMS || h.Get("X-Should-Retry") != "" {
			t.Errorf("%s %d: %d %s, Retry-After %q, retry-after-ms %q, x-should-retry %q", tt.api, tt.status, r.status, r.body, h.Get("Retry-After"), h.Get("Retry-After-Ms"), h.Get("X-Should-Retry"))
		}
	}
}
