// Package cassette records a case's model HTTP exchanges into a file once
// and replays them after that, so that a suite runs with no network and
// the same way every time.
//
// An Answerer is the cassette of one case, one of the model call's
// answerers (model.Answerer): as the mode says, it answers each call from
// the recording (compared with the recorded request in its place, or
// found by its content), or sends it live through the case's one live
// client (wire.Live) and keeps what it got, for Save to write. Requests
// are compared in a canonical form (see Rule): method, path and query,
// the headers that change the answer, and the parsed body; never the
// host, so a recording replays against any base URL. Streamed answers are
// kept as their events (see SplitEvents).
package cassette

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"slices"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// Config configures the cassette of one case.
type Config struct {
	Mode      Mode
	File      string // the cassette file
	SuiteFile string // the suite file, as the user named it
	// Root is the project root the cassette stays inside (CheckPath);
	// "": safeio.DefaultRoot of SuiteFile (of File without one).
	Root     string
	Case     string // the case name
	Provider string // names the canonicalisation rules (AnyAPI: each request its API's)
	// Live is the case's one live client; nil: nothing goes live.
	Live *wire.Live
	// ByContent answers each replayed request with the recorded
	// interaction whose request, in canonical form, equals it, in any
	// order, instead of the Nth request of the case with the Nth
	// interaction: for a server that several clients replay one
	// conversation against at once (dryfire serve). A request sent twice
	// is answered twice, by the same interaction; a request no interaction
	// answers is refused, naming the closest one, and changes nothing for
	// the requests after it (in order, the case has strayed and every
	// later request is refused too); nothing is reported unplayed. It
	// applies while a cassette read is replayed in mode none or once; in
	// modes new and all, and in once with no cassette yet, requests are
	// taken in order as they come.
	ByContent bool
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
	// Section is the part of the file this cassette replays and writes:
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

// Answerer answers one case's model calls from its cassette (a
// model.Answerer). It is safe for concurrent use.
type Answerer struct {
	cfg     Config
	rules   []Rule
	set     *reqmatch.Set  // the matching rules; nil: none
	tape    *Cassette      // the recording replayed; nil: none
	answers []model.Answer // per interaction of tape, ready to write
	index   *index         // answers by content; nil: in order
	flight  sync.WaitGroup // live answers still passing

	mu       sync.Mutex
	red      redactor
	next     int           // the next interaction of tape to replay
	live     bool          // calls go live
	records  bool          // Save writes what is kept
	out      []Interaction // what Save writes
	outN     []int         // the call number (model.Call.N) of each of out
	played   int
	recorded int
	sent     int
	host     string // the live API's host, for the note
	problem  *ReplayError
	failure  error
	seen     [][]seenRequest // per interaction of tape: raw requests that matched it
	norm     []*normal       // per interaction of tape: its body after the matching rules, once computed
}

// Open prepares the cassette of one case, reading it when the mode
// replays; coalesce writes a recorded stream in one piece
// (model.Answer.Coalesce). The error is why the case cannot run: a
// missing cassette in None mode (*MissingError), a file that is not a
// cassette of this case (*FileError), a passthrough case in None mode
// (*PassthroughError), a cassette whose path leads outside the project
// root or through a symlink to nothing (*PathError: checked first, in
// every mode, so that nothing is read there, and no live call made whose
// answer could not be written).
func Open(cfg Config, coalesce bool) (*Answerer, error) {
	a := &Answerer{cfg: cfg, rules: RulesFor(cfg.Provider), red: redact.New(cfg.Secrets)}
	set, err := reqmatch.Compile(cfg.Match)
	if err != nil {
		return nil, err
	}
	a.set = set
	if cfg.Passthrough {
		if cfg.Mode == None {
			return nil, &PassthroughError{}
		}
		a.live = true
		return a, nil
	}
	if err := CheckPath(cfg.root(), cfg.File); err != nil {
		return nil, err
	}
	var c *Cassette
	if cfg.Mode != All {
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
			return nil, &MissingError{File: cfg.File, Fix: cfg.fix(Once), Section: cfg.Section}
		}
	}
	a.tape, a.live, a.records = c, c == nil, c == nil || cfg.Mode == New
	if c == nil {
		return a, nil
	}
	a.answers = make([]model.Answer, len(c.Interactions))
	for i := range c.Interactions {
		it := &c.Interactions[i]
		rs, ans := &it.Response, &a.answers[i]
		*ans = *model.NewAnswer(rs.Status, rs.Header["content-type"], rs.Body, rs.Events)
		ans.Replayed, ans.Usage = true, wire.APIOf(it.Request.Path).Usage(ans)
		if coalesce {
			ans.Coalesce()
		}
	}
	if cfg.ByContent && (cfg.Mode == None || cfg.Mode == Once) {
		a.index = a.newIndex()
	}
	return a, nil
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

// Replaying says whether a cassette read is replayed (else every call is
// recorded); ByContent, whether by content.
func (a *Answerer) Replaying() bool { return a.tape != nil }
func (a *Answerer) ByContent() bool { return a.index != nil }

// Answer implements model.Answerer: the recorded answer (found in order,
// place, or by content, find), else the live one, kept once it has
// passed whole. The error is why it can be neither: a request that
// differs from the recording or goes beyond it (*ReplayError: in order,
// the case strayed, and every later request gets the same error), or one
// that would go live where it may not (*LiveError).
func (a *Answerer) Answer(c *model.Call) (*model.Answer, error) {
	var i int
	var err error
	if a.index != nil {
		i, err = a.find(c)
	} else {
		i, err = a.place(c)
	}
	switch {
	case err != nil:
		return nil, err
	case i >= 0:
		return &a.answers[i], nil
	}
	a.flight.Add(1)
	ans := a.cfg.Live.Answer(c)
	if ans.Err != nil {
		a.flight.Done()
		return ans, nil
	}
	ans.Ended = func(data []byte, err error) {
		defer a.flight.Done()
		a.keep(c, ans, data, err)
		read := &model.Answer{Body: data}
		if ans.Streamed {
			read = &model.Answer{Events: SplitEvents(data)}
		}
		ans.Usage = c.Wire.Usage(read)
	}
	if ans.Live == nil {
		ans.Ended(ans.Body, nil)
	}
	return ans, nil
}

// keep records a live answer as it passed: its status, Content-Type and
// body (an event stream as its events), redacted, in the order the calls
// came whatever order their answers ended in (a stream ends after the
// client has read it). An answer the SDKs retry (429, 5xx, …) is not
// kept, the retry is; a refused key (401, 403) or a stream cut short
// fails the case: nothing is saved, and later calls are refused.
func (a *Answerer) keep(c *model.Call, ans *model.Answer, data []byte, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case err != nil:
		a.fail(fmt.Errorf("the streamed answer of %s was cut short: %v", ans.From, err))
		return
	case ans.Status == http.StatusUnauthorized || ans.Status == http.StatusForbidden:
		s := strings.TrimSpace(string(data))
		if len(s) > 300 {
			s = s[:300] + "…"
		}
		a.fail(fmt.Errorf("%s refused the key (%d): %s", ans.From, ans.Status, s))
		return
	case !a.records || retried(ans.Status):
		return
	}
	rs := Response{Status: ans.Status}
	if ct := ans.Header.Get("Content-Type"); ct != "" {
		rs.Header = map[string]string{"content-type": a.red.String(ct)}
	}
	data = a.red.Bytes(slices.Clone(data))
	if wire.IsEventStream(ans.Header.Get("Content-Type")) {
		rs.Events = SplitEvents(data)
	} else {
		rs.Body = data
	}
	i := len(a.out)
	for i > 0 && a.outN[i-1] > c.N {
		i--
	}
	if a.host == "" || i == 0 {
		a.host = ans.From // the first request's
	}
	now, _ := a.canonical(c.HTTP, c.Body)
	a.out = slices.Insert(a.out, i, Interaction{Request: now, Response: rs})
	a.outN = slices.Insert(a.outN, i, c.N)
	a.recorded++
}

