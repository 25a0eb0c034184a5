package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
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
	s := &Sessions{ls: ls, seed: opts.Seed, actor: opts.Actor, record: cassette.Mode(opts.Record), max: opts.Max, idle: opts.Idle, perMCP: opts.PerMCPSession,
		now: time.Now, byID: map[string]*session{}, byMCP: map[string]*session{}, ended: map[string]string{}, stop: make(chan struct{})}
	if s.max <= 0 {
		s.max = DefaultMaxSessionWorlds
	}
	if s.idle == 0 {
		s.idle = DefaultSessionIdle
	}
	if len(ls.names) == 0 {
		return nil, fmt.Errorf("%s has no drill (case) to start sessions from", opts.Suite)
	}
	name := opts.Case
	if name == "" {
		name = ls.names[0]
	}
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
	all := make([]*session, 0, len(s.byID))
	for _, ss := range s.byID {
		all = append(all, ss)
	}
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
	if st.Case, aerr = str(m, "case"); aerr != nil {
		return nil, aerr
	}
	if st.Actor, aerr = str(m, "actor"); aerr != nil {
		return nil, aerr
	}
	if st.Episode, aerr = str(m, "episode_id"); aerr != nil {
		return nil, aerr
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
			return &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("%s has no drill %q%s", s.ls.file, st.Case, didYouMean(st.Case, s.ls.names))}
		}
	}
	req := &startRequest{Seed: s.seed, Actor: s.actor}
	if st.Seed != nil {
		req.Seed = st.Seed
	}
	if st.Actor != "" {
		req.Actor = st.Actor
	}
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
	ss.ep, ss.steps, ss.final, ss.score = st.Episode, 0, nil, nil
	if ss.ep == "" {
		ss.ep = newID()
	}
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

// created is the answer of POST /sessions: the session and its URLs.
func (s *Sessions) created(ss *session) []byte {
	url := ss.run.URL()
	ans := map[string]any{
		"session_id": ss.id,
		"episode_id": ss.ep,
		"drill":      ss.c.Name,
		"task":       ss.c.Input,
		"seed":       ss.in.Seed(),
		"build_hash": ss.in.Build().Hash,
		"url":        url,
		"mcp_url":    url + "/mcp",
		"tools_url":  url + "/tools",
		"ops_url":    url + "/ops",
		"world_url":  url + "/world",
	}
	return marshal(ans)
}

// observation of a reset: the task and the tools, as a new episode.
func (s *Sessions) resetAnswer(ss *session) []byte {
	var tools any
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/tools", nil); w.Code == http.StatusOK {
		var t struct {
			Tools any `json:"tools"`
		}
		json.Unmarshal(w.Body.Bytes(), &t)
		tools = t.Tools
	}
	obs := map[string]any{
		"session_id": ss.id,
		"episode_id": ss.ep,
		"drill":      ss.c.Name,
		"task":       ss.c.Input,
		"seed":       ss.in.Seed(),
		"build_hash": ss.in.Build().Hash,
		"tools":      tools,
	}
	return marshal(map[string]any{"observation": obs, "reward": nil, "done": false})
}

