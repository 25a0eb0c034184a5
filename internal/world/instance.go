package world

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Errors the world itself answers with (besides the operations' declared
// errors).
const (
	CodeUnknownOperation = "UNKNOWN_OPERATION"
	CodeInvalidInput     = "INVALID_INPUT"
	CodePermission       = "PERMISSION_DENIED"
	CodeBudget           = "BUDGET_EXCEEDED"
	CodeBehaviorFailed   = "BEHAVIOR_FAILED"
	CodeInvalidOutput    = "INVALID_OUTPUT"
	CodeNotImplemented   = "NOT_IMPLEMENTED"
	CodeEnded            = "DRILL_ENDED"
	CodeEventLimit       = "EVENT_LIMIT"
	// A fault sweep's failures of a call that are not the operation's
	// declared errors (dryfire sweep).
	CodeToolError = "TOOL_ERROR"
	CodeTimeout   = "TIMEOUT"
)

// Outcomes recorded in evidence.
const (
	OutcomeBehavior = "behavior"
	OutcomeReturn   = "return"
	OutcomeError    = "error"
	OutcomeOriginal = "original"
	OutcomeReceipt  = "receipt"
	OutcomeDenied   = "denied"
	OutcomeBudget   = "budget"
	OutcomeInvalid  = "invalid"
)

// Drill is what a drill adds to a world: a scenario, an actor, its own
// and per-test overrides, and the seed.
type Drill struct {
	Scenario string // a named scenario; "" the world's baseline
	// Inline, when set, is a complete starting setup of the drill's own
	// (state, budgets, faults, events replace the scenario's); its
	// overrides rank as per-test rules.
	Inline            *Setup
	Actor             string // default actor; "" the world's first
	Overrides         []*Override
	TestOverrides     []*Override
	BehaviorOverrides map[string]string // package/operation → behavior
	Seed              int64
}

// Instance is one drill's world. All its methods are safe for concurrent
// use; each call runs in one critical section.
type Instance struct {
	w       *World
	drill   Drill
	setup   *Setup // the complete starting setup
	rules   []*Override
	behav   map[string]*Operation // operation → the operation whose behavior runs
	latency time.Duration         // the latency of the call under way (Call)
	actor   string
	events  []Event

	mu           sync.Mutex
	state        map[string]map[string]any
	version      int
	now          time.Time
	budgetUsed   []int
	ruleUsed     []int
	faultSeen    []int
	faultRand    *rand.Rand
	behaviorRand *rand.Rand
	receipts     map[string]any
	queue        []scheduled
	schedSeq     int
	evidence     []Evidence
	emitted      []Emitted
	// dropped counts the oldest evidence entries (and emitted events)
	// let go past maxEvidence; 0 keeps everything.
	dropped, droppedEvents int
	maxEvidence            int
	ended                  bool
}

type scheduled struct {
	at   time.Time
	seq  int
	id   string
	op   string
	args map[string]any
}

// Emitted is an event a behavior emitted with ctx.emit.
type Emitted struct {
	Seq       int    `json:"seq"` // the evidence entry of the call that emitted it
	Time      string `json:"time"`
	Operation string `json:"operation"`
	Type      string `json:"type"`
	Data      any    `json:"data"`
}

// Evidence is the record of one operation, whatever transport made it:
// who called what with which arguments, what shaped the answer (an
// override, a fault), what came back and the state version after it.
type Evidence struct {
	Seq            int               `json:"seq"`
	Time           string            `json:"time"`
	Actor          string            `json:"actor"`
	Operation      string            `json:"operation"`
	Arguments      any               `json:"arguments"`
	IdempotencyKey *string           `json:"idempotency_key"`
	Override       *OverrideEvidence `json:"override"`
	Fault          *string           `json:"fault"`
	Outcome        string            `json:"outcome"`
	IsError        bool              `json:"is_error"`
	Result         any               `json:"result"`
	StateVersion   int               `json:"state_version"`
	// HTTP is the request of a call over the package's HTTP API.
	HTTP *HTTPEvidence `json:"http,omitempty"`
	// LatencyMS is the operation's latency: the call answered this many
	// milliseconds of virtual time after Time.
	LatencyMS float64 `json:"latency_ms,omitempty"`
}

// OverrideEvidence is the override that shaped a call.
type OverrideEvidence struct {
	ID         string `json:"id"`
	Scope      Scope  `json:"scope"`
	Outcome    string `json:"outcome"`
	MatchCount int    `json:"match_count"`
	// Remaining is the matches left; nil when the rule is unlimited.
	Remaining *int `json:"remaining"`
}

// Request is one operation call, after transport decoding.
type Request struct {
	// Operation is package/operation; or give Tool, the name agents see.
	Operation string
	Tool      string
	// Arguments is the JSON text of the arguments, or Args the value.
	Arguments string
	Args      any
	Actor     string // "" the drill's actor
	// IdempotencyKey as carried by the transport; the operation's
	// idempotency_key argument is used when it is empty.
	IdempotencyKey string
	// HTTP is the request of a call over the package's HTTP API, for the
	// evidence.
	HTTP *HTTPEvidence
	// Force, when set, answers the call in place of the overrides (a
	// fault sweep's point): its outcome, recorded as its override.
	Force *Override
}

// ErrorEnvelope is a failed call's error.
type ErrorEnvelope struct {
	Code      string `json:"code"`
	Message   string `json:"message"`
	Retryable bool   `json:"retryable"`
}

// Response is the answer to a call, in the shape /ops answers over HTTP:
// {"status", "output", "error", "receipt"}.
type Response struct {
	Status   string         `json:"status"` // ok | error
	Output   any            `json:"output"`
	Error    *ErrorEnvelope `json:"error,omitempty"`
	Receipt  bool           `json:"receipt"`
	Evidence Evidence       `json:"-"`
}

// Content is what a model receives: the output (a string verbatim,
// anything else as canonical JSON), or the error envelope as JSON.
func (r *Response) Content() string {
	if r.Error != nil {
		return value.Canonical(map[string]any{"error": map[string]any{"code": r.Error.Code, "message": r.Error.Message, "retryable": r.Error.Retryable}})
	}
	return value.Render(r.Output)
}

// New starts a drill's world. The error names a scenario, actor or
// behavior override the world does not have.
func (w *World) New(d Drill) (*Instance, error) {
	in := &Instance{w: w, drill: d, behav: map[string]*Operation{}}
	in.setup = w.Baseline
	var scen *Setup
	if d.Scenario != "" {
		scen = w.Scenarios[d.Scenario]
		if scen == nil {
			return nil, fmt.Errorf("world %s has no scenario %q", w.Name, d.Scenario)
		}
		in.setup = scen
	}
	if d.Inline != nil && (d.Inline.State != nil || d.Inline.Budgets != nil || d.Inline.Faults != nil || d.Inline.Events != nil) {
		in.setup = d.Inline
	}
	in.actor = d.Actor
	if in.actor == "" && len(w.ActorList) > 0 {
		in.actor = w.ActorList[0]
	}
	if in.actor != "" && w.Actors[in.actor] == nil {
		return nil, fmt.Errorf("world %s has no actor %q", w.Name, in.actor)
	}
	for op, fn := range d.BehaviorOverrides {
		o := w.Operations[op]
		if o == nil {
			return nil, fmt.Errorf("behavior override: unknown operation %q", op)
		}
		f := w.funcs[fn]
		if f == nil {
			return nil, fmt.Errorf("behavior override of %s: %q is not a function of the behavior modules", op, fn)
		}
		c := *o
		c.Behavior, c.fn = fn, f
		in.behav[op] = &c
	}
	// Scopes, lowest first; a rule with the id of a rule in a higher scope
	// is replaced by it entirely.
	var all []*Override
	all = append(all, w.Baseline.Overrides...)
	if scen != nil {
		all = append(all, scen.Overrides...)
	}
	all = append(all, d.Overrides...)
	if d.Inline != nil {
		all = append(all, d.Inline.Overrides...)
	}
	all = append(all, d.TestOverrides...)
	for i, r := range all {
		replaced := false
		if r.ID != "" {
			for _, h := range all[i+1:] {
				if h.ID == r.ID && h.Scope > r.Scope {
					replaced = true
					break
				}
			}
		}
		if !replaced {
			in.rules = append(in.rules, r)
		}
	}
	in.events = in.setup.Events
	in.reset()
	return in, nil
}

// World is the instance's world definition.
func (in *Instance) World() *World { return in.w }

// Actor is the drill's default actor.
func (in *Instance) Actor() string { return in.actor }

// Seed is the drill's seed.
func (in *Instance) Seed() int64 { return in.drill.Seed }

// reset restores everything but the evidence. Callers hold mu (or own in).
func (in *Instance) reset() {
	in.state = deepCopyState(in.setup.State)
	in.version = 0
	in.now = in.w.Start
	in.budgetUsed = make([]int, len(in.setup.Budgets))
	in.ruleUsed = make([]int, len(in.rules))
	in.faultSeen = make([]int, len(in.setup.Faults))
	in.faultRand = rand.New(rand.NewPCG(uint64(in.drill.Seed), 0x6661756c74)) // "fault"
	in.behaviorRand = rand.New(rand.NewPCG(uint64(in.drill.Seed), 0x72616e646f6d))
	in.receipts = map[string]any{}
	in.queue = in.queue[:0]
	for _, e := range in.events {
		in.enqueueEvent(e)
	}
}

func (in *Instance) enqueueEvent(e Event) {
	at, err := resolveAt(in.w.Start, e.At)
	if err != nil {
		return // checked when the world was loaded
	}
	in.push(scheduled{at: at, id: e.ID, op: e.Operation, args: e.Arguments})
}

func (in *Instance) push(s scheduled) {
	in.schedSeq++
	s.seq = in.schedSeq
	i := sort.Search(len(in.queue), func(i int) bool {
		q := in.queue[i]
		return q.at.After(s.at) || q.at.Equal(s.at) && q.seq > s.seq
	})
	in.queue = append(in.queue, scheduled{})
	copy(in.queue[i+1:], in.queue[i:])
	in.queue[i] = s
}

// Reset restores the whole world: state, rule counts, budgets, fault
// counters, clock, receipts, random streams and scheduled events. The
// evidence is kept: it is the record of what happened.
func (in *Instance) Reset() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.reset()
}

