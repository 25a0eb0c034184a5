package engine

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// Sessions are the worlds of one suite served by `dryfire serve`, one a
// session: each explicit session (POST /sessions), each OpenEnv
// WebSocket (/ws) and, with PerMCPSession, each MCP session opened at
// /mcp gets its own drill — its world instance from the drill's build
// and seed, its own clock, evidence, record of calls and verdict — run
// exactly as an engine's drill is (runner.Host), under /sessions/ID/.
// reset, step and state are OpenEnv's shapes (docs/serving.md#sessions),
// the verdict and its sub-scores the reward. Sessions are bounded
// (SessionsOptions.Max) and end when idle (Idle).
type Sessions struct {
	ls     *loaded
	def    *spec.Case
	seed   *int64
	actor  string
	record cassette.Mode
	host   *runner.Host
	max    int
	idle   time.Duration
	perMCP bool
	now    func() time.Time
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	byID   map[string]*session
	byMCP  map[string]*session // by Mcp-Session-Id (PerMCPSession)
	ended  map[string]string   // id → why, the last RememberEnded
	order  []string
	next   int
	closed bool
	stop   chan struct{}
}

// SessionsOptions configure Sessions.
type SessionsOptions struct {
	// Suite is the suite file served: a world suite.
	Suite string
	// Case is the drill a session starts from when it names none; empty:
	// the suite's first.
	Case string
	// Seed and Actor are over the drill's, as serve's --seed and --actor.
	Seed  *int64
	Actor string
	// Record is the record mode of the sessions' model endpoints; Env the
	// environment keys and base URLs are read from.
	Record string
	Env    []string
	// Max bounds the sessions at once (DefaultMaxSessionWorlds when 0);
	// Idle ends a session after that long without a request
	// (DefaultSessionIdle when 0, never when negative).
	Max  int
	Idle time.Duration
	// PerMCPSession gives each MCP session opened at /mcp (2025-11-25
	// initialize) a world of its own; without it they share the
	// server's.
	PerMCPSession bool
}

// DefaultMaxSessionWorlds bounds the sessions of one serve.
const DefaultMaxSessionWorlds = 1000

// DefaultSessionIdle is how long a session may go without a request.
const DefaultSessionIdle = 30 * time.Minute

// MaxSteps bounds the steps of one episode.
const MaxSteps = 10_000

// session is one session's drill and its episode.
type session struct {
	id    string
	mu    sync.Mutex // one reset, step or end at a time
	run   *runner.Drill
	c     *spec.Case
	in    *world.Instance
	ep    string // the episode's id
	steps int
	final []byte // the verdict observation, once the episode is done
	score *float64
	mcpID string // its Mcp-Session-Id, when /mcp opened it
	used  atomic.Int64
}

// NewSessions loads the suite at opts.Suite and readies its sessions;
// none runs until asked for. The error is for a suite that is not a
// world suite, or does not load.
func NewSessions(opts SessionsOptions) (*Sessions, error) {
	path, err := filepath.Abs(opts.Suite)
	if err != nil {
		return nil, err
	}
	ls := load(path)
	if err := ls.usable(); err != nil {
		return nil, err
	}
	s := &Sessions{ls: ls, seed: opts.Seed, actor: opts.Actor, record: cassette.Mode(opts.Record), max: opts.Max, idle: cmp.Or(opts.Idle, DefaultSessionIdle), perMCP: opts.PerMCPSession,
		now: time.Now, byID: map[string]*session{}, byMCP: map[string]*session{}, ended: map[string]string{}, stop: make(chan struct{})}
	if s.max <= 0 {
		s.max = DefaultMaxSessionWorlds
	}
	if len(ls.names) == 0 {
		return nil, fmt.Errorf("%s has no drill (case) to start sessions from", opts.Suite)
	}
	name := cmp.Or(opts.Case, ls.names[0])
	if s.def = ls.cases[name]; s.def == nil {
		return nil, fmt.Errorf("no case %q in %s", name, opts.Suite)
	}
	if s.host, err = runner.NewHost("/sessions/", runner.Options{Record: cassette.Mode(opts.Record), Env: opts.Env}); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if s.idle > 0 {
		go s.expire()
	}
	return s, nil
}

