package wire

import (
	"mime"
	"strings"
)

// API is a model API as the model endpoint serves it and its cassettes are read.
type API string

const (
	// OpenAIChat is POST /v1/chat/completions.
	OpenAIChat API = "openai-chat"
	// OpenAIResponses is POST /v1/responses.
	OpenAIResponses API = "openai-responses"
	// Anthropic is POST /v1/messages.
	Anthropic API = "anthropic"
	// Gemini is POST /v1beta/models/{model}:generateContent and
	// :streamGenerateContent (gemini.go).
	Gemini API = "gemini"
	// GeminiCountTokens is POST /v1beta/models/{model}:countTokens: an
	// answer, but no turn of the case.
	GeminiCountTokens API = "gemini-count-tokens"
	// AnthropicCountTokens is POST /v1/messages/count_tokens: answered
	// by dryfire under every model (Local), no turn, never recorded.
	AnthropicCountTokens API = "anthropic-count-tokens"
	// Ollama is POST /api/chat (ollama.go).
	Ollama API = "ollama"
	// Bedrock is POST /model/{modelId}/converse and /converse-stream
	// (bedrock.go).
	Bedrock API = "bedrock"
)

// Routes are the paths served (after any prefix is stripped) and their
// API; the Gemini route is a pattern ({model} is any model's name, *
// generateContent, streamGenerateContent or countTokens): RouteOf reads
// a path.
var Routes = map[string]API{
	"/v1/chat/completions": OpenAIChat,
	"/v1/responses":        OpenAIResponses,
	"/v1/messages":         Anthropic,
	GeminiRoute:            Gemini,
	OllamaRoute:            Ollama,
	BedrockRoute:           Bedrock,
}

// BedrockRoute is the Converse route as Routes and Paths list it.
const BedrockRoute = "/model/{modelId}/converse"

// RouteOf is the API of a path (after any prefix is stripped), and
// whether it is a model route: the fixed routes without hashing the
// path, then the Gemini pattern.
func RouteOf(path string) (API, bool) {
	switch path {
	case "/v1/chat/completions":
		return OpenAIChat, true
	case "/v1/responses":
		return OpenAIResponses, true
	case "/v1/messages":
		return Anthropic, true
	case "/v1/messages/count_tokens":
		return AnthropicCountTokens, true
	case OllamaRoute:
		return Ollama, true
	}
	if strings.HasPrefix(path, "/openai/") {
		return azurePath(path)
	}
	if api, ok := vertexAPI(path); ok {
		return api, true
	}
	if _, _, ok := BedrockPath(path); ok {
		return Bedrock, true
	}
	if _, method, ok := GeminiPath(path); ok {
		if method == "countTokens" {
			return GeminiCountTokens, true
		}
		return Gemini, true
	}
	return "", false
}

// IsModelPath says whether a path (after any prefix) is a model API's:
// under /v1 (OpenAI, Anthropic, Gemini's v1), /v1beta or /v1alpha
// (Gemini), /v1beta1 and /token (Vertex AI, its clients' OAuth token),
// /openai (Azure OpenAI), /api (Ollama), /model (Bedrock).
func IsModelPath(path string) bool {
	return path == "/v1" || strings.HasPrefix(path, "/v1/") || strings.HasPrefix(path, "/v1beta/") || strings.HasPrefix(path, "/v1alpha/") ||
		strings.HasPrefix(path, "/v1beta1/") || path == "/token" ||
		strings.HasPrefix(path, "/openai/") || strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/model/")
}

// Turn says whether a successful answer of the API is a turn of the
// case (a token count is not).
func (a API) Turn() bool { return a != GeminiCountTokens && a != AnthropicCountTokens }

// Local says whether dryfire answers the API's calls itself under every
// model (script, cassette, live): Anthropic's token count.
func (a API) Local() bool { return a == AnthropicCountTokens }

// Name is the API's name for people.
func (a API) Name() string {
	if c := a.codec(); c.name != "" {
		return c.name
	}
	return string(a)
}

// PathDoc says what a path of Paths serves, for people.
func PathDoc(p string) string {
	switch p {
	case GeminiRoute:
		return "Gemini generateContent, stream, countTokens"
	case BedrockRoute:
		return "Bedrock Converse, ConverseStream"
	}
	return Routes[p].Name()
}

