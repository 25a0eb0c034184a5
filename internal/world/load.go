package world

import (
	"cmp"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/schema"
)

var worldSchema = sync.OnceValues(func() (*yamlpos.FormatSchema, error) {
	return yamlpos.NewFormatSchema(schema.World, schema.WorldURL, []yamlpos.SchemaContext{
		{Prefix: "/$defs/operation", Label: "operation"},
		{Prefix: "/$defs/error_decl", Label: "error declaration"},
		{Prefix: "/$defs/package_http", Label: "package http"},
		{Prefix: "/$defs/route", Label: "http route"},
		{Prefix: "/$defs/http_errors", Label: "http errors"},
		{Prefix: "/$defs/package", Label: "package"},
		{Prefix: "/$defs/actor", Label: "actor"},
		{Prefix: "/$defs/budget", Label: "budget"},
		{Prefix: "/$defs/fault", Label: "fault"},
		{Prefix: "/$defs/event", Label: "event"},
		{Prefix: "/$defs/override/properties/when", Label: "override when"},
		{Prefix: "/$defs/override/properties/operation", Label: "override operation"},
		{Prefix: "/$defs/override", Label: "tool override"},
		{Prefix: "/$defs/outcome", Label: "override outcome"},
		{Prefix: "/$defs/scenario", Label: "scenario"},
		{Prefix: "/properties/clock", Label: "clock"},
		{Prefix: "", Label: "world"},
	})
})

// Load reads and validates a world file.
func Load(file string, opts *LoadOptions) (*World, yamlpos.Diagnostics) {
	data, err := safeio.ReadFile(file, "world", safeio.Limit(safeio.MaxYAML))
	if err != nil {
		return nil, yamlpos.Diagnostics{{Pos: yamlpos.Pos{File: file, Line: 1, Col: 1}, Message: fmt.Sprintf("reading world: %v", err)}}
	}
	return Parse(file, data, opts)
}

// Parse loads a world from its bytes; file names it in positions and
// behavior paths are relative to it. It never panics: any input gives a
// world or diagnostics (a world only when there is no error).
func Parse(file string, data []byte, opts *LoadOptions) (*World, yamlpos.Diagnostics) {
	if opts == nil {
		opts = &LoadOptions{}
	}
	doc := yamlpos.ParseDocument(file, data, "world", "empty world file: expected a mapping with version, world and packages")
	if doc.Root == nil {
		return nil, doc.Diagnostics()
	}
	m, ok := doc.Value.(map[string]any)
	if !ok {
		doc.Errorf(doc.Root, "a world must be a mapping with version, world and packages, not %s", yamlpos.Describe(doc.Value))
		return nil, doc.Diagnostics()
	}
	fs, err := worldSchema()
	if err != nil {
		doc.Errorf(doc.Root, "internal error: %v", err)
		return nil, doc.Diagnostics()
	}
	doc.CheckSchema(fs)
	l := &loader{doc: doc, opts: opts, w: &World{
		File: file, Doc: m, Sources: map[string]string{},
		Packages: map[string]*Package{}, Operations: map[string]*Operation{},
		Tools: map[string]*Operation{}, Actors: map[string]*Actor{},
		Scenarios: map[string]*Setup{}, funcs: map[string]*starlark.Function{},
		Start: defaultStart, Tick: time.Second, StepBudget: DefaultStepBudget,
		Limits: Limits{ScheduledPerCall: DefaultScheduledPerCall, EventsPerTick: DefaultEventsPerTick, MemoryMB: DefaultMemoryMB},
	}}
	l.world()
	ds := append(doc.Diagnostics(), l.extra...)
	if ds.HasErrors() {
		return nil, ds
	}
	return l.w, ds
}

type loader struct {
	doc   *yamlpos.Document
	opts  *LoadOptions
	w     *World
	extra yamlpos.Diagnostics // problems in behavior modules, at their own positions
	// actorNames are the world's actors, known before its packages load
	// (nil: the world declares none).
	actorNames []string
}

func (l *loader) errorf(n *yaml.Node, format string, args ...any) {
	l.doc.Errorf(n, format, args...)
}

func str(v any) string { s, _ := v.(string); return s }

