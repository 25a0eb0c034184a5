// Package modelserver serves one case's model calls over HTTP, in the wire
// formats of the real APIs, from the case's cassette or script: an
// existing agent, pointed at it by the base URL its SDK already reads,
// runs offline and the same way every time. The built-in loop, a judge
// and a simulated user reach the same answers through it as their HTTP
// transport (Endpoint.RoundTrip).
//
// An Endpoint routes a request (wire.RouteOf: POST /v1/chat/completions,
// /v1/responses, /v1/messages (and /v1/messages/count_tokens, answered
// by the Recorder itself: model's sidecalls.go), the Gemini API's
// /v1beta/models/{model}:generateContent, :streamGenerateContent and
// :countTokens, Azure OpenAI's /openai/... paths), reads its body, has
// the case's model.Recorder answer it, and writes the answer: a body in
// one write, a stream event by event with a flush after each (or in one
// write, with Options.CoalesceStreams), a live stream as it arrives.
// Mounted under a prefix (http.StripPrefix("/cases/7", e)), the base URLs
// carry the prefix.
package modelserver

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// DummyKey is a key to give an agent's SDK when no real key is set, so
// that it starts: a client key that starts with "dryfire-" is never sent
// to a real API.
const DummyKey = "dryfire-no-key"

// TokenPath is where the endpoint answers an OAuth token request (the
// token_uri of the service account Vertex AI's agents get).
const TokenPath = "/token"

// maxBody bounds a request body.
const maxBody = 64 << 20

// Options configure the endpoint of one case.
type Options struct {
	// Config is the case's cassette (cassette.Paths gives its File);
	// Mode "" is cassette.DefaultMode of Env (none when CI is set, else
	// once), Provider "" is cassette.AnyAPI (a model dryfire calls
	// itself names its provider: Endpoint.RoundTrip), Secrets are besides
	// Env's, and Live is New's (none in mode none); ByContent answers by
	// content while a cassette is replayed (cassette.Config.ByContent).
	cassette.Config
	// BaseURLs are where live calls go instead of the environment's base
	// URLs, by their variable (wire.BaseURLEnv of the provider: a suite's
	// base_url). An environment that points these at this endpoint itself
	// would loop: give the endpoint the environment of dryfire, not the
	// agent's.
	BaseURLs map[string]string
	// Env (KEY=VALUE) holds the keys (OPENAI_API_KEY, ANTHROPIC_API_KEY,
	// GEMINI_API_KEY or GOOGLE_API_KEY),
	// base URLs, CI, and the secrets never to write (values of variables
	// whose name has KEY, TOKEN, SECRET or PASSWORD); nil is os.Environ().
	// Getenv, when set, reads them instead (a run's, read once): the
	// secrets are then Secrets alone.
	Env    []string
	Getenv func(string) string
	// Transport carries live calls; nil is a transport of the endpoint's
	// own. Never used in mode none.
	Transport http.RoundTripper
	// CoalesceStreams writes a replayed stream in one piece (the same
	// bytes, with a Content-Length, flushed once) instead of event by
	// event with a flush after each: several times faster, since every
	// flush is a write to the socket, and no different to a client that
	// parses the stream as a stream (replay keeps no delays anyway). Off,
	// a naive client that takes each read for one event works as it does
	// against the real API.
	CoalesceStreams bool
	// NoRecords keeps no list of the calls answered (Calls returns none),
	// only what Turns and Usage count: for a long-running server, whose
	// memory would otherwise grow with every call.
	NoRecords bool
	// Transcript reads each answered call's request and answer for the
	// tool calls, results and tools they show (model.Outcome.Seen,
	// Offered): an agent program's own tools. Off, neither is decoded.
	Transcript bool
	// SideCalls is the preset of side calls dryfire answers itself, with
	// no script turn or cassette entry (model.RecorderOptions.SideCalls;
	// "": token counts alone).
	SideCalls string
	// Admit is asked before each call of the conversation is answered:
	// an error refuses it (model.RecorderOptions.Admit: max_turns).
	Admit func() error
	// Faults are the case's declared faults (faults.go), at most one per
	// request number.
	Faults []model.Fault
	// Scripted: the case's script answers (model.NewScripted), over any
	// of the APIs, and no cassette is opened, read or written: the
	// cassette options (File, Mode, keys, base URLs, ByContent, …) are not
	// used. Script is its turns (spec.Suite.ScriptOf).
	Scripted bool
	Script   []*spec.Turn
	// ToolNames, for a scripted case, are the names requests may offer
	// its tools by (an alias, a framework's decoration: tool.Names).
	ToolNames *tool.Names
}