// ResetPackage restores only one package: its state, the counts of the
// rules, budgets and faults on its operations, its receipts and its
// scheduled events.
func (in *Instance) ResetPackage(pkg string) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.w.Packages[pkg] == nil {
		return fmt.Errorf("world %s has no package %q", in.w.Name, pkg)
	}
	in.state[pkg] = deepCopyState(map[string]map[string]any{pkg: in.setup.State[pkg]})[pkg]
	in.version++
	prefix := pkg + "/"
	for i, r := range in.rules {
		if strings.HasPrefix(r.Operation, prefix) {
			in.ruleUsed[i] = 0
		}
	}
	for i, b := range in.setup.Budgets {
		if b.Operation != "*" && strings.HasPrefix(b.Operation, prefix) {
			in.budgetUsed[i] = 0
		}
	}
	for i, f := range in.setup.Faults {
		if strings.HasPrefix(f.Operation, prefix) {
			in.faultSeen[i] = 0
		}
	}
	for k := range in.receipts {
		if strings.HasPrefix(k, prefix) {
			delete(in.receipts, k)
		}
	}
	q := in.queue[:0]
	for _, s := range in.queue {
		if !strings.HasPrefix(s.op, prefix) {
			q = append(q, s)
		}
	}
	in.queue = q
	for _, e := range in.events {
		if strings.HasPrefix(e.Operation, prefix) {
			if at, err := resolveAt(in.w.Start, e.At); err == nil && !at.Before(in.now) {
				in.enqueueEvent(e)
			}
		}
	}
	return nil
}

