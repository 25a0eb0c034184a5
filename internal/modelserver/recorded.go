package modelserver

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// recorded is the answerer of a recorded case: each request is compared
// with the case's cassette (cassette.Recorder.Begin) and answered as
// recorded, or, when the mode allows, sent to the real API and kept
// (live.go, Recorder.Keep), to be written by Endpoint.Finish. It is the
// endpoint's only user of the cassette's steps.
type recorded struct {
	*Endpoint // for note and the options
	rec       *cassette.Recorder
	answers   []answer // per interaction of the cassette read, ready to write
	upstream  map[wire.API]*url.URL
	keys      map[wire.API]string // keys from Env
	keyEnv    map[wire.API]string
	public    map[wire.API]bool // the upstream is the public API: a key is needed
	transport http.RoundTripper

	index    *cassette.Index // ByContent replay; nil: in order
	inflight sync.WaitGroup
}

// newRecorded opens the case's cassette for endpoint ep, and fills in
// the options' defaults (the mode).
func newRecorded(ep *Endpoint, op *Options) (*recorded, error) {
	o := *op
	env := o.Env
	if env == nil {
		env = os.Environ()
	}
	vars := map[string]string{}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	if o.Mode == "" {
		o.Mode = cassette.DefaultMode(func(k string) string { return vars[k] })
	}
	if _, err := cassette.ParseMode(string(o.Mode)); err != nil {
		return nil, err
	}
	e := &recorded{
		Endpoint: ep,
		upstream: map[wire.API]*url.URL{},
		keys:     map[wire.API]string{},
		keyEnv:   map[wire.API]string{},
		public:   map[wire.API]bool{},
	}
	secrets, err := e.readUpstreams(&o, vars, cassette.SecretsFromEnv(env))
	if err != nil {
		return nil, err
	}
	cfg := cassette.Config{
		Mode:        o.Mode,
		File:        o.File,
		SuiteFile:   o.SuiteFile,
		Root:        o.Root,
		Case:        o.Case,
		Provider:    cassette.AnyAPI,
		Passthrough: o.Passthrough,
		Secrets:     secrets,
		Rerecord:    o.Rerecord,
		RecordedBy:  o.RecordedBy,
		Trials:      o.Trials,
		Match:       o.Match,
		DropUser:    o.DropUser,
	}
	if o.Mode != cassette.None {
		e.transport = o.Transport
		if e.transport == nil {
			e.transport = http.DefaultTransport.(*http.Transport).Clone()
		}
		cfg.Live = e.transport
	}
	rec, err := cassette.Open(cfg)
	if err != nil {
		return nil, err
	}
	e.rec = rec
	e.ready(&o)
	*op = o
	return e, nil
}

// readUpstreams fills in where each API's live calls go and with which
// key (from the options, else vars), and returns secrets with the keys.
func (e *recorded) readUpstreams(o *Options, vars map[string]string, secrets []string) ([]string, error) {
	for _, api := range []wire.API{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini} {
		p := providerOf(api)
		base := o.OpenAIBaseURL
		switch api {
		case wire.Anthropic:
			base = o.AnthropicBaseURL
		case wire.Gemini:
			base = o.GeminiBaseURL
		}
		cred := wire.Resolve(p, base, func(k string) string { return vars[k] })
		u, err := url.Parse(strings.TrimRight(cred.BaseURL, "/"))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("the %s base URL %q is not an absolute URL", p, cred.BaseURL)
		}
		e.upstream[api] = u
		e.public[api], e.keyEnv[api], e.keys[api] = cred.Public, cred.KeyEnv, cred.Key
		if k := e.keys[api]; k != "" {
			secrets = append(secrets, k)
		}
	}
	// Azure OpenAI: the OpenAI APIs at the deployment's endpoint.
	if base := o.AzureBaseURL; base != "" || vars[wire.AzureEndpointEnv] != "" {
		if base == "" {
			base = vars[wire.AzureEndpointEnv]
		}
		u, err := url.Parse(strings.TrimRight(base, "/"))
		if err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("the Azure OpenAI endpoint %q is not an absolute URL", base)
		}
		e.upstream[azureOpenAI] = u
		e.public[azureOpenAI] = wire.IsAzureHost(u.Hostname())
	}
	e.keyEnv[azureOpenAI], e.keys[azureOpenAI] = wire.AzureKeyEnv, vars[wire.AzureKeyEnv]
	if k := e.keys[azureOpenAI]; k != "" {
		secrets = append(secrets, k)
	}
	// A token count goes where the model's calls go.
	e.upstream[wire.GeminiCountTokens], e.public[wire.GeminiCountTokens] = e.upstream[wire.Gemini], e.public[wire.Gemini]
	e.keyEnv[wire.GeminiCountTokens], e.keys[wire.GeminiCountTokens] = e.keyEnv[wire.Gemini], e.keys[wire.Gemini]
	return secrets, nil
}

