package world

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"go.starlark.net/resolve"
	"go.starlark.net/starlark"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

func init() {
	resolve.AllowGlobalReassign = true
}

// predeclared is what every behavior module sees besides the Starlark
// built-ins: nothing that reaches the outside world; the converting
// built-ins checked against the memory budget.
var predeclared = checkedBuiltins()

type resolveErrors = resolve.ErrorList

// starPos is the innermost position of a Starlark evaluation error.
func starPos(err error) (yamlpos.Pos, string) {
	if ee, ok := errors.AsType[*starlark.EvalError](err); ok {
		msg := ee.Msg
		for i := len(ee.CallStack) - 1; i >= 0; i-- {
			p := ee.CallStack[i].Pos
			if p.IsValid() && p.Filename() != "<builtin>" {
				return yamlpos.Pos{File: p.Filename(), Line: int(p.Line), Col: max(int(p.Col), 1)}, msg
			}
		}
		return yamlpos.Pos{}, msg
	}
	return yamlpos.Pos{}, err.Error()
}

// behaviorError is a handler failure: a Starlark error, a value that is
// not JSON, a step budget spent.
type behaviorError struct {
	Pos yamlpos.Pos
	Msg string
}

func (e *behaviorError) Error() string {
	if e.Pos.File == "" {
		return e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// declaredError is what a handler returns with ctx.error(CODE, message).
type declaredError struct {
	code, message string
}

func (e *declaredError) String() string        { return fmt.Sprintf("error(%q, %q)", e.code, e.message) }
func (e *declaredError) Type() string          { return "error" }
func (e *declaredError) Freeze()               {}
func (e *declaredError) Truth() starlark.Bool  { return starlark.True }
func (e *declaredError) Hash() (uint32, error) { return 0, errors.New("unhashable: error") }

// callCtx is the ctx a behavior gets: state views that commit only when
// the handler succeeds, and the effects it asks for.
type callCtx struct {
	in     *Instance
	op     *Operation
	actor  string
	staged map[string]starlark.Value // package.collection → its view
	order  []string
	emits  []Emitted
	sched  []pending
}

type pending struct {
	at   string
	op   string
	args map[string]any
}

func (c *callCtx) String() string        { return "ctx" }
func (c *callCtx) Type() string          { return "ctx" }
func (c *callCtx) Freeze()               {}
func (c *callCtx) Truth() starlark.Bool  { return starlark.True }
func (c *callCtx) Hash() (uint32, error) { return 0, errors.New("unhashable: ctx") }

var ctxAttrs = []string{"actor", "emit", "error", "now", "operation", "random", "schedule", "state"}

func (c *callCtx) AttrNames() []string { return ctxAttrs }

// The ctx functions are built once; each finds its call's ctx through the
// thread (one thread per call), so an attribute costs no allocation.
var (
	builtinState    = ctxBuiltin("state", (*callCtx).state)
	builtinEmit     = ctxBuiltin("emit", (*callCtx).emit)
	builtinSchedule = ctxBuiltin("schedule", (*callCtx).schedule)
	builtinError    = ctxBuiltin("error", (*callCtx).errorFn)
	builtinNow      = starlark.NewBuiltin("now", func(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 0); err != nil {
			return nil, err
		}
		return starlark.String(ctxOf(t).in.now.Format("2006-01-02T15:04:05Z07:00")), nil
	})
	builtinRandom = starlark.NewBuiltin("random", func(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		if err := starlark.UnpackPositionalArgs(b.Name(), a, kw, 0); err != nil {
			return nil, err
		}
		return starlark.Float(ctxOf(t).in.behaviorRand.Float64()), nil
	})
)

func ctxOf(t *starlark.Thread) *callCtx { return t.Local("ctx").(*callCtx) }

func ctxBuiltin(name string, fn func(*callCtx, *starlark.Thread, *starlark.Builtin, starlark.Tuple, []starlark.Tuple) (starlark.Value, error)) *starlark.Builtin {
	return starlark.NewBuiltin(name, func(t *starlark.Thread, b *starlark.Builtin, a starlark.Tuple, kw []starlark.Tuple) (starlark.Value, error) {
		return fn(ctxOf(t), t, b, a, kw)
	})
}

func (c *callCtx) Attr(name string) (starlark.Value, error) {
	switch name {
	case "actor":
		return starlark.String(c.actor), nil
	case "operation":
		return starlark.String(c.op.Key), nil
	case "state":
		return builtinState, nil
	case "emit":
		return builtinEmit, nil
	case "schedule":
		return builtinSchedule, nil
	case "now":
		return builtinNow, nil
	case "random":
		return builtinRandom, nil
	case "error":
		return builtinError, nil
	}
	return nil, nil
}

// state returns a collection: "name" of the operation's package, or
// "package.name" of another.
func (c *callCtx) state(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var name string
	if err := starlark.UnpackPositionalArgs(b.Name(), args, kwargs, 1, &name); err != nil {
		return nil, err
	}
	pkg, coll := c.op.Package, name
	if p, rest, ok := strings.Cut(name, "."); ok {
		pkg, coll = p, rest
	}
	if c.in.w.Packages[pkg] == nil {
		return nil, fmt.Errorf("state(%q): no package %q", name, pkg)
	}
	key := pkg + "." + coll
	if v, ok := c.staged[key]; ok {
		return v, nil
	}
	cur := c.in.state[pkg][coll]
	var v starlark.Value
	if cur == nil {
		if c.in.w.Packages[pkg].Ordered[coll] {
			v = starlark.NewList(nil)
		} else {
			v = starlark.NewDict(0)
		}
	} else {
		var err error
		if v, err = toStarlark(cur); err != nil {
			return nil, err
		}
	}
	c.staged[key] = v
	c.order = append(c.order, key)
	return v, nil
}

func (c *callCtx) emit(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var typ string
	var data starlark.Value = starlark.None
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "type", &typ, "data?", &data); err != nil {
		return nil, err
	}
	d, err := fromStarlark(data, 0)
	if err != nil {
		return nil, fmt.Errorf("emit: data: %v", err)
	}
	c.emits = append(c.emits, Emitted{Type: typ, Data: d})
	return starlark.None, nil
}

