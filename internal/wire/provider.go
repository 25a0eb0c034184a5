package wire

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/pause"
	"github.com/dryfire-dev/dryfire/internal/provider"
)

// Defaults of a real provider.
const (
	DefaultRetries          = 3
	DefaultTimeout          = 120 * time.Second
	DefaultAnthropicBaseURL = "https://api.anthropic.com"
	DefaultOpenAIBaseURL    = "https://api.openai.com/v1"
	DefaultGeminiBaseURL    = "https://generativelanguage.googleapis.com"
	DefaultMaxTokens        = 4096 // Anthropic requires max_tokens
	maxBackoff              = 20 * time.Second
	maxRetryAfter           = 60 * time.Second
)

// Options configure a real provider for one case.
type Options struct {
	Provider string // provider.Anthropic, ...
	Model    string
	BaseURL  string // resolved: base_url, else the environment, else the default
	APIKey   string // may be empty when every call is replayed
	// APIVersion is Azure OpenAI's api-version (provider.AzureV1: the v1 API); ""
	// is DefaultAzureAPIVersion (DefaultAzureResponsesAPIVersion for the
	// Responses API).
	APIVersion string
	Params     map[string]any
	// Client carries the calls; its transport records and replays them.
	Client *http.Client
	// Retries after a 429, a 5xx or a dropped connection.
	Retries int
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Sleep waits between attempts; nil waits on a timer, honouring ctx.
	Sleep func(ctx context.Context, d time.Duration) error
	// Getenv reads what a provider reads besides its key (Bedrock's AWS
	// credentials and region); nil reads nothing.
	Getenv func(string) string
}

