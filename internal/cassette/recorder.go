// Package cassette records a case's model HTTP exchanges into a file once
// and replays them after that, so that a suite runs with no network and
// the same way every time.
//
// A Recorder is the http.RoundTripper of one case. Depending on the mode it
// replays the case's cassette, request by request in order, or sends the
// requests to the live API and keeps what they got, to be written with
// Save. Requests are compared in a canonical form (see Rule): method, path
// and query, the headers that change the answer, and the parsed body; never
// the host, so a recording replays against any base URL.
package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
)

// Mode says when a case's model calls are recorded and when replayed.
type Mode string

const (
	// None replays only and never opens a connection; a missing cassette
	// is an error. The default when the CI environment variable is set.
	None Mode = "none"
	// Once replays a case's cassette when it exists, else records one.
	// The default otherwise.
	Once Mode = "once"
	// New replays the recorded calls while they match and records the
	// rest live, updating the cassette.
	New Mode = "new"
	// All records every call live and overwrites the cassette.
	All Mode = "all"
)

// Modes are the modes, in the order help lists them.
var Modes = []Mode{None, Once, New, All}

// ParseMode reads a --record value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown record mode %q: want none, once, new or all", s)
}

// DefaultMode is None when the environment variable CI is set to anything,
// else Once.
func DefaultMode(getenv func(string) string) Mode {
	if getenv("CI") != "" {
		return None
	}
	return Once
}

// MinSecretLen is the shortest environment value treated as a secret.
const MinSecretLen = 8

// SecretsFromEnv are the values (at least MinSecretLen long) of the
// environment variables whose name contains KEY, TOKEN, SECRET or
// PASSWORD: they are written nowhere.
func SecretsFromEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < MinSecretLen {
			continue
		}
		uk := strings.ToUpper(k)
		for _, w := range []string{"KEY", "TOKEN", "SECRET", "PASSWORD"} {
			if strings.Contains(uk, w) {
				out = append(out, v)
				break
			}
		}
	}
	return out
}

// Config configures the Recorder of one case.
type Config struct {
	Mode      Mode
	File      string // the cassette file
	SuiteFile string // the suite file, as the user named it
	Case      string // the case name
	Provider  string // names the canonicalisation rules
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
}

// Recorder records and replays one case's model calls. It is an
// http.RoundTripper.
type Recorder struct {
	cfg   Config
	rules []Rule
	red   redactor

	mu        sync.Mutex
	tape      *Cassette     // the recording being replayed, if any
	next      int           // the next interaction of tape to replay
	live      bool          // requests go to the live API
	recording bool          // Save writes the cassette
	out       []Interaction // what Save writes
	played    int
	recorded  int
	liveCalls int
	host      string // the live API's host, for the note
	problem   *ReplayError
	failure   error
}

// Open prepares the recorder of one case, reading its cassette when the
// mode replays. The error is why the case cannot run: a missing cassette
// in None mode (*MissingError), a file that is not a cassette of this case
// (*FileError), a passthrough case in None mode (*PassthroughError).
func Open(cfg Config) (*Recorder, error) {
	r := &Recorder{cfg: cfg, rules: RulesFor(cfg.Provider), red: newRedactor(cfg.Secrets)}
	if cfg.Passthrough {
		if cfg.Mode == None {
			return nil, &PassthroughError{}
		}
		r.live = true
		return r, nil
	}
	if cfg.Mode == All {
		r.live, r.recording = true, true
		return r, nil
	}
	c, err := Load(cfg.File)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if cfg.Mode == None {
			return nil, &MissingError{File: cfg.File, SuiteFile: cfg.SuiteFile, Case: cfg.Case}
		}
		r.live, r.recording = true, true
		return r, nil
	case err != nil:
		return nil, err
	}
	if c.Case != cfg.Case {
		return nil, &FileError{File: cfg.File, Msg: fmt.Sprintf("it was recorded for case %q, not %q (a case was renamed, or cases whose names give one file name were reordered)", c.Case, cfg.Case), Fix: rerecord(cfg.SuiteFile, cfg.Case)}
	}
	r.tape = c
	r.recording = cfg.Mode == New
	return r, nil
}

