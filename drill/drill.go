// Package drill runs dryfire drills from go test: a stateful, deterministic
// world (a *.world.yaml file) around your own Go agent. The agent keeps
// choosing its actions; the world supplies state, failures and scheduled
// events, records what happened (evidence) and gives a verdict.
//
// Replace your agent's dependencies with functions bound to the world's
// operations, run the agent inside [World.Run], and read the result:
//
//	w, err := drill.Load("support.world.yaml")
//	...
//	res, err := w.Run(ctx, &drill.Options{
//		ToolOverrides: []drill.Override{{ID: "busy-once", Operation: "refunds/refunds.create",
//			Times: 1, Outcome: drill.Outcome{Kind: "error", Code: "UNAVAILABLE"}}},
//		Checks: []drill.Check{drill.StateCount("refunds.refunds", 1)},
//	}, func(ctx context.Context, d *drill.Drill) error {
//		refund := drill.Bind(d, drill.Binding[RefundRequest, Refund]{
//			Operation:      "refunds/refunds.create",
//			IdempotencyKey: func(r RefundRequest) string { return r.RequestID },
//		})
//		return myAgent.Run(ctx, refund)
//	})
//	if res.Verdict != drill.Passed { t.Error(res.Failures) }
//
// Bound functions call the same engine as every other transport, so they
// share state and evidence with HTTP, MCP and the built-in loop. Each
// drill has its own world: parallel drills in one process never share
// state. A bound function kept after its drill ended fails with
// DRILL_ENDED. The drill's build (world, scenario and every scope's
// rules, with a hash) and seed are in the result; your test-side
// functions, application code and model randomness are not.
package drill

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// World is a loaded, validated world file. It is immutable and safe to
// share between parallel drills.
type World struct{ w *world.World }

// Load reads and validates a world file; the error lists every problem
// as FILE:LINE:COL: message.
func Load(path string) (*World, error) {
	w, ds := world.Load(path, nil)
	if ds.HasErrors() {
		return nil, ds
	}
	return &World{w: w}, nil
}

// Options set up one drill; nil means the defaults of every field.
type Options struct {
	// Scenario is a named scenario of the world; empty for the baseline.
	Scenario string
	// Actor the bound functions call as (default: the world's first).
	Actor string
	// Seed of the drill; nil for the world's seed.
	Seed *int64
	// ToolOverrides are per-test rules: the highest scope.
	ToolOverrides []Override
	// Inline is a complete starting setup of this test's own (state,
	// budgets, faults, events), as in a world file's scenario; nil keeps
	// the scenario's.
	Inline map[string]any
	// BehaviorOverrides selects another behavior function per operation
	// (package/operation → function name).
	BehaviorOverrides map[string]string
	// Checks give the verdict, with the agent's own error.
	Checks []Check
}

// Override is one toolOverrides rule.
type Override struct {
	ID        string
	Operation string // package/operation
	ActorID   string
	// Arguments: each value must match exactly (nested too); other
	// top-level arguments may differ.
	Arguments map[string]any
	Times     int // 0: unlimited
	Outcome   Outcome
}

// Outcome is what an override delivers: Kind "return" (Value), "error"
// (a declared Code, Message, Retryable) or "original".
type Outcome struct {
	Kind      string
	Value     any
	Code      string
	Message   string
	Retryable *bool
}

func (o Override) source() (map[string]any, error) {
	out := map[string]any{"kind": o.Outcome.Kind}
	switch o.Outcome.Kind {
	case "return":
		out["value"] = o.Outcome.Value
	case "error":
		out["code"] = o.Outcome.Code
		if o.Outcome.Message != "" {
			out["message"] = o.Outcome.Message
		}
		if o.Outcome.Retryable != nil {
			out["retryable"] = *o.Outcome.Retryable
		}
	}
	m := map[string]any{"operation": o.Operation, "outcome": out}
	if o.ID != "" {
		m["id"] = o.ID
	}
	if o.Times > 0 {
		m["times"] = o.Times
	}
	when := map[string]any{}
	if o.ActorID != "" {
		when["actorId"] = o.ActorID
	}
	if o.Arguments != nil {
		when["arguments"] = o.Arguments
	}
	if len(when) > 0 {
		m["when"] = when
	}
	return m, nil
}

// jsonValue turns Go values into dryfire's JSON values.
func jsonValue(v any) (any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return value.Parse(b)
}

// Verdicts.
const (
	Passed = "passed"
	Failed = "failed"
)

