// Package cassette records a case's model HTTP exchanges into a file once
// and replays them after that, so that a suite runs with no network and
// the same way every time.
//
// A Recorder is the cassette of one case: depending on the mode it places
// each request in the recording (Begin) to be answered as recorded, or
// lets it go live and keeps what it got (Keep), to be written with Save.
// Requests are compared in a canonical form (see Rule): method, path and
// query, the headers that change the answer, and the parsed body; never
// the host, so a recording replays against any base URL. Streamed
// answers are kept as their events (see SplitEvents). The Answerer
// (answer.go) is the case's model answerer on it, for every agent.
package cassette

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Config configures the Recorder of one case.
type Config struct {
	Mode      Mode
	File      string // the cassette file
	SuiteFile string // the suite file, as the user named it
	// Root is the project root the cassette stays inside (CheckPath);
	// "": safeio.DefaultRoot of SuiteFile (of File without one).
	Root     string
	Case     string // the case name
	Provider string // names the canonicalisation rules (AnyAPI: each request its API's)
	// Live sends requests to the real API; nil means never (None).
	Live http.RoundTripper
	// Passthrough marks a case that runs passthrough code (impl): every
	// request goes live, and nothing is read or written.
	Passthrough bool
	// Secrets are replaced by REDACTED wherever they would be written
	// (header and query values, bodies).
	Secrets []string
	// LiveUnavailable, when set, says why no request may go live (a key
	// that is not set); a request that would is an error saying so.
	LiveUnavailable string
	// Rerecord, when set, says how to record the case again in a mode
	// (All; Once for a missing cassette), in messages and the cassette's
	// note; nil: the dryfire run command. A drill of a test's own agent
	// (the SDKs) is recorded by running its test again.
	Rerecord func(Mode) string
	// RecordedBy, with Rerecord, is the command that records and replays
	// the case ("dryfire serve": for an agent dryfire does not run), as
	// the cassette's note says; "": the SDKs' tests.
	RecordedBy string
	// Trials, above 1, is how often the case runs (--trials, trials:):
	// each trial has its cassette, and the command that records the case
	// again runs them all (--trials N).
	Trials int
	// Match are the declared matching rules: both the recorded and the
	// live request body go through them before they are compared (what
	// is recorded is the request as sent). Empty: bodies match exactly.
	Match []reqmatch.Rule
	// Section is the part of the file this recorder replays and writes:
	// the agent's interactions, or the model-driven user's. Saving one
	// part keeps the file's other.
	Section Section
	// DropUser, for the agent's section, drops the file's user part when
	// the cassette is saved: the case has no model-driven user any more.
	DropUser bool
}

// fix is how to record the case of cfg again in mode.
func (cfg *Config) fix(mode Mode) string {
	if cfg.Rerecord != nil {
		return cfg.Rerecord(mode)
	}
	cmd := rerecord(cfg.SuiteFile, cfg.Case) + cfg.trialsFlag()
	if mode != All {
		cmd = strings.Replace(cmd, "--record all", "--record "+string(mode), 1)
	}
	return cmd
}

// Recorder records and replays one case's model calls. It is an
// http.RoundTripper.
type Recorder struct {
	cfg   Config
	rules []Rule
	red   redactor
	set   *reqmatch.Set // the matching rules; nil: none

	mu        sync.Mutex
	tape      *Cassette     // the recording being replayed, if any
	next      int           // the next interaction of tape to replay
	live      bool          // requests go to the live API
	recording bool          // Save writes the cassette
	out       []Interaction // what Save writes
	outNum    []int         // the request number of each of out
	played    int
	recorded  int
	liveCalls int
	host      string // the live API's host, for the note
	problem   *ReplayError
	failure   error
	seen      [][]seenRequest // per interaction of tape: raw requests that matched it
	norm      []*normal       // per interaction of tape: its body after the matching rules, once computed
}

