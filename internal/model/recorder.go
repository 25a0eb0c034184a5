package model

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"sync"
)

// The model call's seam, in the tool call's shape: every model request of
// a case, whoever sends it (an agent's SDK at the model endpoint, the
// built-in loop's client, a judge's, a simulated user's), is one Call to
// the case's one Recorder, which numbers it, applies the case's declared
// faults, asks the case's one Answerer (the script, or the cassette:
// replayed, or live through the one live client, then kept), counts the
// turns and tokens, and at the end says how it all went (Outcome):
//
//	route (internal/modelserver) → Recorder.Answer → Answerer.Answer → the Answer, which the route writes
//
// Every answered call passes through Recorder.done with its request
// (Call.Request: a provider-neutral Request) and its answer (Wire.Response
// of it: the text, tool calls and usage), whatever answered it.

// Wire is a model API's wire format as the seam needs it; internal/wire's
// API implements it.
type Wire interface {
	// String is the API's name as a report shows it.
	String() string
	// Turn says whether a successful answer is a turn of the case (a
	// token count is not).
	Turn() bool
	// Local says whether dryfire answers its calls itself under every
	// model, as side calls (a token count: sidecalls.go).
	Local() bool
	// Request reads a call's request leniently: what it cannot read is
	// left out; Params are the body's top-level keys.
	Request(c *Call) (*Request, error)
	// Script writes a scripted turn as this API answers request c (read
	// as req), its ids numbered by c.N.
	Script(c *Call, req *Request, r *Response) *Answer
	// Error is an error answer in this API's shape.
	Error(status int, e ErrorInfo) *Answer
	// Usage reads the tokens an answer says were used.
	Usage(a *Answer) Usage
	// Response reads an answer (a stream folded) into the neutral form.
	Response(a *Answer) (*Response, error)
}

// ErrorInfo is an error answer, whatever the API's shape.
type ErrorInfo struct {
	Type    string // OpenAI's type, Anthropic's error type
	Message string
	Param   string // OpenAI's param; "" is null
	Code    string // OpenAI's code, Gemini's reason; "" is null
	// Fault: a declared fault's answer, sent without x-should-retry (the
	// client decides by the status, as with the real API's).
	Fault bool
}

// Coded is an error that names dryfire's code for it in an error answer
// (the cassette's, the script's), and the request field it is about.
type Coded interface {
	Code() (code, param string)
}

// Call is one model request of a case, as it came.
type Call struct {
	Wire Wire
	// HTTP is the request's method, URL and headers (its body is Body).
	// A URL with a host names the upstream a live call goes to (the
	// built-in loop's client posts to its provider); one without (a
	// request to the model endpoint) goes to its API's.
	HTTP *http.Request
	Body []byte
	// N is the call's number in the case, from 1, retries included.
	N int
	// Placed is the answerer's note of how it answered (for Unanswer).
	Placed any

	req    *Request
	reqErr error
}

// Request is the call's request, read once (Wire.Request).
func (c *Call) Request() (*Request, error) {
	if c.req == nil && c.reqErr == nil {
		c.req, c.reqErr = c.Wire.Request(c)
	}
	return c.req, c.reqErr
}

// Answer is what a call is answered with, as a route writes it.
type Answer struct {
	Status int
	Header http.Header // as written: Content-Type, Content-Length, …
	Body   []byte      // a JSON body (or a whole stream in one piece)
	Events [][]byte    // a stream, written event by event, each flushed
	// Live is a live answer's stream as it arrives (Body and Events are
	// nil): the route passes it on, flushed as it comes, to its end, and
	// closes it. Ended is then told what passed (err: it was cut short).
	Live  io.ReadCloser
	Ended func(data []byte, err error)
	Usage Usage
	// Streamed: an event stream; Replayed: from the cassette.
	Streamed, Replayed bool
	// Err is why dryfire refused the call: the answer says it.
	Err error
	// Drop and Cut are a fault's: the connection closes before any
	// answer, or after the answer's first Cut bytes (negative: none).
	Drop bool
	Cut  int
	// Fault: a declared fault answered, or cut, the call: it is no turn.
	Fault bool
	// From is the host a live answer came from.
	From string
	// Side: a side call dryfire answered itself, what it was (no turn,
	// never recorded: sidecalls.go).
	Side string
}

// Bytes is the answer's body as written: Body, or the events joined.
func (a *Answer) Bytes() []byte {
	if a.Events == nil {
		return a.Body
	}
	return bytes.Join(a.Events, nil)
}