// Advance moves the virtual clock forward and fires the events due by
// then, in time order.
// It fails when more events come due than limits.events_per_tick allows;
// the events still due then are dropped.
func (in *Instance) Advance(d time.Duration) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if d > 0 {
		in.now = in.now.Add(d)
	}
	return in.fireDue()
}

// Now is the virtual time.
func (in *Instance) Now() time.Time {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.now
}

// End ends the drill: later calls fail with DRILL_ENDED.
func (in *Instance) End() {
	in.mu.Lock()
	in.ended = true
	in.mu.Unlock()
}

// Ended reports whether End was called.
func (in *Instance) Ended() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.ended
}

// State returns a copy of the current state: package → collection → value.
func (in *Instance) State() map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]any, len(in.w.PackageList))
	for _, p := range in.w.PackageList {
		colls := map[string]any{}
		for c, v := range in.state[p] {
			colls[c] = deepCopy(v)
		}
		out[p] = colls
	}
	return out
}

// InitialState returns a copy of the state the drill began with (its
// setup's), in the shape of State.
func (in *Instance) InitialState() map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	out := make(map[string]any, len(in.w.PackageList))
	for _, p := range in.w.PackageList {
		colls := map[string]any{}
		for c, v := range in.setup.State[p] {
			colls[c] = deepCopy(v)
		}
		out[p] = colls
	}
	return out
}