// Result is a finished drill.
type Result struct {
	Verdict   string // passed or failed
	Failures  []string
	AgentErr  error
	Seed      int64
	Build     string // canonical JSON
	BuildHash string
	State     map[string]any
	Evidence  []report.Evidence // every operation's, in order
	Events    []report.Event
}

// Start begins a drill; call End when done (Run does both).
func (w *World) Start(opts *Options) (*Drill, error) {
	opts = cmp.Or(opts, &Options{})
	d := world.Drill{Scenario: opts.Scenario, Actor: opts.Actor, BehaviorOverrides: opts.BehaviorOverrides, Seed: w.w.Seed}
	if opts.Seed != nil {
		d.Seed = *opts.Seed
	}
	if len(opts.ToolOverrides) > 0 {
		list := make([]any, 0, len(opts.ToolOverrides))
		for _, o := range opts.ToolOverrides {
			m, _ := o.source()
			list = append(list, m)
		}
		v, err := jsonValue(list)
		if err != nil {
			return nil, fmt.Errorf("toolOverrides: %w", err)
		}
		if d.TestOverrides, err = w.w.ParseOverrides(v, world.ScopeTest); err != nil {
			return nil, err
		}
	}
	if opts.Inline != nil {
		v, err := jsonValue(opts.Inline)
		if err != nil {
			return nil, fmt.Errorf("inline scenario: %w", err)
		}
		m, _ := v.(map[string]any)
		if d.Inline, err = w.w.ParseSetup(m); err != nil {
			return nil, err
		}
	}
	in, err := w.w.New(d)
	if err != nil {
		return nil, err
	}
	return &Drill{in: in, checks: opts.Checks}, nil
}

// Run runs one drill: agent is your agent with its dependencies bound to
// the drill's world. The drill ends when agent returns; the verdict is
// passed when agent returned nil and every check holds.
func (w *World) Run(ctx context.Context, opts *Options, agent func(ctx context.Context, d *Drill) error) (*Result, error) {
	d, err := w.Start(opts)
	if err != nil {
		return nil, err
	}
	agentErr := agent(ctx, d)
	return d.End(agentErr), nil
}

// Drill is one drill's world.
type Drill struct {
	in     *world.Instance
	checks []Check
}

// End ends the drill (bound functions fail after it) and judges it.
func (d *Drill) End(agentErr error) *Result {
	d.in.End()
	b := d.in.Build()
	r := &Result{AgentErr: agentErr, Seed: d.in.Seed(), Build: b.JSON, BuildHash: b.Hash,
		State: d.in.State(), Evidence: d.in.Evidence(), Events: d.in.Emitted()}
	if agentErr != nil {
		r.Failures = append(r.Failures, "the agent failed: "+agentErr.Error())
	}
	for _, c := range d.checks {
		if err := c(r); err != nil {
			r.Failures = append(r.Failures, err.Error())
		}
	}
	r.Verdict = Passed
	if len(r.Failures) > 0 {
		r.Verdict = Failed
	}
	return r
}

// Call calls an operation directly (args: any JSON-marshalable value).
func (d *Drill) Call(operation string, args any, idempotencyKey string) (any, error) {
	v, err := jsonValue(args)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", operation, err)
	}
	r := d.in.Call(world.Request{Operation: operation, Args: v, IdempotencyKey: idempotencyKey})
	if r.Error != nil {
		return nil, toolError(operation, r)
	}
	return r.Output, nil
}

// Reset restores the whole world: state, rule counts, budgets, clock,
// receipts. It does not touch your test's own mocks: restoring those is a
// separate operation.
func (d *Drill) Reset() { d.in.Reset() }

// ResetPackage restores one package and its rule counts only.
func (d *Drill) ResetPackage(pkg string) error { return d.in.ResetPackage(pkg) }

// Advance moves the virtual clock and fires the events then due. It fails
// when more come due at once than the world's limits.events_per_tick.
func (d *Drill) Advance(by time.Duration) error { return d.in.Advance(by) }

// State is a copy of the world's state: package → collection → value.
func (d *Drill) State() map[string]any { return d.in.State() }

// ToolError is a failed operation: the error envelope, the status an HTTP
// transport answers with, and the evidence outcome.
type ToolError struct {
	Operation string
	Code      string
	Message   string
	Retryable bool
	Status    int
	Outcome   string
}

func (e *ToolError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Operation, e.Code, e.Message)
}

// Envelope is the error as the HTTP transport sends it.
func (e *ToolError) Envelope() map[string]any {
	return map[string]any{"code": e.Code, "message": e.Message, "retryable": e.Retryable}
}