// New returns the model for a real provider.
func New(o Options) (model.Model, error) {
	if o.Client == nil {
		o.Client = http.DefaultClient
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Getenv == nil {
		o.Getenv = func(string) string { return "" }
	}
	c := &caller{o: o, api: API(providers[o.Provider].api)}
	switch o.Provider {
	case provider.Anthropic, provider.VertexAnthropic:
		c.call = c.anthropicCall
	case provider.OpenAI, provider.OpenAICompatible:
		to := endpoint(o.BaseURL, "chat/completions")
		c.call = c.chatCall(func(string) (string, error) { return to, nil }, openAIHeader(o.APIKey))
	case provider.OpenAIResponses:
		c.call = responsesCall(endpoint(o.BaseURL, "responses"), openAIHeader(o.APIKey))
	case provider.Gemini, provider.VertexGemini:
		c.call = c.geminiCall
	case provider.AzureOpenAI:
		if p := provider.DeploymentProblem(o.Model); p != "" {
			return nil, fmt.Errorf("the Azure OpenAI deployment %q (agent.model) cannot be used: %s", o.Model, p)
		}
		c.call = c.chatCall(func(model string) (string, error) { // the deployment's, Chat Completions'
			return azureURL(o.BaseURL, o.APIVersion, "chat/completions", model)
		}, azureHeader(o.APIKey))
	case provider.AzureOpenAIResponses:
		to, err := azureURL(o.BaseURL, cmp.Or(o.APIVersion, DefaultAzureResponsesAPIVersion), "responses", o.Model) // the deployment is the body's model
		if err != nil {
			return nil, err
		}
		c.call = responsesCall(to, azureHeader(o.APIKey))
	case provider.Ollama:
		c.call = c.ollamaCall
	case provider.Bedrock:
		c.call, c.sign = c.bedrockCall, bedrockSigner(o.Getenv)
	default:
		return nil, fmt.Errorf("unknown provider %q", o.Provider)
	}
	return c, nil
}

// providers are what dryfire knows of each real provider: the API its
// calls speak, the variables of its key ("" for none: a local server) and
// of its base URL, and its public endpoint ("" for none: Azure OpenAI's is
// each resource's own).
var providers = map[string]struct{ api, keyEnv, baseEnv, base string }{
	provider.Anthropic:            {string(Anthropic), "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", DefaultAnthropicBaseURL},
	provider.OpenAI:               {string(OpenAIChat), "OPENAI_API_KEY", "OPENAI_BASE_URL", DefaultOpenAIBaseURL},
	provider.OpenAICompatible:     {string(OpenAIChat), "OPENAI_API_KEY", "OPENAI_BASE_URL", DefaultOpenAIBaseURL},
	provider.OpenAIResponses:      {string(OpenAIResponses), "OPENAI_API_KEY", "OPENAI_BASE_URL", DefaultOpenAIBaseURL},
	provider.Gemini:               {string(Gemini), "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL", DefaultGeminiBaseURL}, // as google-genai and @google/genai read them
	provider.AzureOpenAI:          {string(OpenAIChat), AzureKeyEnv, AzureEndpointEnv, ""},
	provider.AzureOpenAIResponses: {string(OpenAIResponses), AzureKeyEnv, AzureEndpointEnv, ""},
	provider.Ollama:               {string(Ollama), "", "OLLAMA_HOST", "http://127.0.0.1:11434"},
	provider.Bedrock:              {string(Bedrock), "AWS_ACCESS_KEY_ID", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", ""}, // the region's, bedrockURL
	provider.VertexGemini:         {string(Gemini), VertexTokenEnv, "GOOGLE_VERTEX_BASE_URL", ""},                 // the location's, vertexURL
	provider.VertexAnthropic:      {string(Anthropic), VertexTokenEnv, "GOOGLE_VERTEX_BASE_URL", ""},
}

// KeyEnv names the environment variable holding a provider's key.
func KeyEnv(name string) string { return providers[name].keyEnv }

// BaseURLEnv names the environment variable holding a provider's base URL.
func BaseURLEnv(name string) string { return providers[name].baseEnv }

// Credentials are how a provider's API is reached in a run: its key and
// base URL, read from the environment once (Resolve).
type Credentials struct {
	KeyEnv string // the variable that holds the key
	Key    string // its value; "" when not set
	// BaseURL is the suite's base_url when it has one, else the
	// provider's base URL variable, else the public endpoint.
	BaseURL string
	// Public says BaseURL is the provider's public endpoint (a key is
	// needed there; a local server may take none): for Azure OpenAI, an
	// Azure host, or none at all.
	Public bool
}

// LiveUnavailable says why calls with these credentials cannot go to the
// live API, "" when they can: the key is not set (a local server,
// openai-compatible's or Ollama's, takes none), or Azure OpenAI's
// endpoint.
func (c Credentials) LiveUnavailable(name string) string {
	switch {
	case provider.IsAzure(name) && c.BaseURL == "":
		return AzureEndpointEnv + " is not set (nor agent.base_url)"
	case c.Key == "" && c.KeyEnv != "" && name != provider.OpenAICompatible:
		return c.KeyEnv + " is not set"
	}
	return ""
}

// Resolve reads a provider's credentials: base is the suite's base_url
// ("" for none), getenv the run's environment.
func Resolve(name, base string, getenv func(string) string) Credentials {
	c := Credentials{KeyEnv: KeyEnv(name), BaseURL: base}
	if name == provider.Gemini && getenv("GOOGLE_API_KEY") != "" {
		c.KeyEnv = "GOOGLE_API_KEY" // the Gemini SDKs read it first
	}
	if name == provider.Bedrock && getenv("AWS_BEARER_TOKEN_BEDROCK") != "" {
		c.KeyEnv = "AWS_BEARER_TOKEN_BEDROCK" // a Bedrock API key, before the AWS credentials
	}
	if c.KeyEnv != "" {
		c.Key = getenv(c.KeyEnv)
	}
	if c.BaseURL == "" {
		c.BaseURL = getenv(BaseURLEnv(name))
	}
	if c.BaseURL == "" {
		c.BaseURL = providers[name].base
	}
	if name == provider.VertexGemini || name == provider.VertexAnthropic {
		c.Public = c.BaseURL == "" || strings.Contains(c.BaseURL, ".googleapis.com")
		return c
	}
	if name == provider.Bedrock {
		if c.BaseURL == "" {
			c.BaseURL = bedrockURL(getenv)
		}
		u, err := url.Parse(c.BaseURL)
		c.Public = err != nil || strings.HasSuffix(u.Hostname(), ".amazonaws.com")
		return c
	}
	c.Public = strings.TrimRight(c.BaseURL, "/") == providers[name].base && c.KeyEnv != ""
	if provider.IsAzure(name) {
		u, err := url.Parse(c.BaseURL)
		c.Public = c.BaseURL == "" || err != nil || IsAzureHost(u.Hostname())
	}
	return c
}

func sleep(ctx context.Context, d time.Duration) error {
	if !pause.For(ctx, d) {
		return ctx.Err()
	}
	return nil
}

// APIError is a provider's answer that is not a success, with its body.
type APIError struct {
	Provider string
	Status   int
	Type     string // the error type or code the body names, if any
	Message  string // the message the body gives, or the body itself
	Attempts int
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s answered %d", e.Provider, e.Status)
	if text := statusText(e.Status); text != "" {
		b.WriteString(" " + text)
	}
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// statusText names a status, including Anthropic's 529.
func statusText(status int) string {
	if status == 529 {
		return "Overloaded"
	}
	return http.StatusText(status)
}

// Permanent is implemented by transport errors that retrying cannot fix
// (a cassette that does not match, a missing recording).
type Permanent interface{ Permanent() bool }

// caller is the built-in loop's client of a provider: it writes each
// call in the provider's API (call), posts it with a bound per attempt
// and retries with backoff for 429, 5xx and dropped connections, and reads
// the answer, a stream folded first.
type caller struct {
	o    Options
	api  API
	call func(req *model.Request) (*post, error)
	// sign, when set, signs each attempt (Bedrock's SigV4).
	sign func(req *http.Request, body []byte)
}

// post is one call as an API's client writes it: where it goes, its
// header and body, and how its answer is read.
type post struct {
	to     string
	header http.Header
	body   []byte
	parse  func(data []byte) (*model.Response, error)
}

// Generate implements model.Model.
func (c *caller) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Params == nil && c.o.Params != nil {
		r := *req
		r.Params, req = c.o.Params, &r
	}
	if err := checkParams(req.Params, c.api.codec().owned); err != nil {
		return nil, err
	}
	p, err := c.call(req)
	if err != nil {
		return nil, err
	}
	var fold func([]byte) ([]byte, error)
	if streamed(req.Params) {
		fold = c.api.codec().fold
	}
	data, err := c.postFolded(ctx, p.to, p.header, p.body, fold)
	if err != nil {
		return nil, err
	}
	return p.parse(data)
}

// model is the model of a call: the request's, else the options'.
func (c *caller) model(req *model.Request) string {
	if req.Model != "" {
		return req.Model
	}
	return c.o.Model
}

// postFolded sends body to url and returns the response body of a 2xx
// answer (errorOf reads an error body's type and message).
//
// A 429, 408, 409, 5xx (529 included), a dropped connection or an attempt
// that ran out of time is tried again, at most Retries more times, after
// the wait the answer asks for (Retry-After in seconds or as an HTTP date,
// retry-after-ms) or else an exponential backoff with jitter. An answer
// with `x-should-retry: true|false` (sent by the Anthropic and OpenAI APIs)
// overrides the status, as in the official SDKs. Errors that say they are
// Permanent are never retried. When fold is not nil, the answer is an
// event stream folded into the unstreamed answer (see stream.go); a
// stream cut short is tried again as a dropped connection is.
func (c *caller) postFolded(ctx context.Context, url string, header http.Header, body []byte, fold func([]byte) ([]byte, error)) ([]byte, error) {
	var last error
	for attempt := 0; ; attempt++ {
		data, hint, err := c.attempt(ctx, url, header, body)
		if err == nil && fold != nil {
			if data, err = fold(data); err != nil {
				err = fmt.Errorf("%s: %w", url, err)
			}
		}
		if err == nil {
			return data, nil
		}
		var ae *APIError
		if errors.As(err, &ae) {
			ae.Attempts = attempt + 1
		} else if attempt > 0 {
			err = &attemptsError{err: err, attempts: attempt + 1}
		}
		last = err
		if ctx.Err() != nil {
			return nil, canceled(ctx, last)
		}
		again := retryable(err)
		if hint.shouldRetry != nil && ae != nil {
			again = *hint.shouldRetry
		}
		if attempt >= c.o.Retries || !again {
			return nil, last
		}
		wait := backoff(attempt)
		if hint.retryAfter >= 0 {
			wait = min(hint.retryAfter, maxRetryAfter)
		}
		if err := c.o.Sleep(ctx, wait); err != nil {
			return nil, canceled(ctx, last)
		}
	}
}

// canceled is the error of a call whose context ended: it matches
// ctx.Err() and still says what the last attempt got.
func canceled(ctx context.Context, last error) error {
	if ctx.Err() == nil || errors.Is(last, ctx.Err()) {
		return last
	}
	return fmt.Errorf("%w (the last attempt got: %w)", ctx.Err(), last)
}

// attemptsError notes how many attempts a transport error took.
type attemptsError struct {
	err      error
	attempts int
}

func (e *attemptsError) Error() string {
	return fmt.Sprintf("%v (after %d attempts)", e.err, e.attempts)
}

func (e *attemptsError) Unwrap() error { return e.err }

// retryHint is what an error answer says about retrying it.
type retryHint struct {
	retryAfter  time.Duration // negative: not said
	shouldRetry *bool         // x-should-retry, if sent
}

func (c *caller) attempt(ctx context.Context, url string, header http.Header, body []byte) ([]byte, retryHint, error) {
	none := retryHint{retryAfter: -1}
	actx, cancel := context.WithTimeout(ctx, c.o.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, none, fmt.Errorf("building the request to %s: %w", url, err)
	}
	req.Header = header.Clone()
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set("Content-Type", "application/json")
	if c.sign != nil {
		c.sign(req, body)
	}
	resp, err := c.o.Client.Do(req)
	if err != nil {
		if actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return nil, none, &timeoutError{after: c.o.Timeout, url: url}
		}
		return nil, none, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if actx.Err() == context.DeadlineExceeded && ctx.Err() == nil {
			return nil, none, &timeoutError{after: c.o.Timeout, url: url}
		}
		return nil, none, fmt.Errorf("reading the answer of %s: %w", url, err)
	}
	if resp.StatusCode/100 == 2 {
		return data, none, nil
	}
	ae := &APIError{Provider: c.o.Provider, Status: resp.StatusCode}
	ae.Type, ae.Message = errorOf(data)
	if ae.Message == "" {
		ae.Message = strings.TrimSpace(string(data))
		if len(ae.Message) > 500 {
			ae.Message = ae.Message[:500] + "…"
		}
	}
	hint := retryHint{retryAfter: retryAfter(resp.Header)}
	switch strings.ToLower(resp.Header.Get("X-Should-Retry")) {
	case "true":
		hint.shouldRetry = new(true)
	case "false":
		hint.shouldRetry = new(false)
	}
	return nil, hint, ae
}

type timeoutError struct {
	after time.Duration
	url   string
}

func (e *timeoutError) Error() string {
	return fmt.Sprintf("no answer from %s within %s s (agent.timeout_s)", e.url, strconv.FormatFloat(e.after.Seconds(), 'f', -1, 64))
}

// retryable says whether another attempt may succeed.
func retryable(err error) bool {
	var p Permanent
	if errors.As(err, &p) && p.Permanent() {
		return false
	}
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status == http.StatusTooManyRequests || ae.Status == http.StatusRequestTimeout ||
			ae.Status == http.StatusConflict || ae.Status >= 500
	}
	var te *timeoutError
	if errors.As(err, &te) {
		return true
	}
	var ne net.Error
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || (errors.As(err, &ne) && ne.Timeout())
}

// backoff is the wait before retry n (0-based): 0.5 s doubling, with
// jitter, at most maxBackoff.
func backoff(n int) time.Duration {
	d := min(500*time.Millisecond<<n, maxBackoff)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
}

// retryAfter reads Retry-After (seconds or an HTTP date) and OpenAI's
// retry-after-ms; it is negative when the answer says nothing usable.
func retryAfter(h http.Header) time.Duration {
	if ms := h.Get("Retry-After-Ms"); ms != "" {
		if f, err := strconv.ParseFloat(ms, 64); err == nil && f >= 0 {
			return time.Duration(f * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return -1
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return -1
}