// Evidence returns a copy of the evidence so far, in order.
func (in *Instance) Evidence() []Evidence {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Evidence(nil), in.evidence...)
}

// Emitted returns the events behaviors emitted, in order.
func (in *Instance) Emitted() []Emitted {
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]Emitted(nil), in.emitted...)
}

// Ordered reports whether a collection is declared ordered.
func (in *Instance) Ordered(pkg, coll string) bool {
	p := in.w.Packages[pkg]
	return p != nil && p.Ordered[coll]
}

// Call runs one operation through the call pipeline, in this order: due
// events, decode, permission, input schema, budget, idempotency, override
// selection, outcome (or behavior with faults), output schema, evidence.
func (in *Instance) Call(req Request) *Response {
	in.mu.Lock()
	defer in.mu.Unlock()
	due := in.fireDue()
	ev := Evidence{Actor: req.Actor, Operation: req.Operation, Time: in.timeText(), HTTP: req.HTTP}
	if ev.Actor == "" {
		ev.Actor = in.actor
	}
	var resp *Response
	if due != nil {
		if ev.Operation == "" {
			ev.Operation = req.Tool
		}
		resp = fail(&ev.Outcome, OutcomeDenied, CodeEventLimit, due.Error(), false)
	} else {
		resp = in.call(req, &ev)
	}
	in.record(&ev, resp)
	in.now = in.now.Add(in.w.Tick + in.latency)
	in.latency = 0
	return resp
}

func (in *Instance) timeText() string { return in.now.Format(time.RFC3339Nano) }

func (in *Instance) record(ev *Evidence, resp *Response) {
	ev.Seq = in.dropped + len(in.evidence) + 1
	ev.IsError = resp.Status != "ok"
	if resp.Error != nil {
		ev.Result = map[string]any{"code": resp.Error.Code, "message": resp.Error.Message, "retryable": resp.Error.Retryable}
	} else {
		ev.Result = resp.Output
	}
	ev.StateVersion = in.version
	resp.Evidence = *ev
	in.evidence = append(in.evidence, *ev)
	in.trimEvidence()
}

// SetEvidenceLimit keeps at most n evidence entries and n emitted events
// (the newest); 0 keeps everything. A long-running server sets it: each
// entry holds a call's arguments and result.
func (in *Instance) SetEvidenceLimit(n int) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.maxEvidence = max(n, 0)
	in.trimEvidence()
}

// trimEvidence lets the oldest entries go past the limit, a tenth of it
// at a time, into fresh slices so that their memory is freed.
func (in *Instance) trimEvidence() {
	n := in.maxEvidence
	if n == 0 {
		return
	}
	if over := len(in.evidence) - n; over > 0 {
		cut := min(len(in.evidence), over+n/10)
		in.dropped += cut
		in.evidence = append([]Evidence(nil), in.evidence[cut:]...)
	}
	if over := len(in.emitted) - n; over > 0 {
		cut := min(len(in.emitted), over+n/10)
		in.droppedEvents += cut
		in.emitted = append([]Emitted(nil), in.emitted[cut:]...)
	}
}

