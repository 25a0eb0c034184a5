package modelserver

// Declared faults: a case may answer chosen model requests with an error
// status, a dropped connection, a stream cut mid-way, or a delay, to see
// the agent's client do what it does against the real API (retry, back
// off, give up). Requests are counted as they arrive, retries included,
// so the same requests fail on every run. A fault never reaches the
// cassette: a request answered with an error status or a drop is not
// matched against the recording at all, and the interaction a cut answer
// came from is taken back (cassette.Recorder.Unplay), so that the retry
// replays it whole, or in record mode is recorded in its place.

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/pause"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Fault is what one model request is answered with instead of, or
// before, the model's answer.
type Fault struct {
	Request    int           // the case's Nth model request (1-based), retries included
	Status     int           // an error status answered in the API's shape; 0: none
	RetryAfter time.Duration // with Status: Retry-After and retry-after-ms; negative: not sent
	Drop       bool          // close the connection before any answer
	CutAfter   int           // the answer's first N stream events (a JSON body: half), then close; negative: no cut
	Delay      time.Duration // wait before answering
}

// String says what the fault does, for the case's report.
func (f *Fault) String() string {
	var parts []string
	if f.Delay > 0 {
		parts = append(parts, fmt.Sprintf("delayed %d ms", f.Delay.Milliseconds()))
	}
	switch {
	case f.Status != 0 && f.RetryAfter >= 0:
		parts = append(parts, fmt.Sprintf("answered %d with Retry-After: %s", f.Status, seconds(f.RetryAfter)))
	case f.Status != 0:
		parts = append(parts, fmt.Sprintf("answered %d", f.Status))
	case f.Drop:
		parts = append(parts, "connection dropped before an answer")
	case f.CutAfter == 1:
		parts = append(parts, "answer cut after 1 stream event, connection closed")
	case f.CutAfter >= 0:
		parts = append(parts, fmt.Sprintf("answer cut after %d stream events, connection closed", f.CutAfter))
	}
	return strings.Join(parts, ", then ")
}

func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Injected is a fault as it was served.
type Injected struct {
	Fault Fault
	API   wire.API
	// Retried: a later model request of the case had the same body: the
	// client tried the request again.
	Retried bool
	// Whole: a cut fault found an answer of no more than CutAfter events,
	// which went out whole.
	Whole bool
	// Body: a cut fault found an answer that was no stream, and cut it
	// half-way through its body.
	Body bool
}

// faults is the plan of one endpoint and what it served.
type faults struct {
	plan map[int]*Fault

	mu     sync.Mutex
	n      int
	served []Injected
	sums   [][32]byte // per served: the request's body hash
}

func newFaults(list []Fault) *faults {
	if len(list) == 0 {
		return nil
	}
	fs := &faults{plan: make(map[int]*Fault, len(list))}
	for i := range list {
		fs.plan[list[i].Request] = &list[i]
	}
	return fs
}

// arrive counts a request and says which fault it gets (nil: none) and
// its index in served; an earlier fault whose request had this body was
// retried.
func (fs *faults) arrive(api wire.API, body []byte) (*Fault, int) {
	sum := sha256.Sum256(body)
	fs.mu.Lock()
	defer fs.mu.Unlock()
	fs.n++
	for i := range fs.served {
		if fs.sums[i] == sum {
			fs.served[i].Retried = true
		}
	}
	f := fs.plan[fs.n]
	if f == nil {
		return nil, -1
	}
	fs.served = append(fs.served, Injected{Fault: *f, API: api})
	fs.sums = append(fs.sums, sum)
	return f, len(fs.served) - 1
}

// reset forgets what was served: the requests are counted from 1 again.
func (fs *faults) reset() {
	if fs == nil {
		return
	}
	fs.mu.Lock()
	fs.n, fs.served, fs.sums = 0, nil, nil
	fs.mu.Unlock()
}

// cutOff says whether w is a cut fault's writer that cut the answer.
func cutOff(w http.ResponseWriter) bool {
	c, ok := w.(*cutWriter)
	return ok && c.cut
}

// cut notes how a cut fault's answer went: whole (it was shorter than
// the cut), or cut in its body (no stream).
func (fs *faults) cut(i int, whole, body bool) {
	fs.mu.Lock()
	fs.served[i].Whole, fs.served[i].Body = whole, body
	fs.mu.Unlock()
}

// Faults are the declared faults served so far, in the order of their
// requests.
func (e *Endpoint) Faults() []Injected {
	if e.faults == nil {
		return nil
	}
	e.faults.mu.Lock()
	defer e.faults.mu.Unlock()
	return append([]Injected(nil), e.faults.served...)
}

// FaultCount is how many faults are declared: requests beyond a case's
// turns that max_turns lets through.
func (e *Endpoint) FaultCount() int {
	if e.faults == nil {
		return 0
	}
	return len(e.faults.plan)
}

// writeFault answers an error status in the API's own shape, with the
// error type its API gives that status and, when declared, the wait.
// x-should-retry is not sent: the client decides by the status, as it
// does with most real answers.
func writeFault(w http.ResponseWriter, api wire.API, f *Fault) {
	typ, code, msg := faultError(api, f.Status)
	h := w.Header()
	if f.RetryAfter >= 0 {
		h.Set("Retry-After", strconv.FormatFloat(math.Ceil(f.RetryAfter.Seconds()), 'f', -1, 64))
		h.Set("Retry-After-Ms", strconv.FormatInt(f.RetryAfter.Milliseconds(), 10))
	}
	writeError(w, api, f.Status, errorInfo{typ: typ, code: code, msg: msg + " (a fault the case declares: model_faults)", fault: true})
}

