package spec

import (
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// decoder turns a schema-checked node tree into a Suite and reports what
// the schema cannot: outcomes per rule, duplicate names, references
// between parts of the file.
type decoder struct {
	root *yaml.Node
	file string
	d    *diags
	conv *converter
	opts *Options

	// A rule list reached again through an alias decodes quietly: its
	// problems were reported the first time, under another tool's name.
	ruleLists map[*yaml.Node]bool
	quiet     int

	// firstCase is the line (virtual for a data file's row) where each
	// case name is first written.
	firstCase map[string]int
	// cross is what checking a case against the suite needs (crossHead).
	cross cross

	regexes map[string]*regexp.Regexp
}

// A kv is one entry of a mapping: its key and value nodes, and the value
// converted to JSON. The decoder reads values from their parents'
// conversions as it walks down, so nothing converts a node twice.
type kv struct {
	k, v *yaml.Node
	val  any
}

// pairs lists the entries of mapping n, whose converted value is val, in
// file order. Keys the converter dropped (merge keys, keys that are not
// strings, duplicates after the first) are left out, as in val.
func pairs(n *yaml.Node, val any) []kv {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	m, _ := val.(map[string]any)
	out := make([]kv, 0, len(n.Content)/2)
next:
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || isMerge(k) {
			continue
		}
		for _, p := range out {
			if deref(p.k).Value == k.Value {
				continue next // a duplicate key: reported, and the first wins
			}
		}
		out = append(out, kv{n.Content[i], n.Content[i+1], m[k.Value]})
	}
	return out
}

// An item is one entry of a list, with its converted value.
type item struct {
	n   *yaml.Node
	val any
}

// items yields the index and entries of list n, whose converted value is val.
func items(n *yaml.Node, val any) iter.Seq2[int, item] {
	return func(yield func(int, item) bool) {
		n = deref(n)
		if n == nil || n.Kind != yaml.SequenceNode {
			return
		}
		a, _ := val.([]any)
		for i, e := range n.Content {
			it := item{n: e}
			if i < len(a) {
				it.val = a[i]
			}
			if !yield(i, it) {
				return
			}
		}
	}
}

func (x *decoder) pos(n *yaml.Node) Pos {
	file, line := x.d.realPos(max(n.Line, 1))
	return Pos{File: file, Line: line, Col: max(n.Column, 1)}
}

func str(val any) string {
	s, _ := val.(string)
	return s
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
		x.d.add(Error, n.Line, n.Column, format, args...)
	}
}

func (x *decoder) warnf(n *yaml.Node, format string, args ...any) {
	if x.quiet == 0 {
		x.d.add(Warning, n.Line, n.Column, format, args...)
	}
}

// suite decodes everything of the suite but its cases (addCase).
func (x *decoder) suite(root *yaml.Node, doc any) *Suite {
	s := &Suite{File: x.file, Mocks: map[string][]*Rule{}}
	for _, p := range pairs(root, doc) {
		switch deref(p.k).Value {
		case "name":
			s.Name = str(p.val)
		case "agent":
			s.Agent = x.agent(p)
		case "tools":
			for _, t := range pairs(p.v, p.val) {
				s.Tools = append(s.Tools, x.tool(t))
			}
		case "mocks":
			s.Mocks, s.MockOrder = x.mocks(p.v, p.val)
		case "world":
			s.World, s.WorldPos = str(p.val), x.pos(p.v)
		case "scenario":
			s.Scenario, s.ScenarioPos = str(p.val), x.pos(p.v)
		case "match":
			s.Match = x.match(p.v, p.val)
		case "workspace":
			s.Workspace, s.WorkspacePos = str(p.val), x.pos(p.v)
		case "trials":
			s.Trials, _ = x.integer(p.v, p.val)
		}
	}
	if k, _ := lookup(root, "agent"); k == nil && s.World != "" {
		s.NoAgent = true
	}
	if s.World != "" {
		for _, key := range []string{"tools", "mocks"} {
			if k, _ := lookup(root, key); k != nil {
				x.errorf(k, "a world suite takes its tools from the world's operations: remove %s (use toolOverrides in the world, a scenario or a case)", key)
			}
		}
	} else if s.Scenario != "" {
		k, _ := lookup(root, "scenario")
		x.errorf(k, "scenario needs world: a scenario is part of a world file")
	}
	if s.Name == "" {
		s.Name = defaultName(x.file)
	}
	x.firstCase = map[string]int{}
	x.crossHead(s)
	return s
}

// addCase decodes the case item n (converted value val), index in the
// cases list, checks it against the suite, and appends it. The case keeps
// no pointer into the YAML tree.
func (x *decoder) addCase(s *Suite, it item, index int) {
	c := x.caseOf(it, index)
	if c == nil {
		return
	}
	nameKey, nameNode := lookup(it.n, "name")
	if c.Name != "" && nameNode != nil {
		if line, dup := x.firstCase[c.Name]; dup {
			first := x.pos(&yaml.Node{Line: line})
			where := fmt.Sprintf("line %d", first.Line)
			if first.File != x.pos(nameNode).File {
				where = first.FileLine()
			}
			x.errorf(nameNode, "duplicate case name %q (first at %s); case names are unique within a suite", c.Name, where)
		} else {
			x.firstCase[c.Name] = nameKey.Line
		}
	}
	x.crossCase(s, c)
	if x.opts.Discard && s.World == "" {
		s.Discarded++
		return
	}
	releaseCase(c)
	s.Cases = append(s.Cases, c)
}