// EvidencePage is what GET /world/evidence reads: at most limit entries
// after seq since, the events they emitted, and how many entries and
// events the limit of SetEvidenceLimit let go.
type EvidencePage struct {
	Evidence      []Evidence `json:"evidence"`
	Events        []Emitted  `json:"events"`
	Dropped       int        `json:"dropped"`
	DroppedEvents int        `json:"dropped_events"`
	// Next is the since of the next page; More says there is one.
	Next int  `json:"next"`
	More bool `json:"more"`
}

// Page returns the evidence after seq since, at most limit entries (0:
// all), copying only those.
func (in *Instance) Page(since, limit int) EvidencePage {
	in.mu.Lock()
	defer in.mu.Unlock()
	p := EvidencePage{Evidence: []Evidence{}, Events: []Emitted{}, Dropped: in.dropped, DroppedEvents: in.droppedEvents, Next: since}
	start := max(since-in.dropped, 0)
	if start > len(in.evidence) {
		start = len(in.evidence)
	}
	end := len(in.evidence)
	if limit > 0 && end-start > limit {
		end, p.More = start+limit, true
	}
	p.Evidence = append(p.Evidence, in.evidence[start:end]...)
	if len(p.Evidence) > 0 {
		p.Next = p.Evidence[len(p.Evidence)-1].Seq
	}
	for _, e := range in.emitted {
		if e.Seq > since && (!p.More || e.Seq <= p.Next) {
			p.Events = append(p.Events, e)
		}
	}
	return p
}

func fail(outcome *string, set string, code, msg string, retryable bool) *Response {
	*outcome = set
	return &Response{Status: "error", Error: &ErrorEnvelope{Code: code, Message: msg, Retryable: retryable}}
}

func (in *Instance) call(req Request, ev *Evidence) *Response {
	if in.ended {
		return fail(&ev.Outcome, OutcomeDenied, CodeEnded, "this drill has ended; its world takes no more calls", false)
	}
	op, args, resp := in.decode(req, ev)
	if resp != nil {
		return resp
	}
	if op.Latency > 0 { // a slow service is slow whatever it answers
		in.latency, ev.LatencyMS = op.Latency, float64(op.Latency)/float64(time.Millisecond)
	}
	if resp := in.permit(op, ev); resp != nil {
		return resp
	}
	if resp := checkInput(op, args, ev); resp != nil {
		return resp
	}
	if resp := in.spendBudget(op, ev); resp != nil {
		return resp
	}
	receiptKey, resp := in.idempotency(req, op, args, ev)
	if resp != nil {
		return resp
	}
	rule := req.Force
	if rule == nil {
		rule = in.selectOverride(op, args, ev)
	} else {
		none := 0
		ev.Override = &OverrideEvidence{ID: rule.ID, Scope: rule.Scope, Outcome: string(rule.Kind), MatchCount: 1, Remaining: &none}
	}
	resp = in.outcome(rule, op, args, ev)
	if resp.Status == "ok" && receiptKey != "" {
		in.receipts[receiptKey] = deepCopy(resp.Output)
	}
	return resp
}

// decode finds the operation (by its key, else by its tool name) and
// parses the arguments, which must be a JSON object.
func (in *Instance) decode(req Request, ev *Evidence) (*Operation, map[string]any, *Response) {
	op := in.w.Operations[req.Operation]
	if op == nil && req.Tool != "" {
		op = in.w.Tools[req.Tool]
	}
	if op == nil {
		name := req.Operation
		if name == "" {
			name = req.Tool
			ev.Operation = req.Tool
		}
		return nil, nil, fail(&ev.Outcome, OutcomeInvalid, CodeUnknownOperation, fmt.Sprintf("unknown operation %q", name), false)
	}
	ev.Operation = op.Key
	args := req.Args
	if args == nil {
		text := req.Arguments
		if strings.TrimSpace(text) == "" {
			text = "{}"
		}
		v, err := value.Parse([]byte(text))
		if err != nil {
			ev.Arguments = req.Arguments
			return nil, nil, fail(&ev.Outcome, OutcomeInvalid, CodeInvalidInput, fmt.Sprintf("the arguments are not valid JSON: %v", err), false)
		}
		args = v
	}
	ev.Arguments = args
	argMap, ok := args.(map[string]any)
	if !ok {
		return nil, nil, fail(&ev.Outcome, OutcomeInvalid, CodeInvalidInput, fmt.Sprintf("the arguments must be a JSON object, not %s", value.TypeName(args)), false)
	}
	return op, argMap, nil
}

