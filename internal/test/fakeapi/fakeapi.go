// Package fakeapi serves strict local imitations of the model APIs dryfire
// speaks — Anthropic Messages, OpenAI Chat Completions, OpenAI Responses,
// Gemini generateContent —
// for tests and for recording the examples' cassettes. Each server rejects
// what the real API rejects, with the real error-body shapes, and answers
// from a Brain: a deterministic stand-in for the model. With "stream": true
// the answer is an event stream in the API's exact shape:
// Chat Completions chunks (with stream_options.include_usage, a usage
// chunk) ending in data: [DONE]; Responses and Anthropic events named by
// event: lines. Text and arguments come in pieces of wire.Piece bytes, so
// a stream's bytes, like an answer's, depend only on the request.
//
// What is strict is here: the checks of a request and the real API's
// refusals. What the Brain is shown of a request is read by internal/wire
// (wire.ReadRequest), and the answers are written there (wire.Reply), as
// the script model's are: one definition of each API's shapes, which the
// conformance tests check against the official types.
package fakeapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"

	dmodel "github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// ToolCall is a tool call the fake model makes (its ID set by the
// server when empty), or one it sees.
type ToolCall = tool.Call

// Turn is one answer of the fake model.
type Turn struct {
	Text      string
	ToolCalls []ToolCall
	// Thinking, when set, is answered as a thinking block (with a
	// signature the server checks when the block comes back) by the
	// servers whose API has them (Anthropic), and as a reasoning item
	// with this summary by the Responses server.
	Thinking     string
	InputTokens  int // 0: computed from the request size
	OutputTokens int // 0: computed from the answer size
}

// Msg is one message of a conversation: its Role user, assistant or
// tool (a tool result: CallID, IsError).
type Msg = dmodel.Message

// Conversation is what a request holds, provider-neutral.
type Conversation struct {
	Model    string
	System   string
	Messages []Msg
	Tools    []string
}

// FirstUser is the text of the first user message.
func (c Conversation) FirstUser() string {
	for _, m := range c.Messages {
		if m.Role == "user" {
			return m.Text
		}
	}
	return ""
}

// Turns counts the assistant messages so far.
func (c Conversation) Turns() int {
	n := 0
	for _, m := range c.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// conversation is what the brain is shown of a request its server's
// checks let through: wire's reading of it (wire.ReadRequest, as the
// script model reads one), its tools by name.
func conversation(api wire.API, r *http.Request, body []byte) Conversation {
	req, err := wire.ReadRequest(api, r.URL, body)
	if err != nil {
		return Conversation{}
	}
	c := Conversation{Model: req.Model, System: req.System, Messages: req.Messages}
	for _, t := range req.Tools {
		c.Tools = append(c.Tools, t.Name)
	}
	return c
}

// Brain decides the model's next turn.
type Brain interface {
	Next(c Conversation) (Turn, error)
}

// Script is a Brain for many conversations at once: each conversation is
// found by its first user message, and its Nth assistant turn is the Nth
// entry. It keeps no state, so concurrent cases never interfere.
type Script map[string][]Turn

// Next implements Brain.
func (s Script) Next(c Conversation) (Turn, error) {
	turns, ok := s[c.FirstUser()]
	if !ok {
		return Turn{}, fmt.Errorf("no script for a conversation starting %q", c.FirstUser())
	}
	n := c.Turns()
	if n >= len(turns) {
		return Turn{}, fmt.Errorf("the script for %q has %d turns; turn %d was asked for", c.FirstUser(), len(turns), n+1)
	}
	return turns[n], nil
}

// Moody is a Brain whose answers vary from run to run, as a real model's
// do at a temperature above zero: each conversation's last turn (the
// one without tool calls) is drawn at random from Endings, the turns
// before it come from Script. Draws are not seeded: two runs differ.
type Moody struct {
	Script  Script
	Endings map[string][]Turn // by first user message
}

// Next implements Brain.
func (m Moody) Next(c Conversation) (Turn, error) {
	turns := m.Script[c.FirstUser()]
	if n := c.Turns(); n < len(turns) {
		return turns[n], nil
	}
	ends := m.Endings[c.FirstUser()]
	if len(ends) == 0 {
		return Turn{}, fmt.Errorf("no ending for a conversation starting %q", c.FirstUser())
	}
	return ends[rand.IntN(len(ends))], nil
}

// Fault is an error the server answers instead of a turn, for the next
// Times requests (1 when 0).
type Fault struct {
	Status     int    // e.g. 429, 500, 529
	RetryAfter string // Retry-After header value, if any
	Drop       bool   // close the connection without answering
	Times      int
}

// Option configures a fake server.
type Option func(*config)

type config struct {
	key  string // the key a request must carry; "" accepts any
	addr string // where to listen; "" is a free loopback port
	// rewrite changes each answer's body (Rewrite); nil: none.
	rewrite func([]byte) []byte
}

// ListenOn makes the server listen on addr (such as 127.0.0.1:11434, to
// stand where a suite's base_url points) instead of a free port.
func ListenOn(addr string) Option { return func(c *config) { c.addr = addr } }

// RequireKey makes the server refuse a request that does not carry key,
// with 401 and the API's own error body.
func RequireKey(key string) Option { return func(c *config) { c.key = key } }

// Rewrite changes every answer's body (a stream's whole) before it is
// sent: a fake API that drifted from the one a cassette recorded.
func Rewrite(f func(body []byte) []byte) Option { return func(c *config) { c.rewrite = f } }

func configure(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
	}
	return c
}

