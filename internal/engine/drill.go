package engine

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// drill is a running drill.
type drill struct {
	id     string
	name   string
	run    *runner.Drill
	stored *report.Case // the drill a reproduction re-runs; nil otherwise
	// bindings are those its suite's target lists (spec.AllBindings
	// without one), suite its file: a call through another is refused.
	bindings []string
	suite    string
	used     atomic.Int64 // the last request's time, Unix nanoseconds
}

func (d *drill) touch(t time.Time) { d.used.Store(t.UnixNano()) }

func (d *drill) lastUsed() time.Time { return time.Unix(0, d.used.Load()) }

// startRequest is the body of POST /engine/drills.
type startRequest struct {
	Drill     string
	Suite     string
	Cwd       string
	Setup     any
	Seed      *int64
	Actor     string
	Record    string
	Reproduce json.RawMessage
}

var startKeys = []string{"drill", "suite", "cwd", "setup", "seed", "actor", "record", "reproduce"}

func invalid(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "INVALID_REQUEST", fmt.Sprintf(format, args...)}
}

// object reads a JSON object body into its keys, refusing keys not in
// known (with a did-you-mean).
func object(body []byte, what string, known []string) (map[string]json.RawMessage, *apiError) {
	var m map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil || m == nil {
		msg := "not a JSON object"
		if err != nil {
			msg = err.Error()
		}
		return nil, invalid("the body of %s must be a JSON object: %s", what, msg)
	}
	if dec.More() {
		return nil, invalid("the body of %s must be one JSON object; more follows it", what)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			return nil, invalid("unknown key %q in the body of %s%s; the keys are %s", k, what, suggest.DidYouMean(k, known), strings.Join(known, ", "))
		}
	}
	return m, nil
}

func isNull(raw json.RawMessage) bool { return raw == nil || string(bytes.TrimSpace(raw)) == "null" }

func str(m map[string]json.RawMessage, key string) (string, *apiError) {
	raw := m[key]
	if isNull(raw) {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", invalid("%s must be a string, not %s", key, value.Truncate(string(raw), 80))
	}
	return s, nil
}

func parseStart(body []byte) (*startRequest, *apiError) {
	m, aerr := object(body, "POST /engine/drills", startKeys)
	if aerr != nil {
		return nil, aerr
	}
	req := &startRequest{Reproduce: m["reproduce"]}
	for i, dst := range []*string{&req.Drill, &req.Suite, &req.Cwd, &req.Actor, &req.Record} { // in order: one message for one body
		if *dst, aerr = str(m, []string{"drill", "suite", "cwd", "actor", "record"}[i]); aerr != nil {
			return nil, aerr
		}
	}
	if raw := m["seed"]; !isNull(raw) {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(raw)), 10, 64)
		if err != nil {
			return nil, invalid("seed must be an integer (int64), not %s", value.Truncate(string(raw), 80))
		}
		req.Seed = &n
	}
	if raw := m["setup"]; !isNull(raw) {
		v, err := value.Parse(raw)
		if err != nil {
			return nil, invalid("setup: %v", err)
		}
		req.Setup = v
	}
	if _, err := cassette.ParseMode(req.Record); req.Record != "" && err != nil {
		return nil, invalid("record %q: want none, once, new or all", req.Record)
	}
	if req.Drill == "" && isNull(req.Reproduce) {
		return nil, invalid("drill is missing: name the drill (a case of a world suite) to start, e.g. {\"drill\": \"save-record\"}")
	}
	return req, nil
}

