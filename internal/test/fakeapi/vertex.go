package fakeapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// NewVertex serves Vertex AI's paths from brain,
// /v1/projects/P/locations/L/publishers/PUBLISHER/models/MODEL:METHOD (and
// /v1beta1/…): publisher google as NewGemini answers (generateContent,
// streamGenerateContent, countTokens), publisher anthropic as NewAnthropic
// does (rawPredict, streamRawPredict), whose body must carry an
// anthropic_version (vertex-2023-10-16; anthropic's Python client 2.14
// sends its own API version) and no model. It wants an access
// token (Authorization: Bearer), the key when RequireKey names one, and
// refuses another publisher or method with 404.
func NewVertex(brain Brain, opts ...Option) *Server {
	cfg := configure(opts)
	gemini, anthropic := geminiHandler(brain, ""), anthropicHandler(brain, "")
	return start(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || token == "" || cfg.key != "" && token != cfg.key {
			refuse(w, wire.Gemini, &fault{status: http.StatusUnauthorized, msg: "Request had invalid authentication credentials. Expected OAuth 2 access token."})
			return
		}
		rest, found := strings.CutPrefix(r.URL.Path, "/v1/projects/")
		if !found {
			rest, found = strings.CutPrefix(r.URL.Path, "/v1beta1/projects/")
		}
		parts := strings.SplitN(rest, "/", 7)
		if !found || len(parts) != 7 || parts[1] != "locations" || parts[3] != "publishers" || parts[5] != "models" {
			refuse(w, wire.Gemini, &fault{status: http.StatusNotFound, msg: "Not Found"})
			return
		}
		model, method, _ := strings.Cut(parts[6], ":")
		switch {
		case parts[4] == "google":
			gemini.ServeHTTP(w, r)
		case parts[4] == "anthropic" && (method == "rawPredict" || method == "streamRawPredict"):
			data, _ := io.ReadAll(r.Body)
			var body map[string]any
			if json.Unmarshal(data, &body) != nil || body["anthropic_version"] == nil || body["model"] != nil {
				refuse(w, wire.Anthropic, invalid("anthropic_version: Field required (%s, say), and model is not a field of the body on Vertex AI", wire.VertexAnthropicVersion))
				return
			}
			delete(body, "anthropic_version")
			body["model"] = model
			data, _ = wire.Marshal(body)
			r.Body, r.URL.Path = io.NopCloser(bytes.NewReader(data)), "/v1/messages"
			r.Header.Set("Anthropic-Version", "2023-06-01")
			anthropic.ServeHTTP(w, r)
		default:
			refuse(w, wire.Gemini, &fault{status: http.StatusNotFound, msg: "Publisher model " + parts[4] + "/" + model + " was not found"})
		}
	}), cfg)
}