// fail marks the case as failed by the infrastructure, unless it failed
// already. Call it with a.mu held.
func (a *Answerer) fail(err error) {
	if a.failure == nil && a.problem == nil {
		a.failure = err
	}
}

// retried are the statuses a provider retries: such an answer is not
// recorded, the retry that follows is.
func retried(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout ||
		status == http.StatusConflict || status >= 500
}

// Unanswer implements model.Answerer: the call is taken back, as if it
// had never come (a declared fault cut its answer, so the client's next
// request takes its place). A replayed interaction is replayed again,
// unless a later call was placed already; a live answer kept is dropped.
func (a *Answerer) Unanswer(c *model.Call) {
	a.mu.Lock()
	defer a.mu.Unlock()
	i, replayed := c.Placed.(int)
	if replayed && a.next != i+1 {
		return
	}
	if replayed {
		a.next--
		a.played--
	}
	if k := slices.Index(a.outN, c.N); k >= 0 {
		a.out = slices.Delete(a.out, k, k+1)
		a.outN = slices.Delete(a.outN, k, k+1)
		if !replayed {
			a.recorded--
		}
	}
}

// End implements model.Answerer, once the live answers have passed: a
// request that strayed, why one could not go live, recorded interactions
// the case did not ask for (in order only), and the counts.
func (a *Answerer) End(o *model.Outcome) {
	a.flight.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.problem != nil {
		o.Replay = a.problem
	}
	o.Live = a.failure
	if a.index == nil && o.Replay == nil && o.Live == nil {
		if u := a.unplayed(); u != nil {
			o.Unplayed = u
		}
	}
	o.Played, o.Recorded, o.Sent = a.played, a.recorded, a.sent
}

// Reset implements model.Answerer: the cassette read is replayed again
// from its first interaction; what was recorded since and not saved, the
// counts and any problem or failure are dropped.
func (a *Answerer) Reset() {
	a.flight.Wait()
	a.mu.Lock()
	defer a.mu.Unlock()
	a.next, a.out, a.outN, a.played, a.recorded, a.sent, a.host = 0, nil, nil, 0, 0, 0, ""
	a.problem, a.failure = nil, nil
	a.live = a.tape == nil
}
