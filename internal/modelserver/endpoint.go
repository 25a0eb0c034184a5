// Package modelserver serves one case's model calls over HTTP, in the wire
// formats of the real APIs, from the case's cassette: an existing agent,
// pointed at it by the base URL its SDK already reads, runs offline and
// the same way every time.
//
// An Endpoint is an http.Handler for POST /v1/chat/completions and POST
// /v1/responses (OpenAI: an SDK's base URL is http://HOST/v1) and POST
// /v1/messages (Anthropic: the base URL is http://HOST, the SDK adds
// /v1/messages), and the Gemini API's POST
// /v1beta/models/{model}:generateContent, :streamGenerateContent and
// :countTokens (gemini.go: the base URL is http://HOST), JSON and event
// streams alike. Mounted under a prefix
// (http.StripPrefix("/cases/7", e)), the base URLs carry the prefix.
//
// Requests are matched exactly as the built-in loop's are (the Nth request
// of the case against the Nth recorded interaction, canonicalised by the
// cassette package) — or, with Options.ByContent, each by its content
// alone, in any order, for a server several clients replay at once — and
// answered with the recorded status, Content-Type and body bytes, a stream
// event by event with a flush after each (or in one write, with
// Options.CoalesceStreams), at full speed. A request the recording does not answer is refused in the API's
// own error shape, with a status no SDK retries. When the mode records, a
// request the recording does not answer goes to the real API (streams are
// passed on as they arrive) and the exchange is kept, to be written by
// Finish.
package modelserver

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/pause"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// DummyKey is a key to give an agent's SDK when no real key is set, so
// that it starts: a client key that starts with "dryfire-" is never sent
// to a real API.
const DummyKey = "dryfire-no-key"

// maxBody bounds a request body.
const maxBody = 64 << 20

// Options configure the endpoint of one case.
type Options struct {
	// Rerecord, when set, says how to record the case again (see
	// cassette.Config.Rerecord); nil: the dryfire run command.
	Rerecord func(cassette.Mode) string
	// RecordedBy is cassette.Config.RecordedBy: who replays what is
	// recorded (dryfire serve), for the cassette's note.
	RecordedBy string
	// Trials is cassette.Config.Trials: how often the case runs.
	Trials int
	// File is the case's cassette: cassettes/SUITE/SLUG.json beside the
	// suite file, as cassette.Paths gives it (and as the runner uses).
	File string
	// SuiteFile is the suite file as the user named it, and Case the
	// case's name: in the cassette, in messages, in the command that
	// records the case again.
	SuiteFile string
	Case      string
	// Root is cassette.Config.Root: the project root the cassette stays
	// inside ("": the suite file's default root).
	Root string
	// Mode says when calls are replayed and when recorded; "" is
	// cassette.DefaultMode of Env (none when CI is set, else once).
	Mode cassette.Mode
	// OpenAIBaseURL, AnthropicBaseURL and GeminiBaseURL are where live
	// calls go (the same shapes as the SDKs': OpenAI's with /v1, Gemini's
	// without its version). Empty: the Env's OPENAI_BASE_URL /
	// ANTHROPIC_BASE_URL / GOOGLE_GEMINI_BASE_URL, else the public APIs.
	// An Env that points these at this endpoint itself would loop: give
	// the endpoint the environment of dryfire, not the agent's.
	OpenAIBaseURL    string
	AnthropicBaseURL string
	GeminiBaseURL    string
	// AzureBaseURL is the Azure OpenAI endpoint (https://NAME.openai.azure.com)
	// that requests at Azure's paths go to; empty: the Env's
	// AZURE_OPENAI_ENDPOINT, else they cannot go live.
	AzureBaseURL string
	// Env (KEY=VALUE) holds the keys (OPENAI_API_KEY, ANTHROPIC_API_KEY,
	// GEMINI_API_KEY or GOOGLE_API_KEY),
	// base URLs, CI, and the secrets never to write (values of variables
	// whose name has KEY, TOKEN, SECRET or PASSWORD); nil is os.Environ().
	Env []string
	// Transport carries live calls; nil is a transport of the endpoint's
	// own. Never used in mode none.
	Transport http.RoundTripper
	// Passthrough marks a case that runs passthrough code (impl): its
	// calls always go live and are never recorded (as in the runner).
	Passthrough bool
	// CoalesceStreams writes a replayed stream in one piece (the same
	// bytes, with a Content-Length, flushed once) instead of event by
	// event with a flush after each: several times faster, since every
	// flush is a write to the socket, and no different to a client that
	// parses the stream as a stream (replay keeps no delays anyway). Off,
	// a naive client that takes each read for one event works as it does
	// against the real API.
	CoalesceStreams bool
	// ByContent answers each replayed request with the recorded
	// interaction whose request, in canonical form, equals it, in any
	// order (cassette.Index), instead of the Nth request of the case with
	// the Nth interaction: for a server that several clients replay one
	// conversation against at once (dryfire serve). A request sent twice
	// is answered twice, by the same interaction; a request no interaction
	// answers is refused, naming the closest one, and changes nothing for
	// the requests after it (in order, the case has strayed and every
	// later request is refused too); Unplayed reports nothing. It applies
	// while the endpoint replays: a cassette was read and the mode is none
	// or once. In modes new and all, and in once when there is no cassette
	// yet, requests are taken in order as they come.
	ByContent bool
	// NoRecords keeps no list of the calls answered (Calls returns none),
	// only what Turns and Usage count: for a long-running server, whose
	// memory would otherwise grow with every call.
	NoRecords bool
	// Match are the case's declared request matching rules (see
	// cassette.Config.Match).
	Match []reqmatch.Rule
	// DropUser is cassette.Config.DropUser: saving the cassette drops
	// its model-driven user's part (the case has no such user).
	DropUser bool
	// Faults are the case's declared faults (faults.go), at most one per
	// request number.
	Faults []Fault
	// Scripted: the case's script answers (scripted.go), over any of the
	// APIs, and no cassette is opened, read or written: the cassette
	// options (File, Mode, keys, base URLs, ByContent, …) are not used.
	// Script is its turns (spec.Suite.ScriptOf).
	Scripted bool
	Script   []*spec.Turn
}