// Load reads a cassette file. A file that is not a valid cassette is a
// *FileError naming it; a missing file is an error matching
// fs.ErrNotExist.
func Load(file string) (*Cassette, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, &FileError{File: file, Msg: "cannot be read: " + errors.Unwrap(err).Error()}
	}
	c, err := Unmarshal(data)
	if err != nil {
		return nil, &FileError{File: file, Msg: err.Error()}
	}
	return c, nil
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.problem != nil {
		return nil, r.problem
	}
	if r.failure != nil {
		return nil, r.failure
	}
	now, cb := r.canonical(req, body)
	if !r.live {
		n := r.next + 1
		if r.next < len(r.tape.Interactions) {
			it := &r.tape.Interactions[r.next]
			diffs, more := compare(&it.Request, &now, cb)
			if len(diffs) == 0 {
				r.next++
				r.played++
				if r.recording {
					r.out = append(r.out, Interaction{Request: now, Response: it.Response})
				}
				return response(req, &it.Response), nil
			}
			if r.cfg.Mode != New {
				r.problem = &ReplayError{Kind: Mismatch, File: r.cfg.File, SuiteFile: r.cfg.SuiteFile, Case: r.cfg.Case,
					Request: n, Recorded: len(r.tape.Interactions), Diffs: diffs, More: more}
				return nil, r.problem
			}
		} else if r.cfg.Mode != New {
			r.problem = &ReplayError{Kind: Beyond, File: r.cfg.File, SuiteFile: r.cfg.SuiteFile, Case: r.cfg.Case,
				Request: n, Recorded: len(r.tape.Interactions), Diffs: []string{"request " + itoa(n) + ": " + now.Method + " " + now.Path}}
			return nil, r.problem
		}
		// New: from the first request the recording does not answer on,
		// everything is recorded live.
		r.live = true
	}
	if r.cfg.LiveUnavailable != "" || r.cfg.Live == nil {
		why := r.cfg.LiveUnavailable
		if why == "" {
			why = "this run never goes live"
		}
		r.failure = &LiveError{File: r.cfg.File, Request: len(r.out) + 1, Passthrough: r.cfg.Passthrough, Why: why}
		return nil, r.failure
	}
	return r.goLive(req, body, now)
}

// goLive sends the request to the live API and keeps its answer.
func (r *Recorder) goLive(req *http.Request, body []byte, now Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.ContentLength = int64(len(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.liveCalls++
	resp, err := r.cfg.Live.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	resp.ContentLength = int64(len(data))
	resp.Header.Del("Content-Encoding")
	if r.recording && !retried(resp.StatusCode) {
		if r.host == "" {
			r.host = req.URL.Hostname()
		}
		rs := Response{Status: resp.StatusCode, Body: r.red.bytes(slices.Clone(data))}
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			rs.Header = map[string]string{"content-type": r.red.string(ct)}
		}
		r.out = append(r.out, Interaction{Request: now, Response: rs})
		r.recorded++
	}
	return resp, nil
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
	path := req.URL.EscapedPath()
	if path == "" {
		path = "/"
	}
	if q := req.URL.RawQuery; q != "" {
		if vals, err := url.ParseQuery(q); err == nil {
			for k, vs := range vals {
				for i := range vs {
					if slices.Contains(secretParams, strings.ToLower(k)) {
						vs[i] = Redacted
					} else {
						vs[i] = r.red.string(vs[i])
					}
				}
			}
			path += "?" + vals.Encode()
		} else {
			path += "?" + r.red.string(q)
		}
	}
	var h map[string]string
	for _, name := range matchHeaders {
		if vs := req.Header.Values(name); len(vs) > 0 {
			if h == nil {
				h = map[string]string{}
			}
			h[name] = r.red.string(strings.Join(vs, ", "))
		}
	}
	cb := canonicalBody(body, r.rules, r.red)
	return Request{Method: req.Method, Path: path, Header: h, Body: cb.bytes, JSON: cb.json}, cb
}

func response(req *http.Request, rs *Response) *http.Response {
	h := make(http.Header, len(rs.Header)+1)
	for k, v := range rs.Header {
		h.Set(k, v)
	}
	return &http.Response{
		Status:        itoa(rs.Status) + " " + http.StatusText(rs.Status),
		StatusCode:    rs.Status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(rs.Body)),
		ContentLength: int64(len(rs.Body)),
		Request:       req,
	}
}