// Open prepares the recorder of one case, reading its cassette when the
// mode replays. The error is why the case cannot run: a missing cassette
// in None mode (*MissingError), a file that is not a cassette of this case
// (*FileError), a passthrough case in None mode (*PassthroughError), a
// cassette whose path leads outside the project root or through a
// symlink to nothing (*PathError: checked first, in every mode, so that
// nothing is read there, and no live call made whose answer could not be
// written).
func Open(cfg Config) (*Recorder, error) {
	r := &Recorder{cfg: cfg, rules: RulesFor(cfg.Provider), red: redact.New(cfg.Secrets)}
	set, err := reqmatch.Compile(cfg.Match)
	if err != nil {
		return nil, err
	}
	r.set = set
	if cfg.Passthrough {
		if cfg.Mode == None {
			return nil, &PassthroughError{}
		}
		r.live = true
		return r, nil
	}
	if err := CheckPath(cfg.root(), cfg.File); err != nil {
		return nil, err
	}
	var c *Cassette
	if cfg.Mode != All {
		var err error
		switch c, err = Load(cfg.File); {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return nil, err
		case c.Case != cfg.Case:
			return nil, &FileError{File: cfg.File, Msg: fmt.Sprintf("it was recorded for case %q, not %q (a case was renamed, or cases whose names give one file name were reordered)", c.Case, cfg.Case), Fix: cfg.fix(All)}
		case cfg.Section == UserSection && c.User == nil:
			c = nil // recorded before the case had a model-driven user
		case cfg.Section == UserSection:
			c = &Cassette{Suite: c.Suite, Case: c.Case, Note: c.Note, Rules: c.User.Rules, Interactions: c.User.Interactions}
		}
		if c == nil && cfg.Mode == None {
			return nil, &MissingError{File: cfg.File, SuiteFile: cfg.SuiteFile, Case: cfg.Case, Fix: cfg.fix(Once), Section: cfg.Section}
		}
	}
	r.tape = c
	r.live, r.recording = c == nil, c == nil || cfg.Mode == New
	return r, nil
}

// Load reads a cassette file. A file that is not a valid cassette is a
// *FileError naming it; a missing file is an error matching
// fs.ErrNotExist.
func Load(file string) (*Cassette, error) {
	data, err := safeio.ReadFile(file, "cassette", safeio.Limit(safeio.MaxData))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		msg := err.Error()
		if u := errors.Unwrap(err); u != nil {
			msg = u.Error()
		} else {
			msg = strings.TrimPrefix(msg, "cassette "+file+" ")
		}
		return nil, &FileError{File: file, Msg: "cannot be read: " + msg}
	}
	c, err := Unmarshal(data)
	if err != nil {
		return nil, &FileError{File: file, Msg: err.Error()}
	}
	return c, nil
}

// Exchange is one request of a case, as Begin placed it.
type Exchange struct {
	// Number is the request's place among the case's requests (1-based).
	Number int
	// Request is the request in canonical form, as it is stored.
	Request Request
	// Recorded is the recorded answer when the request is replayed; nil
	// when it must go to the live API (and its answer to Keep).
	Recorded *Response
	// Interaction is the index of the replayed interaction in the
	// cassette (-1 when the request goes live).
	Interaction int
}

// Begin places a request in the case: it canonicalises it and, while the
// mode replays, compares it with the recorded request in its place. The
// result answers it from the recording, or says that it goes live; the
// error is why it can do neither: a request that differs from the
// recording or goes beyond it (*ReplayError: the case strayed, and every
// later request gets the same error), or one that would go live where it
// may not (*LiveError). unavailable, when not empty, says why this request
// may not go live (it adds to Config.LiveUnavailable).
//
// Begin is what RoundTrip does first; a server that answers requests
// itself (the model endpoint) calls it, then Keep with a live answer.
func (r *Recorder) Begin(req *http.Request, body []byte, unavailable string) (*Exchange, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.problem != nil {
		return nil, r.problem
	}
	if r.failure != nil {
		return nil, r.failure
	}
	if !r.live {
		n := r.next + 1
		if r.next < len(r.seen) && slices.ContainsFunc(r.seen[r.next], func(s seenRequest) bool { return bytes.Equal(s.body, body) && s.head.is(req) }) {
			// The same bytes as a request that matched before match
			// again: no need to canonicalise them.
			return r.played1(r.tape.Interactions[r.next].Request), nil
		}
		now, cb := r.canonical(req, body)
		e := &ReplayError{Kind: Beyond}
		if r.next < len(r.tape.Interactions) {
			e.Kind = Mismatch
			if e.Diffs, e.More, e.Presets = compare(&r.tape.Interactions[r.next].Request, &now, cb, r.matchBodies(r.next, &cb)); len(e.Diffs) == 0 {
				r.remember(r.next, req, body)
				return r.played1(now), nil
			}
		} else {
			e.Diffs = []string{"request " + itoa(n) + ": " + now.Method + " " + now.Path}
		}
		if r.cfg.Mode != New {
			e.File, e.Section, e.SuiteFile, e.Case, e.Fix, e.Request, e.Recorded = r.cfg.File, r.cfg.Section, r.cfg.SuiteFile, r.cfg.Case, r.cfg.fix(All), n, len(r.tape.Interactions)
			r.problem = e
			return nil, e
		}
		// New: from the first request the recording does not answer on,
		// everything is recorded live.
		r.live = true
	}
	if why := cmp.Or(unavailable, r.cfg.LiveUnavailable); why != "" || r.cfg.Live == nil {
		why = cmp.Or(why, "this run never goes live")
		r.failure = &LiveError{File: r.cfg.File, Section: r.cfg.Section, Request: r.played + r.liveCalls + 1, Passthrough: r.cfg.Passthrough, Why: why}
		return nil, r.failure
	}
	now, _ := r.canonical(req, body)
	r.liveCalls++
	return &Exchange{Number: r.played + r.liveCalls, Request: now, Interaction: -1}, nil
}

