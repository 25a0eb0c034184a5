package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// decoder turns a schema-checked node tree into a Suite and reports what
// the schema cannot: outcomes per rule, duplicate names, references
// between parts of the file.
type decoder struct {
	root *yaml.Node
	file string
	d    *yamlpos.Collector
	conv *yamlpos.Converter
	opts *Options

	// A rule list reached again through an alias decodes quietly: its
	// problems were reported the first time, under another tool's name.
	ruleLists map[*yaml.Node]bool
	quiet     int

	// firstCase is the line (virtual for a data file's row) where each
	// case name is first written.
	firstCase nameSet
	// cross is what checking a case against the suite needs (crossHead).
	cross cross

	regexes map[string]*regexp.Regexp
	// workspaces: whether each workspace named is inside the project root.
	workspaces map[string]error

	// kvs holds the entries of the mappings being decoded (pairs).
	kvs []yamlpos.KV
	// convertLate: the case item was not converted whole; its parts are
	// converted as they are decoded (pairs).
	convertLate bool
	// lateSources: what only a kept case is read for (a check's source
	// text, a call's arguments as JSON) is made after the case is decoded,
	// and only when it will not be a stub (makeSources).
	lateSources bool

	// rows, while a data file's rows make cases, is where they are read
	// again from when they are kept as stubs (lazy.go); nil otherwise.
	rows *rowSource
	// fixed, on a worker checking rows of a counted suite, is what its
	// converter is given as Converter.Fixed.
	fixed map[*yaml.Node]*yamlpos.Fixed
}

// pairs is yamlpos.Pairs(n, val), kept in x.kvs: done(mark) gives the
// room back once they are read. A mapping decoded inside another while
// the outer's entries are read takes the room after them.
//
// With x.convertLate (val is nil then), each entry's value is converted
// here, but for the entries named in late: lists decoded item by item,
// whose items' values are converted as they are decoded. So the maps
// and lists a case is made of are never made as values: only the values
// it keeps are.
func (x *decoder) pairs(n *yaml.Node, val any, late ...string) (ps []yamlpos.KV, mark int) {
	mark = len(x.kvs)
	x.kvs = yamlpos.AppendPairs(x.kvs, n, val)
	ps = x.kvs[mark:len(x.kvs):len(x.kvs)]
	if x.convertLate {
		for i := range ps {
			if !slices.Contains(late, ps[i].Key()) {
				// The depth only bounds nesting, which was checked when
				// the case was loaded: one that is not deeper will do.
				ps[i].Val = x.conv.Convert(ps[i].V, 3)
			}
		}
	}
	return ps, mark
}

func (x *decoder) done(mark int) {
	clear(x.kvs[mark:])
	x.kvs = x.kvs[:mark]
}

func str(val any) string {
	s, _ := val.(string)
	return s
}

// strPtr is val when it is a string, else nil.
func strPtr(val any) *string {
	if s, ok := val.(string); ok {
		return new(s) // only here: &s would be made on the heap for every val
	}
	return nil
}

// number is val as a float (0 when it is not a number).
func number(val any) float64 {
	if n, ok := val.(json.Number); ok {
		f, _ := n.Float64()
		return f
	}
	return 0
}

// integer reads a count. The schema has checked that it is an integer,
// which JSON Schema says 2.0 and 1e2 are too; one too large for an int is
// reported here.
func (x *decoder) integer(n *yaml.Node, val any) (int, bool) {
	num, ok := val.(json.Number)
	if !ok {
		return 0, false
	}
	if i, err := strconv.Atoi(string(num)); err == nil {
		return i, true
	}
	f, err := strconv.ParseFloat(string(num), 64)
	switch {
	case err == nil && f != math.Trunc(f):
		return 0, false // not an integer: reported by the schema
	case err != nil || f > math.MaxInt32 || f < math.MinInt32:
		x.errorf(n, "%s is too large; counts go up to %d", value.Truncate(string(num), 40), math.MaxInt32)
		return 0, false
	}
	return int(f), true
}

func (x *decoder) errorf(n *yaml.Node, format string, args ...any) {
	if x.quiet == 0 {
		x.d.Add(yamlpos.Error, n.Line, n.Column, format, args...)
	}
}

func (x *decoder) warnf(n *yaml.Node, format string, args ...any) {
	if x.quiet == 0 {
		x.d.Add(yamlpos.Warning, n.Line, n.Column, format, args...)
	}
}