func (c *callCtx) schedule(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var at, op string
	var a starlark.Value = starlark.NewDict(0)
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "at", &at, "operation", &op, "args?", &a); err != nil {
		return nil, err
	}
	if n := c.in.w.Limits.ScheduledPerCall; len(c.sched) >= n {
		return nil, fmt.Errorf("schedule: more than %d events scheduled by one call; raise limits.scheduled_per_call in the world file if this is meant", n)
	}
	target := c.in.w.Operations[op]
	if target == nil {
		return nil, fmt.Errorf("schedule: unknown operation %q (write package/operation)", op)
	}
	if !strings.HasPrefix(at, "+") {
		return nil, fmt.Errorf("schedule: at %q: give a delay such as +10m", at)
	}
	if _, err := resolveAt(c.in.now, at); err != nil {
		return nil, fmt.Errorf("schedule: %v", err)
	}
	v, err := fromStarlark(a, 0)
	if err != nil {
		return nil, fmt.Errorf("schedule: args: %v", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("schedule: args must be a dict, not %s", a.Type())
	}
	c.sched = append(c.sched, pending{at: at, op: op, args: m})
	return starlark.None, nil
}

func (c *callCtx) errorFn(_ *starlark.Thread, b *starlark.Builtin, args starlark.Tuple, kwargs []starlark.Tuple) (starlark.Value, error) {
	var code, msg string
	if err := starlark.UnpackArgs(b.Name(), args, kwargs, "code", &code, "message?", &msg); err != nil {
		return nil, err
	}
	if _, ok := c.op.Errors[code]; !ok {
		codes := sortedKeys(c.op.Errors)
		return nil, fmt.Errorf("error(%q): not a declared error of %s (declared: %s)", code, c.op.Key, strings.Join(codes, ", "))
	}
	return &declaredError{code: code, message: msg}, nil
}

// run calls the operation's behavior. It returns the output, or a
// declared error, or a behavior failure.
func (c *callCtx) run(fn *starlark.Function, args map[string]any) (any, *declaredError, error) {
	thread := &starlark.Thread{Name: c.op.Key, Load: noLoad}
	thread.SetLocal("ctx", c)
	thread.SetMaxExecutionSteps(c.in.w.StepBudget)
	thread.SetLocal(memKey, newMemBudget(c.in.w.Limits.MemoryMB))
	sa, err := toStarlark(args)
	if err != nil {
		return nil, nil, &behaviorError{Msg: err.Error()}
	}
	res, err := starlark.Call(thread, fn, starlark.Tuple{c, sa}, nil)
	if err != nil {
		pos, msg := starPos(err)
		if strings.Contains(msg, "too many steps") {
			msg = fmt.Sprintf("behavior %s ran past its step budget (%d steps)", fn.Name(), c.in.w.StepBudget)
		}
		return nil, nil, &behaviorError{Pos: pos, Msg: msg}
	}
	if de, ok := res.(*declaredError); ok {
		return nil, de, nil
	}
	out, err := fromStarlark(res, 0)
	if err != nil {
		p := fn.Position()
		return nil, nil, &behaviorError{Pos: yamlpos.Pos{File: p.Filename(), Line: int(p.Line), Col: int(p.Col)}, Msg: fmt.Sprintf("behavior %s returned a value that is not JSON: %v", fn.Name(), err)}
	}
	return out, nil, nil
}