// permit denies a call by an unknown actor, or one whose actor may not
// call the operation (when the world declares actors).
func (in *Instance) permit(op *Operation, ev *Evidence) *Response {
	actor := in.w.Actors[ev.Actor]
	if len(in.w.Actors) == 0 || actor != nil && actor.Allowed(op.Key) {
		return nil
	}
	if actor == nil {
		return fail(&ev.Outcome, OutcomeDenied, CodePermission, fmt.Sprintf("unknown actor %q", ev.Actor), false)
	}
	return fail(&ev.Outcome, OutcomeDenied, CodePermission, fmt.Sprintf("actor %q may not call %s", ev.Actor, op.Key), false)
}

// checkInput refuses arguments that do not match the input schema.
func checkInput(op *Operation, args map[string]any, ev *Evidence) *Response {
	if op.InputSchema == nil {
		return nil
	}
	if leaves := op.InputSchema.Validate(args); len(leaves) > 0 {
		return fail(&ev.Outcome, OutcomeInvalid, CodeInvalidInput, schemaMessage("the arguments do not match the input schema", leaves), false)
	}
	return nil
}

// spendBudget refuses a call past any budget of its operation; otherwise
// the call counts against every one that matches.
func (in *Instance) spendBudget(op *Operation, ev *Evidence) *Response {
	var hit []int
	for i, b := range in.setup.Budgets {
		if matchOp(b.Operation, op.Key) {
			if in.budgetUsed[i] >= b.Calls {
				return fail(&ev.Outcome, OutcomeBudget, CodeBudget, fmt.Sprintf("the budget of %d call(s) for %s is spent", b.Calls, b.Operation), false)
			}
			hit = append(hit, i)
		}
	}
	for _, i := range hit {
		in.budgetUsed[i]++
	}
	return nil
}

// idempotency finds the call's idempotency key (the transport's, else the
// operation's key argument): a repeated successful key of an idempotent
// operation is answered with its receipt, before any override is
// selected. receiptKey is where a success is kept; empty for none.
func (in *Instance) idempotency(req Request, op *Operation, args map[string]any, ev *Evidence) (receiptKey string, resp *Response) {
	key := req.IdempotencyKey
	if key == "" && op.KeyArg != "" {
		switch k := args[op.KeyArg].(type) {
		case string:
			key = k
		case json.Number:
			key = string(k)
		}
	}
	if key != "" {
		k := key
		ev.IdempotencyKey = &k
	}
	if !op.Idempotent || key == "" {
		return "", nil
	}
	receiptKey = op.Key + "\x00" + key
	if out, ok := in.receipts[receiptKey]; ok {
		ev.Outcome = OutcomeReceipt
		return receiptKey, &Response{Status: "ok", Output: deepCopy(out), Receipt: true}
	}
	return receiptKey, nil
}

// selectOverride picks the override that answers the call: the highest
// scope first; within a scope, the later rule; spent rules are passed
// over. It counts the match and records it in the evidence; nil when
// none matches.
func (in *Instance) selectOverride(op *Operation, args map[string]any, ev *Evidence) *Override {
	for i := len(in.rules) - 1; i >= 0; i-- {
		r := in.rules[i]
		if r.Times > 0 && in.ruleUsed[i] >= r.Times {
			continue
		}
		if r.Matches(op.Key, ev.Actor, args) {
			in.ruleUsed[i]++
			oe := &OverrideEvidence{ID: r.ID, Scope: r.Scope, Outcome: string(r.Kind), MatchCount: in.ruleUsed[i]}
			if r.Times > 0 {
				left := r.Times - in.ruleUsed[i]
				oe.Remaining = &left
			}
			ev.Override = oe
			return r
		}
	}
	return nil
}