func toolError(op string, r *world.Response) *ToolError {
	return &ToolError{Operation: op, Code: r.Error.Code, Message: r.Error.Message, Retryable: r.Error.Retryable, Status: r.HTTPStatus(), Outcome: r.Evidence.Outcome}
}

// Binding maps a native function onto an operation.
type Binding[A, R any] struct {
	Operation string // package/operation
	// Input maps the function's argument to the operation's arguments
	// (default: A as JSON).
	Input func(A) any
	// Output maps the operation's output to the function's result
	// (default: the output decoded from JSON into R).
	Output func(output any) (R, error)
	// IdempotencyKey names the logical request: retries of one request
	// reuse a key; distinct requests use distinct keys.
	IdempotencyKey func(A) string
	// Error, when set, builds the error the dependency natively returns
	// from the ToolError.
	Error func(*ToolError) error
	Actor string
}

// Bind returns a function that calls the operation in the drill's world.
// A failed operation returns a *ToolError (or Error's). After the drill
// has ended, the function fails with DRILL_ENDED.
func Bind[A, R any](d *Drill, b Binding[A, R]) func(A) (R, error) {
	return func(a A) (R, error) {
		var zero R
		var in any = a
		if b.Input != nil {
			in = b.Input(a)
		}
		v, err := jsonValue(in)
		if err != nil {
			return zero, fmt.Errorf("%s: mapping the input: %w", b.Operation, err)
		}
		key := ""
		if b.IdempotencyKey != nil {
			key = b.IdempotencyKey(a)
		}
		r := d.in.Call(world.Request{Operation: b.Operation, Args: v, Actor: b.Actor, IdempotencyKey: key})
		if r.Error != nil {
			te := toolError(b.Operation, r)
			if b.Error != nil {
				return zero, b.Error(te)
			}
			return zero, te
		}
		if b.Output != nil {
			return b.Output(r.Output)
		}
		var out R
		if err := json.Unmarshal([]byte(value.Canonical(r.Output)), &out); err != nil {
			return zero, fmt.Errorf("%s: the output does not fit %T: %w", b.Operation, out, err)
		}
		return out, nil
	}
}

// Check judges a finished drill; an error is a failure.
type Check func(*Result) error

// StateEquals checks the value at a state path (package.collection.key.field
// or a JSON Pointer).
func StateEquals(path string, want any) Check {
	return func(r *Result) error {
		got, ok, err := lookup(r, path)
		if err != nil {
			return err
		}
		w, err := jsonValue(want)
		if err != nil {
			return err
		}
		if !ok || !value.Equal(w, got) {
			return fmt.Errorf("state %s: expected %s, got %s", path, value.Canonical(w), describe(got, ok))
		}
		return nil
	}
}

// StateCount checks the number of entries of a collection.
func StateCount(path string, n int) Check {
	return func(r *Result) error {
		got, ok, err := lookup(r, path)
		if err != nil {
			return err
		}
		c := -1
		switch x := got.(type) {
		case map[string]any:
			c = len(x)
		case []any:
			c = len(x)
		}
		if c != n {
			return fmt.Errorf("state %s: expected %d entries, got %s", path, n, describe(got, ok))
		}
		return nil
	}
}

// Emitted checks that an event of the type was emitted n times (n < 0:
// at least once).
func Emitted(typ string, n int) Check {
	return func(r *Result) error {
		c := 0
		for _, e := range r.Events {
			if e.Type == typ {
				c++
			}
		}
		if n < 0 && c == 0 || n >= 0 && c != n {
			return fmt.Errorf("event %s: emitted %d times", typ, c)
		}
		return nil
	}
}

// Called checks how often the agent called an operation.
func Called(operation string, times int) Check {
	return func(r *Result) error {
		c := 0
		for _, e := range r.Evidence {
			if e.Operation == operation && !strings.HasPrefix(e.Actor, "event:") {
				c++
			}
		}
		if c != times {
			return fmt.Errorf("%s: called %d times, expected %d", operation, c, times)
		}
		return nil
	}
}

func lookup(r *Result, path string) (any, bool, error) {
	steps, err := world.SplitPath(path)
	if err != nil {
		return nil, false, fmt.Errorf("state path %q: %w", path, err)
	}
	v, ok := world.Lookup(r.State, steps)
	return v, ok, nil
}

func describe(v any, ok bool) string {
	if !ok {
		return "nothing (absent)"
	}
	return value.Truncate(value.Canonical(v), 200)
}