// matchBodies applies the matching rules to the body of a request made
// now (in place: its stored bytes are kept as sent) and pairs it with
// recorded interaction i's, normalised once; nil without rules or when a
// body is not JSON. Call it with r.mu held.
func (r *Recorder) matchBodies(i int, cb *canonBody) *matched {
	if r.set == nil || !cb.json {
		return nil
	}
	rec := r.normalRecorded(i)
	if rec == nil {
		return nil
	}
	v, ap := r.set.Apply(cb.value)
	cb.value = v
	return &matched{rec: rec, nowAp: ap, nowBody: v}
}

// normalRecorded is recorded interaction i's body after the matching
// rules (nil when it is not JSON). Call it with r.mu held.
func (r *Recorder) normalRecorded(i int) *normal {
	if r.norm == nil {
		r.norm = make([]*normal, len(r.tape.Interactions))
	}
	if n := r.norm[i]; n != nil {
		return n
	}
	rq := &r.tape.Interactions[i].Request
	if !rq.JSON {
		return nil
	}
	v, ok := parseJSON(rq.Body)
	if !ok {
		return nil
	}
	v, ap := r.set.Apply(v)
	r.norm[i] = &normal{value: v, applied: ap}
	return r.norm[i]
}

// played1 replays the next interaction; now is the request as stored.
func (r *Recorder) played1(now Request) *Exchange {
	it := &r.tape.Interactions[r.next]
	x := &Exchange{Number: r.next + 1, Request: now, Recorded: &it.Response, Interaction: r.next}
	r.next++
	r.played++
	if r.recording {
		r.out = append(r.out, Interaction{Request: now, Response: it.Response})
		r.outNum = append(r.outNum, x.Number)
	}
	return x
}

// maxSeen bounds the raw forms of a request remembered per interaction.
const maxSeen = 4

// seenRequest is a request, as sent, that matched an interaction.
type seenRequest struct {
	head seenHead
	body []byte
}

func (r *Recorder) remember(i int, req *http.Request, body []byte) {
	if r.seen == nil {
		r.seen = make([][]seenRequest, len(r.tape.Interactions))
	}
	if len(r.seen[i]) < maxSeen {
		r.seen[i] = append(r.seen[i], seenRequest{headOf(req, i), slices.Clone(body)})
	}
}

// joinHeader is the values of matchHeaders[i] in h, joined.
func joinHeader(h http.Header, i int) string {
	vs := h[matchHeaderKeys[i]]
	switch len(vs) {
	case 0:
		return "\x00" // absent, unlike an empty value
	case 1:
		return vs[0]
	}
	return strings.Join(vs, ", ")
}