// SetBase says where the server is reached (http://HOST:PORT).
func (s *Sessions) SetBase(base string) { s.host.SetBase(base) }

// PerMCPSession says whether each MCP session at /mcp has a world of
// its own.
func (s *Sessions) PerMCPSession() bool { return s.perMCP }

// Drill is the drill sessions start from when they name none.
func (s *Sessions) Drill() string { return s.def.Name }

// Close abandons every session.
func (s *Sessions) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.stop)
	all := slices.Collect(maps.Values(s.byID))
	clear(s.byID)
	clear(s.byMCP)
	s.mu.Unlock()
	s.cancel()
	for _, ss := range all {
		ss.run.Abandon()
	}
	s.host.Close()
}

// expire ends the sessions idle for longer than Idle, a few times per
// Idle, until Close.
func (s *Sessions) expire() {
	t := time.NewTicker(min(max(s.idle/4, 10*time.Millisecond), time.Minute))
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		cut := s.now().Add(-s.idle).UnixNano()
		var idle []*session
		s.mu.Lock()
		for id, ss := range s.byID {
			if ss.used.Load() <= cut {
				idle = append(idle, ss)
				s.forget(id, ss, fmt.Sprintf("it was idle for %s (serve --session-timeout)", s.idle))
			}
		}
		s.mu.Unlock()
		for _, ss := range idle {
			ss.mu.Lock()
			ss.run.Abandon()
			ss.mu.Unlock()
		}
	}
}

// forget removes a session, remembering why it ended (s.mu held).
func (s *Sessions) forget(id string, ss *session, why string) {
	delete(s.byID, id)
	if ss.mcpID != "" {
		delete(s.byMCP, ss.mcpID)
	}
	if len(s.order) < RememberEnded {
		s.order = append(s.order, id)
	} else {
		delete(s.ended, s.order[s.next])
		s.order[s.next] = id
		s.next = (s.next + 1) % RememberEnded
	}
	s.ended[id] = why
}

// startRequest of a session: POST /sessions, or reset.
type sessionStart struct {
	Case    string
	Seed    *int64
	Actor   string
	Episode string
}

var createKeys = []string{"case", "seed", "actor", "episode_id"}

// resetKeys are OpenEnv's ResetRequest's and dryfire's own.
var resetKeys = []string{"seed", "episode_id", "case", "actor"}

func parseSessionStart(body []byte, what string, keys []string) (*sessionStart, *apiError) {
	st := &sessionStart{}
	if len(bytes.TrimSpace(body)) == 0 || isNull(body) {
		return st, nil
	}
	m, aerr := object(body, what, keys)
	if aerr != nil {
		return nil, aerr
	}
	for i, dst := range []*string{&st.Case, &st.Actor, &st.Episode} {
		if *dst, aerr = str(m, []string{"case", "actor", "episode_id"}[i]); aerr != nil {
			return nil, aerr
		}
	}
	if len(st.Episode) > 255 {
		return nil, invalid("episode_id is at most 255 characters (OpenEnv's bound)")
	}
	if raw := m["seed"]; !isNull(raw) {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return nil, invalid("seed must be an integer (int64), not %s", string(raw))
		}
		st.Seed = &n
	}
	return st, nil
}