// faultError is the error type and message an API answers a status with.
func faultError(api wire.API, status int) (typ, code, msg string) {
	anthropic := api == wire.Anthropic
	if api == wire.Gemini || api == wire.GeminiCountTokens {
		switch {
		case status == http.StatusTooManyRequests:
			return "", "", "Resource has been exhausted (e.g. check quota)."
		case status == http.StatusServiceUnavailable || status == 529:
			return "", "", "The model is overloaded. Please try again later."
		case status >= 500:
			return "", "", "Internal error encountered."
		}
		return "", "", http.StatusText(status)
	}
	switch {
	case status == http.StatusTooManyRequests && anthropic:
		return "rate_limit_error", "", "Number of requests has exceeded your rate limit"
	case status == http.StatusTooManyRequests:
		return "requests", "rate_limit_exceeded", "Rate limit reached for requests"
	case (status == 529 || status == http.StatusServiceUnavailable) && anthropic:
		return "overloaded_error", "", "Overloaded"
	case status == 529 || status == http.StatusServiceUnavailable:
		return "server_error", "", "The server is overloaded or not ready yet."
	case status >= 500 && anthropic:
		return "api_error", "", "Internal server error"
	case status >= 500:
		return "server_error", "", "The server had an error while processing your request."
	}
	return "invalid_request_error", "", http.StatusText(status)
}

// cutWriter passes an answer on up to its cut: the first n stream events
// (blank-line ends), or half of a body of known length; the rest is
// dropped, so that the handler finishes as if it had all gone out.
type cutWriter struct {
	http.ResponseWriter
	events int   // stream events still to pass
	bytes  int64 // body bytes still to pass; negative: count events
	cut    bool
	last   byte // the last byte passed, for a blank line across writes
	passed int  // bytes passed on
}

func (c *cutWriter) WriteHeader(status int) {
	h := c.Header()
	if !cassette.IsEventStream(h.Get("Content-Type")) {
		n, _ := strconv.ParseInt(h.Get("Content-Length"), 10, 64)
		c.bytes = n / 2
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *cutWriter) Write(p []byte) (int, error) {
	if c.cut {
		return len(p), nil
	}
	keep := len(p)
	if c.bytes >= 0 {
		if int64(len(p)) > c.bytes {
			keep, c.cut = int(c.bytes), true
		}
		c.bytes -= int64(keep)
	} else {
		prev := c.last
		for i, b := range p {
			if c.events == 0 {
				keep, c.cut = i, true
				break
			}
			if b == '\n' && prev == '\n' {
				c.events--
			}
			if b != '\r' {
				prev = b
			}
		}
		c.last = prev
	}
	if keep > 0 {
		c.ResponseWriter.Write(p[:keep])
		c.passed += keep
	}
	return len(p), nil
}

func (c *cutWriter) Flush() { flusher(c.ResponseWriter)() }

// FaultTransport is the built-in loop's model transport with a case's
// declared faults: the same faults the endpoint serves, given to the
// loop's client as the HTTP answers (or connection errors) they are, over
// the case's recorder.
type FaultTransport struct {
	rec    *cassette.Recorder
	faults *faults
}

// NewFaultTransport wraps a case's recorder with its faults; with none it
// is the recorder itself.
func NewFaultTransport(rec *cassette.Recorder, list []Fault) http.RoundTripper {
	if len(list) == 0 {
		return rec
	}
	return &FaultTransport{rec: rec, faults: newFaults(list)}
}

// Faults are the faults served so far (see Endpoint.Faults).
func (t *FaultTransport) Faults() []Injected {
	t.faults.mu.Lock()
	defer t.faults.mu.Unlock()
	return append([]Injected(nil), t.faults.served...)
}

// errDropped is a dropped connection, as the client's transport reports
// one.
var errDropped = &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}

// RoundTrip implements http.RoundTripper.
func (t *FaultTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
		req.Body = io.NopCloser(bytes.NewReader(body))
	}
	api := apiOfPath(req.URL.Path)
	f, fi := t.faults.arrive(api, body)
	if f == nil {
		return t.rec.RoundTrip(req)
	}
	if f.Delay > 0 {
		pause.For(req.Context(), f.Delay)
		if err := req.Context().Err(); err != nil {
			return nil, err
		}
	}
	switch {
	case f.Status != 0:
		w := httptest.NewRecorder()
		writeFault(w, api, f)
		resp := w.Result()
		resp.Request = req
		return resp, nil
	case f.Drop:
		return nil, errDropped
	case f.CutAfter >= 0:
		resp, x, err := t.rec.Exchange(req)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		stream := cassette.IsEventStream(resp.Header.Get("Content-Type"))
		keep := cutPoint(data, f.CutAfter, stream)
		t.faults.cut(fi, keep == len(data), !stream)
		if keep == len(data) {
			resp.Body = io.NopCloser(bytes.NewReader(data))
			return resp, nil
		}
		t.rec.Unplay(x)
		resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(data[:keep]), errReader{errDropped}))
		return resp, nil
	}
	return t.rec.RoundTrip(req)
}

// cutPoint is how much of an answer a cut after n events passes: up to
// the end of its nth event, or half of a body that is not a stream.
func cutPoint(data []byte, n int, stream bool) int {
	if !stream {
		return len(data) / 2
	}
	c := &cutWriter{ResponseWriter: nowhere{}, events: n, bytes: -1}
	c.Write(data)
	if !c.cut {
		return len(data)
	}
	return c.passed
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// nowhere is a ResponseWriter that keeps nothing.
type nowhere struct{}

func (nowhere) Header() http.Header         { return http.Header{} }
func (nowhere) Write(p []byte) (int, error) { return len(p), nil }
func (nowhere) WriteHeader(int)             {}