// Server is a running fake API with counters.
type Server struct {
	*httptest.Server
	requests atomic.Int64
	conns    atomic.Int64

	mu     sync.Mutex
	faults []Fault
}

// start serves h on loopback, counting connections. It panics, as
// httptest does, when it cannot listen.
func start(h http.Handler, c config) *Server {
	s := &Server{}
	var api wire.API // faults answer in its shape; "" for OpenAI's or Vertex AI's
	if hh, ok := h.(*handler); ok {
		api = hh.api
	}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if f, ok := s.nextFault(); ok {
			if f.Drop {
				if hj, ok := w.(http.Hijacker); ok {
					if conn, _, err := hj.Hijack(); err == nil {
						conn.Close()
						return
					}
				}
			}
			if f.RetryAfter != "" {
				w.Header().Set("Retry-After", f.RetryAfter)
			}
			faultBody(w, r, f.Status, api)
			return
		}
		if c.rewrite == nil {
			h.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(c.rewrite(rec.Body.Bytes()))
	}))
	// HTTP/2 over plain TCP too: the AWS SDK for JavaScript speaks it to
	// an http:// endpoint.
	s.Server.Config.Protocols = new(http.Protocols)
	s.Server.Config.Protocols.SetHTTP1(true)
	s.Server.Config.Protocols.SetUnencryptedHTTP2(true)
	s.Server.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	if c.addr != "" {
		l, err := net.Listen("tcp", c.addr)
		if err != nil {
			panic(fmt.Sprintf("fakeapi: listening on %s: %v", c.addr, err))
		}
		s.Server.Listener.Close()
		s.Server.Listener = l
	}
	s.Server.Start()
	return s
}

// Fail queues faults: the next requests get them, in order.
func (s *Server) Fail(f ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range f {
		if x.Times <= 0 {
			x.Times = 1
		}
		s.faults = append(s.faults, x)
	}
}

func (s *Server) nextFault() (Fault, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.faults) == 0 {
		return Fault{}, false
	}
	f := s.faults[0]
	s.faults[0].Times--
	if s.faults[0].Times <= 0 {
		s.faults = s.faults[1:]
	}
	return f, true
}

// Requests is how many requests arrived.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Conns is how many connections were opened.
func (s *Server) Conns() int64 { return s.conns.Load() }