func (l *loader) world() {
	root, doc := l.doc.Root, l.doc.Value
	at := func(key string) yamlpos.KV { return yamlpos.Get(root, doc, key) }
	setup := &Setup{Name: "", State: map[string]map[string]any{}}
	l.w.Name = str(at("world").Val)
	seed := at("seed")
	if n, ok := seed.Val.(json.Number); ok {
		if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
			l.w.Seed = i
		} else if !strings.ContainsAny(string(n), ".eE") {
			l.errorf(seed.V, "seed %s does not fit in 64 bits", n)
		}
	}
	if n, ok := at("step_budget").Val.(json.Number); ok {
		if i, err := strconv.ParseUint(string(n), 10, 64); err == nil && i > 0 {
			l.w.StepBudget = i
		}
	}
	l.limits(at("limits"))
	l.clock(at("clock"))
	if b := at("behaviors"); b.V != nil {
		l.behaviors(b)
	}
	actors := at("actors")
	for _, a := range yamlpos.Pairs(actors.V, actors.Val) {
		l.actorNames = append(l.actorNames, a.Key())
	}
	if p := at("packages"); p.V != nil {
		l.packages(p, setup)
	}
	for _, a := range yamlpos.Pairs(actors.V, actors.Val) {
		act := &Actor{Name: a.Key()}
		allow := yamlpos.Get(a.V, a.Val, "allow")
		for _, it := range yamlpos.Items(allow.V, allow.Val) {
			if pat := str(it.Val); pat != "" {
				act.Allow = append(act.Allow, pat)
				l.checkPattern(it.N, pat)
			}
		}
		l.w.Actors[act.Name] = act
		l.w.ActorList = append(l.w.ActorList, act.Name)
	}
	l.setupLists(setup, root, doc, ScopeWorld)
	l.w.Baseline = setup
	scenarios := at("scenarios")
	for _, sc := range yamlpos.Pairs(scenarios.V, scenarios.Val) {
		s := &Setup{Name: sc.Key(), State: map[string]map[string]any{}}
		state := yamlpos.Get(sc.V, sc.Val, "state")
		for _, pk := range yamlpos.Pairs(state.V, state.Val) {
			if l.w.Packages[pk.Key()] == nil {
				l.errorf(pk.K, "scenario %q: unknown package %q%s", s.Name, pk.Key(), suggest.DidYouMean(pk.Key(), l.w.PackageList))
				continue
			}
			if st, ok := pk.Val.(map[string]any); ok {
				s.State[pk.Key()] = st
			}
		}
		l.setupLists(s, sc.V, sc.Val, ScopeScenario)
		l.w.Scenarios[s.Name] = s
	}
}

// limits reads the world's limits: whole numbers in the ranges the
// schema checks.
func (l *loader) limits(p yamlpos.KV) {
	for _, q := range yamlpos.Pairs(p.V, p.Val) {
		n, ok := q.Val.(json.Number)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(string(n))
		if err != nil || i < 1 {
			continue
		}
		switch q.Key() {
		case "scheduled_per_call":
			l.w.Limits.ScheduledPerCall = i
		case "events_per_tick":
			l.w.Limits.EventsPerTick = i
		case "memory_mb":
			l.w.Limits.MemoryMB = i
		}
	}
}

func (l *loader) clock(p yamlpos.KV) {
	for _, q := range yamlpos.Pairs(p.V, p.Val) {
		switch q.Key() {
		case "start":
			t, err := time.Parse(time.RFC3339, str(q.Val))
			if err != nil {
				l.errorf(q.V, "clock.start %q is not an RFC 3339 time such as 2026-01-01T09:00:00Z", str(q.Val))
				continue
			}
			l.w.Start = t.UTC()
		case "tick":
			d, err := time.ParseDuration(str(q.Val))
			if err != nil || d < 0 {
				l.errorf(q.V, "clock.tick %q is not a duration such as 1s or 250ms", str(q.Val))
				continue
			}
			l.w.Tick = d
		}
	}
}