// begin starts a drill for ss: the case asked for (else the default),
// its world from the drill's setup and seed (the request's, else
// serve's, else the case's and the world's).
func (s *Sessions) begin(ss *session, st *sessionStart) *apiError {
	c := s.def
	if st.Case != "" {
		if c = s.ls.cases[st.Case]; c == nil {
			return &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("%s has no drill %q%s", s.ls.file, st.Case, cmp.Or(suggest.DidYouMean(st.Case, s.ls.names), "; its drills are "+strings.Join(quoted(s.ls.names), ", ")))}
		}
	}
	req := &startRequest{Seed: cmp.Or(st.Seed, s.seed), Actor: cmp.Or(st.Actor, s.actor)}
	in, err := newWorld(s.ls, c, req)
	if err != nil {
		if ae, ok := err.(*apiError); ok {
			return ae
		}
		return &apiError{http.StatusBadRequest, "INVALID_SETUP", err.Error()}
	}
	run, err := s.host.Start(runner.DrillSpec{Suite: s.ls.suite, SuiteWorld: s.ls.sw, Case: c, ID: ss.id, World: in, Record: s.record, OwnModel: true})
	if err != nil {
		return &apiError{http.StatusInternalServerError, "INTERNAL", "starting the session's drill: " + err.Error()}
	}
	ss.run, ss.c, ss.in = run, c, in
	ss.ep, ss.steps, ss.final, ss.score = cmp.Or(st.Episode, newID()), 0, nil, nil
	return nil
}

// create makes a session (POST /sessions, a WebSocket, an MCP
// session): room first, then its drill.
func (s *Sessions) create(st *sessionStart) (*session, *apiError) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, &apiError{http.StatusServiceUnavailable, "STOPPING", "serve is stopping"}
	}
	if len(s.byID) >= s.max {
		s.mu.Unlock()
		return nil, &apiError{http.StatusTooManyRequests, "TOO_MANY_SESSIONS", fmt.Sprintf("serve has %d sessions, its limit (serve --max-session-worlds, default %d): end sessions when done (DELETE /sessions/ID, close the WebSocket or MCP session); an idle one ends after serve --session-timeout (%s)", s.max, DefaultMaxSessionWorlds, s.idle)}
	}
	ss := &session{id: newID()}
	ss.used.Store(s.now().UnixNano())
	s.byID[ss.id] = ss
	s.mu.Unlock()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if aerr := s.begin(ss, st); aerr != nil {
		s.mu.Lock()
		delete(s.byID, ss.id)
		s.mu.Unlock()
		return nil, aerr
	}
	return ss, nil
}

// end abandons a session (DELETE, a WebSocket closed, an MCP session
// deleted).
func (s *Sessions) end(ss *session, why string) {
	s.mu.Lock()
	if s.byID[ss.id] == ss {
		s.forget(ss.id, ss, why)
	}
	s.mu.Unlock()
	ss.mu.Lock()
	ss.run.Abandon()
	ss.mu.Unlock()
}

// lookup is the running session id, touched; or why there is none.
func (s *Sessions) lookup(id string) (*session, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ss := s.byID[id]; ss != nil {
		ss.used.Store(s.now().UnixNano())
		return ss, nil
	}
	if why, ok := s.ended[id]; ok {
		return nil, &apiError{http.StatusGone, "SESSION_ENDED", fmt.Sprintf("session %s has ended: %s", id, why)}
	}
	return nil, &apiError{http.StatusNotFound, "UNKNOWN_SESSION", fmt.Sprintf("no session %q: POST /sessions makes one", id)}
}

// call answers a request to the session's own routes (its binding), as
// a client of it would get it.
func (s *Sessions) call(method, path string, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, bytes.NewReader(body))
	r.Host = "127.0.0.1"
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	w := httptest.NewRecorder()
	s.host.ServeHTTP(w, r)
	return w
}

// about is what POST /sessions and a reset both say of the session.
func (ss *session) about() map[string]any {
	return map[string]any{
		"session_id": ss.id,
		"episode_id": ss.ep,
		"drill":      ss.c.Name,
		"task":       ss.c.Input,
		"seed":       ss.in.Seed(),
		"build_hash": ss.in.Build().Hash,
	}
}
