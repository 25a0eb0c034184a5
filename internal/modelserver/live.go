package modelserver

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/wire"
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

// clientKey is the key a request carries, if any: in a header, or in
// the query (?key=, as the Gemini API takes it).
func clientKey(r *http.Request) string {
	if k := r.Header.Get("X-Api-Key"); k != "" {
		return k
	}
	if k := r.Header.Get("Api-Key"); k != "" {
		return k
	}
	if k := r.Header.Get("X-Goog-Api-Key"); k != "" {
		return k
	}
	if k, _ := redact.Param(r.URL.Query(), "key"); k != "" {
		return k
	}
	if k, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
		return strings.TrimSpace(k)
	}
	return ""
}

// isDummy says whether a client's key is one dryfire gave it.
func isDummy(key string) bool { return strings.HasPrefix(key, "dryfire-") }

// azureOpenAI names, in the upstream maps, the Azure OpenAI endpoint
// (AZURE_OPENAI_ENDPOINT): where the OpenAI APIs go when their path is
// Azure's (/openai/...).
const azureOpenAI wire.API = "azure-openai"

// upstreamOf is the upstream of a request of api: Azure's for the
// OpenAI APIs at an Azure path.
func upstreamOf(api wire.API, r *http.Request) wire.API {
	if (api == wire.OpenAIChat || api == wire.OpenAIResponses) && strings.HasPrefix(r.URL.Path, "/openai/") {
		return azureOpenAI
	}
	return api
}

// unavailable says why a request may not go live, "" when it may.
func (e *recorded) unavailable(api wire.API, r *http.Request) string {
	api = upstreamOf(api, r)
	if api == azureOpenAI && e.upstream[api] == nil {
		return "AZURE_OPENAI_ENDPOINT is not set"
	}
	if e.keys[api] != "" || !e.public[api] {
		return ""
	}
	if k := clientKey(r); k != "" && !isDummy(k) {
		return ""
	}
	return e.keyEnv[api] + " is not set"
}

// live sends a request to the real API and answers with what it says: a
// stream passed on as it arrives. The exchange is kept for the cassette
// unless it is an answer the SDKs retry (429, 5xx, …) or a refused key
// (401, 403: then the case records nothing).
func (e *recorded) live(w http.ResponseWriter, r *http.Request, api wire.API, body []byte, x *cassette.Exchange) {
	out, target, err := e.upstreamRequest(r, api, body)
	if err != nil {
		e.upstreamError(w, api, err)
		return
	}
	resp, err := e.transport.RoundTrip(out)
	if err != nil {
		e.upstreamError(w, api, err)
		return
	}
	defer resp.Body.Close()
	ct := resp.Header.Get("Content-Type")
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = vs
	}
	for _, k := range hopByHop {
		h.Del(k)
	}
	h.Del("Content-Length")
	h.Del("Content-Encoding")
	var data []byte
	streamed := cassette.IsEventStream(ct)
	if streamed {
		var ok bool
		if data, ok = e.relayStream(w, resp, api, target); !ok {
			return
		}
	} else {
		data, err = io.ReadAll(resp.Body)
		if err != nil {
			for k := range h {
				delete(h, k)
			}
			e.upstreamError(w, api, fmt.Errorf("reading its answer: %w", err))
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(data)))
	}
	switch resp.StatusCode {
	case http.StatusUnauthorized, http.StatusForbidden:
		e.rec.Fail(fmt.Errorf("%s refused the key (%d): %s", target.Host, resp.StatusCode, snippet(data)))
	default:
		e.rec.Keep(x, target.Hostname(), resp.StatusCode, ct, data)
	}
	rs := cassette.Response{Status: resp.StatusCode, Body: data}
	if streamed {
		rs.Body, rs.Events = nil, cassette.SplitEvents(data)
	}
	c := Call{API: api, Status: resp.StatusCode, Streamed: streamed, Usage: usageOf(api, &rs)}
	if cutOff(w) {
		c.Fault, c.Usage = true, model.Usage{}
	}
	e.note(c)
	if !streamed {
		w.WriteHeader(resp.StatusCode)
		w.Write(data)
	}
}

// upstreamRequest is the request r made to the real API at target: the
// base URL's path and query before the client's, the client's headers
// less the hop-by-hop ones, and the run's key in place of the client's
// (a client's own real key is forwarded; a dummy one is dropped).
func (e *recorded) upstreamRequest(r *http.Request, api wire.API, body []byte) (*http.Request, *url.URL, error) {
	api = upstreamOf(api, r)
	if e.upstream[api] == nil {
		return nil, nil, fmt.Errorf("%s is not set", "AZURE_OPENAI_ENDPOINT")
	}
	target := *e.upstream[api]
	path := r.URL.Path
	if api == wire.OpenAIChat || api == wire.OpenAIResponses {
		path = strings.TrimPrefix(path, "/v1") // OpenAI's base URL has it
	}
	target.Path = strings.TrimRight(target.Path, "/") + path
	target.RawPath = ""
	// A query of the base URL (an api-version, say) is kept, before the
	// client's own (less a key in it that is not forwarded).
	query := r.URL.RawQuery
	if k, names := redact.Param(r.URL.Query(), "key"); k != "" && (e.keys[api] != "" || isDummy(k)) {
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
	if key := e.keys[api]; key != "" {
		dropKeys(out)
		switch api {
		case wire.Anthropic:
			out.Header.Set("X-Api-Key", key)
		case wire.Gemini, wire.GeminiCountTokens:
			out.Header.Set("X-Goog-Api-Key", key)
		case azureOpenAI:
			out.Header.Set("Api-Key", key)
		default:
			out.Header.Set("Authorization", "Bearer "+key)
		}
	} else if k := clientKey(r); k != "" && !isDummy(k) {
		// forwarded; ServeHTTP made it a secret
	} else {
		dropKeys(out)
	}
	return out, &target, nil
}

// dropKeys takes the client's auth headers out of a request (a key in
// its query was left out of it).
func dropKeys(out *http.Request) {
	for _, k := range authHeaders {
		out.Header.Del(k)
	}
}

// relayStream passes a streamed answer on as it arrives and returns it
// whole; false when it was cut short (the recording then fails, and the
// call is noted).
func (e *recorded) relayStream(w http.ResponseWriter, resp *http.Response, api wire.API, target *url.URL) ([]byte, bool) {
	w.WriteHeader(resp.StatusCode)
	flush := flusher(w)
	flush()
	var all bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			all.Write(buf[:n])
			w.Write(buf[:n])
			flush()
		}
		if err == io.EOF {
			return all.Bytes(), true
		}
		if err != nil {
			e.rec.Fail(fmt.Errorf("the streamed answer of %s was cut short: %v", target.Host, err))
			e.note(Call{API: api, Status: resp.StatusCode, Streamed: true, Err: err})
			return nil, false
		}
	}
}

// upstreamError answers a live call that got no answer: 502, which the
// SDKs retry (the recording keeps only the answer that comes).
func (e *recorded) upstreamError(w http.ResponseWriter, api wire.API, err error) {
	typ := "server_error"
	if api == wire.Anthropic {
		typ = "api_error"
	}
	writeError(w, api, http.StatusBadGateway, errorInfo{typ: typ, code: CodeUpstream, msg: "dryfire could not get an answer from the live API: " + err.Error()})
	e.note(Call{API: api, Status: http.StatusBadGateway, Err: err})
}

func snippet(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}