// Answerer answers the model calls of a case.
type Answerer interface {
	// Answer answers a call, or says why it cannot (refused in the API's
	// shape).
	Answer(c *Call) (*Answer, error)
	// Unanswer takes an answer back: a fault cut it short, so the
	// client's retry is answered in its place.
	Unanswer(c *Call)
	// End adds its part to the case's outcome, once live calls are over.
	End(o *Outcome)
	// Save writes what was recorded, for a case that finished, and says
	// whether it did.
	Save() (bool, error)
	// Reset starts the case over.
	Reset()
}

// Called is one model call as the case keeps it.
type Called struct {
	API      string // Wire.String
	Status   int
	Replayed bool
	Streamed bool
	Usage    Usage
	Err      error  // why it was refused, or nil
	Fault    bool   // a declared fault answered it: no turn
	Side     string // a side call dryfire answered itself (sidecalls.go): what it was
}

// Outcome is how a case's model calls went, at its end.
type Outcome struct {
	Calls []Called // in arrival order (none with RecorderOptions.NoRecords)
	// Seen are the tool calls and results of the calls answered with a
	// success, in the order answered (only with Transcript).
	Seen   []Seen
	Turns  int   // calls answered with a success: the transcript's turns
	Usage  Usage // as the answers say (as recorded, when replayed)
	Faults []Injected

	// Offered are the tools the answered requests offered, each name once
	// as first offered (at most MaxOffered: OfferedOver says more were;
	// only with Transcript).
	Offered     []ToolDef
	OfferedOver bool

	// The cassette's: a request that strayed from the recording (the
	// case fails there), recorded calls left unplayed, a live call that
	// failed (the case errs), the calls replayed, recorded and sent live.
	Replay, Unplayed, Live error
	Played, Recorded, Sent int
	Scripted               bool
	Script                 error          // the first request the script could not answer
	Unserved               error          // *UnservedError: turns no request was answered by
	Served                 []ScriptAnswer // the script's answers, in order
}

// RecorderOptions configure a case's Recorder; nil is none.
type RecorderOptions struct {
	// Faults are the case's declared faults, at most one per request.
	Faults []Fault
	// NoRecords keeps no list of the calls (Outcome.Calls), only the
	// counts: for a long-running server.
	NoRecords bool
	// Transcript reads every answered call's request and answer for the
	// tools they show (Outcome.Seen, Outcome.Offered): an agent program's
	// own tool calls. Without it neither is decoded.
	Transcript bool
	// SideCalls is the preset of side calls answered without the
	// answerer (sidecalls.go: SideCallsClaudeCode, or "": token counts
	// alone).
	SideCalls string
	// Admit, when set, is asked for each call of the conversation (no
	// side call, no token count) as it is answered: an error refuses it
	// in the API's shape, unrecorded (the case's max_turns).
	Admit func() error
}

// Recorder is the model side of one case: every model call of the case
// goes through its Answer. It is safe for concurrent use.
type Recorder struct {
	ans        Answerer
	faults     *faults // nil: none declared
	noRecords  bool
	transcript bool
	sideCalls  string
	admit      func() error

	mu    sync.Mutex
	n     int
	calls []Called
	turns int
	usage Usage
	seen  []Seen
	// results are the call ids whose results seen holds.
	results map[string]bool
	offer   offered
}

// NewRecorder is the model side of a case answered by ans.
func NewRecorder(ans Answerer, o *RecorderOptions) *Recorder {
	if o == nil {
		o = &RecorderOptions{}
	}
	return &Recorder{ans: ans, faults: newFaults(o.Faults), noRecords: o.NoRecords, transcript: o.Transcript && !o.NoRecords, sideCalls: o.SideCalls, admit: o.Admit}
}

// Answer answers a model call of the case: a declared fault's answer, or
// the answerer's (refused in the API's shape when it cannot answer). A
// fault that cuts the answer takes it back from the answerer, for the
// retry to take its place.
func (r *Recorder) Answer(c *Call) *Answer {
	r.mu.Lock()
	r.n++
	c.N = r.n
	r.mu.Unlock()
	if a := sideCall(r.sideCalls, c); a != nil {
		r.done(c, a)
		return a
	}
	if r.admit != nil && c.Wire.Turn() {
		if err := r.admit(); err != nil {
			return Refusal(c.Wire, err)
		}
	}
	f, fi := r.faults.arrive(c)
	if f != nil {
		if a := r.fault(c, f); a != nil {
			r.done(c, a)
			return a
		}
	}
	a, err := r.ans.Answer(c)
	if err != nil {
		a = Refusal(c.Wire, err)
	}
	if f != nil && f.CutAfter >= 0 {
		a = r.cut(c, a, f, fi)
	}
	if a.Live == nil {
		r.done(c, a)
		return a
	}
	live := *a
	live.Live = &passing{r: a.Live, end: func(data []byte, err error) {
		if err != nil && whole(c.Wire, data) {
			// The client stopped reading once the stream's last event
			// had passed (Codex CLI after response.completed): the
			// answer is whole.
			err = nil
		}
		a.Ended(data, err)
		live.Status, live.Usage = a.Status, a.Usage
		if err == nil {
			live.Body = data // what passed, for done to read
		} else {
			live.Err = err
		}
		r.done(c, &live)
	}}
	return &live
}