// releaseCase drops the case's pointers into the YAML tree, which only
// decoding needs, so that a loaded suite does not keep the tree alive.
func releaseCase(c *Case) {
	c.node = nil
	releaseRules(c.Mocks)
	for _, ch := range c.Expect {
		ch.withNode, ch.toolNodes, ch.judgeNode, ch.turnNode = nil, nil, nil, nil
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

func (x *decoder) agent(agent kv) Agent {
	a := Agent{Pos: x.pos(agent.k)}
	for _, p := range pairs(agent.v, agent.val) {
		switch deref(p.k).Value {
		case "provider":
			a.Provider = str(p.val)
			a.ProviderPos = x.pos(p.v)
		case "model":
			a.Model = str(p.val)
		case "base_url":
			a.BaseURL = str(p.val)
		case "system":
			a.System = str(p.val)
		case "max_turns":
			a.MaxTurns, _ = x.integer(p.v, p.val)
		case "retries":
			if n, ok := x.integer(p.v, p.val); ok {
				a.Retries = &n
			}
		case "timeout_s":
			if num, ok := p.val.(json.Number); ok {
				a.TimeoutS, _ = num.Float64()
			}
		case "params":
			a.Params, _ = p.val.(map[string]any)
		case "match":
			a.Match = x.match(p.v, p.val)
		case "clock":
			a.Clock = x.clock(p.v, p.val)
		case "network":
			a.Network, a.NetworkPos = str(p.val), x.pos(p.v)
		case "command":
			a.CommandPos = x.pos(p.k)
			for _, e := range items(p.v, p.val) {
				a.Command = append(a.Command, str(e.val))
			}
		}
	}
	if a.Provider == ProviderOpenAICompatible && a.BaseURL == "" {
		_, pv := lookup(agent.v, "provider")
		x.errorf(pv, "provider openai-compatible needs agent.base_url (the server's URL, e.g. http://localhost:11434/v1)")
	}
	if ck, _ := lookup(agent.v, "command"); ck != nil {
		x.commandAgent(agent.v, &a)
	} else {
		if k, _ := lookup(agent.v, "clock"); k != nil {
			x.errorf(k, "agent.clock sets the time an agent program (agent.command) reads; the built-in loop's requests carry no clock")
		}
		if k, _ := lookup(agent.v, "network"); k != nil {
			x.errorf(k, "agent.network is the network of an agent program (agent.command); the built-in loop runs inside dryfire, whose model calls go to the cassette")
		}
	}
	return a
}

// commandAgent checks the agent of a suite whose cases run an existing
// agent (agent.command): the program makes its own model calls, so the
// keys of the built-in loop have no use there; provider, optional, names
// the API it calls (which key a recording needs; with base_url, where
// live calls go).
func (x *decoder) commandAgent(n *yaml.Node, a *Agent) {
	for _, key := range []string{"model", "system", "params", "retries"} {
		if k, _ := lookup(n, key); k != nil {
			x.errorf(k, "agent.%s is for the built-in loop; with agent.command your program makes its own model calls (remove %s)", key, key)
		}
	}
	switch a.Provider {
	case "":
		if k, _ := lookup(n, "base_url"); k != nil {
			x.errorf(k, "agent.base_url with agent.command needs provider: the API it is the base URL of (anthropic, openai, openai-responses or openai-compatible)")
		}
	case ProviderScript:
		_, pv := lookup(n, "provider")
		x.errorf(pv, "provider script is the built-in loop's offline model; with agent.command your program calls a real API through dryfire: name that API (anthropic, openai, openai-responses, openai-compatible) or leave provider out")
	}
}

func (x *decoder) tool(tool kv) *Tool {
	t := &Tool{Name: deref(tool.k).Value, Pos: x.pos(tool.k)}
	for _, p := range pairs(tool.v, tool.val) {
		switch deref(p.k).Value {
		case "description":
			t.Description = str(p.val)
		case "input_schema":
			t.InputSchema = p.val
			t.SchemaPos = x.pos(deref(p.v))
			x.compileSchema(p.v, p.val, fmt.Sprintf("input_schema of tool %q", t.Name))
		}
	}
	return t
}

var outcomeKeys = []string{"return", "content", "error", "sequence", "impl"}

func (x *decoder) mocks(n *yaml.Node, val any) (map[string][]*Rule, []string) {
	out := map[string][]*Rule{}
	var order []string
	for _, p := range pairs(n, val) {
		name := deref(p.k).Value
		order = append(order, name)
		rules := []*Rule{}
		again := false
		if list := deref(p.v); list != nil {
			again = x.ruleLists[list]
			if x.ruleLists == nil {
				x.ruleLists = map[*yaml.Node]bool{}
			}
			x.ruleLists[list] = true
		}
		if again {
			x.quiet++
		}
		for _, rn := range items(p.v, p.val) {
			if r := x.rule(name, rn); r != nil {
				rules = append(rules, r)
			}
		}
		if again {
			x.quiet--
		}
		out[name] = rules
	}
	return out, order
}

func (x *decoder) rule(tool string, rule item) *Rule {
	n := rule.n
	r := &Rule{Tool: tool, Pos: x.pos(n)}
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil // reported by the schema
	}
	var outcomes []kv
	misspelt := false // an unknown key that is likely a misspelt outcome
	for _, p := range pairs(n, rule.val) {
		switch k := deref(p.k).Value; k {
		case "when":
			if m, ok := p.val.(map[string]any); ok {
				r.When = value.Compile(m)
				r.whenNode = p.v
			}
		case "timeout_s":
			if num, ok := p.val.(json.Number); ok {
				r.TimeoutS, _ = num.Float64()
			}
		case "delay_ms":
			if num, ok := p.val.(json.Number); ok {
				r.DelayMS, _ = num.Float64()
			}
		case "log":
			r.Log = x.logMessages(p.v, p.val)
		case "progress":
			r.Progress = x.progress(p.v, p.val)
		case "return", "content", "error", "sequence", "impl":
			outcomes = append(outcomes, p)
		default:
			misspelt = misspelt || suggest.Closest(k, outcomeKeys) != ""
		}
	}
	switch len(outcomes) {
	case 0:
		// A merge key or a misspelt outcome is reported already.
		if !x.conv.isMerged(n) && !misspelt {
			x.errorf(n, "mock rule for %q has no outcome: give one of return, content, error, sequence or impl (return: null delivers null)", tool)
		}
		return r
	case 1:
	default:
		x.errorf(outcomes[1].k, "mock rule for %q has %d outcomes (%s); keep one, or use sequence for a different outcome on each call", tool, len(outcomes), keyNames(outcomes))
	}
	r.Outcome = x.outcome(outcomes[0], true)
	if r.TimeoutS > 0 && !usesImpl(r.Outcome) {
		_, tn := lookup(n, "timeout_s")
		x.warnf(tn, "timeout_s only bounds impl outcomes; this rule has none")
	}
	return r
}

func keyNames(ps []kv) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = deref(p.k).Value
	}
	return strings.Join(names, ", ")
}