// Keep records the live answer to an exchange Begin sent live: its status,
// Content-Type and body as received (an event stream as its events).
// Answers a provider retries are not recorded; the retry is. host names
// the live API in the cassette's note.
func (r *Recorder) Keep(x *Exchange, host string, status int, contentType string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording || retried(status) {
		return
	}
	rs := Response{Status: status}
	if contentType != "" {
		rs.Header = map[string]string{"content-type": r.red.String(contentType)}
	}
	data = r.red.Bytes(slices.Clone(data))
	if wire.IsEventStream(contentType) {
		rs.Events = SplitEvents(data)
	} else {
		rs.Body = data
	}
	// In the order the requests came, whatever order their answers
	// ended in (a stream ends after the client has read it).
	i := len(r.out)
	for i > 0 && r.outNum[i-1] > x.Number {
		i--
	}
	if r.host == "" || i == 0 {
		r.host = host // the first request's
	}
	r.out = slices.Insert(r.out, i, Interaction{Request: x.Request, Response: rs})
	r.outNum = slices.Insert(r.outNum, i, x.Number)
	r.recorded++
}

// Unplay takes an exchange back, as if its request had never come: its
// answer did not reach the client whole (a declared fault cut it), so the
// client's next request takes its place. A replayed interaction is
// replayed again; a live answer kept for it is dropped.
func (r *Recorder) Unplay(x *Exchange) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if x.Interaction >= 0 && r.next != x.Interaction+1 {
		return // a later request was placed already
	}
	if x.Interaction >= 0 {
		r.next--
		r.played--
	}
	if i := slices.Index(r.outNum, x.Number); i >= 0 {
		r.out = slices.Delete(r.out, i, i+1)
		r.outNum = slices.Delete(r.outNum, i, i+1)
		if x.Interaction < 0 {
			r.recorded--
		}
	}
}

// Fail marks the case as failed by the infrastructure (an answer cut
// short, a refused key): nothing is saved, and later requests get err.
func (r *Recorder) Fail(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.failure == nil && r.problem == nil {
		r.failure = err
	}
}

// Cassette is the recording Open read to replay (nil when there was none
// or the mode records everything). It is shared: do not change it.
func (r *Recorder) Cassette() *Cassette { return r.tape }

// AddSecret adds a value to replace by REDACTED wherever it would be
// written (a key a client sent of its own, say).
func (r *Recorder) AddSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(s) < MinSecretLen || slices.Contains([]string(r.red), s) {
		return
	}
	r.red = redact.New(append(slices.Clone([]string(r.red)), s))
	r.seen = nil // what a request canonicalises to may change
}

// Reset starts the case again, as Open left it: the cassette read then is
// replayed from its first interaction, and what was recorded since and
// not saved, the counters and any problem or failure are dropped.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next, r.out, r.outNum, r.played, r.recorded, r.liveCalls, r.host = 0, nil, nil, 0, 0, 0, ""
	r.problem, r.failure = nil, nil
	r.live = r.tape == nil
}

// retried are the statuses a provider retries: such an answer is not
// recorded, the retry that follows is.
func retried(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		status == http.StatusConflict || status >= 500
}

// secretParams are query parameters that carry keys: never written.
var secretParams = []string{"key", "api-key", "api_key", "access_token", "token"}

// canonical is the request as it is stored and matched.
func (r *Recorder) canonical(req *http.Request, body []byte) (Request, canonBody) {
	path := cmp.Or(wire.CanonicalPath(req.URL.EscapedPath()), "/") // a Vertex AI path's project and location aside
	if q := req.URL.RawQuery; q != "" {
		if vals, err := url.ParseQuery(q); err == nil {
			for k, vs := range vals {
				for i := range vs {
					if slices.Contains(secretParams, strings.ToLower(k)) {
						vs[i] = Redacted
					} else {
						vs[i] = r.red.String(vs[i])
					}
				}
			}
			path += "?" + vals.Encode()
		} else {
			path += "?" + r.red.String(q)
		}
	}
	var h map[string]string
	for i, name := range matchHeaders {
		if vs := req.Header[matchHeaderKeys[i]]; len(vs) > 0 {
			if h == nil {
				h = map[string]string{}
			}
			h[name] = r.red.String(strings.Join(vs, ", "))
		}
	}
	rules := r.rules
	if r.cfg.Provider == AnyAPI {
		rules = forPath(rules, req.URL.Path)
	}
	cb := canonicalBody(body, rules, r.red)
	return Request{Method: req.Method, Path: path, Header: h, Body: cb.bytes, JSON: cb.json}, cb
}