// outcome answers the call: the override's return or error, else the
// operation's behavior (an override's "original" outcome included).
func (in *Instance) outcome(rule *Override, op *Operation, args map[string]any, ev *Evidence) *Response {
	switch {
	case rule != nil && rule.Kind == OutReturn:
		ev.Outcome = OutcomeReturn
		return &Response{Status: "ok", Output: deepCopy(rule.Value)}
	case rule != nil && rule.Kind == OutError:
		ev.Outcome = OutcomeError
		return declared(op, rule.Code, rule.Message, rule.Retryable)
	}
	ev.Outcome = OutcomeBehavior
	if rule != nil {
		ev.Outcome = OutcomeOriginal
	}
	return in.behave(op, ev, args)
}

// declared is the answer of one of the operation's declared errors, as an
// override, a fault or a behavior raises it: its message, else the
// declaration's, else the code; retryable as declared unless retry says
// otherwise.
func declared(op *Operation, code, message string, retry *bool) *Response {
	decl := op.Errors[code]
	if message == "" {
		message = decl.Message
	}
	if message == "" {
		message = code
	}
	retryable := decl.Retryable
	if retry != nil {
		retryable = *retry
	}
	return &Response{Status: "error", Error: &ErrorEnvelope{Code: code, Message: message, Retryable: retryable}}
}

// behave runs the operation's normal behavior with its active faults.
func (in *Instance) behave(op *Operation, ev *Evidence, args map[string]any) *Response {
	// Faults: every matching fault counts the call; the first that fires
	// answers it.
	var fired *Fault
	for i := range in.setup.Faults {
		f := &in.setup.Faults[i]
		if f.Operation != op.Key {
			continue
		}
		in.faultSeen[i]++
		hit := false
		if f.Every > 0 {
			hit = in.faultSeen[i]%f.Every == 0
		} else if f.Rate > 0 {
			hit = in.faultRand.Float64() < f.Rate
		}
		if hit && fired == nil {
			fired = f
		}
	}
	if fired != nil {
		id := fired.ID
		ev.Fault = &id
		return declared(op, fired.Code, fired.Message, nil)
	}
	run := op
	if b := in.behav[op.Key]; b != nil {
		run = b
	}
	if run.fn == nil {
		return &Response{Status: "error", Error: &ErrorEnvelope{Code: CodeNotImplemented, Message: fmt.Sprintf("%s has no behavior, and no override answered this call", op.Key)}}
	}
	return in.runBehavior(run, op, ev.Actor, args, ev.Seq)
}

// runBehavior calls a handler and commits its state changes, events and
// schedules only when it succeeds with an output that matches the schema.
func (in *Instance) runBehavior(run, op *Operation, actor string, args map[string]any, _ int) *Response {
	c := &callCtx{in: in, op: op, actor: actor, staged: map[string]starlark.Value{}}
	out, de, err := c.run(run.fn, args)
	if err != nil {
		return &Response{Status: "error", Error: &ErrorEnvelope{Code: CodeBehaviorFailed, Message: err.Error()}}
	}
	if de != nil {
		return declared(op, de.code, de.message, nil)
	}
	if op.OutputSchema != nil {
		if leaves := op.OutputSchema.Validate(out); len(leaves) > 0 {
			return &Response{Status: "error", Error: &ErrorEnvelope{Code: CodeInvalidOutput, Message: schemaMessage(fmt.Sprintf("behavior %s returned an output that does not match the output schema of %s", run.Behavior, op.Key), leaves)}}
		}
	}
	// Commit.
	changed := false
	converted := make(map[string]any, len(c.order))
	for _, key := range c.order {
		v, err := fromStarlark(c.staged[key], 0)
		if err != nil {
			return &Response{Status: "error", Error: &ErrorEnvelope{Code: CodeBehaviorFailed, Message: fmt.Sprintf("behavior %s left state %s holding a value that is not JSON: %v", run.Behavior, key, err)}}
		}
		converted[key] = v
	}
	for _, key := range c.order {
		pkg, coll, _ := strings.Cut(key, ".")
		old, had := in.state[pkg][coll]
		v := converted[key]
		if had && value.Equal(old, v) || !had && isEmpty(v) {
			continue
		}
		if in.state[pkg] == nil {
			in.state[pkg] = map[string]any{}
		}
		in.state[pkg][coll] = v
		changed = true
	}
	if changed {
		in.version++
	}
	seq := in.dropped + len(in.evidence) + 1
	for _, e := range c.emits {
		e.Seq, e.Time, e.Operation = seq, in.timeText(), op.Key
		in.emitted = append(in.emitted, e)
	}
	for _, s := range c.sched {
		at, _ := resolveAt(in.now, s.at)
		in.push(scheduled{at: at, id: fmt.Sprintf("%s#%d", op.Key, seq), op: s.op, args: s.args})
	}
	return &Response{Status: "ok", Output: out}
}

