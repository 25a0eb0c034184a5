package wire

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/model"

	"github.com/dryfire-dev/dryfire/internal/redact"
)

// Live calls. The client's auth header is replaced by the key of the
// environment (OPENAI_API_KEY, ANTHROPIC_API_KEY) when it is set. When it
// is not, a key the client sent of its own is forwarded as it came (and
// added to the secrets never written; auth headers are never written
// anyway), unless it is a dummy (see DummyKey). With neither, a call to a
// public API is refused before anything is dialled; a call to another
// upstream (a local server, a proxy) goes without a key.

// hopByHop are the headers that concern one connection only.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// authHeaders carry keys.
var authHeaders = []string{"Authorization", "X-Api-Key", "Api-Key", "X-Goog-Api-Key"}

// ClientKey is the key a request carries, if any: in a header (an
// API's own before a bearer token), or in the query (?key=, as the
// Gemini API takes it).
func ClientKey(r *http.Request) string {
	for _, h := range authHeaders[1:] {
		if k := r.Header.Get(h); k != "" {
			return k
		}
	}
	if k, _ := redact.Param(r.URL.Query(), "key"); k != "" {
		return k
	}
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	return ""
}

// IsDummy says whether a client's key is one dryfire gave it.
func IsDummy(key string) bool { return strings.HasPrefix(key, "dryfire-") }

// azureOpenAI names, in the upstream maps, the Azure OpenAI endpoint
// (AZURE_OPENAI_ENDPOINT): where the OpenAI APIs go when their path is
// Azure's (/openai/...).
const azureOpenAI API = "azure-openai"

// LiveOptions say where a case's live calls go and with which keys.
type LiveOptions struct {
	// Getenv reads the keys and base URLs (OPENAI_BASE_URL, …; Azure
	// OpenAI's AZURE_OPENAI_ENDPOINT, Ollama's OLLAMA_HOST) of the
	// environment; a base URL that is not set is the public API's.
	Getenv func(string) string
	// Transport carries the calls.
	Transport http.RoundTripper
}

// Live is the one live client: it sends a case's model calls to the real
// APIs and answers with what they say, a stream passed on as it arrives.
// A call that names its upstream (the built-in loop's client posts to its
// provider, with its key) goes there as it is; one that came to the model
// endpoint goes to its API's upstream, with the environment's key.
type Live struct {
	Transport http.RoundTripper
	up        map[API]*upstream
	// Bedrock's calls are signed again with the environment's AWS
	// credentials (or its Bedrock API key): the client's signature was
	// made for dryfire's host.
	aws          awsKeys
	bedrockToken string
	// Secrets are the environment's keys, never written.
	Secrets []string
}

// upstream is where an API's live calls go: its URL (nil: Azure OpenAI's
// endpoint not set, Vertex AI's the location's), the environment's key,
// the variable of it, the header it goes in (a bearer token when ""),
// and whether the upstream is the public API (a key is needed).
type upstream struct {
	url                 *url.URL
	key, keyEnv, header string
	public              bool
}