// ready prepares the answers of the cassette read (if one was), and its
// index when requests are answered by content.
func (e *recorded) ready(o *Options) {
	c := e.rec.Cassette()
	if c == nil {
		return
	}
	e.answers = make([]answer, len(c.Interactions))
	for i := range c.Interactions {
		it := &c.Interactions[i]
		e.answers[i] = prepare(apiOfPath(it.Request.Path), &it.Response, o.CoalesceStreams)
	}
	if o.ByContent && (o.Mode == cassette.None || o.Mode == cassette.Once) {
		e.index = e.rec.Index()
	}
}

func prepare(api wire.API, rs *cassette.Response, coalesce bool) answer {
	a := answer{status: rs.Status, body: rs.Body, events: rs.Events, streamed: rs.Streamed(), usage: usageOf(api, rs)}
	if ct := rs.Header["content-type"]; ct != "" {
		a.header = []string{ct}
	}
	if a.streamed && coalesce {
		a.body, a.events, a.streamed = rs.Bytes(), nil, false
		a.cacheControl = true
	}
	if !a.streamed {
		a.length = []string{strconv.Itoa(len(a.body))}
	}
	return a
}

// providerOf is the provider name of an API (for key and base URL names).
func providerOf(api wire.API) string {
	switch api {
	case wire.Anthropic:
		return provider.Anthropic
	case wire.OpenAIResponses:
		return provider.OpenAIResponses
	case wire.Gemini, wire.GeminiCountTokens:
		return provider.Gemini
	}
	return provider.OpenAI
}

// apiOfPath is the API of a recorded request's path (its query aside).
func apiOfPath(path string) wire.API {
	p, _, _ := strings.Cut(path, "?")
	if api, ok := wire.RouteOf(p); ok {
		return api
	}
	if cassette.IsAnthropicPath(p) {
		return wire.Anthropic
	}
	if strings.HasSuffix(p, "/responses") {
		return wire.OpenAIResponses
	}
	return wire.OpenAIChat
}

// answer answers a request from the recording or the live API. An answer
// a cut fault's writer cut (cutOff) is taken back from the recording, for
// the retry to take its place.
func (e *recorded) answer(w http.ResponseWriter, r *http.Request, api wire.API, body []byte) {
	if e.index != nil {
		i, _, err := e.index.Find(r, body)
		if err != nil {
			status := refuse(w, api, err)
			e.note(Call{API: api, Status: status, Err: err})
			return
		}
		a := &e.answers[i]
		a.write(w)
		e.note(a.call(api, cutOff(w)))
		return
	}
	// A client's own key is a secret from its first request on (whether
	// it is forwarded or not): learned before the request is
	// canonicalised for the cassette.
	if k := clientKey(r); k != "" && !isDummy(k) {
		e.rec.AddSecret(k)
	}
	x, err := e.rec.Begin(r, body, e.unavailable(api, r))
	if err != nil {
		status := refuse(w, api, err)
		e.note(Call{API: api, Status: status, Err: err})
		return
	}
	if x.Recorded != nil {
		a := &e.answers[x.Interaction]
		a.write(w)
		if cutOff(w) {
			e.rec.Unplay(x)
		}
		e.note(a.call(api, cutOff(w)))
		return
	}
	e.inflight.Add(1)
	defer e.inflight.Done()
	e.live(w, r, api, body, x)
	if cutOff(w) {
		e.rec.Unplay(x)
	}
}

// call is the Call of a replayed answer; one a fault cut is no turn and
// used no tokens.
func (a *answer) call(api wire.API, cut bool) Call {
	c := Call{API: api, Status: a.status, Replayed: true, Streamed: a.streamed || a.cacheControl, Usage: a.usage, Fault: cut}
	if cut {
		c.Usage = model.Usage{}
	}
	return c
}

// write answers with a recorded response: a body in one write, a stream
// event by event, flushed after each.
func (a *answer) write(w http.ResponseWriter) {
	h := w.Header()
	if a.header != nil {
		h["Content-Type"] = a.header
	}
	if !a.streamed {
		h["Content-Length"] = a.length
		if a.cacheControl {
			h["Cache-Control"] = noCache
		}
		w.WriteHeader(a.status)
		w.Write(a.body)
		return
	}
	h["Cache-Control"] = noCache
	w.WriteHeader(a.status)
	flush := flusher(w)
	for _, ev := range a.events {
		if _, err := w.Write(ev); err != nil {
			return
		}
		flush()
	}
}

var noCache = []string{"no-cache"}
