// Package engine is `dryfire engine`: one long-lived process that hosts
// the drills of the TypeScript and Python SDKs, whose agent is a test's
// own function. Each drill runs exactly as an agent.command case of a
// world suite runs (the runner's Host): its own world instance, model
// endpoint and cassette, MCP, /tools and /ops, judged by the suite's
// checks into a report case. The SDKs speak to it over loopback HTTP:
// control routes under /engine/ (bearer token), each drill's binding
// under /drills/<32 hex>/ (the URL is the capability). The protocol is
// docs/engine-protocol.md.
package engine

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/hostport"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// Protocol is the version of the engine protocol this engine speaks.
const Protocol = 1

// MaxBody bounds the body of a control request.
const MaxBody = 16 << 20

// MaxDrills bounds the drills running at once (started, neither ended
// nor abandoned): each keeps its world, model endpoint and evidence. A
// start past it first abandons the drills idle for IdleDrill or longer
// (the longest idle first), and is refused with 429 TOO_MANY_DRILLS when
// none is.
const MaxDrills = 1000

// IdleDrill is how long a running drill may go without a request (to
// its binding, its end or its abandon) before a start that needs room
// abandons it.
const IdleDrill = 30 * time.Minute

// RememberEnded is how many ended drills the engine remembers, to answer
// their bindings DRILL_ENDED rather than 404.
const RememberEnded = 100_000

// Options configure an engine.
type Options struct {
	// Listen is the address (HOST:PORT) to listen on; empty: a free port
	// on 127.0.0.1.
	Listen string
	// Record is the default record mode of drills (none, once, new or
	// all); empty: none when CI is set in Env, else once.
	Record string
	// Env is the environment keys, base URLs, CI and secrets are read
	// from; nil means os.Environ().
	Env []string
	// Dir is the working directory of drills that give no cwd; empty
	// means the process's.
	Dir string
	// Version is the dryfire version the ready line names.
	Version string
}

// The variables of Env that replace MaxDrills and IdleDrill.
const (
	EnvMaxDrills = "DRYFIRE_MAX_DRILLS"   // a count, at least 1
	EnvIdleDrill = "DRYFIRE_DRILL_IDLE_S" // seconds, more than 0
)

// bounds reads MaxDrills and IdleDrill from env, where it sets them.
func bounds(env []string) (n int, idle time.Duration, err error) {
	n, idle = MaxDrills, IdleDrill
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case EnvMaxDrills:
			if n, err = strconv.Atoi(v); err != nil || n < 1 {
				return 0, 0, fmt.Errorf("%s=%q: want a whole number of drills, at least 1", k, v)
			}
		case EnvIdleDrill:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f > 0) || f > 1e9 {
				return 0, 0, fmt.Errorf("%s=%q: want a number of seconds, more than 0", k, v)
			}
			idle = time.Duration(f * float64(time.Second))
		}
	}
	return n, idle, nil
}

// Engine is a running engine.
type Engine struct {
	token string
	url   string
	dir   string
	host  *runner.Host
	hs    *http.Server
	done  chan struct{}

	ctx    context.Context // ends with Close: drills ending then keep no cassette
	cancel context.CancelFunc

	suites suiteCache
	ready  []byte

	maxDrills int
	idleDrill time.Duration
	now       func() time.Time

	mu       sync.Mutex
	drills   map[string]*drill
	ended    map[string]string // id → drill name, the last RememberEnded
	expired  map[string]string // id → why: ended ones abandoned for room
	starting int               // starts that took room and are making their drill
	order    []string          // ring of ended ids
	next     int
}

// Start listens and serves in the background.
func Start(opts Options) (*Engine, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("reading the working directory: %w", err)
		}
		dir = wd
	}
	addr := cmp.Or(opts.Listen, "127.0.0.1:0")
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	maxDrills, idleDrill, err := bounds(env)
	if err != nil {
		return nil, err
	}
	host, err := runner.NewHost("/drills/", runner.Options{Record: cassette.Mode(opts.Record), Env: opts.Env})
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", addr, err)
	}
	tok := make([]byte, 32)
	rand.Read(tok)
	e := &Engine{
		token:  hex.EncodeToString(tok),
		url:    "http://" + hostport.Announce(addr, ln.Addr()), // 127.0.0.1 for 0.0.0.0: the Host check answers it
		dir:    dir,
		host:   host,
		done:   make(chan struct{}),
		drills: map[string]*drill{},
		ended:  map[string]string{},

		maxDrills: maxDrills,
		idleDrill: idleDrill,
		now:       time.Now,
	}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	e.suites.entries = map[string]*cacheEntry{}
	host.SetBase(e.url)
	e.ready, _ = json.Marshal(struct {
		Engine   string `json:"engine"`
		Protocol int    `json:"protocol"`
		Version  string `json:"version"`
		URL      string `json:"url"`
		Token    string `json:"token"`
	}{"dryfire", Protocol, opts.Version, e.url, e.token})
	e.hs = &http.Server{Handler: e, ReadHeaderTimeout: 30 * time.Second, Protocols: modelserver.Protocols()}
	go func() {
		defer close(e.done)
		e.hs.Serve(ln)
	}()
	return e, nil
}