// suite decodes everything of the suite but its cases (decodeCase).
func (x *decoder) suite(root *yaml.Node, doc any) *Suite {
	s := &Suite{File: x.file, Root: x.opts.Root, Mocks: map[string][]*Rule{}}
	if s.Root == "" {
		s.Root = safeio.DefaultRoot(x.file) // once, not per case
	}
	for _, p := range yamlpos.Pairs(root, doc) {
		switch p.Key() {
		case "name":
			s.Name = str(p.Val)
		case "agent":
			s.Agent = x.agent(p)
		case "tools":
			for _, t := range yamlpos.Pairs(p.V, p.Val) {
				s.Tools = append(s.Tools, x.tool(t))
			}
		case "mocks":
			s.Mocks, s.MockOrder = x.mocks(p.V, p.Val)
		case "resources":
			s.Resources = x.resources(p.V, p.Val)
		case "prompts":
			s.Prompts = x.prompts(p.V, p.Val)
		case "script":
			for ti, tn := range yamlpos.Items(p.V, p.Val) {
				if t := x.turn(tn, ti); t != nil {
					s.Script = append(s.Script, t)
				}
			}
		case "world":
			s.World, s.WorldPos = str(p.Val), x.d.Pos(p.V)
		case "scenario":
			s.Scenario, s.ScenarioPos = str(p.Val), x.d.Pos(p.V)
		case "match":
			s.Match = x.match(p.V, p.Val)
		case "workspace":
			s.Workspace, s.WorkspacePos = str(p.Val), x.d.Pos(p.V)
		case "trials":
			s.Trials, _ = x.integer(p.V, p.Val)
		case "target":
			s.Target = x.target(p)
		case "invariants":
			s.Invariants = x.invariants(p.V, p.Val)
		case "injections":
			s.Injections = x.injections(p.K, p.V, p.Val)
		}
	}
	if k, _ := yamlpos.Lookup(root, "agent"); k == nil && s.World != "" {
		s.NoAgent = true
	}
	if s.Target != nil {
		k, _ := yamlpos.Lookup(root, "target")
		switch {
		case s.World == "":
			x.errorf(k, "target declares the agent of a world's drills: it needs world:")
		case !s.NoAgent:
			a, _ := yamlpos.Lookup(root, "agent")
			x.errorf(a, "target kind external is the test's own agent, run by runDrills / run_drills: remove agent:, or target")
		}
	}
	if s.World != "" {
		for _, key := range []string{"tools", "mocks"} {
			if k, _ := yamlpos.Lookup(root, key); k != nil {
				x.errorf(k, "a world suite takes its tools from the world's operations: remove %s (use toolOverrides in the world, a scenario or a case)", key)
			}
		}
	} else if s.Scenario != "" {
		k, _ := yamlpos.Lookup(root, "scenario")
		x.errorf(k, "scenario needs world: a scenario is part of a world file")
	}
	x.checkInjections(s, root)
	if s.Name == "" {
		s.Name = defaultName(x.file)
	}
	x.firstCase = nameSet{}
	x.crossHead(s)
	return s
}

// target decodes the suite's target: (the schema has checked its shape).
func (x *decoder) target(p yamlpos.KV) *Target {
	t := &Target{Pos: x.d.Pos(p.K)}
	m, _ := p.Val.(map[string]any)
	t.Kind = str(m["kind"])
	list, _ := m["bindings"].([]any)
	for _, b := range list {
		t.Bindings = append(t.Bindings, str(b))
	}
	if len(t.Bindings) == 0 {
		t.Bindings = AllBindings
	}
	return t
}

// decodeCase decodes case it, the index-th, and checks it against the
// suite: the case (nil when it is not one), and the line of its name key
// and its name node for keepCase.
func (x *decoder) decodeCase(s *Suite, it yamlpos.Item, index int) (*Case, int, *yaml.Node) {
	c := x.caseOf(it, index)
	if c == nil {
		return nil, 0, nil
	}
	x.crossCase(s, c)
	nameKey, nameNode := yamlpos.Lookup(it.N, "name")
	if nameKey == nil {
		return c, 0, nil
	}
	return c, nameKey.Line, nameNode
}

// keepCase checks that the name of case c is the first of its kind and
// keeps the case, or counts it (Options.Discard: c may be nil).
func (x *decoder) keepCase(s *Suite, c *Case, name string, nameLine int, nameNode *yaml.Node) {
	if name != "" && nameNode != nil {
		if line, dup := x.firstCase.line(name); dup {
			first := x.d.Pos(&yaml.Node{Line: line})
			where := fmt.Sprintf("line %d", first.Line)
			if first.File != x.d.Pos(nameNode).File {
				where = first.FileLine()
			}
			x.errorf(nameNode, "duplicate case name %q (first at %s); case names are unique within a suite", name, where)
		} else {
			x.firstCase.add(name, nameLine)
		}
	}
	if x.opts.Discard && s.World == "" {
		s.Discarded++
		return
	}
	x.keep(s, c) // lazy.go
}