// Endpoint is the model side of one case: an http.Handler for agents, an
// http.RoundTripper for the models dryfire calls itself, both answered by
// the case's one model.Recorder. It is safe for concurrent use, though the
// calls of a case are matched in the order they arrive.
type Endpoint struct {
	*model.Recorder
	mode      cassette.Mode
	file      string
	replaying bool // a cassette read is replayed
	byContent bool // by content (cassette.Config.ByContent)
	scripted  bool
	pooled    bool // bodies are read into buffers used again
}

// New prepares the endpoint of one case: its script's (Options.Scripted),
// else its cassette's, read when the mode replays. Its errors are those
// of cassette.Open: a missing cassette in mode none
// (*cassette.MissingError), a file that is not this case's cassette
// (*cassette.FileError), a passthrough case in mode none; Refuse makes a
// handler that answers them.
func New(o Options) (*Endpoint, error) {
	ro := &model.RecorderOptions{Faults: o.Faults, NoRecords: o.NoRecords, Transcript: o.Transcript, SideCalls: o.SideCalls, Admit: o.Admit}
	if o.Scripted {
		return &Endpoint{Recorder: model.NewRecorder(model.NewScripted(o.Script, o.CoalesceStreams, o.NoRecords, o.ToolNames), ro), scripted: true}, nil
	}
	getenv, secrets := o.Getenv, o.Secrets
	if getenv == nil {
		var env []string
		env, getenv = cassette.Env(o.Env)
		secrets = append(redact.FromEnv(env), secrets...)
	}
	o.Mode = cmp.Or(o.Mode, cassette.DefaultMode(getenv))
	if _, err := cassette.ParseMode(string(o.Mode)); err != nil {
		return nil, err
	}
	cfg := o.Config
	cfg.Provider, cfg.Secrets, cfg.Live = cmp.Or(o.Provider, cassette.AnyAPI), secrets, nil
	if o.Mode != cassette.None { // in mode none nothing goes live
		transport := o.Transport
		if transport == nil {
			transport = http.DefaultTransport.(*http.Transport).Clone()
		}
		var err error
		env := func(k string) string { return cmp.Or(o.BaseURLs[k], getenv(k)) }
		if cfg.Live, err = wire.NewLive(wire.LiveOptions{Getenv: env, Transport: transport}); err != nil {
			return nil, err
		}
		cfg.Secrets = slices.Concat(secrets, cfg.Live.Secrets) // never into o.Secrets' array: cases share it
	}
	tape, err := cassette.Open(cfg, o.CoalesceStreams)
	if err != nil {
		return nil, err
	}
	return &Endpoint{Recorder: model.NewRecorder(tape, ro), mode: o.Mode, file: o.File, replaying: tape.Replaying(), byContent: tape.ByContent(),
		pooled: len(o.Faults) == 0 && tape.ByContent()}, nil
}

// ServeHTTP implements http.Handler: route, body, the Recorder's answer,
// written.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, ok := wire.RouteOf(r.URL.Path)
	if !ok {
		notFound(w, r)
		return
	}
	if r.Method == http.MethodGet && strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
		e.serveWebSocket(w, r, api)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		write(w, api.Error(http.StatusMethodNotAllowed, model.ErrorInfo{Type: "invalid_request_error", Code: "method_not_allowed",
			Message: fmt.Sprintf("%s %s: only POST is served here", r.Method, r.URL.Path)}))
		return
	}
	// Answered by content, with no faults, the body is read into a
	// buffer used again for later requests: the recording's index keeps
	// nothing of it (cassette's find).
	var buf *[]byte
	if e.pooled {
		buf = bodyBufs.Get().(*[]byte)
		defer bodyBufs.Put(buf)
	}
	body, err := readBody(r, buf)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, errTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		write(w, api.Error(status, model.ErrorInfo{Type: "invalid_request_error", Message: "dryfire could not read the request body: " + err.Error()}))
		return
	}
	c := calls.Get().(*model.Call)
	*c = model.Call{Wire: api.Wire(), HTTP: r, Body: body}
	a := e.Answer(c)
	write(w, a)
	if a.Live == nil {
		calls.Put(c)
	}
}

// calls are the Calls of the endpoint's requests, used again.
var calls = sync.Pool{New: func() any { return new(model.Call) }}