// NewLive is the live client of a case: where each API's live calls go
// and with which key, read from the environment (o.Getenv).
func NewLive(o LiveOptions) (*Live, error) {
	l := &Live{Transport: o.Transport, up: map[API]*upstream{}}
	l.aws, l.bedrockToken = awsKeysOf(o.Getenv), o.Getenv("AWS_BEARER_TOKEN_BEDROCK")
	keep := func(keys ...string) {
		for _, k := range keys {
			if k != "" {
				l.Secrets = append(l.Secrets, k)
			}
		}
	}
	keep(l.aws.secret, l.aws.token, l.bedrockToken)
	for _, api := range []API{OpenAIChat, OpenAIResponses, Anthropic, Gemini, Ollama, Bedrock} {
		p := api.codec().provider
		cred := Resolve(p, "", o.Getenv)
		if api == Ollama {
			cred.BaseURL = ollamaHost(cred.BaseURL)
		}
		u, err := url.Parse(strings.TrimRight(cred.BaseURL, "/"))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("the %s base URL %q is not an absolute URL", p, cred.BaseURL)
		}
		l.up[api] = &upstream{url: u, key: cred.Key, keyEnv: cred.KeyEnv, public: cred.Public,
			header: map[API]string{Anthropic: "X-Api-Key", Gemini: "X-Goog-Api-Key"}[api]}
		keep(cred.Key)
	}
	// Azure OpenAI: the OpenAI APIs at the deployment's endpoint.
	l.up[azureOpenAI] = &upstream{key: o.Getenv(AzureKeyEnv), keyEnv: AzureKeyEnv, header: "Api-Key"}
	if base := o.Getenv(AzureEndpointEnv); base != "" {
		u, err := url.Parse(strings.TrimRight(base, "/"))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("the Azure OpenAI endpoint %q is not an absolute URL", base)
		}
		l.up[azureOpenAI].url, l.up[azureOpenAI].public = u, IsAzureHost(u.Hostname())
	}
	keep(l.up[azureOpenAI].key)
	// Vertex AI: GOOGLE_VERTEX_BASE_URL, else each location's endpoint;
	// an access token.
	l.up[vertexAI] = &upstream{key: o.Getenv(VertexTokenEnv), keyEnv: VertexTokenEnv, public: true}
	if base := o.Getenv("GOOGLE_VERTEX_BASE_URL"); base != "" {
		l.up[vertexAI].url, _ = url.Parse(strings.TrimRight(base, "/"))
	}
	keep(l.up[vertexAI].key)
	l.up[GeminiCountTokens] = l.up[Gemini] // a token count goes where the model's calls go
	return l, nil
}

// upstreamOf is the upstream of a request of api: Azure's for the
// OpenAI APIs at an Azure path.
func upstreamOf(api API, r *http.Request) API {
	if (api == OpenAIChat || api == OpenAIResponses) && strings.HasPrefix(r.URL.Path, "/openai/") {
		return azureOpenAI
	}
	if _, _, _, _, _, ok := VertexPath(r.URL.Path); ok {
		return vertexAI
	}
	return api
}

// vertexAI names, in the upstream maps, Vertex AI: where the Gemini API
// and Messages go when their path is Vertex AI's.
const vertexAI API = "vertex-ai"

// Unavailable says why a call may not go live, "" when it may.
func (l *Live) Unavailable(c *model.Call) string {
	r := c.HTTP
	if r.URL.IsAbs() {
		return "" // the client's own: it says (Credentials.LiveUnavailable)
	}
	api := upstreamOf(c.Wire.(API), r)
	up := cmp.Or(l.up[api], &upstream{}) // none known: no URL, no key
	if api == azureOpenAI && up.url == nil {
		return "AZURE_OPENAI_ENDPOINT is not set"
	}
	if up.key != "" || !up.public {
		return ""
	}
	if k := ClientKey(r); k != "" && !IsDummy(k) {
		return ""
	}
	return up.keyEnv + " is not set"
}

// Answer sends a call to the real API and answers with what it says: a
// stream passed on as it arrives (Answer.Live), a body whole. A call
// that gets no answer is answered 502, which the SDKs retry (Answer.Err
// says why).
func (l *Live) Answer(c *model.Call) *model.Answer {
	api := c.Wire.(API)
	if u := wsUpstreamOf(c.HTTP.Context()); u != nil && api == OpenAIResponses {
		return l.answerWS(c, u)
	}
	out, target, err := l.request(c)
	if err != nil {
		return l.failed(api, err)
	}
	resp, err := l.Transport.RoundTrip(out)
	if err != nil {
		return l.failed(api, err)
	}
	a := &model.Answer{Status: resp.StatusCode, Header: resp.Header.Clone(), From: target.Hostname(), Cut: -1}
	for _, k := range hopByHop {
		a.Header.Del(k)
	}
	a.Header.Del("Content-Length")
	a.Header.Del("Content-Encoding")
	switch ct := resp.Header.Get("Content-Type"); {
	case IsEventStream(ct):
		a.Live, a.Streamed = resp.Body, true
		return a
	case strings.HasPrefix(ct, EventStreamType), strings.HasPrefix(ct, "application/x-ndjson"):
		a.Live = resp.Body // passed on as it arrives; kept as a body
		return a
	}
	defer resp.Body.Close()
	if a.Body, err = io.ReadAll(resp.Body); err != nil {
		return l.failed(api, fmt.Errorf("reading its answer: %w", err))
	}
	a.Header.Set("Content-Length", strconv.Itoa(len(a.Body)))
	return a
}

