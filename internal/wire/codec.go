package wire

import (
	"bytes"
	"net/http"
	"net/url"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
)

// codec is what wire knows of one API, in one place: each API's row of
// codecs, where the model seam's methods (wire.go) and the endpoint's
// look it up instead of switching on the API.
type codec struct {
	name     string // for people
	provider string // whose key and base URL its live calls take
	// reply writes an answer (Reply); read reads a request's conversation
	// (ReadRequest).
	reply func(*Reply) (body []byte, events [][]byte)
	read  func(w *model.Request, m map[string]any, u *url.URL, body []byte)
	// stream says whether an answer is a stream, and gives its bytes as
	// fold reads them; parse reads the unstreamed answer (nil: an answer
	// that is no turn, a token count).
	stream func(a *model.Answer, data []byte) ([]byte, bool)
	fold   func([]byte) ([]byte, error)
	parse  func([]byte) (*model.Response, error)
	// usageOfAnswer: the usage is read from the whole answer (Response),
	// not from the objects that mention it.
	usageOfAnswer bool
	// streamType is a stream's Content-Type; errBody an error's body;
	// faults how the API words a fault's 429, 503 (529) and other 5xx.
	streamType string
	errBody    func(status int, e model.ErrorInfo) []byte
	faults     [3]model.ErrorInfo
	// owned are the body keys the built-in loop writes: agent.params may
	// not set them (Anthropic's are its own, anthropicOwned).
	owned []string
	// wire is the API as a model.Wire, made once (a string's conversion
	// would allocate on every call).
	wire model.Wire
}

var (
	openAIFaults = [3]model.ErrorInfo{{Type: "requests", Code: "rate_limit_exceeded", Message: "Rate limit reached for requests"},
		{Type: "server_error", Message: "The server is overloaded or not ready yet."},
		{Type: "server_error", Message: "The server had an error while processing your request."}}
	geminiFaults = [3]model.ErrorInfo{{Message: "Resource has been exhausted (e.g. check quota)."},
		{Message: "The model is overloaded. Please try again later."}, {Message: "Internal error encountered."}}
	sseType = "text/event-stream; charset=utf-8"
)

func streamedAnswer(a *model.Answer, data []byte) ([]byte, bool) { return data, a.Streamed }

var codecs = map[API]*codec{
	OpenAIChat: {name: "OpenAI Chat Completions", provider: provider.OpenAI, reply: writeChat, read: readChat,
		stream: streamedAnswer, fold: foldChat, parse: func(d []byte) (*model.Response, error) { return parseChat(string(OpenAIChat), d, 0) },
		streamType: sseType, errBody: openAIErrorBody, faults: openAIFaults,
		owned: []string{"model", "messages", "tools"}},
	OpenAIResponses: {name: "OpenAI Responses", provider: provider.OpenAIResponses, reply: writeResponses, read: readResponses,
		stream: streamedAnswer, fold: foldResponses, parse: func(d []byte) (*model.Response, error) { return parseResponses(d, 0) },
		streamType: sseType, errBody: openAIErrorBody, faults: openAIFaults,
		owned: []string{"model", "input", "instructions", "tools", "previous_response_id", "conversation"}},
	Anthropic: {name: "Anthropic Messages", provider: provider.Anthropic, reply: writeAnthropic, read: readAnthropic,
		stream: streamedAnswer, fold: foldAnthropic, parse: func(d []byte) (*model.Response, error) { return parseAnthropic(d, nil) },
		streamType: sseType, errBody: anthropicErrorBody,
		faults: [3]model.ErrorInfo{{Type: "rate_limit_error", Message: "Number of requests has exceeded your rate limit"},
			{Type: "overloaded_error", Message: "Overloaded"}, {Type: "api_error", Message: "Internal server error"}}},
	AnthropicCountTokens: {name: "Anthropic count_tokens", provider: provider.Anthropic, reply: writeAnthropic, read: readAnthropic,
		streamType: sseType, errBody: anthropicErrorBody},
	Gemini: {name: "Gemini generateContent", provider: provider.Gemini, reply: writeGemini, read: readGemini,
		stream: geminiStream, fold: foldGemini, parse: func(d []byte) (*model.Response, error) { return parseGemini(d, 0, true) }, streamType: sseType, errBody: geminiErrorBody, faults: geminiFaults,
		owned: []string{"contents", "tools", "systemInstruction", "system_instruction"}},
	GeminiCountTokens: {name: "Gemini countTokens", provider: provider.Gemini, reply: writeAnthropic, read: readGemini,
		streamType: sseType, errBody: geminiErrorBody, faults: geminiFaults},
	Ollama: {name: "Ollama chat", provider: provider.Ollama, reply: writeOllama, read: readOllama,
		stream: func(a *model.Answer, data []byte) ([]byte, bool) {
			return data, bytes.Count(bytes.TrimSpace(data), []byte("\n")) > 0 || a.Streamed
		}, fold: foldOllama, parse: func(d []byte) (*model.Response, error) { return parseOllama(d, 0) }, usageOfAnswer: true,
		streamType: "application/x-ndjson", errBody: func(_ int, e model.ErrorInfo) []byte { return marshal(map[string]string{"error": e.Message}) }, faults: openAIFaults,
		owned: []string{"model", "messages", "tools"}},
	Bedrock: {name: "Bedrock Converse", provider: provider.Bedrock, reply: writeBedrock, read: readBedrock,
		stream: func(_ *model.Answer, data []byte) ([]byte, bool) { return data, len(data) > 0 && data[0] != '{' }, // an event stream
		fold:   foldBedrock, parse: parseBedrock, usageOfAnswer: true, streamType: EventStreamType,
		errBody: func(_ int, e model.ErrorInfo) []byte { return marshal(map[string]string{"message": e.Message}) },
		faults: [3]model.ErrorInfo{{Message: "Too many requests, please wait before trying again."}, {Message: "Bedrock is unable to process your request."},
			{Message: "The system encountered an unexpected error during processing. Try your request again."}},
		owned: []string{"messages", "system", "toolConfig"}},
}

func init() {
	for api, c := range codecs {
		c.wire = api
	}
}

// other is the codec of an API wire does not know: OpenAI's errors, no
// turns read.
var other = &codec{provider: provider.OpenAI, reply: writeAnthropic, read: func(*model.Request, map[string]any, *url.URL, []byte) {},
	streamType: sseType, errBody: openAIErrorBody, faults: openAIFaults}

func (api API) codec() *codec {
	if c, ok := codecs[api]; ok {
		return c
	}
	return other
}

// faultError is the error an API answers a status with.
func faultError(api API, status int) model.ErrorInfo {
	f := api.codec().faults
	switch {
	case status == http.StatusTooManyRequests:
		return f[0]
	case status == 529 || status == http.StatusServiceUnavailable:
		return f[1]
	case status >= 500:
		return f[2]
	}
	return model.ErrorInfo{Type: "invalid_request_error", Message: http.StatusText(status)}
}