// start serves POST /engine/drills.
func (e *Engine) start(body []byte) ([]byte, error) {
	req, aerr := parseStart(body)
	if aerr != nil {
		return nil, aerr
	}
	cwd := req.Cwd
	switch {
	case cwd == "":
		cwd = e.dir
	case !filepath.IsAbs(cwd):
		cwd = filepath.Join(e.dir, cwd)
	}
	var ls *loaded
	var c *spec.Case
	var in *world.Instance
	var stored *report.Case
	var err error
	record := cassette.Mode(req.Record)
	if !isNull(req.Reproduce) {
		if stored, err = storedDrill(req.Reproduce, req.Drill); err != nil {
			return nil, err
		}
		// A report is a file: the suite it names must be a suite file
		// inside cwd, so that a report cannot make the engine read any
		// other file.
		if !spec.IsSuiteFile(stored.Suite) {
			return nil, invalid("reproduce: suite %q is not a *.dryfire.yaml or *.dryfire.yml file", stored.Suite)
		}
		if _, err := safeio.Confine(cwd, cwd, stored.Suite); err != nil {
			return nil, invalid("reproduce: suite %s (give cwd: the project's directory)", safeio.Describe(stored.Suite, err))
		}
		if ls, c, err = e.find(cwd, stored.Suite, stored.Name); err != nil {
			return nil, err
		}
		if in, err = world.FromBuild(string(stored.Build), *stored.Seed); err != nil {
			return nil, invalid("reproduce: %v", err)
		}
		record = cassette.None
	} else if ls, c, err = e.find(cwd, req.Suite, req.Drill); err != nil {
		return nil, err
	} else if in, err = newWorld(ls, c, req); err != nil {
		return nil, err
	}
	// Room is taken before the drill is made: a refused start costs
	// nothing.
	e.mu.Lock()
	idle, aerr := e.room()
	if aerr == nil {
		e.starting++
		if len(e.drills)+e.starting > e.maxDrills {
			e.starting--
			aerr = &apiError{http.StatusTooManyRequests, "TOO_MANY_DRILLS", fmt.Sprintf("the engine has %d drills running or starting, its limit (%s, default %d): end or abandon each drill when its test finishes", e.maxDrills, EnvMaxDrills, MaxDrills)}
		}
	}
	e.mu.Unlock()
	for _, d := range idle {
		d.run.Abandon()
	}
	if aerr != nil {
		return nil, aerr
	}
	id := newID()
	run, err := e.host.Start(runner.DrillSpec{Suite: ls.suite, SuiteWorld: ls.sw, Case: c, ID: id, World: in, Record: record})
	e.mu.Lock()
	e.starting--
	if err == nil {
		d := &drill{id: id, name: c.Name, run: run, stored: stored, bindings: ls.suite.DrillBindings(), suite: ls.file}
		d.touch(e.now())
		e.drills[id] = d
	}
	e.mu.Unlock()
	if err != nil {
		return nil, &apiError{http.StatusInternalServerError, "INTERNAL", "starting the drill: " + err.Error()}
	}
	return startAnswer(id, ls, c, in, run), nil
}

// newWorld starts a drill's world: the case's drill, with the request's
// seed, actor and per-test setup over it.
func newWorld(ls *loaded, c *spec.Case, req *startRequest) (*world.Instance, error) {
	w := ls.sw.World
	d := ls.sw.Drill(c, "", req.Seed)
	if req.Actor != "" {
		if w.Actors[req.Actor] == nil {
			return nil, invalid("actor %q: world %s has no such actor%s; its actors are %s", req.Actor, w.Name, suggest.DidYouMean(req.Actor, w.ActorList), strings.Join(w.ActorList, ", "))
		}
		d.Actor = req.Actor
	}
	if err := w.ApplySetup(&d, req.Setup); err != nil {
		return nil, &apiError{http.StatusBadRequest, "INVALID_SETUP", err.Error()}
	}
	in, err := w.New(d)
	if err != nil {
		return nil, &apiError{http.StatusBadRequest, "INVALID_SETUP", err.Error()}
	}
	return in, nil
}

// storedDrill reads the reproduce key: a report of end (one drill, or
// the one named drill), or one case of it.
func storedDrill(raw json.RawMessage, name string) (*report.Case, error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, invalid("reproduce must be the report of a drill (or its one case): %v", err)
	}
	var cases []report.Case
	if _, ok := probe["cases"]; ok {
		var rep report.Report
		if err := json.Unmarshal(raw, &rep); err != nil {
			return nil, invalid("reproduce: reading the report: %v", err)
		}
		cases = rep.Cases
	} else {
		var c report.Case
		if err := json.Unmarshal(raw, &c); err != nil {
			return nil, invalid("reproduce: reading the case: %v", err)
		}
		cases = []report.Case{c}
	}
	var drills []*report.Case
	for i := range cases {
		if c := &cases[i]; c.BuildHash != "" && c.Seed != nil && len(c.Build) > 0 {
			drills = append(drills, c)
		}
	}
	switch len(drills) {
	case 0:
		return nil, invalid("reproduce: the report has no drill (a case of a world suite with build_hash, build and seed)")
	case 1:
		return drills[0], nil // drill is ignored
	}
	// A report of several drills (dryfire run --json): drill chooses.
	var names []string
	for _, c := range drills {
		if c.Name == name {
			return c, nil
		}
		names = append(names, c.Name)
	}
	return nil, invalid("reproduce: the report has %d drills; name the one to reproduce with drill%s", len(drills), suggest.DidYouMean(name, names))
}

