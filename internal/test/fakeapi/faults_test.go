package fakeapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// TestFaultShapes: an injected fault answers in the error shape of the
// API the fake serves (Bedrock's {"message"} with x-amzn-ErrorType,
// Ollama's {"error": "..."}, a Vertex AI publisher's own), not OpenAI's.
func TestFaultShapes(t *testing.T) {
	const vertex = "/v1/projects/p/locations/us-east5/publishers/"
	tests := []struct {
		name, path string
		srv        func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
		status     int
		body, typ  string
	}{
		{"bedrock 500", "/model/m/converse", fakeapi.NewBedrock, 500, `{"message":"injected fault 500"}`, "InternalServerException"},
		{"bedrock 429", "/model/m/converse-stream", fakeapi.NewBedrock, 429, `{"message":"injected fault 429"}`, "ThrottlingException"},
		{"bedrock 503", "/model/m/converse", fakeapi.NewBedrock, 503, `{"message":"injected fault 503"}`, "ServiceUnavailableException"},
		{"ollama 500", "/api/chat", fakeapi.NewOllama, 500, `{"error":"injected fault 500"}`, ""},
		{"ollama 429", "/api/chat", fakeapi.NewOllama, 429, `{"error":"injected fault 429"}`, ""},
		{"vertex gemini 503", vertex + "google/models/g:generateContent", fakeapi.NewVertex, 503,
			`{"error":{"code":503,"message":"injected fault 503","status":"UNAVAILABLE"}}`, ""},
		{"vertex anthropic 529", vertex + "anthropic/models/c:rawPredict", fakeapi.NewVertex, 529,
			`{"type":"error","error":{"type":"overloaded_error","message":"injected fault 529"}}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.srv(oaiScript)
			defer s.Close()
			s.Fail(fakeapi.Fault{Status: tt.status})
			resp, err := http.Post(s.URL+tt.path, "application/json", strings.NewReader(`{}`))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status || string(body) != tt.body {
				t.Errorf("%d %s, want %d %s", resp.StatusCode, body, tt.status, tt.body)
			}
			if got := resp.Header.Get("X-Amzn-Errortype"); got != tt.typ {
				t.Errorf("x-amzn-ErrorType %q, want %q", got, tt.typ)
			}
		})
	}
}