// Problem is the replay problem that failed the case (a request that
// differs from the recording or goes beyond it), or nil.
func (r *Recorder) Problem() *ReplayError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.problem
}

// Failure is why a request could not go live (a missing key), or nil.
func (r *Recorder) Failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

// Unplayed reports recorded interactions the case did not ask for, once
// it has finished: the agent made fewer model calls than when it was
// recorded. Nil when every interaction was played (or when the case went
// live in New mode).
func (r *Recorder) Unplayed() *ReplayError {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.problem != nil || r.tape == nil || r.live || r.next >= len(r.tape.Interactions) {
		return nil
	}
	e := &ReplayError{Kind: Unplayed, File: r.cfg.File, SuiteFile: r.cfg.SuiteFile, Case: r.cfg.Case,
		Request: r.next + 1, Recorded: len(r.tape.Interactions)}
	for i := r.next; i < len(r.tape.Interactions); i++ {
		if len(e.Diffs) == maxDiffs {
			e.More = len(r.tape.Interactions) - i
			break
		}
		rq := &r.tape.Interactions[i].Request
		e.Diffs = append(e.Diffs, "interaction "+itoa(i+1)+": "+rq.Method+" "+rq.Path)
	}
	r.problem = e
	return e
}

// Stats are the interactions replayed, those recorded live, and every
// request that went live (recorded or not).
func (r *Recorder) Stats() (played, recorded, live int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.played, r.recorded, r.liveCalls
}

// Save writes the cassette when this case records one and something new
// was recorded: atomically, so that a reader or a crash never sees half a
// file. Call it only for a case that finished (not one interrupted, nor
// one the infrastructure failed). It reports whether the file was
// written; a file that already holds exactly these bytes is left alone.
func (r *Recorder) Save() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.recording || r.cfg.Passthrough || r.problem != nil || r.failure != nil || !r.live {
		return false, nil
	}
	c := &Cassette{
		Suite:        filepath.Base(r.cfg.SuiteFile),
		Case:         r.cfg.Case,
		Note:         r.note(),
		Rules:        r.rules,
		Interactions: r.out,
	}
	data := c.Marshal()
	if old, err := os.ReadFile(r.cfg.File); err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err := os.MkdirAll(filepath.Dir(r.cfg.File), 0o755); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	if err := atomicfile.Write(r.cfg.File, data, 0o644); err != nil {
		return false, fmt.Errorf("writing the cassette: %w", err)
	}
	return true, nil
}

func (r *Recorder) note() string {
	from := "the live API"
	if r.host != "" {
		from = r.host
	}
	return "Recorded by dryfire from " + from + "; dryfire run replays it offline. To re-record, in the suite's directory: " +
		rerecord(filepath.Base(r.cfg.SuiteFile), r.cfg.Case)
}

// rerecord is the command that records one case again.
func rerecord(suiteFile, name string) string {
	return "dryfire run " + shellQuote(suiteFile) + " --filter " + shellQuote("^"+regexp.QuoteMeta(name)+"$") + " --record all"
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+=,-]+$`)

// shellQuote quotes s for a POSIX shell when it needs it; a filter is
// always quoted.
func shellQuote(s string) string {
	if shellSafe.MatchString(s) && !strings.HasPrefix(s, "-") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