func (l *loader) packages(p yamlpos.KV, setup *Setup) {
	for _, pk := range yamlpos.Pairs(p.V, p.Val) {
		l.w.PackageList = append(l.w.PackageList, pk.Key())
	}
	sort.Strings(l.w.PackageList)
	for _, pk := range yamlpos.Pairs(p.V, p.Val) {
		name := pk.Key()
		if strings.ContainsAny(name, "/.") || name == "" {
			l.errorf(pk.K, "package name %q may not contain / or . (they separate package, operation and state paths)", name)
		}
		pkg := &Package{Name: name, Ordered: map[string]bool{}}
		l.w.Packages[name] = pkg
		var ops []*Operation
		nodes := map[*Operation]*yaml.Node{}
		for _, q := range yamlpos.Pairs(pk.V, pk.Val) {
			switch q.Key() {
			case "state":
				if st, ok := q.Val.(map[string]any); ok {
					setup.State[name] = st
				}
			case "operations":
				for _, o := range yamlpos.Pairs(q.V, q.Val) {
					op := l.operation(pkg, o)
					ops = append(ops, op)
					nodes[op] = o.K
				}
			}
		}
		ordered, httpKV := yamlpos.Get(pk.V, pk.Val, "ordered"), yamlpos.Get(pk.V, pk.Val, "http")
		if httpKV.V != nil {
			l.packageHTTP(pkg, httpKV, ops)
		}
		l.routes(pkg, ops, nodes, httpKV.K)
		for _, it := range yamlpos.Items(ordered.V, ordered.Val) {
			c := str(it.Val)
			st := setup.State[name][c]
			if _, isList := st.([]any); st != nil && !isList {
				l.errorf(it.N, "collection %q is a mapping of keys; only a list collection can be ordered", c)
			}
			pkg.Ordered[c] = true
		}
	}
	sort.Strings(l.w.OpList)
}

func (l *loader) operation(pkg *Package, o yamlpos.KV) *Operation {
	op := &Operation{Package: pkg.Name, Name: o.Key(), Errors: map[string]ErrorDecl{}, Pos: l.doc.Pos(o.K)}
	op.Key = pkg.Name + "/" + op.Name
	if strings.Contains(op.Name, "/") {
		l.errorf(o.K, "operation name %q may not contain /", op.Name)
	}
	var toolNode, behaviorNode, keyNode *yaml.Node
	for _, q := range yamlpos.Pairs(o.V, o.Val) {
		switch q.Key() {
		case "tool":
			op.Tool, toolNode = str(q.Val), q.V
		case "description":
			op.Description = str(q.Val)
		case "input":
			op.Input = q.Val
			op.InputSchema = l.doc.CompileSchema(q.V, q.Val, fmt.Sprintf("input of %s", op.Key))
		case "output":
			op.Output = q.Val
			op.OutputSchema = l.doc.CompileSchema(q.V, q.Val, fmt.Sprintf("output of %s", op.Key))
		case "errors":
			for _, e := range yamlpos.Pairs(q.V, q.Val) {
				d := ErrorDecl{}
				if m, ok := e.Val.(map[string]any); ok {
					d.Retryable, _ = m["retryable"].(bool)
					d.Message = str(m["message"])
				}
				op.Errors[e.Key()] = d
			}
		case "idempotent":
			op.Idempotent, _ = q.Val.(bool)
		case "idempotency_key":
			op.KeyArg, keyNode = str(q.Val), q.V
			op.Idempotent = true
		case "behavior":
			op.Behavior, behaviorNode = str(q.Val), q.V
		case "latency":
			d, err := time.ParseDuration(str(q.Val))
			switch {
			case err != nil || d < 0:
				l.errorf(q.V, "latency %q of %s is not a duration such as 250ms or 2s", str(q.Val), op.Key)
			case d > MaxLatency:
				l.errorf(q.V, "latency %q of %s is more than 24h, the most one call may take", str(q.Val), op.Key)
			default:
				op.Latency = d
			}
		}
	}
	if routeKV := yamlpos.Get(o.V, o.Val, "http"); routeKV.V != nil {
		l.route(op, routeKV) // after input and errors: it checks names against them
	}
	if op.Tool == "" {
		op.Tool = badToolChar().ReplaceAllString(op.Name, "_")
		toolNode = o.K
	} else if !toolName().MatchString(op.Tool) {
		l.errorf(toolNode, "tool name %q: use 1 to 64 letters, digits, _ or - (what model APIs accept)", op.Tool)
	}
	if prev, dup := l.w.Tools[op.Tool]; dup {
		l.errorf(toolNode, "tool name %q is already used by %s (line %d); tool names are unique in a world", op.Tool, prev.Key, prev.Pos.Line)
	} else {
		l.w.Tools[op.Tool] = op
	}
	if op.KeyArg != "" {
		if props := properties(op.Input); props != nil {
			if _, ok := props[op.KeyArg]; !ok {
				l.doc.Warnf(keyNode, "idempotency_key %q is not a property of the input of %s%s", op.KeyArg, op.Key, suggest.DidYouMean(op.KeyArg, sortedKeys(props)))
			}
		}
	}
	if op.Behavior != "" {
		fn, ok := l.w.funcs[op.Behavior]
		if !ok {
			l.errorf(behaviorNode, "behavior %q is not a function of the behavior modules%s", op.Behavior, suggest.DidYouMean(op.Behavior, sortedKeys(l.w.funcs)))
		} else if fn.NumParams() < 2 && !fn.HasVarargs() {
			l.errorf(behaviorNode, "behavior %q takes %d parameter(s); a behavior is def %s(ctx, args)", op.Behavior, fn.NumParams(), op.Behavior)
		}
		op.fn = fn
	}
	l.w.Operations[op.Key] = op
	l.w.OpList = append(l.w.OpList, op.Key)
	return op
}

