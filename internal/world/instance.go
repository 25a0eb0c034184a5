package world

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/report"
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

// Emitted is an event a behavior emitted with ctx.emit; it and the
// evidence types are the report's (package report).
type Emitted = report.Event

// Evidence is the record of one operation, whatever transport made it.
type Evidence = report.Evidence

// OverrideEvidence is the override that shaped a call (its scope's name).
type OverrideEvidence = report.OverrideEvidence

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
	// Raw, when set, is the answer as a fault sweep corrupted it: a
	// package's HTTP route writes it as its body, /ops as its output.
	Raw string `json:"-"`
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
	maps.DeleteFunc(in.receipts, func(k string, _ any) bool { return strings.HasPrefix(k, prefix) })
	in.queue = slices.DeleteFunc(in.queue, func(s scheduled) bool { return strings.HasPrefix(s.op, prefix) })
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
	return in.copyState(in.state)
}

// InitialState returns a copy of the state the drill began with (its
// setup's), in the shape of State.
func (in *Instance) InitialState() map[string]any {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.copyState(in.setup.State)
}

func (in *Instance) copyState(state map[string]map[string]any) map[string]any {
	out := make(map[string]any, len(in.w.PackageList))
	for _, p := range in.w.PackageList {
		colls := map[string]any{}
		for c, v := range state[p] {
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

func deepCopy(v any) any { return value.Map(v, nil) }

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