func isEmpty(v any) bool {
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	}
	return v == nil
}

// fireDue runs the scheduled events that are due, in time order. Each
// runs its operation's behavior as the actor event:ID, without
// permissions, budgets, overrides or faults: it is the world's own doing.
// Past limits.events_per_tick events it drops the events still due and
// fails.
func (in *Instance) fireDue() error {
	fired := 0
	for len(in.queue) > 0 && !in.queue[0].at.After(in.now) {
		if fired == in.w.Limits.EventsPerTick {
			dropped := 0
			for len(in.queue) > 0 && !in.queue[0].at.After(in.now) {
				in.queue = in.queue[1:]
				dropped++
			}
			return fmt.Errorf("more than %d scheduled events came due at %s (a behavior that schedules itself at +0s?); %d still due were dropped; raise limits.events_per_tick in the world file if this is meant", in.w.Limits.EventsPerTick, in.timeText(), dropped)
		}
		fired++
		s := in.queue[0]
		in.queue = in.queue[1:]
		op := in.w.Operations[s.op]
		ev := Evidence{Actor: "event:" + s.id, Operation: s.op, Arguments: s.args, Time: s.at.Format(time.RFC3339Nano), Outcome: OutcomeBehavior}
		var resp *Response
		if op == nil || op.fn == nil {
			resp = &Response{Status: "error", Error: &ErrorEnvelope{Code: CodeNotImplemented, Message: fmt.Sprintf("%s has no behavior", s.op)}}
		} else {
			saved := in.now
			in.now = s.at
			run := op
			if b := in.behav[op.Key]; b != nil {
				run = b
			}
			resp = in.runBehavior(run, op, ev.Actor, s.args, 0)
			in.now = saved
		}
		in.record(&ev, resp)
	}
	return nil
}

func schemaMessage(what string, leaves []jschema.Leaf) string {
	parts := make([]string, 0, len(leaves))
	for _, l := range leaves {
		parts = append(parts, fmt.Sprintf("at %s: %s", jschema.Pointer(l.Path), l.Message))
	}
	return what + ": " + strings.Join(parts, "; ")
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		a := make([]any, len(x))
		for i, e := range x {
			a[i] = deepCopy(e)
		}
		return a
	}
	return v
}

func deepCopyState(s map[string]map[string]any) map[string]map[string]any {
	out := make(map[string]map[string]any, len(s))
	for p, colls := range s {
		m := make(map[string]any, len(colls))
		for c, v := range colls {
			m[c] = deepCopy(v)
		}
		out[p] = m
	}
	return out
}

// HTTPStatus is the status an HTTP transport answers a response with: 200
// for success (a receipt too); 404 an unknown operation, 400 invalid
// input, 403 a permission denied, 429 a spent budget, 410 a drill that
// ended, 500 a behavior that failed or returned an invalid output, and
// for a declared error 503 when it is retryable, else 422.
func (r *Response) HTTPStatus() int {
	if r.Error == nil {
		return 200
	}
	switch r.Error.Code {
	case CodeUnknownOperation:
		return 404
	case CodeInvalidInput:
		return 400
	case CodePermission:
		return 403
	case CodeBudget:
		return 429
	case CodeEnded:
		return 410
	case CodeBehaviorFailed, CodeInvalidOutput, CodeNotImplemented, CodeEventLimit, CodeToolError:
		return 500
	case CodeTimeout:
		return 504
	}
	if r.Error.Retryable {
		return 503
	}
	return 422
}