// write writes an answer: a body in one write, a stream event by event,
// flushed after each, a live stream as it arrives; a fault's drop or cut
// closes the connection (what was sent stays sent; the rest never comes).
func write(w http.ResponseWriter, a *model.Answer) {
	if a.Drop {
		panic(http.ErrAbortHandler)
	}
	h := w.Header()
	for k, v := range a.Header {
		h[k] = v
	}
	w.WriteHeader(a.Status)
	flush := flusher(w)
	switch {
	case a.Cut >= 0:
		w.Write(a.Bytes()[:a.Cut])
		flush()
		panic(http.ErrAbortHandler)
	case a.Live != nil:
		flush()
		buf := make([]byte, 32<<10)
		for {
			n, err := a.Live.Read(buf)
			if n > 0 {
				if _, werr := w.Write(buf[:n]); werr != nil {
					break
				}
				flush()
			}
			if err != nil {
				break
			}
		}
		a.Live.Close()
	case a.Events == nil:
		w.Write(a.Body)
	default:
		for _, ev := range a.Events {
			if _, err := w.Write(ev); err != nil {
				return
			}
			flush()
		}
	}
}

// RoundTrip implements http.RoundTripper: the built-in loop's (a judge's,
// a simulated user's) call, answered by the same Recorder, its answer
// given back as the HTTP answer (or connection error) it is (its header
// the answer's own, to be read, not changed).
func (e *Endpoint) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	a := e.Answer(&model.Call{Wire: wire.APIOf(req.URL.Path).Wire(), HTTP: req, Body: body})
	if a.Drop {
		return nil, errDropped
	}
	resp := &http.Response{Status: strconv.Itoa(a.Status) + " " + http.StatusText(a.Status), StatusCode: a.Status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: a.Header, Request: req, ContentLength: -1}
	switch {
	case a.Live != nil:
		resp.Body = a.Live
	case a.Cut >= 0:
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(a.Bytes()[:a.Cut]), errReader{errDropped}))
	default:
		data := a.Bytes()
		resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(data)), int64(len(data))
	}
	return resp, nil
}

// errDropped is a dropped connection, as the client's transport reports
// one.
var errDropped = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// readBody reads a request body, in one allocation when its length is
// known, or none when it fits buf (nil: no buffer), which then holds it.
func readBody(r *http.Request, buf *[]byte) ([]byte, error) {
	if r.Body == nil {
		return nil, nil
	}
	if n := r.ContentLength; n >= 0 && n <= maxBody {
		var b []byte
		if buf != nil && int64(cap(*buf)) >= n {
			b = (*buf)[:n]
		} else {
			b = make([]byte, n)
			if buf != nil && n <= maxPooledBody {
				*buf = b
			}
		}
		if _, err := io.ReadFull(r.Body, b); err != nil {
			return nil, err
		}
		return b, nil
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err == nil && len(data) > maxBody {
		err = errTooLarge
	}
	return data, err
}

// bodyBufs are request bodies' buffers (readBody), up to maxPooledBody.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

const maxPooledBody = 64 << 10

// errTooLarge is a request body over maxBody: answered 413.
var errTooLarge = errors.New("it is larger than 64 MiB")

// flusher is how to flush w.
func flusher(w http.ResponseWriter) func() {
	if f, ok := w.(http.Flusher); ok {
		return f.Flush
	}
	rc := http.NewResponseController(w)
	return func() { rc.Flush() }
}

// File is the cassette file ("" for a scripted case).
func (e *Endpoint) File() string { return e.file }

// Mode is the record mode in force.
func (e *Endpoint) Mode() cassette.Mode { return e.mode }

// Scripted reports whether the case's script answers (Options.Scripted).
func (e *Endpoint) Scripted() bool { return e.scripted }

// Replaying reports whether the endpoint replays a cassette it read (in
// mode none, once or new), rather than recording every call.
func (e *Endpoint) Replaying() bool { return e.replaying }

// ByContent reports whether requests are answered by content, in any
// order (Options.ByContent, while replaying), rather than in order.
func (e *Endpoint) ByContent() bool { return e.byContent }

// Protocols are what a server of model endpoints speaks: HTTP/1 and
// HTTP/2 over plain TCP (h2c, with prior knowledge), which the AWS SDK for
// JavaScript's Bedrock runtime client speaks to an http:// endpoint.
func Protocols() *http.Protocols {
	p := new(http.Protocols)
	p.SetHTTP1(true)
	p.SetUnencryptedHTTP2(true)
	return p
}