// failed is the answer to a live call that got no answer: 502.
func (l *Live) failed(api API, err error) *model.Answer {
	typ := "server_error"
	if api == Anthropic {
		typ = "api_error"
	}
	a := api.Error(http.StatusBadGateway, model.ErrorInfo{Type: typ, Code: CodeUpstream, Message: "dryfire could not get an answer from the live API: " + err.Error()})
	a.Err = err
	return a
}

// upstreamRequest is the request r made to the real API at target: the
// base URL's path and query before the client's, the client's headers
// less the hop-by-hop ones, and the run's key in place of the client's
// (a client's own real key is forwarded; a dummy one is dropped).
func (l *Live) request(c *model.Call) (*http.Request, *url.URL, error) {
	r, body := c.HTTP, c.Body
	if r.URL.IsAbs() {
		out := r.Clone(r.Context())
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		return out, r.URL, nil
	}
	api := upstreamOf(c.Wire.(API), r)
	up := cmp.Or(l.up[api], &upstream{})
	base := up.url
	if api == vertexAI && base == nil { // the location's own
		_, location, _, _, _, _ := VertexPath(r.URL.Path)
		base, _ = url.Parse(vertexBase(location))
	}
	if base == nil {
		return nil, nil, fmt.Errorf("%s is not set", "AZURE_OPENAI_ENDPOINT")
	}
	target := *base
	path := r.URL.Path
	if api == OpenAIChat || api == OpenAIResponses {
		path = strings.TrimPrefix(path, "/v1") // OpenAI's base URL has it
	}
	target.Path = strings.TrimRight(target.Path, "/") + path
	target.RawPath = ""
	if api == Bedrock { // a model's id may be an ARN, its / and : escaped
		target.RawPath = strings.TrimRight(base.EscapedPath(), "/") + r.URL.EscapedPath()
	}
	// A query of the base URL (an api-version, say) is kept, before the
	// client's own (less a key in it that is not forwarded).
	query := r.URL.RawQuery
	if k, names := redact.Param(r.URL.Query(), "key"); k != "" && (up.key != "" || IsDummy(k)) {
		q := r.URL.Query()
		for _, n := range names {
			q.Del(n)
		}
		query = q.Encode()
	}
	switch {
	case target.RawQuery == "":
		target.RawQuery = query
	case query != "":
		target.RawQuery += "&" + query
	}
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, target.String(), bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	for k, vs := range r.Header {
		out.Header[k] = vs
	}
	for _, k := range hopByHop {
		out.Header.Del(k)
	}
	out.Header.Del("Accept-Encoding") // the transport asks for gzip and undoes it
	out.Header.Del("Content-Length")
	if api == Bedrock {
		l.signBedrock(out, body)
		return out, &target, nil
	}
	if up.key != "" {
		dropKeys(out)
		if up.header != "" {
			out.Header.Set(up.header, up.key)
		} else {
			out.Header.Set("Authorization", "Bearer "+up.key)
		}
	} else if k := ClientKey(r); k != "" && !IsDummy(k) {
		// forwarded; ServeHTTP made it a secret
	} else {
		dropKeys(out)
	}
	return out, &target, nil
}

// signBedrock signs a call to Bedrock again for its real endpoint: the
// client's signature (made for dryfire's host) out, the run's in.
func (l *Live) signBedrock(out *http.Request, body []byte) {
	for k := range out.Header {
		if strings.HasPrefix(k, "X-Amz-") || k == "Authorization" {
			out.Header.Del(k)
		}
	}
	if l.bedrockToken != "" {
		out.Header.Set("Authorization", "Bearer "+l.bedrockToken)
		return
	}
	l.aws.sign(out, body, "bedrock", time.Now())
}

// dropKeys takes the client's auth headers out of a request (a key in
// its query was left out of it).
func dropKeys(out *http.Request) {
	for _, k := range authHeaders {
		out.Header.Del(k)
	}
}

// APIOf is the API of a request's path (its query aside), read
// leniently: a route, else by how it ends.
func APIOf(path string) API {
	p, _, _ := strings.Cut(path, "?")
	if api, ok := RouteOf(p); ok {
		return api
	}
	if IsAnthropicPath(p) {
		return Anthropic
	}
	if strings.HasSuffix(p, "/responses") {
		return OpenAIResponses
	}
	return OpenAIChat
}
