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
		_, _, publisher, model, method, ok := wire.VertexPath(r.URL.Path)
		switch {
		case !ok:
			refuse(w, wire.Gemini, &fault{status: http.StatusNotFound, msg: "Not Found"})
		case publisher == "google":
			gemini.ServeHTTP(w, r)
		case publisher == "anthropic" && (method == "rawPredict" || method == "streamRawPredict"):
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
			refuse(w, wire.Gemini, &fault{status: http.StatusNotFound, msg: "Publisher model " + publisher + "/" + model + " was not found"})
		}
	}), cfg)
}