// Paths are the keys of Routes in the order they are listed (help texts,
// the tool server's 404 answer).
var Paths = []string{"/v1/chat/completions", "/v1/responses", "/v1/messages", GeminiRoute, OllamaRoute, BedrockRoute}

// The Gemini API (generativelanguage): POST {base}/v1beta/models/{model}:
// generateContent, :streamGenerateContent (?alt=sse: a server-sent event
// per GenerateContentResponse) and :countTokens, the key in
// x-goog-api-key or ?key=. The official SDKs (google-genai, @google/genai)
// read the base URL from GOOGLE_GEMINI_BASE_URL. Vertex AI's paths
// (/v1/projects/P/locations/L/publishers/google/models/M:…) are read in
// vertex.go.

// GeminiRoute is the Gemini route as Routes and Paths list it.
const GeminiRoute = "/v1beta/models/{model}:*"

// geminiVersions are the API versions whose paths are served.
var geminiVersions = []string{"/v1beta/", "/v1/", "/v1alpha/"}

// GeminiPath reads a Gemini route: /VERSION/models/MODEL:METHOD (or
// tunedModels/MODEL), METHOD one of the three served.
func GeminiPath(path string) (modelName, method string, ok bool) {
	var rest, name string
	for _, v := range geminiVersions {
		if r, found := strings.CutPrefix(path, v); found {
			rest = r
			break
		}
	}
	switch _, _, publisher, m, _, vertex := VertexPath(path); {
	case vertex && publisher == "google":
		name = m + path[strings.LastIndexByte(path, ':'):]
	case strings.HasPrefix(rest, "models/"):
		name = rest[len("models/"):]
	case strings.HasPrefix(rest, "tunedModels/"):
		name = rest
	default:
		return "", "", false
	}
	i := strings.LastIndexByte(name, ':')
	if i <= 0 || strings.Contains(name[:i], "/") && !strings.HasPrefix(name, "tunedModels/") {
		return "", "", false
	}
	switch method = name[i+1:]; method {
	case "generateContent", "streamGenerateContent", "countTokens":
		return name[:i], method, true
	}
	return "", "", false
}

// Azure OpenAI serves the OpenAI APIs at its own paths, the version in
// ?api-version= and the key in api-key: a deployment's
// /openai/deployments/{deployment}/chat/completions (and /responses),
// the v1 API's /openai/v1/chat/completions and /openai/v1/responses, and
// /openai/responses. The AzureOpenAI clients (openai's Python and JS
// packages) take AZURE_OPENAI_ENDPOINT as the host root. Requests are
// answered as the OpenAI API of the path answers them; recorded calls go
// to AZURE_OPENAI_ENDPOINT with AZURE_OPENAI_API_KEY.

// azurePath is the API of an Azure OpenAI path.
func azurePath(path string) (API, bool) {
	rest := strings.TrimPrefix(path, "/openai/")
	if d, ok := strings.CutPrefix(rest, "deployments/"); ok {
		i := strings.IndexByte(d, '/')
		if i <= 0 {
			return "", false
		}
		rest = d[i+1:]
	} else {
		rest = strings.TrimPrefix(rest, "v1/")
	}
	switch rest {
	case "chat/completions":
		return OpenAIChat, true
	case "responses":
		return OpenAIResponses, true
	}
	return "", false
}

// IsEventStream says whether a Content-Type is text/event-stream.
func IsEventStream(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream")
	}
	return mt == "text/event-stream"
}

// IsAnthropicPath says whether a request path (without the query) is the
// Anthropic Messages API's.
func IsAnthropicPath(path string) bool {
	_, _, publisher, _, _, vertex := VertexPath(path)
	return strings.HasSuffix(path, "/v1/messages") || vertex && publisher == "anthropic"
}

// IsGeminiPath says whether a request path (without the query) is the
// Gemini API's: .../models/MODEL:generateContent, :streamGenerateContent
// or :countTokens.
func IsGeminiPath(path string) bool {
	i := strings.LastIndexByte(path, ':')
	if i < 0 || !strings.Contains(path[:i], "/models/") && !strings.Contains(path[:i], "/tunedModels/") {
		return false
	}
	switch path[i+1:] {
	case "generateContent", "streamGenerateContent", "countTokens":
		return true
	}
	return false
}
