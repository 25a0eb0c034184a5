package modelserver

import (
	"net/http"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// notFound answers a path that is not a model route, in the shape of the
// API it looks like.
// A POST to TokenPath is answered with an access token: the token of the
// service account dryfire gives Vertex AI's clients (google-auth), a
// dummy, never sent anywhere.
func notFound(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == TokenPath && r.Method == http.MethodPost {
		write(w, model.NewAnswer(200, "application/json", []byte(`{"access_token":"`+DummyKey+`","expires_in":3600,"token_type":"Bearer"}`), nil))
		return
	}
	api := wire.OpenAIChat
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.HasPrefix(r.URL.Path, "/v1/complete") || r.Header.Get("Anthropic-Version") != "":
		api = wire.Anthropic
	case strings.HasPrefix(r.URL.Path, "/v1beta/") || strings.HasPrefix(r.URL.Path, "/v1alpha/") ||
		r.Header.Get("X-Goog-Api-Key") != "" || r.URL.Query().Has("key"):
		api = wire.Gemini
	}
	info := model.ErrorInfo{Type: "invalid_request_error", Code: "unknown_url",
		Message: "dryfire serves POST /v1/chat/completions, /v1/responses, /v1/messages and /v1beta/models/MODEL:generateContent (:streamGenerateContent, :countTokens) here, not " + r.Method + " " + r.URL.Path}
	if api == wire.Anthropic {
		info.Type = "not_found_error"
	}
	write(w, api.Error(http.StatusNotFound, info))
}

// Refuse is a handler that answers every model request with err (in the
// API's shape, status 400): for a case whose endpoint could not be made
// (New's error), so that its agent is told why.
func Refuse(err error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		api, ok := wire.RouteOf(r.URL.Path)
		if !ok {
			notFound(w, r)
			return
		}
		write(w, model.Refusal(api, err))
	})
}
