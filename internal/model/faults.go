package model

// Declared faults: a case may answer chosen model requests with an error
// status, a dropped connection, a stream cut mid-way, or a delay, to see
// the agent's client do what it does against the real API (retry, back
// off, give up). Requests are counted as they arrive, retries included,
// so the same requests fail on every run. A fault never reaches the
// cassette: a request answered with an error status or a drop is not
// answered by the answerer at all, and the answer a cut came from is
// taken back (Answerer.Unanswer), so that the retry replays it whole, or
// in record mode is recorded in its place.

import (
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/pause"
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
		parts = append(parts, fmt.Sprintf("answered %d with Retry-After: %s s", f.Status, strconv.FormatFloat(f.RetryAfter.Seconds(), 'f', -1, 64)))
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

// Injected is a fault as it was served.
type Injected struct {
	Fault Fault
	API   string // Wire.String
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

// faults is the plan of one case and what it served.
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
func (fs *faults) arrive(c *Call) (*Fault, int) {
	if fs == nil {
		return nil, -1
	}
	sum := sha256.Sum256(c.Body)
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
	fs.served = append(fs.served, Injected{Fault: *f, API: c.Wire.String()})
	fs.sums = append(fs.sums, sum)
	return f, len(fs.served) - 1
}

func (fs *faults) injected() []Injected {
	if fs == nil {
		return nil
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return append([]Injected(nil), fs.served...)
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

// fault waits a fault's delay, then answers a status or a drop; nil: the
// call is answered (and perhaps cut) as usual.
func (r *Recorder) fault(c *Call, f *Fault) *Answer {
	if f.Delay > 0 {
		pause.For(c.HTTP.Context(), f.Delay)
	}
	switch {
	case f.Status != 0:
		// The error type its API gives the status, the wait in both
		// headers the SDKs read; no x-should-retry: the client decides
		// by the status, as it does with most real answers.
		a := c.Wire.Error(f.Status, ErrorInfo{Fault: true})
		if f.RetryAfter >= 0 {
			a.Header.Set("Retry-After", strconv.FormatFloat(math.Ceil(f.RetryAfter.Seconds()), 'f', -1, 64))
			a.Header.Set("Retry-After-Ms", strconv.FormatInt(f.RetryAfter.Milliseconds(), 10))
		}
		a.Fault = true
		return a
	case f.Drop:
		return &Answer{Drop: true, Fault: true, Cut: -1}
	}
	return nil
}

// cut cuts an answer after its first f.CutAfter stream events (a body
// that is no stream: half-way), unless it is shorter: then it goes out
// whole. A cut answer is taken back from the answerer and spent nothing.
func (r *Recorder) cut(c *Call, a *Answer, f *Fault, fi int) *Answer {
	data := a.Bytes()
	if a.Live != nil {
		buf, _ := io.ReadAll(a.Live)
		a.Live.Close()
		a.Ended(buf, nil)
		data = buf
	}
	keep := len(data) / 2
	if a.Streamed {
		keep = cutPoint(data, f.CutAfter)
	}
	r.faults.mu.Lock()
	r.faults.served[fi].Whole, r.faults.served[fi].Body = keep == len(data), !a.Streamed
	r.faults.mu.Unlock()
	out := *a
	out.Body, out.Events, out.Live, out.Cut = data, nil, nil, -1
	if keep == len(data) {
		return &out
	}
	r.ans.Unanswer(c)
	out.Cut, out.Fault, out.Usage = keep, true, Usage{}
	return &out
}

// cutPoint is how much of a stream a cut after n events passes: up to
// the end of its nth event (a blank line ends one), or all of it.
func cutPoint(data []byte, n int) int {
	var prev byte
	for i, b := range data {
		if n == 0 {
			return i
		}
		if b == '\n' && prev == '\n' {
			n--
		}
		if b != '\r' {
			prev = b
		}
	}
	return len(data)
}