func properties(schema any) map[string]any {
	m, _ := schema.(map[string]any)
	p, _ := m["properties"].(map[string]any)
	return p
}

// opRef resolves an operation reference (package/operation) written at n.
func (l *loader) opRef(n *yaml.Node, ref string) *Operation {
	if op := l.w.Operations[ref]; op != nil {
		return op
	}
	pkg, _, ok := strings.Cut(ref, "/")
	switch {
	case !ok:
		l.errorf(n, "operation %q: write package/operation%s", ref, suggest.DidYouMean(ref, l.w.OpList))
	case l.w.Packages[pkg] == nil:
		l.errorf(n, "unknown package %q in %q%s", pkg, ref, suggest.DidYouMean(pkg, l.w.PackageList))
	default:
		l.errorf(n, "unknown operation %q%s", ref, suggest.DidYouMean(ref, l.w.OpList))
	}
	return nil
}

// checkPattern checks an operation pattern (*, package/*, package/op).
func (l *loader) checkPattern(n *yaml.Node, pat string) {
	if pat == "*" {
		return
	}
	if pkg, ok := strings.CutSuffix(pat, "/*"); ok {
		if l.w.Packages[pkg] == nil {
			l.errorf(n, "unknown package %q in %q%s", pkg, pat, suggest.DidYouMean(pkg, l.w.PackageList))
		}
		return
	}
	l.opRef(n, pat)
}

