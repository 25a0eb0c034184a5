package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// The routes of a world scope are in the route table (routes.go): the
// world's operations over HTTP (/ops) and its control routes (/world).
// A scope of mocks answers them 404, saying it serves no world.

// opRequest is the body of POST /ops/{package}/{operation}.
type opRequest struct {
	Arguments      json.RawMessage `json:"arguments"`
	ActorID        *string         `json:"actorId"`
	IdempotencyKey *string         `json:"idempotencyKey"`
}

// opAnswer is its answer: every key always present (output null on an
// error, error null on success).
type opAnswer struct {
	Status  string               `json:"status"`
	Output  any                  `json:"output"`
	Error   *world.ErrorEnvelope `json:"error"`
	Receipt bool                 `json:"receipt"`
}

// worldAPI is a world scope's own routes: its operations over HTTP
// (/ops), its control routes (/world) and its packages' HTTP APIs
// (/http). A scope of mocks has none.
type worldAPI struct {
	in    *world.Instance
	tools []Tool // the scope's, one an operation
	// call runs an operation and records it (Scope.CallWorld); reset
	// resets the whole scope (Scope.Reset).
	call  func(ctx context.Context, c tool.Call, req world.Request) *world.Response
	reset func()
}

// onWorld is a route's answer by the scope's world routes.
func onWorld(f func(*worldAPI, http.ResponseWriter, *http.Request, string)) func(*Scope, http.ResponseWriter, *http.Request, string) {
	return func(sc *Scope, w http.ResponseWriter, r *http.Request, rest string) { f(sc.worldAPI, w, r, rest) }
}

// CodeInvalidRequest is the error code of an /ops request whose envelope
// (not its arguments) is malformed: never an operation, not in evidence.
const CodeInvalidRequest = "INVALID_REQUEST"

func (s *Scope) noWorld(w http.ResponseWriter, r *http.Request) bool {
	if s.world != nil {
		return false
	}
	writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("%s %s: this server serves the mocks of %s, not a world; /ops and /world need a suite with world:", r.Method, r.URL.Path, s.suite.File))
	return true
}

// serveOp answers POST /ops/{package}/{operation} with the world's
// answer, at the HTTP status the world gives it (world.Response.HTTPStatus).
func (a *worldAPI) serveOp(w http.ResponseWriter, r *http.Request, rest string) {
	pkg, op, ok := strings.Cut(rest, "/")
	if !ok || pkg == "" || op == "" {
		writeOpError(w, http.StatusNotFound, world.CodeUnknownOperation, fmt.Sprintf("POST /ops/{package}/{operation}: %q names no operation, e.g. /ops/%s", rest, a.exampleOp()))
		return
	}
	in := bufs.Get().(*bytes.Buffer)
	in.Reset()
	defer bufs.Put(in)
	if _, err := in.ReadFrom(http.MaxBytesReader(w, r.Body, maxBody)); err != nil {
		writeOpError(w, http.StatusBadRequest, CodeInvalidRequest, "reading the request: "+err.Error())
		return
	}
	var req opRequest
	if body := bytes.TrimSpace(in.Bytes()); len(body) > 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err := dec.Decode(&req)
		if err == nil && dec.More() {
			err = errors.New("more than one JSON value")
		}
		if err != nil {
			writeOpError(w, http.StatusBadRequest, CodeInvalidRequest, fmt.Sprintf(`the body must be {"arguments": {...}, "actorId": "...", "idempotencyKey": "..."} (every key optional): %v`, err))
			return
		}
	}
	wr := world.Request{Operation: pkg + "/" + op, Arguments: string(req.Arguments)}
	if req.ActorID != nil {
		wr.Actor = *req.ActorID
	}
	if req.IdempotencyKey != nil {
		wr.IdempotencyKey = *req.IdempotencyKey
	}
	name := wr.Operation
	if o := a.in.World().Operations[wr.Operation]; o != nil {
		name = o.Tool
	}
	resp := a.call(r.Context(), tool.Call{Name: name, Args: wr.Arguments}, wr)
	ans := opAnswer{Status: resp.Status, Output: resp.Output, Error: resp.Error, Receipt: resp.Receipt}
	if resp.Error != nil {
		ans.Output = nil
	} else if resp.Raw != "" {
		ans.Output = resp.Raw
	}
	writeValue(w, resp.HTTPStatus(), ans)
}

func (a *worldAPI) exampleOp() string {
	if l := a.in.World().OpList; len(l) > 0 {
		return l[0]
	}
	return "package/operation"
}

func writeOpError(w http.ResponseWriter, status int, code, msg string) {
	writeValue(w, status, opAnswer{Status: "error", Error: &world.ErrorEnvelope{Code: code, Message: msg}})
}

// writeValue answers v as JSON (no HTML escaping; numbers as written).
func writeValue(w http.ResponseWriter, status int, v any) {
	b, err := wire.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, "internal_error", "encoding the answer: "+err.Error())
		return
	}
	writeJSON(w, status, b)
}

// The control routes under /world; the route table checks the scope has a
// world and the method.