// ReadyLine is the one line the engine prints when it is ready: its
// protocol, version, URL and token, as JSON (no newline).
func (e *Engine) ReadyLine() []byte { return e.ready }

// URL is where the engine is reached: http://HOST:PORT.
func (e *Engine) URL() string { return e.url }

// Token is the bearer token of the control routes.
func (e *Engine) Token() string { return e.token }

// Close abandons the drills still running (their cassettes not written),
// ends every MCP session and stops serving.
func (e *Engine) Close() {
	e.cancel()
	e.mu.Lock()
	running := slices.Collect(maps.Values(e.drills))
	clear(e.drills)
	e.mu.Unlock()
	for _, d := range running {
		d.run.Abandon()
	}
	e.host.Close()
	e.hs.Close()
	<-e.done
}

// ServeHTTP routes a request: control routes under /engine/, bindings
// under /drills/ID/.
func (e *Engine) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	toolserver.NoDate(w)
	if !toolserver.Allowed(w, r) {
		return
	}
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/engine/"):
		if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); !ok || subtle.ConstantTimeCompare([]byte(tok), []byte(e.token)) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			writeError(w, &apiError{http.StatusUnauthorized, "UNAUTHORIZED", "the control routes need the header Authorization: Bearer TOKEN, with the token of the engine's ready line"})
			return
		}
		e.control(w, r, path[len("/engine"):])
	case strings.HasPrefix(path, "/drills/"):
		id, sub, _ := strings.Cut(path[len("/drills/"):], "/")
		switch d, name, state := e.lookup(id); state {
		case running:
			if b := bindingOf(sub); b != "" && !slices.Contains(d.bindings, b) {
				// A binding the drill's target does not list: refused before the world sees the call.
				writeErrorEnvelope(w, http.StatusForbidden, world.ErrorEnvelope{Code: "BINDING_NOT_DECLARED", Message: fmt.Sprintf("drill %s: its target lists bindings [%s], not %s: the call to /%s is refused before it reaches the world (add %s to target.bindings in %s)", d.name, strings.Join(d.bindings, ", "), b, sub, b, d.suite)}, sub)
				return
			}
			e.host.ServeHTTP(w, r)
		case ended:
			// 410: as an /ops answer on /ops, else as an error object.
			writeErrorEnvelope(w, http.StatusGone, world.ErrorEnvelope{Code: world.CodeEnded, Message: fmt.Sprintf(
				"drill %s (%s) has ended: a retained mockTool callable, or a call after the test, reaches no world", name, id)}, sub)
		default:
			writeError(w, &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("no drill %q: this engine never started it (an id from another engine process?)", id)})
		}
	default:
		writeError(w, &apiError{http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no route %s %s: the engine serves /engine/drills (control) and /drills/ID/... (a drill's binding)", r.Method, path)})
	}
}

// control serves the routes under /engine.
func (e *Engine) control(w http.ResponseWriter, r *http.Request, path string) {
	rest, ok := strings.CutPrefix(path, "/drills")
	switch id, sub, _ := strings.Cut(strings.TrimPrefix(rest, "/"), "/"); {
	case ok && (rest == "" || rest == "/"):
		if allow(w, r, http.MethodPost) {
			respond(w, r, http.StatusCreated, e.start)
		}
	case ok && sub == "" && id != "":
		if !allow(w, r, http.MethodDelete) {
			return
		}
		if aerr := e.abandon(id); aerr != nil {
			writeError(w, aerr)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	case ok && sub == "end" && id != "":
		if allow(w, r, http.MethodPost) {
			respond(w, r, http.StatusOK, func(body []byte) ([]byte, error) { return e.end(id, body) })
		}
	default:
		writeError(w, &apiError{http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no control route %s /engine%s: the control routes are POST /engine/drills, POST /engine/drills/ID/end and DELETE /engine/drills/ID", r.Method, path)})
	}
}

// respond answers a control request from its body with f: status and
// f's answer, or f's error.
func respond(w http.ResponseWriter, r *http.Request, status int, f func([]byte) ([]byte, error)) {
	body, aerr := readBody(w, r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	ans, err := f(body)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, status, ans)
}

// take removes a running drill, remembering it as ended: from then on its
// binding answers DRILL_ENDED.
func (e *Engine) take(id string) (*drill, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.drills[id]
	if d == nil {
		if name, ok := e.ended[id]; ok {
			if why, ok := e.expired[id]; ok {
				return nil, &apiError{http.StatusGone, "DRILL_ENDED", fmt.Sprintf("drill %s (%s) was abandoned: %s", name, id, why)}
			}
			return nil, &apiError{http.StatusGone, "DRILL_ENDED", fmt.Sprintf("drill %s (%s) has ended already", name, id)}
		}
		return nil, &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("no drill %q: this engine never started it (an id from another engine process?)", id)}
	}
	e.remove(id, d)
	return d, nil
}

// remove forgets a running drill, remembering it as ended (e.mu held).
func (e *Engine) remove(id string, d *drill) {
	delete(e.drills, id)
	if len(e.order) < RememberEnded {
		e.order = append(e.order, id)
	} else {
		delete(e.ended, e.order[e.next])
		delete(e.expired, e.order[e.next])
		e.order[e.next] = id
		e.next = (e.next + 1) % RememberEnded
	}
	e.ended[id] = d.name
}

// room makes room for one more drill (e.mu held): nil, and the idle
// drills it took to abandon once e.mu is released; or why there is none.
func (e *Engine) room() ([]*drill, *apiError) {
	if len(e.drills) < e.maxDrills {
		return nil, nil
	}
	now := e.now()
	var idle []*drill
	for _, d := range e.drills {
		if now.Sub(d.lastUsed()) >= e.idleDrill {
			idle = append(idle, d)
		}
	}
	if len(idle) == 0 {
		return nil, &apiError{http.StatusTooManyRequests, "TOO_MANY_DRILLS", fmt.Sprintf(
			"the engine has %d drills running, its limit (%s, default %d): end or abandon each drill when its test finishes (a test that never ends its drill keeps it running); a drill idle for %s (%s) is abandoned to make room",
			len(e.drills), EnvMaxDrills, MaxDrills, e.idleDrill, EnvIdleDrill)}
	}
	// The longest idle first; every one past the bound goes, so that a
	// leak is cleared at once rather than one start at a time.
	slices.SortFunc(idle, func(a, b *drill) int { return a.lastUsed().Compare(b.lastUsed()) })
	for _, d := range idle {
		e.remove(d.id, d)
		if e.expired == nil {
			e.expired = map[string]string{}
		}
		e.expired[d.id] = fmt.Sprintf("it was idle for %s or longer when the engine, at its limit of %d running drills, needed room", e.idleDrill, e.maxDrills)
	}
	return idle, nil
}

// Where a drill is in its life.
const (
	unknown = iota
	running
	ended
)

func (e *Engine) lookup(id string) (*drill, string, int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if d := e.drills[id]; d != nil {
		d.touch(e.now())
		return d, d.name, running
	}
	if name, ok := e.ended[id]; ok {
		return nil, name, ended
	}
	return nil, "", unknown
}

func (e *Engine) abandon(id string) *apiError {
	d, aerr := e.take(id)
	if aerr != nil {
		return aerr
	}
	d.run.Abandon()
	return nil
}

// apiError is the answer of a control route that failed.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

// errorBody is {"error": {"code", "message"}}, with diagnostics for an
// INVALID_SUITE.
type errorBody struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Diagnostics []diagnostic `json:"diagnostics,omitempty"`
}

type diagnostic struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Severity string `json:"severity"`
	Message  string `json:"message"`
}

// suiteError is an INVALID_SUITE with its diagnostics.
type suiteError struct {
	apiError
	diags []diagnostic
}

func writeError(w http.ResponseWriter, err error) {
	var b errorBody
	status := http.StatusInternalServerError
	var se *suiteError
	var ae *apiError
	switch {
	case errors.As(err, &se):
		status, b.Error.Code, b.Error.Message, b.Diagnostics = se.status, se.code, se.message, se.diags
	case errors.As(err, &ae):
		status, b.Error.Code, b.Error.Message = ae.status, ae.code, ae.message
	default:
		b.Error.Code, b.Error.Message = "INTERNAL", err.Error()
	}
	writeJSON(w, status, marshal(b))
}

// allow says whether r's method is method; if not, it answers 405.
func allow(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	writeError(w, &apiError{http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", fmt.Sprintf("%s %s: use %s", r.Method, r.URL.Path, method)})
	return false
}

// bindingOf is the binding a route under /drills/ID/ belongs to: direct
// (/ops), mcp (/mcp), http (/tools, /http); "" for the model endpoint and
// the world's control routes, which every drill has.
func bindingOf(sub string) string {
	first, _, _ := strings.Cut(sub, "/")
	switch first {
	case "ops":
		return spec.BindingDirect
	case "mcp":
		return spec.BindingMCP
	case "tools", "http":
		return spec.BindingHTTP
	}
	return ""
}

// writeErrorEnvelope answers env: as an operation's result on /ops, else
// as {"error": env}.
func writeErrorEnvelope(w http.ResponseWriter, status int, env world.ErrorEnvelope, sub string) {
	if sub == "ops" || strings.HasPrefix(sub, "ops/") {
		writeJSON(w, status, marshal(struct {
			Status  string               `json:"status"`
			Output  any                  `json:"output"`
			Error   *world.ErrorEnvelope `json:"error"`
			Receipt bool                 `json:"receipt"`
		}{"error", nil, &env, false}))
		return
	}
	writeJSON(w, status, marshal(map[string]any{"error": env}))
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *apiError) {
	data, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBody))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, &apiError{http.StatusRequestEntityTooLarge, "REQUEST_TOO_LARGE", fmt.Sprintf("the request body is larger than %d MiB, the engine's bound", MaxBody>>20)}
		}
		return nil, &apiError{http.StatusBadRequest, "INVALID_REQUEST", "reading the request: " + err.Error()}
	}
	return data, nil
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(body)
}