// setupLists decodes the budgets, faults, events and toolOverrides of a
// setup, the mapping n (converted: val).
func (l *loader) setupLists(s *Setup, n *yaml.Node, val any, scope Scope) {
	budgets, faults := yamlpos.Get(n, val, "budgets"), yamlpos.Get(n, val, "faults")
	events, overrides := yamlpos.Get(n, val, "events"), yamlpos.Get(n, val, "toolOverrides")
	for _, it := range yamlpos.Items(budgets.V, budgets.Val) {
		m, _ := it.Val.(map[string]any)
		b := Budget{Operation: str(m["operation"])}
		calls, _ := m["calls"].(json.Number)
		b.Calls, _ = strconv.Atoi(string(calls))
		if b.Operation != "" {
			_, on := yamlpos.Lookup(it.N, "operation")
			l.checkPattern(on, b.Operation)
		}
		s.Budgets = append(s.Budgets, b)
	}
	ids := map[string]bool{}
	for i, it := range yamlpos.Items(faults.V, faults.Val) {
		m, _ := it.Val.(map[string]any)
		f := Fault{ID: str(m["id"]), Operation: str(m["operation"]), Code: str(m["error"]), Message: str(m["message"]), Pos: l.doc.Pos(it.N)}
		if f.ID == "" {
			f.ID = fmt.Sprintf("fault-%d", i+1)
		}
		if ids[f.ID] {
			_, idn := yamlpos.Lookup(it.N, "id")
			l.errorf(idn, "duplicate fault id %q", f.ID)
		}
		ids[f.ID] = true
		every, _ := m["every"].(json.Number)
		f.Every, _ = strconv.Atoi(string(every))
		if r, ok := num(m["rate"]); ok {
			f.Rate = r
		}
		_, hasEvery := m["every"]
		_, hasRate := m["rate"]
		switch {
		case hasEvery && hasRate:
			k, _ := yamlpos.Lookup(it.N, "rate")
			l.errorf(k, "a fault fails either every N calls or at a rate, not both")
		case !hasEvery && !hasRate && m != nil:
			l.errorf(it.N, "fault %q needs every (fail every Nth call) or rate (a share of calls, seeded)", f.ID)
		}
		_, on := yamlpos.Lookup(it.N, "operation")
		if op := l.opRefIf(on, f.Operation); op != nil && f.Code != "" {
			if _, ok := op.Errors[f.Code]; !ok {
				_, en := yamlpos.Lookup(it.N, "error")
				l.undeclared(en, op, f.Code)
			}
		}
		s.Faults = append(s.Faults, f)
	}
	ids = map[string]bool{}
	for i, it := range yamlpos.Items(events.V, events.Val) {
		m, _ := it.Val.(map[string]any)
		e := Event{ID: str(m["id"]), At: str(m["at"]), Operation: str(m["operation"]), Pos: l.doc.Pos(it.N)}
		e.Arguments, _ = m["arguments"].(map[string]any)
		if e.Arguments == nil {
			e.Arguments = map[string]any{}
		}
		if e.ID == "" {
			e.ID = fmt.Sprintf("event-%d", i+1)
		}
		if ids[e.ID] {
			_, idn := yamlpos.Lookup(it.N, "id")
			l.errorf(idn, "duplicate event id %q", e.ID)
		}
		ids[e.ID] = true
		if _, err := l.w.eventTime(e.At); err != nil && e.At != "" {
			_, an := yamlpos.Lookup(it.N, "at")
			l.errorf(an, "%v", err)
		}
		_, on := yamlpos.Lookup(it.N, "operation")
		if op := l.opRefIf(on, e.Operation); op != nil {
			if op.fn == nil && op.Behavior == "" {
				l.errorf(on, "event %q calls %s, which has no behavior to run", e.ID, op.Key)
			}
			if op.InputSchema != nil {
				_, an := yamlpos.Lookup(it.N, "arguments")
				an = cmp.Or(an, it.N)
				l.validate(an, op.InputSchema, e.Arguments, fmt.Sprintf("event %q arguments do not match the input of %s", e.ID, op.Key))
			}
		}
		s.Events = append(s.Events, e)
	}
	for _, it := range yamlpos.Items(overrides.V, overrides.Val) {
		if o := l.override(it, scope); o != nil {
			s.Overrides = append(s.Overrides, o)
		}
	}
}

func (l *loader) opRefIf(n *yaml.Node, ref string) *Operation {
	if ref == "" {
		return nil
	}
	return l.opRef(n, ref)
}

func (l *loader) undeclared(n *yaml.Node, op *Operation, code string) {
	codes := sortedKeys(op.Errors)
	if len(codes) == 0 {
		l.errorf(n, "error %q is not declared by %s, which declares no errors (add it under errors:)", code, op.Key)
		return
	}
	l.errorf(n, "error %q is not declared by %s%s; declared: %s", code, op.Key, suggest.DidYouMean(code, codes), strings.Join(codes, ", "))
}

// validate checks v against a schema and reports each failure at n.
func (l *loader) validate(n *yaml.Node, s *jschema.Schema, v any, what string) bool {
	leaves := s.Validate(v)
	for _, lf := range leaves {
		at, _ := yamlpos.At(n, lf.Path...)
		l.errorf(at, "%s: at %s: %s", what, jschema.Pointer(lf.Path), lf.Message)
	}
	return len(leaves) == 0
}

// eventTime resolves an event's at: +DURATION from the clock's start, or
// an RFC 3339 time.
func (w *World) eventTime(at string) (time.Time, error) {
	return resolveAt(w.Start, at)
}

func resolveAt(base time.Time, at string) (time.Time, error) {
	if rel, ok := strings.CutPrefix(at, "+"); ok {
		d, err := time.ParseDuration(rel)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("at %q: after + comes a duration such as 10m or 1h30m", at)
		}
		return base.Add(d), nil
	}
	t, err := time.Parse(time.RFC3339, at)
	if err != nil {
		return time.Time{}, fmt.Errorf("at %q is neither +DURATION (after the clock's start) nor an RFC 3339 time", at)
	}
	return t.UTC(), nil
}