func (a *worldAPI) serveWorldInfo(w http.ResponseWriter, _ *http.Request, _ string) {
	writeValue(w, http.StatusOK, a.worldInfo())
}

func (a *worldAPI) serveWorldReset(w http.ResponseWriter, _ *http.Request, _ string) {
	a.reset()
	writeValue(w, http.StatusOK, map[string]any{"reset": "world", "now": timeText(a.in.Now())})
}

func (a *worldAPI) servePackageReset(w http.ResponseWriter, _ *http.Request, pkg string) {
	if err := a.in.ResetPackage(pkg); err != nil {
		writeError(w, http.StatusNotFound, "not_found", err.Error())
		return
	}
	writeValue(w, http.StatusOK, map[string]any{"reset": pkg, "now": timeText(a.in.Now())})
}

func (a *worldAPI) serveBuild(w http.ResponseWriter, _ *http.Request, _ string) {
	b := a.in.Build()
	writeValue(w, http.StatusOK, map[string]any{"seed": a.in.Seed(), "build_hash": b.Hash, "build": json.RawMessage(b.JSON)})
}

func (a *worldAPI) serveClock(w http.ResponseWriter, _ *http.Request, _ string) {
	writeValue(w, http.StatusOK, map[string]any{"now": timeText(a.in.Now())})
}

func (a *worldAPI) serveAdvance(w http.ResponseWriter, r *http.Request, _ string) {
	d, err := readAdvance(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "invalid_request", err.Error())
		return
	}
	if err := a.in.Advance(d); err != nil {
		writeError(w, http.StatusInternalServerError, "event_limit", err.Error())
		return
	}
	writeValue(w, http.StatusOK, map[string]any{"now": timeText(a.in.Now())})
}

func (a *worldAPI) serveState(w http.ResponseWriter, _ *http.Request, _ string) {
	writeValue(w, http.StatusOK, a.in.State())
}

func (a *worldAPI) serveEvidence(w http.ResponseWriter, r *http.Request, _ string) {
	since := 0
	if v := r.URL.Query().Get("since"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("since=%q: want the seq of the last entry already read (0 or more)", v))
			return
		}
		since = n
	}
	limit := DefaultEvidencePage
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxEvidencePage {
			writeError(w, http.StatusBadRequest, "invalid_request", fmt.Sprintf("limit=%q: want the number of entries of one page, 1 to %d", v, MaxEvidencePage))
			return
		}
		limit = n
	}
	writeValue(w, http.StatusOK, a.in.Page(since, limit))
}

// GET /world/evidence answers in pages: DefaultEvidencePage entries
// unless ?limit= says otherwise (at most MaxEvidencePage); "next" is the
// since of the next page and "more" says there is one.
const (
	DefaultEvidencePage = 1000
	MaxEvidencePage     = 10_000
)

func timeText(t time.Time) string { return t.Format(time.RFC3339Nano) }

// readAdvance reads {"by": "10m"} (a Go duration: 90s, 10m, 1h30m; or a
// number of seconds).
// maxAdvance is the most one clock advance may move the virtual clock.
const maxAdvance = 100 * 365 * 24 * time.Hour

func readAdvance(r *http.Request) (time.Duration, error) {
	const want = `the body must be {"by": DURATION}, e.g. {"by": "10m"} (90s, 10m, 1h30m, or a number of seconds)`
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<16))
	if err != nil {
		return 0, fmt.Errorf("reading the request: %v", err)
	}
	var body struct {
		By json.RawMessage `json:"by"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil || body.By == nil {
		return 0, errors.New(want)
	}
	var d time.Duration
	var text string
	var secs float64
	switch {
	case json.Unmarshal(body.By, &text) == nil:
		if d, err = time.ParseDuration(text); err != nil {
			return 0, fmt.Errorf("by: %q is not a duration; %s", text, want)
		}
	case json.Unmarshal(body.By, &secs) == nil:
		if secs > maxAdvance.Seconds() {
			return 0, fmt.Errorf("by: %v s is more than the most one advance may move the clock (%s, 100 years)", body.By, maxAdvance)
		}
		d = time.Duration(secs * float64(time.Second))
	default:
		return 0, errors.New(want)
	}
	if d < 0 {
		return 0, fmt.Errorf("by: %s is negative; the virtual clock only goes forward", d)
	}
	if d > maxAdvance {
		return 0, fmt.Errorf("by: %s is more than the most one advance may move the clock (%s, 100 years)", d, maxAdvance)
	}
	return d, nil
}

// worldInfo is GET /world: what is served, and from which build and seed.
func (a *worldAPI) worldInfo() map[string]any {
	in := a.in
	w := in.World()
	b := in.Build()
	ops := make([]map[string]any, 0, len(a.tools))
	for _, t := range a.tools {
		ops = append(ops, map[string]any{"operation": t.Operation, "tool": t.Name})
	}
	actors := w.ActorList
	if actors == nil {
		actors = []string{}
	}
	return map[string]any{
		"world":      w.Name,
		"file":       w.File,
		"seed":       in.Seed(),
		"build_hash": b.Hash,
		"actor":      in.Actor(),
		"actors":     actors,
		"now":        timeText(in.Now()),
		"operations": ops,
	}
}