// done keeps a call answered: its record, the turns and the tokens, and
// the tool calls it shows (SeenOf).
func (r *Recorder) done(c *Call, a *Answer) {
	turn := a.Status/100 == 2 && !a.Fault && a.Side == "" && c.Wire.Turn()
	var seen Seen
	var req *Request
	if turn && r.transcript {
		req, _ = c.Request()
		resp, _ := c.Wire.Response(a)
		seen.Calls, seen.Results = SeenOf(req, resp)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.noRecords {
		r.calls = append(r.calls, Called{API: c.Wire.String(), Status: a.Status, Replayed: a.Replayed, Streamed: a.Streamed, Usage: a.Usage, Err: a.Err, Fault: a.Fault, Side: a.Side})
	}
	if turn {
		r.turns++
		if r.transcript {
			seen.Turn = r.turns
			// A request repeats the conversation's results: each is
			// kept once, from the first request that has it.
			kept := seen.Results[:0]
			for _, m := range seen.Results {
				if !r.results[m.CallID] {
					if r.results == nil {
						r.results = map[string]bool{}
					}
					r.results[m.CallID] = true
					kept = append(kept, m)
				}
			}
			seen.Results = kept
			r.seen = append(r.seen, seen)
			if req != nil {
				r.offer.add(req.Tools)
			}
		}
	}
	r.usage.InputTokens += a.Usage.InputTokens
	r.usage.OutputTokens += a.Usage.OutputTokens
}

// Refusal is the answer refusing a call for err: status 400, which no SDK
// retries, in the API's shape, with dryfire's code when err names one.
func Refusal(w Wire, err error) *Answer {
	info := ErrorInfo{Type: "invalid_request_error", Message: "dryfire: " + err.Error()}
	var c Coded
	if errors.As(err, &c) {
		info.Code, info.Param = c.Code()
	}
	a := w.Error(http.StatusBadRequest, info)
	a.Err = err
	return a
}

// End says how the case's model calls went, once live calls are over.
func (r *Recorder) End() Outcome {
	var o Outcome
	r.ans.End(&o)
	r.mu.Lock()
	defer r.mu.Unlock()
	o.Calls, o.Turns, o.Usage = append([]Called(nil), r.calls...), r.turns, r.usage
	o.Seen = append([]Seen(nil), r.seen...)
	o.Offered, o.OfferedOver = append([]ToolDef(nil), r.offer.defs...), r.offer.over
	o.Faults = r.faults.injected()
	return o
}

// Save writes what was recorded (the cassette), for a case that
// finished, and says whether it did.
func (r *Recorder) Save() (bool, error) { return r.ans.Save() }

// Reset starts the case over: the answerer from its start, the calls,
// counts and faults forgotten.
func (r *Recorder) Reset() {
	r.ans.Reset()
	r.mu.Lock()
	r.n, r.calls, r.turns, r.usage, r.seen, r.results, r.offer = 0, nil, 0, Usage{}, nil, nil, offered{}
	r.mu.Unlock()
	r.faults.reset()
}

// errLeft is a live stream its client left before its end.
var errLeft = errors.New("the client left before the end of the streamed answer")

// passing is a live answer's stream as it passes: kept whole, and its end
// (EOF, an error, or a Close before EOF) told once.
type passing struct {
	r    io.ReadCloser
	buf  bytes.Buffer
	end  func(data []byte, err error)
	over bool
}

func (p *passing) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.buf.Write(b[:n])
	if err == io.EOF {
		p.finish(p.buf.Bytes(), nil)
	} else if err != nil {
		p.finish(p.buf.Bytes(), err)
	}
	return n, err
}

func (p *passing) Close() error {
	p.finish(p.buf.Bytes(), errLeft)
	return p.r.Close()
}

// whole says whether a stream cut at data had passed its last event (the
// API's reading of it folds it into an answer).
func whole(w Wire, data []byte) bool {
	if len(data) == 0 {
		return false
	}
	_, err := w.Response(&Answer{Body: data, Streamed: true})
	return err == nil
}

func (p *passing) finish(data []byte, err error) {
	if !p.over {
		p.over = true
		p.end(data, err)
	}
}