// reset starts a new episode of the session: a new drill from its
// build and seed (the request's case and seed over the session's), the
// old one abandoned (its evidence and record go with it).
func (s *Sessions) reset(ss *session, body []byte) ([]byte, *apiError) {
	st, aerr := parseSessionStart(body, "reset", resetKeys)
	if aerr != nil {
		return nil, aerr
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if st.Case == "" {
		st.Case = ss.c.Name
	}
	old := ss.run
	old.Abandon()
	if aerr := s.begin(ss, st); aerr != nil {
		// The session has no drill now: it ends.
		s.mu.Lock()
		if s.byID[ss.id] == ss {
			s.forget(ss.id, ss, "its reset failed: "+aerr.message)
		}
		s.mu.Unlock()
		return nil, aerr
	}
	return s.resetAnswer(ss), nil
}

var stepKeys = []string{"action", "timeout_s", "request_id"}
var actionKeys = []string{"tool", "arguments", "answer", "metadata"}

// step takes one action: a tool call (its result the observation), or
// the answer that ends the episode (its verdict the observation, its
// score the reward).
func (s *Sessions) step(ss *session, body []byte) ([]byte, *apiError) {
	m, aerr := object(body, "step", stepKeys)
	if aerr != nil {
		return nil, aerr
	}
	if isNull(m["action"]) {
		return nil, invalid(`action is missing: {"action": {"tool": NAME, "arguments": {...}}} calls a tool, {"action": {"answer": TEXT}} ends the episode`)
	}
	return s.act(ss, m["action"])
}

// act takes one action (step's, or a WebSocket's step data).
func (s *Sessions) act(ss *session, raw json.RawMessage) ([]byte, *apiError) {
	a, aerr := object(raw, "an action", actionKeys)
	if aerr != nil {
		return nil, aerr
	}
	tool, aerr := str(a, "tool")
	if aerr != nil {
		return nil, aerr
	}
	_, answering := a["answer"]
	if (tool == "") == !answering {
		return nil, invalid(`an action is {"tool": NAME, "arguments": {...}} or {"answer": TEXT}, one of them`)
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.final != nil {
		return nil, &apiError{http.StatusConflict, "EPISODE_DONE", "the episode is done (its answer was given): reset the session for another"}
	}
	if ss.steps >= MaxSteps {
		return nil, &apiError{http.StatusConflict, "TOO_MANY_STEPS", fmt.Sprintf("the episode has taken %d steps, its bound: answer to end it, or reset", MaxSteps)}
	}
	ss.steps++
	if answering {
		output := ""
		if raw := a["answer"]; !isNull(raw) {
			if err := json.Unmarshal(raw, &output); err != nil {
				output = string(raw)
			}
		}
		c := ss.run.End(s.ctx, output, nil)
		obs, score := verdictOf(&c)
		ss.final, ss.score = obs, &score
		return marshal(map[string]any{"observation": json.RawMessage(obs), "reward": score, "done": true}), nil
	}
	args := a["arguments"]
	if isNull(args) {
		args = json.RawMessage("{}")
	}
	w := s.call(http.MethodPost, "/sessions/"+ss.id+"/tools/"+escapeSegment(tool), args)
	var res struct {
		Content json.RawMessage `json:"content"`
		IsError bool            `json:"is_error"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &res) != nil {
		return nil, &apiError{w.Code, "TOOL_CALL", strings.TrimSpace(w.Body.String())}
	}
	obs := map[string]any{"tool": tool, "content": res.Content, "is_error": res.IsError}
	return marshal(map[string]any{"observation": obs, "reward": nil, "done": false}), nil
}

func escapeSegment(s string) string {
	return strings.NewReplacer("%", "%25", "/", "%2F", "?", "%3F", "#", "%23").Replace(s)
}

// verdictOf is the observation of an episode's end, and its reward:
// the mean of its checks' scores (a judge's score where it gave one,
// else 1 passed and 0 failed), 1 or 0 for a drill without checks.
func verdictOf(c *report.Case) ([]byte, float64) {
	verdict := "failed"
	if c.Status == report.Passed {
		verdict = "passed"
	}
	type sub struct {
		Check   string  `json:"check"`
		At      string  `json:"at"`
		Passed  bool    `json:"passed"`
		Score   float64 `json:"score"`
		Message string  `json:"message"`
	}
	subs := make([]sub, 0, len(c.Checks))
	total := 0.0
	for _, ch := range c.Checks {
		sc := 0.0
		switch {
		case ch.Judge != nil && ch.Judge.Score != nil:
			sc = *ch.Judge.Score
		case ch.Passed:
			sc = 1
		}
		total += sc
		subs = append(subs, sub{ch.Check, ch.At, ch.Passed, sc, ch.Message})
	}
	score := 0.0
	switch {
	case c.Status != report.Passed && c.Status != report.Failed:
		score = 0 // erred or skipped: no verdict to score
	case len(subs) > 0:
		score = total / float64(len(subs))
	case c.Status == report.Passed:
		score = 1
	}
	seed := int64(0)
	if c.Seed != nil {
		seed = *c.Seed
	}
	return marshal(map[string]any{
		"verdict":    verdict,
		"status":     c.Status,
		"score":      score,
		"checks":     subs,
		"failures":   failures(c, nil),
		"seed":       seed,
		"build_hash": c.BuildHash,
		"evidence":   len(c.Evidence),
	}), score
}

// state is the session's state: the episode, its steps, the world's
// clock and state, and the verdict once it is done (OpenEnv's State:
// episode_id and step_count, and more).
func (s *Sessions) state(ss *session) []byte {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ans := map[string]any{
		"episode_id": ss.ep,
		"step_count": ss.steps,
		"session_id": ss.id,
		"drill":      ss.c.Name,
		"seed":       ss.in.Seed(),
		"done":       ss.final != nil,
	}
	if ss.final != nil {
		ans["verdict"] = json.RawMessage(ss.final)
		return marshal(ans)
	}
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/world/state", nil); w.Code == http.StatusOK {
		ans["state"] = json.RawMessage(w.Body.Bytes())
	}
	if w := s.call(http.MethodGet, "/sessions/"+ss.id+"/world/clock", nil); w.Code == http.StatusOK {
		var c struct {
			Now string `json:"now"`
		}
		json.Unmarshal(w.Body.Bytes(), &c)
		ans["now"] = c.Now
	}
	return marshal(ans)
}

// ServeHTTP serves the session routes, and hands every other request to
// next (the server's own world): POST /sessions, /sessions/ID/reset,
// step and state, DELETE /sessions/ID, every other /sessions/ID/ route
// to the session's binding, GET /ws, and /mcp per session.
func (s *Sessions) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := r.URL.Path
		switch {
		case path == "/sessions" || path == "/sessions/":
			if !toolserver.Allowed(w, r) {
				return
			}
			if r.Method != http.MethodPost {
				methodNotAllowed(w, r, "POST")
				return
			}
			respond(w, r, http.StatusCreated, func(body []byte) ([]byte, error) {
				st, aerr := parseSessionStart(body, "POST /sessions", createKeys)
				if aerr != nil {
					return nil, aerr
				}
				ss, aerr := s.create(st)
				if aerr != nil {
					return nil, aerr
				}
				return s.created(ss), nil
			})
		case strings.HasPrefix(path, "/sessions/"):
			if !toolserver.Allowed(w, r) {
				return
			}
			s.serveSession(w, r, path[len("/sessions/"):])
		case path == "/ws":
			if !toolserver.Allowed(w, r) {
				return
			}
			s.serveWS(w, r)
		case path == "/mcp" && s.perMCP:
			if !toolserver.Allowed(w, r) {
				return
			}
			s.serveMCP(w, r, next)
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// serveSession serves /sessions/ID/...: the OpenEnv routes, DELETE, and
// the session's binding.
func (s *Sessions) serveSession(w http.ResponseWriter, r *http.Request, rest string) {
	id, sub, _ := strings.Cut(rest, "/")
	ss, aerr := s.lookup(id)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	route := func(method string, status int, f func([]byte) ([]byte, *apiError)) {
		if r.Method != method {
			methodNotAllowed(w, r, method)
			return
		}
		respond(w, r, status, func(body []byte) ([]byte, error) {
			ans, aerr := f(body)
			if aerr != nil {
				return nil, aerr
			}
			return ans, nil
		})
	}
	switch sub {
	case "":
		if r.Method != http.MethodDelete {
			methodNotAllowed(w, r, "DELETE")
			return
		}
		s.end(ss, "it was deleted (DELETE /sessions/ID)")
		w.WriteHeader(http.StatusNoContent)
	case "reset":
		route(http.MethodPost, http.StatusOK, func(body []byte) ([]byte, *apiError) { return s.reset(ss, body) })
	case "step":
		route(http.MethodPost, http.StatusOK, func(body []byte) ([]byte, *apiError) { return s.step(ss, body) })
	case "state":
		route(http.MethodGet, http.StatusOK, func([]byte) ([]byte, *apiError) { return s.state(ss), nil })
	default:
		s.host.ServeHTTP(w, r)
	}
}

// serveMCP gives each MCP session opened at /mcp a session of its own:
// an initialize without a session starts one and is answered by its
// drill's MCP endpoint, whose Mcp-Session-Id then routes the session's
// requests there (its id in the Dryfire-Session-Id header too). A
// request of no session (2026-07-28, or without Mcp-Session-Id) is the
// server's own world's.
func (s *Sessions) serveMCP(w http.ResponseWriter, r *http.Request, next http.Handler) {
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" {
		s.mu.Lock()
		ss := s.byMCP[sid]
		if ss != nil {
			ss.used.Store(s.now().UnixNano())
		}
		s.mu.Unlock()
		if ss == nil {
			next.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Dryfire-Session-Id", ss.id)
		s.host.ServeHTTP(w, withPath(r, "/sessions/"+ss.id+"/mcp"))
		if r.Method == http.MethodDelete {
			s.end(ss, "its MCP session was deleted")
		}
		return
	}
	if r.Method != http.MethodPost {
		next.ServeHTTP(w, r)
		return
	}
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if !isInitialize(body) {
		next.ServeHTTP(w, r)
		return
	}
	ss, aerr := s.create(&sessionStart{})
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("Dryfire-Session-Id", ss.id)
	rec := &headerCatch{ResponseWriter: w}
	s.host.ServeHTTP(rec, withPath(r, "/sessions/"+ss.id+"/mcp"))
	if mid := rec.Header().Get("Mcp-Session-Id"); mid != "" {
		s.mu.Lock()
		if s.byID[ss.id] == ss {
			ss.mcpID = mid
			s.byMCP[mid] = ss
		}
		s.mu.Unlock()
	} else {
		s.end(ss, "its initialize was not answered with a session")
	}
}

// headerCatch lets the answer's headers be read once it is written.
type headerCatch struct{ http.ResponseWriter }

func (h *headerCatch) Flush() {
	if f, ok := h.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func withPath(r *http.Request, path string) *http.Request {
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, ""
	return r2
}

// isInitialize says whether a JSON-RPC body is an initialize request
// (alone, or in a batch).
func isInitialize(body []byte) bool {
	var one struct {
		Method string `json:"method"`
	}
	if json.Unmarshal(body, &one) == nil {
		return one.Method == "initialize"
	}
	var batch []struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(body, &batch) == nil && slices.ContainsFunc(batch, func(m struct {
		Method string `json:"method"`
	}) bool {
		return m.Method == "initialize"
	})
}

func didYouMean(s string, names []string) string {
	if hint := suggest.DidYouMean(s, names); hint != "" {
		return hint
	}
	return "; its drills are " + strings.Join(quoted(names), ", ")
}