// makeSources makes what lateSources left out of case c, while its
// nodes are still there.
func makeSources(c *Case) {
	for _, ch := range c.Expect {
		for ; ch != nil; ch = ch.condition() {
			if ch.srcNode != nil {
				ch.Source = checkSource(ch.Kind, ch.srcNode, ch.srcVal)
			}
		}
	}
	for _, t := range c.Script {
		for _, sc := range t.ToolCalls {
			sc.ArgsJSON = value.Canonical(sc.Args)
		}
	}
}

// releaseCase drops the case's pointers into the YAML tree, which only
// decoding needs, so that a loaded suite does not keep the tree alive.
func releaseCase(c *Case) {
	c.node = nil
	releaseRules(c.Mocks)
	for _, ch := range c.Expect {
		for ; ch != nil; ch = ch.condition() {
			ch.withNode, ch.toolNodes, ch.judgeNode, ch.turnNode = nil, nil, nil, nil
			ch.srcNode, ch.srcVal = nil, nil
		}
	}
	if c.User != nil {
		c.User.key, c.User.node = nil, nil
	}
}

func releaseRules(m map[string][]*Rule) {
	for _, rs := range m {
		for _, r := range rs {
			r.whenNode = nil
		}
	}
}

func defaultName(file string) string {
	base := file
	if i := strings.LastIndexAny(base, `/\`); i >= 0 {
		base = base[i+1:]
	}
	for _, ext := range []string{".dryfire.yaml", ".dryfire.yml", ".yaml", ".yml"} {
		if strings.HasSuffix(base, ext) {
			return strings.TrimSuffix(base, ext)
		}
	}
	return base
}

func (x *decoder) caseOf(it yamlpos.Item, index int) *Case {
	n := it.N
	if yamlpos.Deref(n) == nil || yamlpos.Deref(n).Kind != yaml.MappingNode {
		return nil
	}
	c := &Case{Pos: x.d.Pos(n), node: n, index: index}
	ps, mark := x.pairs(n, it.Val, "script", "expect")
	defer x.done(mark)
	for _, p := range ps {
		switch p.Key() {
		case "name":
			c.Name = str(p.Val)
			x.checkCaseName(c.Name, p.V)
		case "input":
			c.Input = str(p.Val)
		case "skip":
			switch v := p.Val.(type) {
			case bool:
				c.Skip = v
			case string:
				c.Skip, c.SkipReason = true, v
			}
		case "tags":
			if vs, ok := p.Val.([]any); ok {
				c.Tags = make([]string, 0, len(vs))
				for _, v := range vs {
					if t, ok := v.(string); ok {
						c.Tags = append(c.Tags, t)
					}
				}
			}
		case "max_turns":
			c.MaxTurns, _ = x.integer(p.V, p.Val)
		case "trials":
			c.Trials, _ = x.integer(p.V, p.Val)
		case "match":
			c.Match = x.match(p.V, p.Val)
		case "workspace":
			c.Workspace, c.WorkspacePos = str(p.Val), x.d.Pos(p.V)
		case "model_faults":
			c.ModelFaults, c.ModelFaultsPos = x.modelFaults(p.V, p.Val), x.d.Pos(p.K)
		case "scenario":
			c.Scenario, c.ScenarioPos = str(p.Val), x.d.Pos(p.V)
		case "actor":
			c.Actor, c.ActorPos = str(p.Val), x.d.Pos(p.V)
		case "seed":
			if num, ok := p.Val.(json.Number); ok {
				if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
					c.Seed = &i
				}
			}
		case "toolOverrides":
			c.ToolOverrides, c.ToolOverridesNode = p.Val, p.V
		case "setup":
			c.Setup, _ = p.Val.(map[string]any)
			c.SetupNode = p.V
		case "mocks":
			c.Mocks, c.MockOrder = x.mocks(p.V, p.Val)
		case "user":
			c.User = x.user(p)
		case "script":
			for ti, tn := range yamlpos.Items(p.V, p.Val) {
				if t := x.turn(tn, ti); t != nil {
					if c.Script == nil {
						c.Script = make([]*Turn, 0, listLen(p.V))
					}
					c.Script = append(c.Script, t)
				}
			}
		case "expect":
			for _, cn := range yamlpos.Items(p.V, p.Val) {
				if ch := x.check(cn); ch != nil {
					if c.Expect == nil {
						c.Expect = make([]*Check, 0, listLen(p.V))
					}
					c.Expect = append(c.Expect, ch)
				}
			}
		}
	}
	return c
}

// listLen is how many entries list n has: the most a list decoded from
// it holds.
func listLen(n *yaml.Node) int {
	if n = yamlpos.Deref(n); n != nil && n.Kind == yaml.SequenceNode {
		return len(n.Content)
	}
	return 0
}

func (x *decoder) turn(it yamlpos.Item, index int) *Turn {
	n := it.N
	if yamlpos.Deref(n) == nil || yamlpos.Deref(n).Kind != yaml.MappingNode {
		return nil
	}
	t := &Turn{Pos: x.d.Pos(n)}
	hasText, unknown := false, false
	ps, mark := x.pairs(n, it.Val, "tool_calls")
	defer x.done(mark)
	for _, p := range ps {
		switch p.Key() {
		default:
			unknown = true
		case "when":
			t.When = x.guard(p)
		case "optional":
			t.Optional, _ = p.Val.(bool)
		case "text":
			t.Text = str(p.Val)
			hasText = true
		case "tool_calls":
			if d := yamlpos.Deref(p.V); d == nil || d.Kind != yaml.SequenceNode {
				t.broken = true // reported by the schema
			}
			for ci, call := range yamlpos.Items(p.V, p.Val) {
				cn := call.N
				if yamlpos.Deref(cn) == nil || yamlpos.Deref(cn).Kind != yaml.MappingNode {
					t.broken = true
					continue
				}
				sc := &ScriptCall{Pos: x.d.Pos(cn)}
				qs, qmark := x.pairs(cn, call.Val)
				for _, q := range qs {
					switch q.Key() {
					case "id":
						sc.ID = str(q.Val)
					case "name":
						sc.Name = str(q.Val)
					case "args":
						if m, ok := q.Val.(map[string]any); ok {
							sc.Args = m
						}
					}
				}
				x.done(qmark)
				if sc.Args == nil {
					sc.Args = map[string]any{}
				}
				if sc.ID == "" {
					sc.ID = "call_" + strconv.Itoa(index+1) + "_" + strconv.Itoa(ci+1)
				}
				if !x.cross.counted && !x.lateSources {
					sc.ArgsJSON = value.Canonical(sc.Args)
				}
				if t.ToolCalls == nil {
					t.ToolCalls = make([]*ScriptCall, 0, listLen(p.V))
				}
				t.ToolCalls = append(t.ToolCalls, sc)
			}
		}
	}
	// A turn with an unknown key got its error (and did-you-mean) already.
	if !hasText && len(t.ToolCalls) == 0 && !t.broken && !unknown {
		x.errorf(n, "script turn %d has neither text nor tool_calls: give the model's text, its tool calls, or both", index+1)
	}
	if !hasText && len(t.ToolCalls) == 0 {
		t.broken = true
	}
	return t
}

// guard reads a script turn's when: (its shape checked by the schema).
func (x *decoder) guard(when yamlpos.KV) *Guard {
	g := &Guard{Pos: x.d.Pos(when.K)}
	for _, p := range yamlpos.Pairs(when.V, when.Val) {
		switch p.Key() {
		case "tools":
			for _, e := range yamlpos.Items(p.V, p.Val) {
				g.Tools = append(g.Tools, str(e.Val))
			}
			g.NoTools = len(g.Tools) == 0
		case "tool_result":
			switch v := p.Val.(type) {
			case bool:
				g.Result = &v
			case string:
				yes := true
				g.Result, g.ResultOf = &yes, v
			}
		case "user":
			g.User = str(p.Val)
		case "matches":
			if src, ok := p.Val.(string); ok {
				g.Matches = x.regex(p.V, src)
				g.MatchesSize = regexSize(src)
			}
		case "anywhere":
			if src, ok := p.Val.(string); ok {
				g.Anywhere = x.regex(p.V, src)
				g.AnywhereSize = regexSize(src)
			}
		}
	}
	return g
}

var providers = provider.Names

func (x *decoder) compileSchema(n *yaml.Node, v any, what string) *jschema.Schema {
	sch, at, msg := yamlpos.CompileSchema(n, v, what)
	if msg != "" {
		x.errorf(at, "%s", msg)
	}
	return sch
}

var identifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// implRefProblem says what is wrong with a malformed impl reference.
func implRefProblem(ref string) string {
	mod, fn, ok := strings.Cut(ref, ":")
	switch {
	case strings.TrimSpace(ref) == "":
		return "it is empty"
	case !ok:
		return "it has no colon between the module and the function"
	case strings.Contains(fn, ":"):
		return "it has more than one colon"
	case mod == "":
		return "nothing before the colon"
	case fn == "":
		return "nothing after the colon"
	case strings.ContainsAny(mod, `/\`) || strings.HasSuffix(mod, ".py"):
		return "the module is a file path; name it with dots and no .py, as in an import"
	}
	for _, part := range append(strings.Split(mod, "."), strings.Split(fn, ".")...) {
		if !identifier().MatchString(part) {
			return fmt.Sprintf("%q is not a Python identifier", part)
		}
	}
	return "it is not of the form package.module:function"
}