// Call is one model request the endpoint answered.
type Call struct {
	API      wire.API
	Status   int  // the status answered
	Replayed bool // from the cassette (false: live, or refused)
	Streamed bool // an event stream
	Usage    model.Usage
	// Err is why the request was refused (it differs from the
	// recording, goes beyond it, may not go live, …), or nil.
	Err error
	// Fault: a declared fault answered it (see Faults); it is no turn.
	Fault bool
}

// Endpoint serves one case's model calls. It is an http.Handler; it is safe
// for concurrent use, though the calls of a case are matched in the order
// they arrive. Whatever answers (ans) — the recording or the live API
// (recorded.go), or the case's script (scripted.go) — the endpoint routes,
// reads the body, serves the declared faults and counts the calls.
type Endpoint struct {
	opts Options
	ans  answerer
	rec  *recorded // the cassette's answerer; nil for a scripted case
	scr  *scripted // the script's; nil for a recorded case

	faults *faults // nil: none declared

	mu    sync.Mutex
	calls []Call
	turns int
	usage model.Usage
}

// answerer answers one model request of a case, whole: it writes the
// answer (or the refusal) and notes the call (Endpoint.note).
type answerer interface {
	answer(w http.ResponseWriter, r *http.Request, api wire.API, body []byte)
}

// answer is a recorded response as it is written: headers ready, usage
// read once.
type answer struct {
	status   int
	header   []string // Content-Type, or nil
	length   []string // Content-Length (bodies)
	body     []byte
	events   [][]byte
	streamed bool // written event by event
	usage    model.Usage
	// cacheControl: a stream written in one piece, with the header a
	// stream goes with.
	cacheControl bool
}

// New prepares the endpoint of one case: its script's (Options.Scripted),
// else its cassette's, read when the mode replays. Its errors are those
// of cassette.Open: a missing cassette in mode none
// (*cassette.MissingError), a file that is not this case's cassette
// (*cassette.FileError), a passthrough case in mode none; Refuse makes a
// handler that answers them.
func New(o Options) (*Endpoint, error) {
	e := &Endpoint{faults: newFaults(o.Faults)}
	if o.Scripted {
		e.opts = o
		e.scr = newScripted(e, o.Script, o.CoalesceStreams)
		e.ans = e.scr
		return e, nil
	}
	rec, err := newRecorded(e, &o)
	if err != nil {
		return nil, err
	}
	e.opts, e.rec, e.ans = o, rec, rec
	return e, nil
}

// ServeHTTP implements http.Handler.
func (e *Endpoint) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	api, ok := wire.RouteOf(r.URL.Path)
	if !ok {
		notFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, api, http.StatusMethodNotAllowed, errorInfo{typ: "invalid_request_error", code: "method_not_allowed",
			msg: fmt.Sprintf("%s %s: only POST is served here", r.Method, r.URL.Path)})
		return
	}
	// Answered by content, with no faults, the body is read into a
	// buffer used again for later requests: the recording's index keeps
	// nothing of it (cassette.Index.Find).
	var buf *[]byte
	if e.faults == nil && e.rec != nil && e.rec.index != nil {
		buf = bodyBufs.Get().(*[]byte)
		defer bodyBufs.Put(buf)
	}
	body, err := readBody(r, buf)
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, errTooLarge) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, api, status, errorInfo{typ: "invalid_request_error", msg: "dryfire could not read the request body: " + err.Error()})
		return
	}
	if e.faults == nil {
		e.ans.answer(w, r, api, body)
		return
	}
	f, fi := e.faults.arrive(api, body)
	if f == nil {
		e.ans.answer(w, r, api, body)
		return
	}
	if f.Delay > 0 {
		pause.For(r.Context(), f.Delay)
	}
	switch {
	case f.Status != 0:
		writeFault(w, api, f)
		e.note(Call{API: api, Status: f.Status, Fault: true})
	case f.Drop:
		e.note(Call{API: api, Fault: true})
		panic(http.ErrAbortHandler) // the server closes the connection, answering nothing
	case f.CutAfter >= 0:
		cw := &cutWriter{ResponseWriter: w, events: f.CutAfter, bytes: -1}
		e.ans.answer(cw, r, api, body)
		e.faults.cut(fi, !cw.cut, cw.bytes >= 0)
		if !cw.cut {
			return
		}
		flusher(w)()
		panic(http.ErrAbortHandler) // what was sent stays sent; the rest never comes
	default: // a delay alone
		e.ans.answer(w, r, api, body)
	}
}

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