// faultBody writes an injected fault in api's error shape (a Vertex AI
// path's publisher's; OpenAI's when "").
func faultBody(w http.ResponseWriter, r *http.Request, status int, api wire.API) {
	f := &fault{status: status, typ: "server_error", msg: fmt.Sprintf("injected fault %d", status)}
	if _, _, publisher, _, _, ok := wire.VertexPath(r.URL.Path); ok {
		api = map[string]wire.API{"google": wire.Gemini, "anthropic": wire.Anthropic}[publisher]
	}
	switch api {
	case wire.Gemini, wire.Ollama:
	case wire.Bedrock:
		f.typ = "" // wire's x-amzn-ErrorType for the status
	case wire.Anthropic:
		f.typ = cmp.Or(map[int]string{429: "rate_limit_error", 529: "overloaded_error"}[status], "api_error")
	default:
		if status == http.StatusTooManyRequests {
			f.typ = "rate_limit_exceeded"
		}
		api = cmp.Or(api, wire.OpenAIChat)
	}
	refuse(w, api, f)
}

// fault is a refusal: its status (400 when 0), and the error's type,
// message, param and code, as far as the API's error shape has them.
type fault struct {
	status                int
	typ, msg, param, code string
}

func invalid(format string, args ...any) *fault {
	return &fault{msg: fmt.Sprintf(format, args...)}
}

// fakeBrain is the code of a refusal for a brain without a turn: a
// test's mistake, which trying again will not help.
const fakeBrain = "fake_brain"

// refuse writes f in api's own error shape, as wire writes the
// endpoint's (wire.API.Error), without x-should-retry for a 429 and with
// x-should-retry: false for a brain without a turn; a Bedrock error's
// type is its x-amzn-ErrorType.
func refuse(w http.ResponseWriter, api wire.API, f *fault) {
	status := cmp.Or(f.status, http.StatusBadRequest)
	a := api.Error(status, dmodel.ErrorInfo{Type: f.typ, Message: f.msg, Param: f.param, Code: f.code})
	switch {
	case status == http.StatusTooManyRequests:
		a.Header.Del("X-Should-Retry")
	case f.code == fakeBrain:
		a.Header.Set("X-Should-Retry", "false")
	case api == wire.Bedrock && f.typ != "":
		a.Header.Set("X-Amzn-Errortype", f.typ)
	}
	send(w, a)
}

// handler serves one fake API: check refuses a request before its body
// is read (its route, method, key); answer checks the body and answers
// it from the brain (nil without a fault: it wrote the answer itself);
// finish, when set, rewrites the answer as wire wrote it.
type handler struct {
	api    wire.API
	check  func(r *http.Request) *fault
	answer func(w http.ResponseWriter, r *http.Request, body []byte) (*wire.Reply, *fault)
	finish func(r *http.Request, body []byte, events [][]byte) ([]byte, [][]byte)
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := h.check(r)
	var rep *wire.Reply
	if f == nil {
		if body, err := io.ReadAll(r.Body); err != nil {
			f = invalid("could not read the request body: %v", err)
		} else {
			rep, f = h.answer(w, r, body)
		}
	}
	switch {
	case f != nil:
		refuse(w, h.api, f)
	case rep != nil:
		data, events := h.api.Reply(rep)
		if h.finish != nil {
			data, events = h.finish(r, data, events)
		}
		send(w, h.api.Answer(http.StatusOK, data, events))
	}
}

// decodeJSON reads one JSON value, numbers kept as written; ok is false
// when data is anything else.
func decodeJSON(data []byte) (v any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return v, dec.Decode(&v) == nil && !dec.More()
}

// decodeObject is decodeJSON's object; nil when data is anything else.
func decodeObject(data []byte) map[string]any {
	v, _ := decodeJSON(data)
	m, _ := v.(map[string]any)
	return m
}

// send writes an answer as wire made it: its header, then its body, or
// its events each flushed.
func send(w http.ResponseWriter, a *dmodel.Answer) {
	maps.Copy(w.Header(), a.Header)
	w.WriteHeader(a.Status)
	w.Write(a.Body)
	rc := http.NewResponseController(w)
	for _, ev := range a.Events {
		w.Write(ev)
		rc.Flush()
	}
}
