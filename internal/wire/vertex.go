package wire

import (
	"cmp"
	"encoding/json"
	"net/url"
	"strings"
)

// Vertex AI: the Gemini API and Anthropic's Messages at Google Cloud's
// paths, /v1/projects/PROJECT/locations/LOCATION/publishers/PUBLISHER/
// models/MODEL:METHOD (and /v1beta1/…, which google-genai uses), with an
// OAuth access token as a bearer token.
//
//   - publisher google: the Gemini API's bodies and answers, METHOD
//     generateContent, streamGenerateContent or countTokens.
//   - publisher anthropic: Messages' bodies (no model: it is the path's;
//     anthropic_version: vertex-2023-10-16) and answers, METHOD rawPredict
//     or streamRawPredict (a body with "stream": true).
//
// The endpoint is https://LOCATION-aiplatform.googleapis.com (the global
// location's https://aiplatform.googleapis.com), or GOOGLE_VERTEX_BASE_URL
// (as google-genai reads it). A live call's token is
// GOOGLE_OAUTH_ACCESS_TOKEN (`gcloud auth print-access-token`). In a
// cassette the project and location of a path are "-" (CanonicalPath): a
// recording replays under any project.

// VertexTokenEnv holds the access token of live Vertex AI calls.
const VertexTokenEnv = "GOOGLE_OAUTH_ACCESS_TOKEN"

// VertexAnthropicVersion is the anthropic_version of a Messages body on
// Vertex AI.
const VertexAnthropicVersion = "vertex-2023-10-16"

// VertexPath reads a Vertex AI route: its project, location, publisher,
// model and method.
func VertexPath(path string) (project, location, publisher, model, method string, ok bool) {
	rest, found := strings.CutPrefix(path, "/v1/projects/")
	if !found {
		if rest, found = strings.CutPrefix(path, "/v1beta1/projects/"); !found {
			return "", "", "", "", "", false
		}
	}
	parts := strings.SplitN(rest, "/", 7)
	if len(parts) != 7 || parts[1] != "locations" || parts[3] != "publishers" || parts[5] != "models" {
		return "", "", "", "", "", false
	}
	model, method, found = strings.Cut(parts[6], ":")
	return parts[0], parts[2], parts[4], model, method, found && model != ""
}

// vertexAPI is the API of a Vertex AI route.
func vertexAPI(path string) (API, bool) {
	_, _, publisher, _, method, ok := VertexPath(path)
	switch {
	case !ok:
	case publisher == "google" && method == "countTokens":
		return GeminiCountTokens, true
	case publisher == "google" && (method == "generateContent" || method == "streamGenerateContent"):
		return Gemini, true
	case publisher == "anthropic" && (method == "rawPredict" || method == "streamRawPredict"):
		return Anthropic, true
	}
	return "", false
}

// CanonicalPath is a request's path as a cassette keeps and compares it:
// a Vertex AI path's project and location are "-".
func CanonicalPath(path string) string {
	if _, _, _, _, _, ok := VertexPath(path); !ok {
		return path
	}
	version, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/projects/")
	_, rest, _ = strings.Cut(rest, "/publishers/")
	return "/" + version + "/projects/-/locations/-/publishers/" + rest
}

// vertexURL is where a built-in loop's Vertex AI call of publisher and
// model goes: base (its host root; "" for the location's endpoint), the
// project and location of the environment as google-genai reads them
// (GOOGLE_CLOUD_PROJECT, GOOGLE_CLOUD_LOCATION); without them, "-" and
// us-central1: a replay needs neither (CanonicalPath).
func vertexURL(base string, getenv func(string) string, publisher, model, method string) string {
	project, location := cmp.Or(getenv("GOOGLE_CLOUD_PROJECT"), "-"), cmp.Or(getenv("GOOGLE_CLOUD_LOCATION"), "us-central1")
	if base == "" {
		base = vertexBase(location)
	}
	return strings.TrimRight(base, "/") + "/v1/projects/" + url.PathEscape(project) + "/locations/" + url.PathEscape(location) +
		"/publishers/" + publisher + "/models/" + url.PathEscape(model) + ":" + method
}

// vertexBase is the endpoint of a location.
func vertexBase(location string) string {
	if location == "global" {
		return "https://aiplatform.googleapis.com"
	}
	return "https://" + location + "-aiplatform.googleapis.com"
}

// vertexBody is a Messages body as Vertex AI takes it: no model, its
// anthropic_version.
func vertexBody(body []byte) []byte {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return body
	}
	delete(m, "model")
	m["anthropic_version"], _ = json.Marshal(VertexAnthropicVersion)
	if out, err := Marshal(m); err == nil {
		return out
	}
	return body
}