func (e *Endpoint) note(c Call) {
	e.mu.Lock()
	if !e.opts.NoRecords {
		e.calls = append(e.calls, c)
	}
	if c.Status/100 == 2 && !c.Fault && c.API.Turn() {
		e.turns++
	}
	e.usage.InputTokens += c.Usage.InputTokens
	e.usage.OutputTokens += c.Usage.OutputTokens
	e.mu.Unlock()
}

// Calls are the model requests answered so far, in order (none when
// Options.NoRecords is set).
func (e *Endpoint) Calls() []Call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Call(nil), e.calls...)
}

// Turns counts the model calls answered with a success (2xx): the turns
// of the case's transcript.
func (e *Endpoint) Turns() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.turns
}

// Usage totals the tokens of the calls answered (as recorded, when
// replayed), read from the JSON answers' usage and from the streams'
// usage events.
func (e *Endpoint) Usage() model.Usage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.usage
}

// Problem is the request that strayed from the recording (it differs, or
// goes beyond it), or nil: the case fails with it. A scripted case has
// none (ScriptError).
func (e *Endpoint) Problem() *cassette.ReplayError {
	if e.rec == nil {
		return nil
	}
	return e.rec.rec.Problem()
}

// Failure is why a call could not go live or be recorded (no key, an
// answer cut short, a key the API refused), or nil: a case error.
func (e *Endpoint) Failure() error {
	if e.rec == nil {
		return nil
	}
	return e.rec.rec.Failure()
}

// Unplayed reports the recorded interactions the case did not ask for,
// once it has ended (and only then: it fails later requests), or nil;
// always nil when requests are answered by content (Options.ByContent).
func (e *Endpoint) Unplayed() *cassette.ReplayError {
	if e.rec == nil || e.rec.index != nil {
		return nil
	}
	return e.rec.rec.Unplayed()
}

// Replaying reports whether the endpoint replays a cassette it read (in
// mode none, once or new), rather than recording every call.
func (e *Endpoint) Replaying() bool { return e.rec != nil && e.rec.rec.Cassette() != nil }

// ByContent reports whether requests are answered by content, in any
// order (Options.ByContent, while replaying), rather than in order.
func (e *Endpoint) ByContent() bool { return e.rec != nil && e.rec.index != nil }

// Scripted reports whether the case's script answers (Options.Scripted).
func (e *Endpoint) Scripted() bool { return e.scr != nil }

// Stats are the calls replayed, the calls recorded live, and every call
// that went live (recorded or not); none for a scripted case.
func (e *Endpoint) Stats() (played, recorded, live int) {
	if e.rec == nil {
		return 0, 0, 0
	}
	return e.rec.rec.Stats()
}

// File is the cassette file ("" for a scripted case).
func (e *Endpoint) File() string {
	if e.rec == nil {
		return ""
	}
	return e.opts.File
}

// Mode is the record mode in force.
func (e *Endpoint) Mode() cassette.Mode { return e.opts.Mode }

// Finish ends the case: it waits for live calls still running, then
// writes the cassette when the case recorded something (atomically; a file
// that already holds these bytes is left alone) and reports whether it
// did. Call it only for a case that ended normally: not one interrupted,
// nor one whose agent could not run; then nothing is written. A scripted
// case writes nothing.
func (e *Endpoint) Finish() (bool, error) {
	if e.rec == nil {
		return false, nil
	}
	e.rec.inflight.Wait()
	return e.rec.rec.Save()
}

// Reset starts the case over without reading the cassette again: the
// recording (or the script) is served from its first turn, and the calls,
// the counters, any problem and anything recorded and not yet written
// (call Finish first to keep it) are dropped.
func (e *Endpoint) Reset() {
	if e.rec != nil {
		e.rec.inflight.Wait()
		e.rec.rec.Reset()
	} else {
		e.scr.reset()
	}
	e.mu.Lock()
	e.calls, e.turns, e.usage = nil, 0, model.Usage{}
	e.mu.Unlock()
	e.faults.reset()
}