func usesImpl(o Outcome) bool {
	if o.Kind == Impl {
		return true
	}
	for _, e := range o.Sequence {
		if e.Kind == Impl {
			return true
		}
	}
	return false
}

func (x *decoder) outcome(p kv, top bool) Outcome {
	v := p.v
	o := Outcome{Kind: OutcomeKind(deref(p.k).Value), Pos: x.pos(v)}
	switch o.Kind {
	case Return:
		o.Value = p.val
	case Content:
		o.Blocks = x.contentBlocks(v, p.val)
	case Fail:
		o.Message = str(p.val)
	case Impl:
		o.Impl = str(p.val)
		x.checkImpl(v, p.val)
	case Sequence:
		if !top {
			return o // reported by the schema
		}
		for _, it := range items(v, p.val) {
			en := it.n
			entry := pairs(en, it.val)
			var found []kv
			for _, q := range entry {
				switch deref(q.k).Value {
				case "return", "content", "error", "impl":
					found = append(found, q)
				}
			}
			if deref(en) == nil || deref(en).Kind != yaml.MappingNode {
				continue // reported by the schema
			}
			switch len(found) {
			case 0:
				// An entry with other keys got an unknown-key error already.
				if len(entry) == 0 && !x.conv.isMerged(en) {
					x.errorf(en, "sequence entry has no outcome: give return, content, error or impl")
				}
				continue
			case 1:
			default:
				x.errorf(found[1].k, "sequence entry has %d outcomes (%s); each entry is exactly one of return, content, error or impl", len(found), keyNames(found))
			}
			o.Sequence = append(o.Sequence, x.outcome(found[0], false))
		}
	}
	return o
}

var implRef = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

func (x *decoder) checkImpl(v *yaml.Node, val any) {
	ref, ok := val.(string)
	if !ok {
		return // reported by the schema
	}
	if !implRef.MatchString(ref) {
		x.errorf(v, "malformed impl reference %q: %s; write package.module:function, e.g. mytools.impls:create_ticket", ref, implRefProblem(ref))
		return
	}
	if x.opts.ResolveImpl == nil {
		x.errorf(v, "impl %q: passthrough mocks (impl) are not available in this version of dryfire", ref)
		return
	}
	if err := x.opts.ResolveImpl(ref); err != nil {
		x.errorf(v, "impl %q: %v", ref, err)
	}
}