// toStarlark converts a JSON value into fresh, mutable Starlark values.
func toStarlark(v any) (starlark.Value, error) {
	switch x := v.(type) {
	case nil:
		return starlark.None, nil
	case bool:
		return starlark.Bool(x), nil
	case string:
		return starlark.String(x), nil
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return starlark.MakeInt64(i), nil
			}
			if b, ok := new(big.Int).SetString(s, 10); ok {
				return starlark.MakeBigInt(b), nil
			}
		}
		f, err := x.Float64()
		if err != nil {
			return nil, err
		}
		return starlark.Float(f), nil
	case float64:
		return starlark.Float(x), nil
	case int:
		return starlark.MakeInt(x), nil
	case []any:
		elems := make([]starlark.Value, len(x))
		for i, e := range x {
			sv, err := toStarlark(e)
			if err != nil {
				return nil, err
			}
			elems[i] = sv
		}
		return starlark.NewList(elems), nil
	case map[string]any:
		d := starlark.NewDict(len(x))
		keys := make([]string, 0, len(x)) // one allocation: every call converts its arguments
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			sv, err := toStarlark(x[k])
			if err != nil {
				return nil, err
			}
			d.SetKey(starlark.String(k), sv)
		}
		return d, nil
	}
	return nil, fmt.Errorf("cannot convert %T to Starlark", v)
}

// maxJSONNodes bounds the values one conversion to JSON makes: shared
// lists nested 40 deep stand for 2^40 of them.
const maxJSONNodes = 1_000_000

// fromStarlark converts a Starlark value into a JSON value.
func fromStarlark(v starlark.Value, depth int) (any, error) {
	c := &jsonConverter{}
	return c.convert(v, depth)
}

// maxJSONDepth bounds the nesting of a value converted to JSON.
const maxJSONDepth = 100

// jsonConverter counts the values made and keeps the containers on the
// way to the current one, to tell a cycle from deep nesting.
type jsonConverter struct {
	nodes int
	path  []starlark.Value
}

func (c *jsonConverter) convert(v starlark.Value, depth int) (any, error) {
	switch v.(type) {
	case *starlark.List, *starlark.Dict:
		if slices.Contains(c.path, v) {
			return nil, fmt.Errorf("a %s that contains itself (a cycle) is not a JSON value", v.Type())
		}
		c.path = append(c.path, v)
		defer func() { c.path = c.path[:len(c.path)-1] }()
	}
	if depth > maxJSONDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", maxJSONDepth)
	}
	if c.nodes++; c.nodes > maxJSONNodes {
		return nil, fmt.Errorf("more than %d values (lists or dicts shared many times over?)", maxJSONNodes)
	}
	switch x := v.(type) {
	case starlark.NoneType:
		return nil, nil
	case starlark.Bool:
		return bool(x), nil
	case starlark.String:
		return string(x), nil
	case starlark.Int:
		return json.Number(x.String()), nil
	case starlark.Float:
		f := float64(x)
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("%v is not a JSON number", f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case *starlark.List, starlark.Tuple:
		ix := v.(starlark.Indexable)
		out := make([]any, ix.Len())
		for i := range ix.Len() {
			e, err := c.convert(ix.Index(i), depth+1)
			if err != nil {
				return nil, err
			}
			out[i] = e
		}
		return out, nil
	case *starlark.Dict:
		out := make(map[string]any, x.Len())
		for _, kv := range x.Items() {
			k, ok := kv[0].(starlark.String)
			if !ok {
				return nil, fmt.Errorf("dict key %s is not a string", kv[0])
			}
			e, err := c.convert(kv[1], depth+1)
			if err != nil {
				return nil, err
			}
			out[string(k)] = e
		}
		return out, nil
	}
	return nil, fmt.Errorf("a %s is not a JSON value", v.Type())
}