func newID() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// startAnswer is the 201 answer: the drill, its task and its binding.
func startAnswer(id string, ls *loaded, c *spec.Case, in *world.Instance, run *runner.Drill) []byte {
	url := run.URL()
	var b bytes.Buffer
	b.WriteString(`{"id":`)
	b.Write(marshal(id))
	b.WriteString(`,"suite":`)
	b.Write(marshal(ls.file))
	b.WriteString(`,"drill":`)
	b.Write(marshal(c.Name))
	b.WriteString(`,"task":`)
	b.Write(marshal(map[string]string{"instruction": c.Input, "input": c.Input}))
	fmt.Fprintf(&b, `,"seed":%d,"build_hash":`, in.Seed())
	b.Write(marshal(in.Build().Hash))
	b.WriteString(`,"binding":{"id":`)
	b.Write(marshal(id))
	for _, u := range [][2]string{{"url", ""}, {"mcp_url", "/mcp"}, {"tools_url", "/tools"}, {"ops_url", "/ops"}, {"world_url", "/world"}} {
		fmt.Fprintf(&b, `,%q:`, u[0])
		b.Write(marshal(url + u[1]))
	}
	b.WriteString(`,"env":{`)
	for i, kv := range run.Env() {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshal(kv[0]))
		b.WriteByte(':')
		b.Write(marshal(kv[1]))
	}
	b.WriteString(`},"bindings":`)
	b.Write(marshal(ls.suite.DrillBindings()))
	b.WriteString(`,"operations":`)
	b.Write(ls.ops)
	b.WriteString("}}")
	return b.Bytes()
}

var endKeys = []string{"output", "error"}

// end serves POST /engine/drills/{id}/end.
func (e *Engine) end(id string, body []byte) ([]byte, error) {
	m, aerr := object(body, "POST /engine/drills/ID/end", endKeys)
	if aerr != nil {
		return nil, aerr
	}
	output := ""
	if raw := m["output"]; !isNull(raw) {
		v, err := value.Parse(raw)
		if err != nil {
			return nil, invalid("output: %v", err)
		}
		output = value.Render(v)
	}
	var agentErr error
	if raw := m["error"]; !isNull(raw) {
		msg, aerr := str(m, "error")
		if aerr != nil {
			return nil, aerr
		}
		agentErr = errors.New(msg)
	}
	d, aerr := e.take(id)
	if aerr != nil {
		return nil, aerr
	}
	c := d.run.End(e.ctx, output, agentErr)
	return endAnswer(&c, agentErr, d.stored), nil
}

// endAnswer is the 200 answer of end: the verdict, what the checks saw,
// the report with this drill as its one case.
func endAnswer(c *report.Case, agentErr error, stored *report.Case) []byte {
	verdict, seed := verdictSeed(c)
	rep := report.Report{Cases: []report.Case{*c}}
	rep.Tally()
	ans := map[string]any{
		"verdict":    verdict,
		"status":     c.Status,
		"failures":   failures(c, agentErr),
		"checks":     c.Checks,
		"seed":       seed,
		"build_hash": c.BuildHash,
		"build":      c.Build,
		"state":      c.State,
		"evidence":   c.Evidence,
		"events":     c.Events,
		"report":     rep,
	}
	if stored != nil {
		diffs := runner.CompareDrills(stored, c)
		if diffs == nil {
			diffs = []string{}
		}
		ans["reproduction"] = map[string]any{"identical": len(diffs) == 0, "differences": diffs}
	}
	return marshal(ans)
}

// verdictSeed is a drill's verdict (passed or failed) and its seed (0:
// none).
func verdictSeed(c *report.Case) (string, int64) {
	verdict, seed := "failed", int64(0)
	if c.Status == report.Passed {
		verdict = "passed"
	}
	if c.Seed != nil {
		seed = *c.Seed
	}
	return verdict, seed
}

// failures are the messages a failed drill prints: the agent's error,
// the failed checks, then what else made it fail.
func failures(c *report.Case, agentErr error) []string {
	out := []string{}
	if c.Status == report.Passed {
		return out
	}
	if agentErr != nil {
		out = append(out, "the agent failed: "+agentErr.Error())
	}
	checks := 0
	for _, ch := range c.Checks {
		if !ch.Passed {
			checks++
			out = append(out, cmp.Or(ch.Message, ch.Check+" check failed"))
		}
	}
	switch {
	case c.Replay != "":
		out = append(out, c.Replay)
	case agentErr == nil && (checks == 0 || c.Status == report.Errored):
		out = append(out, c.Reason)
	}
	return out
}

// marshal is JSON without HTML escaping.
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		fmt.Fprintf(&b, `{"error":{"code":"INTERNAL","message":%q}}`, "encoding the answer: "+err.Error())
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