func (x *decoder) caseOf(it item, index int) *Case {
	n := it.n
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil
	}
	c := &Case{Pos: x.pos(n), node: n, index: index}
	for _, p := range pairs(n, it.val) {
		switch deref(p.k).Value {
		case "name":
			c.Name = str(p.val)
		case "input":
			c.Input = str(p.val)
		case "skip":
			switch v := p.val.(type) {
			case bool:
				c.Skip = v
			case string:
				c.Skip, c.SkipReason = true, v
			}
		case "max_turns":
			c.MaxTurns, _ = x.integer(p.v, p.val)
		case "trials":
			c.Trials, _ = x.integer(p.v, p.val)
		case "match":
			c.Match = x.match(p.v, p.val)
		case "workspace":
			c.Workspace, c.WorkspacePos = str(p.val), x.pos(p.v)
		case "model_faults":
			c.ModelFaults, c.ModelFaultsPos = x.modelFaults(p.v, p.val), x.pos(p.k)
		case "scenario":
			c.Scenario, c.ScenarioPos = str(p.val), x.pos(p.v)
		case "actor":
			c.Actor, c.ActorPos = str(p.val), x.pos(p.v)
		case "seed":
			if num, ok := p.val.(json.Number); ok {
				if i, err := strconv.ParseInt(string(num), 10, 64); err == nil {
					c.Seed = &i
				}
			}
		case "toolOverrides":
			c.ToolOverrides, c.ToolOverridesNode = p.val, p.v
		case "setup":
			c.Setup, _ = p.val.(map[string]any)
			c.SetupNode = p.v
		case "mocks":
			c.Mocks, c.MockOrder = x.mocks(p.v, p.val)
		case "user":
			c.User = x.user(p)
		case "script":
			for ti, tn := range items(p.v, p.val) {
				if t := x.turn(tn, ti); t != nil {
					c.Script = append(c.Script, t)
				}
			}
		case "expect":
			for _, cn := range items(p.v, p.val) {
				if ch := x.check(cn); ch != nil {
					c.Expect = append(c.Expect, ch)
				}
			}
		}
	}
	return c
}

