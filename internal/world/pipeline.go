package world

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.starlark.net/starlark"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// The call pipeline: one operation from decode to evidence (Instance.Call).

// Call runs one operation through the call pipeline, in this order: due
// events, decode, permission, input schema, budget, idempotency, override
// selection, outcome (or behavior with faults), output schema, evidence.
func (in *Instance) Call(req Request) *Response {
	in.mu.Lock()
	defer in.mu.Unlock()
	due := in.fireDue()
	ev := Evidence{Actor: cmp.Or(req.Actor, in.actor), Operation: req.Operation, Time: in.timeText(), HTTP: req.HTTP}
	var resp *Response
	if due != nil {
		ev.Operation = cmp.Or(ev.Operation, req.Tool)
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
		ev.Override = &OverrideEvidence{ID: rule.ID, Scope: rule.Scope.String(), Outcome: string(rule.Kind), MatchCount: 1, Remaining: &none}
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
			oe := &OverrideEvidence{ID: r.ID, Scope: r.Scope.String(), Outcome: string(r.Kind), MatchCount: in.ruleUsed[i]}
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
	message = cmp.Or(message, decl.Message, code)
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

func schemaMessage(what string, leaves []jschema.Leaf) string {
	parts := make([]string, 0, len(leaves))
	for _, l := range leaves {
		parts = append(parts, fmt.Sprintf("at %s: %s", jschema.Pointer(l.Path), l.Message))
	}
	return what + ": " + strings.Join(parts, "; ")
}