func (x *decoder) turn(it item, index int) *Turn {
	n := it.n
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil
	}
	t := &Turn{Pos: x.pos(n)}
	hasText, unknown := false, false
	for _, p := range pairs(n, it.val) {
		switch deref(p.k).Value {
		default:
			unknown = true
		case "text":
			t.Text = str(p.val)
			hasText = true
		case "tool_calls":
			if d := deref(p.v); d == nil || d.Kind != yaml.SequenceNode {
				t.broken = true // reported by the schema
			}
			for ci, call := range items(p.v, p.val) {
				cn := call.n
				if deref(cn) == nil || deref(cn).Kind != yaml.MappingNode {
					t.broken = true
					continue
				}
				sc := &ScriptCall{Pos: x.pos(cn), Args: map[string]any{}}
				for _, q := range pairs(cn, call.val) {
					switch deref(q.k).Value {
					case "id":
						sc.ID = str(q.val)
					case "name":
						sc.Name = str(q.val)
					case "args":
						if m, ok := q.val.(map[string]any); ok {
							sc.Args = m
						}
					}
				}
				if sc.ID == "" {
					sc.ID = fmt.Sprintf("call_%d_%d", index+1, ci+1)
				}
				sc.ArgsJSON = value.Canonical(sc.Args)
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

func (x *decoder) check(it item) *Check {
	ps := pairs(it.n, it.val)
	if len(ps) != 1 {
		return nil // reported by the schema
	}
	k, v, val := ps[0].k, ps[0].v, ps[0].val
	c := &Check{Kind: CheckKind(deref(k).Value), Pos: x.pos(k)}
	c.Source = string(c.Kind) + ": " + flow(v, val)
	switch c.Kind {
	case CheckCalled, CheckNotCalled:
		if s, ok := val.(string); ok {
			c.Tool, c.toolNodes = s, []*yaml.Node{v}
			return c
		}
		if _, ok := val.(map[string]any); !ok {
			return nil
		}
		var timesN, minN, maxN *yaml.Node
		for _, p := range pairs(v, val) {
			switch deref(p.k).Value {
			case "tool":
				c.Tool, c.toolNodes = str(p.val), []*yaml.Node{p.v}
			case "operation":
				c.Operation = str(p.val)
			case "actor":
				c.Actor = str(p.val)
			case "outcome":
				c.Outcome = str(p.val)
			case "with":
				if m, ok := p.val.(map[string]any); ok {
					c.With = value.Compile(m)
					c.withNode = p.v
				}
			case "times":
				if i, ok := x.integer(p.v, p.val); ok {
					c.Times, timesN = &i, p.k
				}
			case "min":
				if i, ok := x.integer(p.v, p.val); ok {
					c.Min, minN = &i, p.k
				}
			case "max":
				if i, ok := x.integer(p.v, p.val); ok {
					c.Max, maxN = &i, p.k
				}
			}
		}
		if c.Tool == "" && c.Operation == "" {
			x.errorf(k, "%s needs tool (or operation, in a world suite)", c.Kind)
		}
		if c.Tool != "" && c.Operation != "" {
			_, on := lookup(v, "operation")
			x.errorf(on, "give tool or operation, not both")
		}
		if timesN != nil && (minN != nil || maxN != nil) {
			x.errorf(timesN, "times cannot be combined with min or max: use times for an exact count, min/max for a range")
		}
		if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
			x.errorf(minN, "min (%d) is greater than max (%d)", *c.Min, *c.Max)
		}
	case CheckOrder:
		for _, e := range items(v, val) {
			c.Order = append(c.Order, str(e.val))
			c.toolNodes = append(c.toolNodes, e.n)
		}
	case CheckTrajectory:
		c.TrajectoryMatch, c.TrajectoryArgs = TrajectoryStrict, ArgsSubset
		for _, p := range pairs(v, val) {
			switch deref(p.k).Value {
			case "match":
				if s, ok := p.val.(string); ok {
					c.TrajectoryMatch = s
				}
			case "args":
				if s, ok := p.val.(string); ok {
					c.TrajectoryArgs = s
				}
			case "calls":
				for _, e := range items(p.v, p.val) {
					tc := &TrajectoryCall{Pos: x.pos(e.n)}
					switch ev := e.val.(type) {
					case string:
						tc.Tool = ev
						c.toolNodes = append(c.toolNodes, e.n)
					case map[string]any:
						for _, q := range pairs(e.n, ev) {
							switch deref(q.k).Value {
							case "tool":
								tc.Tool = str(q.val)
								c.toolNodes = append(c.toolNodes, q.v)
							case "with":
								if m, ok := q.val.(map[string]any); ok {
									tc.With = value.Compile(m)
								}
							}
						}
					default:
						continue // reported by the schema
					}
					c.Trajectory = append(c.Trajectory, tc)
				}
			}
		}
		if c.TrajectoryArgs == ArgsIgnore {
			for _, tc := range c.Trajectory {
				if tc.With != nil {
					_, wn := lookup(v, "args")
					x.warnf(wn, "args: ignore compares tool names only: the with of the calls is not used")
					break
				}
			}
		}
	case CheckJudge:
		j := &Judge{}
		for _, p := range pairs(v, val) {
			switch deref(p.k).Value {
			case "rubric":
				j.Rubric = str(p.val)
			case "provider":
				j.Provider = str(p.val)
			case "model":
				j.Model = str(p.val)
			case "threshold":
				if num, ok := p.val.(json.Number); ok {
					if f, err := num.Float64(); err == nil {
						j.Threshold = &f
					}
				}
			}
		}
		if _, ok := val.(map[string]any); ok {
			c.Judge, c.judgeNode = j, v
		}
	case CheckOutput:
		for _, p := range pairs(v, val) {
			switch deref(p.k).Value {
			case "contains":
				if s, ok := p.val.(string); ok {
					c.Contains = &s
				}
			case "equals":
				if s, ok := p.val.(string); ok {
					c.Equals = &s
				}
			case "regex":
				if s, ok := p.val.(string); ok {
					c.Regex = x.regex(p.v, s)
				}
			case "json_schema":
				c.JSONSchema = x.compileSchema(p.v, p.val, "json_schema")
			case "turn":
				c.turnNode = p.v
				switch t := p.val.(type) {
				case string:
					switch t {
					case "any":
						c.Turn = TurnAny
					case "last":
					default:
						x.errorf(p.v, "turn must be a turn number (1 is the reply to input), any or last, not %q%s", t, suggest.DidYouMean(t, []string{"any", "last"}))
					}
				case json.Number:
					c.Turn, _ = x.integer(p.v, p.val)
				}
			}
		}
	case CheckMaxTurns:
		c.MaxTurns, _ = x.integer(v, val)
	case CheckState:
		m, _ := val.(map[string]any)
		c.Path = str(m["path"])
		c.StateEquals, c.HasEquals = m["equals"]
		c.StateHas, c.HasContains = m["contains"]
		c.Absent, _ = m["absent"].(bool)
		given := 0
		for _, p := range pairs(v, val) {
			switch deref(p.k).Value {
			case "count":
				if i, ok := x.integer(p.v, p.val); ok {
					c.Count = &i
				}
				given++
			case "equals", "contains", "absent":
				given++
			}
		}
		if given != 1 && m != nil {
			x.errorf(k, "a state check takes exactly one of equals, contains, absent or count, not %d", given)
		}
	case CheckEvent:
		m, _ := val.(map[string]any)
		c.EventType = str(m["type"])
		if d, ok := m["data"].(map[string]any); ok {
			c.EventData = value.Compile(d)
		}
		for _, p := range pairs(v, val) {
			if deref(p.k).Value == "count" {
				if i, ok := x.integer(p.v, p.val); ok {
					c.Count = &i
				}
			}
		}
	case CheckFile:
		x.fileCheck(c, k, v, val)
	case CheckNoErrors:
	default:
		return nil
	}
	return c
}

// regex compiles an output check's regex; cases that share one share its
// compiled form (a Regexp is safe for concurrent use).
func (x *decoder) regex(n *yaml.Node, src string) *regexp.Regexp {
	if re, ok := x.regexes[src]; ok {
		return re
	}
	re, err := regexp.Compile(src)
	if err != nil {
		x.errorf(n, "invalid regex: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
		return nil
	}
	if x.regexes == nil {
		x.regexes = map[string]*regexp.Regexp{}
	}
	x.regexes[src] = re
	return re
}

// cross is what the checks of each case against its suite need.
type cross struct {
	known, scripted, command, real bool
	declared                       map[string]*Tool
	// suiteTools are the names declared or mocked by the suite.
	suiteTools []string
}

// crossHead reports what is wrong between the parts of the suite other
// than its cases, and readies the checks of each case (crossCase).
func (x *decoder) crossHead(s *Suite) {
	// An unknown or missing provider is reported already: judge nothing by it.
	k := &x.cross
	k.known = slices.Contains(providers, s.Agent.Provider)
	k.scripted = s.Agent.Provider == ProviderScript
	k.command = len(s.Agent.Command) > 0
	k.real = k.known && !k.scripted && !k.command

	x.checkWorkspace(s, k.command)
	k.declared = map[string]*Tool{}
	for _, t := range s.Tools {
		k.declared[t.Name] = t
	}
	for _, rules := range s.Mocks {
		x.checkWhenKeys(rules, k.declared)
	}
	if k.real {
		for _, t := range s.Tools {
			if t.InputSchema == nil {
				x.d.add(Warning, t.Pos.Line, t.Pos.Col, "tool %q has no input_schema: the model is shown an open object schema", t.Name)
			} else if m, ok := t.InputSchema.(map[string]any); ok && m["type"] == nil {
				x.d.add(Warning, t.SchemaPos.Line, t.SchemaPos.Col, "tool %q: input_schema has no \"type\": the model is sent it with \"type\": \"object\" added (tool arguments are an object, and the APIs reject a tool schema without a type)", t.Name)
			}
		}
		x.warnUndeclared(s, s.MockOrder, x.root, false)
	}
	for _, t := range s.Tools {
		k.suiteTools = append(k.suiteTools, t.Name)
	}
	k.suiteTools = append(k.suiteTools, s.MockOrder...)
	releaseRules(s.Mocks)
}

func (x *decoder) warnUndeclared(s *Suite, order []string, parent *yaml.Node, suiteToo bool) {
	_, mocks := lookup(parent, "mocks")
	for _, name := range order {
		if _, warned := s.Mocks[name]; x.cross.declared[name] == nil && !(suiteToo && warned) {
			k, _ := lookup(mocks, name)
			x.warnf(k, "tool %q is mocked but not declared under tools: the model is shown an open object schema", name)
		}
	}
}

// crossCase reports what is wrong between case c and its suite:
// references between scripts, mocks, tools and checks.
func (x *decoder) crossCase(s *Suite, c *Case) {
	k := &x.cross
	if k.scripted && !k.command && len(c.ModelFaults) > 0 {
		x.d.add(Error, c.ModelFaultsPos.Line, c.ModelFaultsPos.Col, "model_faults need model requests to fault: a real provider or agent.command (provider script sends none)")
	}
	x.checkCaseWorkspace(s, c, k.command)
	if k.real {
		x.warnUndeclared(s, c.MockOrder, c.node, true)
	}
	declared := k.declared
	if s.World == "" {
		for _, key := range []string{"scenario", "actor", "toolOverrides", "setup", "seed"} {
			if kn, _ := lookup(c.node, key); kn != nil {
				x.errorf(kn, "%s is for drills: the suite needs world: (a *.world.yaml file)", key)
			}
		}
	}
	for _, rules := range c.Mocks {
		x.checkWhenKeys(rules, declared)
	}
	tools := map[string]bool{}
	var knownList []string
	addKnown := func(n string) {
		if !tools[n] {
			tools[n] = true
			knownList = append(knownList, n)
		}
	}
	for _, n := range k.suiteTools {
		addKnown(n)
	}
	for _, n := range c.MockOrder {
		addKnown(n)
	}
	sort.Strings(knownList)
	rulesFor := func(tool string) []*Rule {
		if r, ok := c.Mocks[tool]; ok {
			return r
		}
		return s.Mocks[tool]
	}

	if sk, _ := lookup(c.node, "script"); sk != nil && s.NoAgent {
		x.errorf(sk, "script is only for provider: script, and this suite has no agent (its drills' agent is the test's own function): remove the script, or give the suite an agent")
	} else if sk != nil && k.command {
		x.errorf(sk, "script is only for provider: script; with agent.command your program makes the model calls (remove the script)")
	} else if sk != nil && k.known && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's provider is %q (remove the script, or set agent.provider: script)", s.Agent.Provider)
	}
	if k.scripted && len(c.Script) == 0 && !c.Skip {
		if _, sn := lookup(c.node, "script"); sn == nil {
			x.errorf(c.node, "%s has no script: provider script needs the model's turns (or skip: true)", caseLabel(c))
		}
	}
	for ti, t := range c.Script {
		if len(t.ToolCalls) == 0 && !t.broken && ti+1 < len(c.Script) && c.User == nil {
			next := c.Script[ti+1]
			x.d.add(Warning, next.Pos.Line, next.Pos.Col, "script turn %d is never reached: turn %d has no tool calls, so the case ends there", ti+2, ti+1)
		}
		for _, call := range t.ToolCalls {
			if call.Name != "" && len(rulesFor(call.Name)) == 0 && k.scripted && s.World == "" {
				x.d.add(Warning, call.Pos.Line, call.Pos.Col, "no mock rule for tool %q in this case: the call will be unmatched and the case will fail%s", call.Name, suggest.DidYouMean(call.Name, knownList))
			}
		}
	}
	x.resolveJudges(s, c)
	x.resolveUser(s, c)
	for _, ch := range c.Expect {
		var names []string
		switch ch.Kind {
		case CheckCalled, CheckNotCalled:
			names = []string{ch.Tool}
		case CheckOrder:
			names = ch.Order
		case CheckTrajectory:
			for _, tc := range ch.Trajectory {
				names = append(names, tc.Tool)
			}
		}
		for i, n := range names {
			if n != "" && !tools[n] && s.World == "" {
				at := ch.Pos
				if i < len(ch.toolNodes) {
					at = x.pos(ch.toolNodes[i])
				}
				x.d.add(Warning, at.Line, at.Col, "check names tool %q, which is neither declared nor mocked%s", n, suggest.DidYouMean(n, knownList))
			}
		}
		if ch.With != nil && declared[ch.Tool] != nil {
			x.checkPatternKeys(ch.With, declared[ch.Tool], ch.withNode, "with")
		}
	}
}

// user reads a case's user: a list of scripted turns or a model-driven
// user (its model resolved in crossCheck).
func (x *decoder) user(p kv) *User {
	u := &User{Pos: x.pos(p.k), key: p.k, node: p.v}
	switch val := p.val.(type) {
	case []any:
		u.Script = []*UserTurn{}
		for _, it := range items(p.v, val) {
			t := &UserTurn{Pos: x.pos(it.n)}
			switch v := it.val.(type) {
			case string:
				t.Say = v
			case map[string]any:
				for _, q := range pairs(it.n, v) {
					switch deref(q.k).Value {
					case "say":
						t.Say = str(q.val)
					case "when":
						if s, ok := q.val.(string); ok {
							t.When = x.regex(q.v, s)
						}
					}
				}
			default:
				continue // reported by the schema
			}
			u.Script = append(u.Script, t)
		}
	case map[string]any:
		m := &UserModel{MaxTurns: DefaultUserMaxTurns}
		for _, q := range pairs(p.v, val) {
			switch deref(q.k).Value {
			case "provider":
				m.Provider = str(q.val)
			case "model":
				m.Model = str(q.val)
			case "instructions":
				m.Instructions = str(q.val)
			case "stop_when":
				if s, ok := q.val.(string); ok {
					m.StopWhen = x.regex(q.v, s)
				}
			case "max_turns":
				if i, ok := x.integer(q.v, q.val); ok {
					m.MaxTurns = i
				}
			}
		}
		u.Model = m
	default:
		return nil // reported by the schema
	}
	return u
}

// resolveUser gives a model-driven user its model: its own, else the
// agent's, as a judge's; and says what does not go with a conversation.
func (x *decoder) resolveUser(s *Suite, c *Case) {
	u := c.User
	if u == nil {
		for _, ch := range c.Expect {
			if ch.Kind == CheckOutput && ch.Turn != 0 && ch.turnNode != nil {
				x.warnf(ch.turnNode, "turn is for conversations (a case with user:): this case has one reply, so turn reads it")
			}
		}
		return
	}
	if s.NoAgent {
		x.errorf(u.key, "user: needs the suite's agent: a test's own function is not run in a conversation")
	}
	m := u.Model
	if m == nil {
		return
	}
	x.sideModel(s, u.node, "a model-driven user", "user", ", or scripted turns (a list)", &m.Provider, &m.Model, &m.BaseURL)
}

// resolveJudges gives each judge check of a case its place among them
// and its model: its own, else the agent's. A judge needs a real model:
// one of the agent's providers (not script), and a model name.
func (x *decoder) resolveJudges(s *Suite, c *Case) {
	n := 0
	for _, ch := range c.Expect {
		j := ch.Judge
		if ch.Kind != CheckJudge || j == nil {
			continue
		}
		n++
		j.Index = n
		x.sideModel(s, ch.judgeNode, "a judge", "judge", " (e.g. {provider: anthropic, model: claude-sonnet-4-5})", &j.Provider, &j.Model, &j.BaseURL)
	}
}

// sideModel resolves the model of a judge or a simulated user, written
// at n: its own provider, else the agent's; on the agent's provider the
// agent's model (when it names none) and base_url. It says what is
// missing: a real provider (not script), a model name, a base_url for
// openai-compatible.
func (x *decoder) sideModel(s *Suite, n *yaml.Node, who, role, hint string, prov, name, baseURL *string) {
	own := *prov != ""
	if !own {
		*prov = s.Agent.Provider
	}
	if *prov == s.Agent.Provider {
		*baseURL = s.Agent.BaseURL
		if *name == "" {
			*name = s.Agent.Model
		}
	}
	switch {
	case *prov == "" || *prov == ProviderScript:
		why := "the agent's provider is script, which answers from the case's script only"
		if *prov == "" {
			why = "the agent names no provider"
		}
		x.errorf(n, "%s needs a model, and %s: give the %s provider and model%s", who, why, role, hint)
	case !slices.Contains(providers, *prov):
		// An unknown agent provider is reported already.
	case *name == "":
		at := n
		if own {
			at, _ = lookup(n, "provider")
		}
		why := "the agent names none"
		if *prov != s.Agent.Provider {
			why = "the agent's is for the agent's provider"
		}
		x.errorf(at, "%s needs a model name: give the %s model (%s)", who, role, why)
	case *prov == ProviderOpenAICompatible && *baseURL == "":
		at, _ := lookup(n, "provider")
		x.errorf(at, "%s on openai-compatible needs the agent's base_url: use the agent's provider, or another provider", who)
	}
}

// caseLabel names a case in messages: by name, or by place when it has none.
func caseLabel(c *Case) string {
	if c.Name != "" {
		return fmt.Sprintf("case %q", c.Name)
	}
	return fmt.Sprintf("case %d", c.index+1)
}

var providers = provider.Names

func (x *decoder) checkWhenKeys(rules []*Rule, declared map[string]*Tool) {
	for _, r := range rules {
		if r.When != nil && declared[r.Tool] != nil {
			x.checkPatternKeys(r.When, declared[r.Tool], r.whenNode, "when")
		}
	}
}

func (x *decoder) checkPatternKeys(p *value.Pattern, t *Tool, n *yaml.Node, what string) {
	sch, ok := t.InputSchema.(map[string]any)
	if !ok {
		return
	}
	props, ok := sch["properties"].(map[string]any)
	if !ok {
		return
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range p.Keys() {
		if _, ok := props[k]; !ok {
			at := n
			if kn, _ := lookup(n, k); kn != nil {
				at = kn
			}
			x.d.add(Warning, at.Line, at.Column, "%s key %q is not declared in the input_schema of tool %q%s", what, k, t.Name, suggest.DidYouMean(k, names))
		}
	}
}

// schemaURL names every JSON Schema a suite holds while it compiles; it is
// cut from messages, which then read "#/$defs/x" rather than a made-up URL.
const schemaURL = "mem://dryfire/schema.json"

var (
	schemaAt      = regexp.MustCompile(`^not a valid JSON Schema: at (/.*?): (.*)$`)
	missingRef    = regexp.MustCompile(`json-pointer in "(#[^"]*)" not found`)
	externalRef   = regexp.MustCompile(`external \$ref "([^"]*)" is not allowed`)
	jsonTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}
)

// compileSchema compiles the JSON Schema written at n (a tool's
// input_schema, an output check's json_schema) and reports a broken one at
// the offending key or value inside it. what names it in messages.
func (x *decoder) compileSchema(n *yaml.Node, v any, what string) *jschema.Schema {
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil // reported by the suite schema
	}
	sch, err := jschema.Compile(v, schemaURL)
	if err == nil {
		return sch
	}
	msg := strings.ReplaceAll(err.Error(), schemaURL, "")
	at := n
	switch {
	case schemaAt.MatchString(msg):
		m := schemaAt.FindStringSubmatch(msg)
		path := pointerSteps(m[1])
		node, _ := nodeAt(n, path)
		at = node
		if t, ok := valueAt(v, path).(string); ok && len(path) > 0 && (path[len(path)-1] == "type" || len(path) > 1 && path[len(path)-2] == "type") && !slices.Contains(jsonTypeNames, t) {
			msg = fmt.Sprintf("unknown type %q%s; types are %s", t, suggest.DidYouMean(t, jsonTypeNames), strings.Join(jsonTypeNames, ", "))
		} else {
			msg = "not a valid JSON Schema: at " + m[1] + ": " + m[2]
		}
	case missingRef.MatchString(msg):
		ref := missingRef.FindStringSubmatch(msg)[1]
		at = findRef(n, ref, at)
		msg = fmt.Sprintf("$ref %q points at nothing in this schema", ref)
	case externalRef.MatchString(msg):
		ref := externalRef.FindStringSubmatch(msg)[1]
		at = findRef(n, ref, at)
		msg = fmt.Sprintf("$ref %q: a schema cannot refer outside itself; put the definition under $defs", ref)
	}
	x.errorf(at, "%s: %s", what, msg)
	return nil
}

// pointerSteps splits a JSON Pointer into its unescaped steps.
func pointerSteps(ptr string) []string {
	steps := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, s := range steps {
		steps[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return steps
}

// nodeAt is at for a path that must not leave n: it returns n itself when
// the path cannot be followed at all.
func nodeAt(n *yaml.Node, path []string) (*yaml.Node, *yaml.Node) {
	v, k := at(n, path)
	if v == nil {
		return n, nil
	}
	return v, k
}

// findRef returns the value node of the first "$ref: ref" under n, or def.
func findRef(n *yaml.Node, ref string, def *yaml.Node) *yaml.Node {
	var walk func(n *yaml.Node, depth int) *yaml.Node
	walk = func(n *yaml.Node, depth int) *yaml.Node {
		n = deref(n)
		if n == nil || depth > maxDepth {
			return nil
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := deref(n.Content[i]), deref(n.Content[i+1])
				if k != nil && k.Value == "$ref" && v != nil && v.Kind == yaml.ScalarNode && v.Value == ref {
					return v
				}
			}
		}
		for _, c := range n.Content {
			if f := walk(c, depth+1); f != nil {
				return f
			}
		}
		return nil
	}
	if f := walk(n, 0); f != nil {
		return f
	}
	return def
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

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
		if !identifier.MatchString(part) {
			return fmt.Sprintf("%q is not a Python identifier", part)
		}
	}
	return "it is not of the form package.module:function"
}
