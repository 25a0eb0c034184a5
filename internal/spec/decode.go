package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/suggest"
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

func (x *decoder) pos(n *yaml.Node) yamlpos.Pos {
	file, line := x.d.RealPos(max(n.Line, 1))
	return yamlpos.Pos{File: file, Line: line, Col: max(n.Column, 1)}
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

// suite decodes everything of the suite but its cases (addCase).
func (x *decoder) suite(root *yaml.Node, doc any) *Suite {
	s := &Suite{File: x.file, Mocks: map[string][]*Rule{}}
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
			s.World, s.WorldPos = str(p.Val), x.pos(p.V)
		case "scenario":
			s.Scenario, s.ScenarioPos = str(p.Val), x.pos(p.V)
		case "match":
			s.Match = x.match(p.V, p.Val)
		case "workspace":
			s.Workspace, s.WorkspacePos = str(p.Val), x.pos(p.V)
		case "trials":
			s.Trials, _ = x.integer(p.V, p.Val)
		case "target":
			s.Target = x.target(p)
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
	if s.Name == "" {
		s.Name = defaultName(x.file)
	}
	x.firstCase = nameSet{}
	x.crossHead(s)
	return s
}

// target decodes the suite's target: (the schema has checked its shape).
func (x *decoder) target(p yamlpos.KV) *Target {
	t := &Target{Pos: x.pos(p.K)}
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

// addCase decodes the case item n (converted value val), index in the
// cases list, checks it against the suite, and appends it. The case keeps
// no pointer into the YAML tree.
func (x *decoder) addCase(s *Suite, it yamlpos.Item, index int) {
	if c, line, name := x.decodeCase(s, it, index); c != nil {
		x.keepCase(s, c, c.Name, line, name)
	}
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
			first := x.pos(&yaml.Node{Line: line})
			where := fmt.Sprintf("line %d", first.Line)
			if first.File != x.pos(nameNode).File {
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
		if ch.srcNode != nil {
			ch.Source = checkSource(ch.Kind, ch.srcNode, ch.srcVal)
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
		ch.withNode, ch.toolNodes, ch.judgeNode, ch.turnNode = nil, nil, nil, nil
		ch.srcNode, ch.srcVal = nil, nil
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

func (x *decoder) agent(agent yamlpos.KV) Agent {
	a := Agent{Pos: x.pos(agent.K)}
	for _, p := range yamlpos.Pairs(agent.V, agent.Val) {
		switch p.Key() {
		case "provider":
			a.Provider = str(p.Val)
			a.ProviderPos = x.pos(p.V)
		case "model":
			a.Model = str(p.Val)
		case "base_url":
			a.BaseURL = str(p.Val)
		case "system":
			a.System = str(p.Val)
		case "max_turns":
			a.MaxTurns, _ = x.integer(p.V, p.Val)
		case "retries":
			if n, ok := x.integer(p.V, p.Val); ok {
				a.Retries = &n
			}
		case "timeout_s":
			if num, ok := p.Val.(json.Number); ok {
				a.TimeoutS, _ = num.Float64()
			}
		case "params":
			a.Params, _ = p.Val.(map[string]any)
			if k, v := yamlpos.Lookup(p.V, "stream"); k != nil {
				if _, ok := a.Params["stream"].(bool); !ok {
					x.errorf(v, "agent.params.stream must be true or false")
				}
			}
		case "match":
			a.Match = x.match(p.V, p.Val)
		case "clock":
			a.Clock = x.clock(p.V, p.Val)
		case "network":
			a.Network, a.NetworkPos = str(p.Val), x.pos(p.V)
		case "env":
			a.Env = x.agentEnv(p.V, p.Val)
		case "port":
			a.Port, _ = x.integer(p.V, p.Val)
			a.PortPos = x.pos(p.V)
		case "command":
			a.CommandPos = x.pos(p.K)
			for _, e := range yamlpos.Items(p.V, p.Val) {
				a.Command = append(a.Command, str(e.Val))
			}
		}
	}
	if a.Provider == provider.OpenAICompatible && a.BaseURL == "" {
		_, pv := yamlpos.Lookup(agent.V, "provider")
		x.errorf(pv, "provider openai-compatible needs agent.base_url (the server's URL, e.g. http://localhost:11434/v1)")
	}
	if ck, _ := yamlpos.Lookup(agent.V, "command"); ck != nil {
		x.commandAgent(agent.V, &a)
	} else {
		if k, _ := yamlpos.Lookup(agent.V, "clock"); k != nil {
			x.errorf(k, "agent.clock sets the time an agent program (agent.command) reads; the built-in loop's requests carry no clock")
		}
		if k, _ := yamlpos.Lookup(agent.V, "network"); k != nil {
			x.errorf(k, "agent.network is the network of an agent program (agent.command); the built-in loop runs inside dryfire, whose model calls go to the cassette")
		}
		for _, key := range []string{"env", "port"} {
			if k, _ := yamlpos.Lookup(agent.V, key); k != nil {
				x.errorf(k, "agent.%s is for an agent program (agent.command); the built-in loop runs inside dryfire", key)
			}
		}
	}
	if _, ev := yamlpos.Lookup(agent.V, "env"); a.Clock != nil && ev != nil && ev.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ev.Content); i += 2 {
			if k := ev.Content[i].Value; k == "TZ" || k == "LD_PRELOAD" || strings.HasPrefix(k, "FAKETIME") {
				x.errorf(ev.Content[i], "agent.env sets %s, which agent.clock sets: remove one", k)
			}
		}
	}
	return a
}

// agentEnv reads agent.env: a mapping of variable names to scalar values
// (written as text), for the program only.
func (x *decoder) agentEnv(n *yaml.Node, val any) []EnvVar {
	var out []EnvVar
	for _, p := range yamlpos.Pairs(n, val) {
		name := p.Key()
		switch {
		case !validEnvName(name):
			x.errorf(p.K, "agent.env: %q is not a variable name (letters, digits and _, not starting with a digit)", name)
			continue
		case strings.HasPrefix(name, "DRYFIRE_") || slices.Contains(BindingEnv, name):
			x.errorf(p.K, "agent.env cannot set %s: dryfire sets it to lead the program to its case", name)
			continue
		}
		var v string
		switch t := p.Val.(type) {
		case string:
			v = t
		case json.Number:
			v = string(t)
		case bool:
			v = strconv.FormatBool(t)
		default:
			continue // the schema says what it must be
		}
		if strings.IndexByte(v, 0) >= 0 {
			x.errorf(p.V, "agent.env.%s holds a NUL byte, which no environment can carry", name)
			continue
		}
		out = append(out, EnvVar{Name: name, Value: v, Pos: x.pos(p.K)})
	}
	return out
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// commandAgent checks the agent of a suite whose cases run an existing
// agent (agent.command): the program makes its own model calls, so the
// keys of the built-in loop have no use there; provider, optional, names
// the API it calls (which key a recording needs; with base_url, where
// live calls go).
func (x *decoder) commandAgent(n *yaml.Node, a *Agent) {
	for _, key := range []string{"model", "system", "params", "retries"} {
		if k, _ := yamlpos.Lookup(n, key); k != nil {
			x.errorf(k, "agent.%s is for the built-in loop; with agent.command your program makes its own model calls (remove %s)", key, key)
		}
	}
	switch a.Provider {
	case "":
		if k, _ := yamlpos.Lookup(n, "base_url"); k != nil {
			x.errorf(k, "agent.base_url with agent.command needs provider: the API it is the base URL of (anthropic, openai, openai-responses or openai-compatible)")
		}
	case provider.Script:
		// The script answers the program's model calls, over any API.
		if k, _ := yamlpos.Lookup(n, "base_url"); k != nil {
			x.errorf(k, "agent.base_url with provider script: the script answers every model call of the program, none goes to a real API (remove base_url)")
		}
	}
}

func (x *decoder) tool(tool yamlpos.KV) *Tool {
	t := &Tool{Name: tool.Key(), Pos: x.pos(tool.K)}
	for _, p := range yamlpos.Pairs(tool.V, tool.Val) {
		switch p.Key() {
		case "description":
			t.Description = str(p.Val)
		case "input_schema":
			t.InputSchema = p.Val
			t.SchemaPos = x.pos(yamlpos.Deref(p.V))
			x.compileSchema(p.V, p.Val, fmt.Sprintf("input_schema of tool %q", t.Name))
		}
	}
	return t
}

var outcomeKeys = []string{"return", "content", "error", "sequence", "impl"}

func (x *decoder) mocks(n *yaml.Node, val any) (map[string][]*Rule, []string) {
	out := map[string][]*Rule{}
	var order []string
	for _, p := range yamlpos.Pairs(n, val) {
		name := p.Key()
		order = append(order, name)
		rules := []*Rule{}
		again := false
		if list := yamlpos.Deref(p.V); list != nil {
			again = x.ruleLists[list]
			if x.ruleLists == nil {
				x.ruleLists = map[*yaml.Node]bool{}
			}
			x.ruleLists[list] = true
		}
		if again {
			x.quiet++
		}
		for _, rn := range yamlpos.Items(p.V, p.Val) {
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

func (x *decoder) rule(tool string, rule yamlpos.Item) *Rule {
	n := rule.N
	r := &Rule{Tool: tool, Pos: x.pos(n)}
	if yamlpos.Deref(n) == nil || yamlpos.Deref(n).Kind != yaml.MappingNode {
		return nil // reported by the schema
	}
	var outcomes []yamlpos.KV
	misspelt := false // an unknown key that is likely a misspelt outcome
	for _, p := range yamlpos.Pairs(n, rule.Val) {
		switch k := p.Key(); k {
		case "when":
			if m, ok := p.Val.(map[string]any); ok {
				r.When = value.Compile(m)
				r.whenNode = p.V
			}
		case "timeout_s":
			if num, ok := p.Val.(json.Number); ok {
				r.TimeoutS, _ = num.Float64()
			}
		case "delay_ms":
			if num, ok := p.Val.(json.Number); ok {
				r.DelayMS, _ = num.Float64()
			}
		case "log":
			r.Log = x.logMessages(p.V, p.Val)
		case "progress":
			r.Progress = x.progress(p.V, p.Val)
		case "return", "content", "error", "sequence", "impl":
			outcomes = append(outcomes, p)
		default:
			misspelt = misspelt || suggest.Closest(k, outcomeKeys) != ""
		}
	}
	switch len(outcomes) {
	case 0:
		// A merge key or a misspelt outcome is reported already.
		if !x.conv.IsMerged(n) && !misspelt {
			x.errorf(n, "mock rule for %q has no outcome: give one of return, content, error, sequence or impl (return: null delivers null)", tool)
		}
		return r
	case 1:
	default:
		x.errorf(outcomes[1].K, "mock rule for %q has %d outcomes (%s); keep one, or use sequence for a different outcome on each call", tool, len(outcomes), keyNames(outcomes))
	}
	r.Outcome = x.outcome(outcomes[0], true)
	if r.TimeoutS > 0 && !usesImpl(r.Outcome) {
		_, tn := yamlpos.Lookup(n, "timeout_s")
		x.warnf(tn, "timeout_s only bounds impl outcomes; this rule has none")
	}
	return r
}

func keyNames(ps []yamlpos.KV) string {
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Key()
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

func (x *decoder) outcome(p yamlpos.KV, top bool) Outcome {
	v := p.V
	o := Outcome{Kind: OutcomeKind(p.Key()), Pos: x.pos(v)}
	switch o.Kind {
	case Return:
		o.Value = p.Val
	case Content:
		o.Blocks = x.contentBlocks(v, p.Val)
	case Fail:
		o.Message = str(p.Val)
	case Impl:
		o.Impl = str(p.Val)
		x.checkImpl(v, p.Val)
	case Sequence:
		if !top {
			return o // reported by the schema
		}
		for _, it := range yamlpos.Items(v, p.Val) {
			en := it.N
			entry := yamlpos.Pairs(en, it.Val)
			var found []yamlpos.KV
			for _, q := range entry {
				switch q.Key() {
				case "return", "content", "error", "impl":
					found = append(found, q)
				}
			}
			if yamlpos.Deref(en) == nil || yamlpos.Deref(en).Kind != yaml.MappingNode {
				continue // reported by the schema
			}
			switch len(found) {
			case 0:
				// An entry with other keys got an unknown-key error already.
				if len(entry) == 0 && !x.conv.IsMerged(en) {
					x.errorf(en, "sequence entry has no outcome: give return, content, error or impl")
				}
				continue
			case 1:
			default:
				x.errorf(found[1].K, "sequence entry has %d outcomes (%s); each entry is exactly one of return, content, error or impl", len(found), keyNames(found))
			}
			o.Sequence = append(o.Sequence, x.outcome(found[0], false))
		}
	}
	return o
}

var implRef = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)
})

func (x *decoder) checkImpl(v *yaml.Node, val any) {
	ref, ok := val.(string)
	if !ok {
		return // reported by the schema
	}
	if !implRef().MatchString(ref) {
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

func (x *decoder) caseOf(it yamlpos.Item, index int) *Case {
	n := it.N
	if yamlpos.Deref(n) == nil || yamlpos.Deref(n).Kind != yaml.MappingNode {
		return nil
	}
	c := &Case{Pos: x.pos(n), node: n, index: index}
	ps, mark := x.pairs(n, it.Val, "script", "expect")
	defer x.done(mark)
	for _, p := range ps {
		switch p.Key() {
		case "name":
			c.Name = str(p.Val)
		case "input":
			c.Input = str(p.Val)
		case "skip":
			switch v := p.Val.(type) {
			case bool:
				c.Skip = v
			case string:
				c.Skip, c.SkipReason = true, v
			}
		case "max_turns":
			c.MaxTurns, _ = x.integer(p.V, p.Val)
		case "trials":
			c.Trials, _ = x.integer(p.V, p.Val)
		case "match":
			c.Match = x.match(p.V, p.Val)
		case "workspace":
			c.Workspace, c.WorkspacePos = str(p.Val), x.pos(p.V)
		case "model_faults":
			c.ModelFaults, c.ModelFaultsPos = x.modelFaults(p.V, p.Val), x.pos(p.K)
		case "scenario":
			c.Scenario, c.ScenarioPos = str(p.Val), x.pos(p.V)
		case "actor":
			c.Actor, c.ActorPos = str(p.Val), x.pos(p.V)
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
	t := &Turn{Pos: x.pos(n)}
	hasText, unknown := false, false
	ps, mark := x.pairs(n, it.Val, "tool_calls")
	defer x.done(mark)
	for _, p := range ps {
		switch p.Key() {
		default:
			unknown = true
		case "when":
			t.When = x.guard(p)
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
				sc := &ScriptCall{Pos: x.pos(cn)}
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
	g := &Guard{Pos: x.pos(when.K)}
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
			}
		}
	}
	return g
}

func (x *decoder) check(it yamlpos.Item) *Check {
	ps, mark := x.pairs(it.N, it.Val)
	defer x.done(mark)
	if len(ps) != 1 {
		return nil // reported by the schema
	}
	k, v, val := ps[0].K, ps[0].V, ps[0].Val
	c := &Check{Kind: CheckKind(yamlpos.Deref(k).Value), Pos: x.pos(k)}
	switch {
	case x.cross.counted:
	case x.lateSources:
		c.srcNode, c.srcVal = v, val
	default:
		c.Source = checkSource(c.Kind, v, val)
	}
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
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "tool":
				c.Tool, c.toolNodes = str(p.Val), []*yaml.Node{p.V}
			case "operation":
				c.Operation = str(p.Val)
			case "actor":
				c.Actor = str(p.Val)
			case "outcome":
				c.Outcome = str(p.Val)
			case "with":
				if m, ok := p.Val.(map[string]any); ok {
					c.With = value.Compile(m)
					c.withNode = p.V
				}
			case "times":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Times, timesN = &i, p.K
				}
			case "min":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Min, minN = &i, p.K
				}
			case "max":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Max, maxN = &i, p.K
				}
			}
		}
		if c.Tool == "" && c.Operation == "" {
			x.errorf(k, "%s needs tool (or operation, in a world suite)", c.Kind)
		}
		if c.Tool != "" && c.Operation != "" {
			_, on := yamlpos.Lookup(v, "operation")
			x.errorf(on, "give tool or operation, not both")
		}
		if timesN != nil && (minN != nil || maxN != nil) {
			x.errorf(timesN, "times cannot be combined with min or max: use times for an exact count, min/max for a range")
		}
		if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
			x.errorf(minN, "min (%d) is greater than max (%d)", *c.Min, *c.Max)
		}
	case CheckOrder:
		for _, e := range yamlpos.Items(v, val) {
			c.Order = append(c.Order, str(e.Val))
			c.toolNodes = append(c.toolNodes, e.N)
		}
	case CheckTrajectory:
		c.TrajectoryMatch, c.TrajectoryArgs = TrajectoryStrict, ArgsSubset
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "match":
				if s, ok := p.Val.(string); ok {
					c.TrajectoryMatch = s
				}
			case "args":
				if s, ok := p.Val.(string); ok {
					c.TrajectoryArgs = s
				}
			case "calls":
				for _, e := range yamlpos.Items(p.V, p.Val) {
					tc := &TrajectoryCall{Pos: x.pos(e.N)}
					switch ev := e.Val.(type) {
					case string:
						tc.Tool = ev
						c.toolNodes = append(c.toolNodes, e.N)
					case map[string]any:
						for _, q := range yamlpos.Pairs(e.N, ev) {
							switch q.Key() {
							case "tool":
								tc.Tool = str(q.Val)
								c.toolNodes = append(c.toolNodes, q.V)
							case "with":
								if m, ok := q.Val.(map[string]any); ok {
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
					_, wn := yamlpos.Lookup(v, "args")
					x.warnf(wn, "args: ignore compares tool names only: the with of the calls is not used")
					break
				}
			}
		}
	case CheckJudge:
		j := &Judge{}
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "rubric":
				j.Rubric = str(p.Val)
			case "provider":
				j.Provider = str(p.Val)
			case "model":
				j.Model = str(p.Val)
			case "threshold":
				if num, ok := p.Val.(json.Number); ok {
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
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "contains":
				if s, ok := p.Val.(string); ok {
					c.Contains = &s
				}
			case "equals":
				if s, ok := p.Val.(string); ok {
					c.Equals = &s
				}
			case "regex":
				if s, ok := p.Val.(string); ok {
					c.Regex = x.regex(p.V, s)
				}
			case "json_schema":
				c.JSONSchema = x.compileSchema(p.V, p.Val, "json_schema")
			case "turn":
				c.turnNode = p.V
				switch t := p.Val.(type) {
				case string:
					switch t {
					case "any":
						c.Turn = TurnAny
					case "last":
					default:
						x.errorf(p.V, "turn must be a turn number (1 is the reply to input), any or last, not %q%s", t, suggest.DidYouMean(t, []string{"any", "last"}))
					}
				case json.Number:
					c.Turn, _ = x.integer(p.V, p.Val)
				}
			}
		}
	case CheckMaxTurns:
		c.MaxTurns, _ = x.integer(v, val)
	case CheckRead, CheckNotRead, CheckPrompted:
		x.mcpCheck(c, v, val)
	case CheckState:
		m, _ := val.(map[string]any)
		c.Path = str(m["path"])
		c.StateEquals, c.HasEquals = m["equals"]
		c.StateHas, c.HasContains = m["contains"]
		c.Absent, _ = m["absent"].(bool)
		given := 0
		for _, p := range yamlpos.Pairs(v, val) {
			switch p.Key() {
			case "count":
				if i, ok := x.integer(p.V, p.Val); ok {
					c.Count = &i
				}
				given++
			case "equals", "contains", "absent":
				given++
			case "ordered":
				if b, ok := p.Val.(bool); ok {
					c.StateOrdered = &b
				}
				if _, eq := m["equals"]; !eq {
					x.errorf(p.K, "ordered says how equals compares lists; this state check has no equals")
				}
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
		for _, p := range yamlpos.Pairs(v, val) {
			if p.Key() == "count" {
				if i, ok := x.integer(p.V, p.Val); ok {
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
	// counted: the cases are only counted (Options.Discard, not a world
	// suite), so what only a kept case is read for (a check's source
	// text, a call's arguments as JSON) is not made.
	counted  bool
	declared map[string]*Tool
	// suiteTools are the names declared or mocked by the suite; toolSet
	// and toolList the same, once each, and sorted: a case's tools when
	// it mocks none of its own.
	suiteTools []string
	toolSet    map[string]bool
	toolList   []string
}

// crossHead reports what is wrong between the parts of the suite other
// than its cases, and readies the checks of each case (crossCase).
func (x *decoder) crossHead(s *Suite) {
	// An unknown or missing provider is reported already: judge nothing by it.
	k := &x.cross
	k.known = slices.Contains(providers, s.Agent.Provider)
	k.scripted = s.Agent.Provider == provider.Script
	k.command = len(s.Agent.Command) > 0
	k.real = k.known && !k.scripted && !k.command
	k.counted = x.opts.Discard && s.World == ""

	x.checkWorkspace(s, k.command)
	if sk, _ := yamlpos.Lookup(x.root, "script"); sk != nil && k.command && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's agent.command program has its model calls recorded into the cases' cassettes (set agent.provider: script to answer them from the script instead, or remove the script)")
	} else if sk != nil && k.known && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's provider is %q (remove the script, or set agent.provider: script)", s.Agent.Provider)
	}
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
				x.d.AddAt(yamlpos.Warning, t.Pos, "tool %q has no input_schema: the model is shown an open object schema", t.Name)
			} else if m, ok := t.InputSchema.(map[string]any); ok && m["type"] == nil {
				x.d.AddAt(yamlpos.Warning, t.SchemaPos, "tool %q: input_schema has no \"type\": the model is sent it with \"type\": \"object\" added (tool arguments are an object, and the APIs reject a tool schema without a type)", t.Name)
			}
		}
		x.warnUndeclared(s, s.MockOrder, x.root, false)
	}
	for _, t := range s.Tools {
		k.suiteTools = append(k.suiteTools, t.Name)
	}
	k.suiteTools = append(k.suiteTools, s.MockOrder...)
	k.toolSet, k.toolList = knownTools(k.suiteTools, nil)
	releaseRules(s.Mocks)
}

// knownTools is the set of the names in suite and own, and the same
// names sorted.
func knownTools(suite, own []string) (map[string]bool, []string) {
	set := make(map[string]bool, len(suite)+len(own))
	var list []string
	for _, names := range [][]string{suite, own} {
		for _, n := range names {
			if !set[n] {
				set[n] = true
				list = append(list, n)
			}
		}
	}
	sort.Strings(list)
	return set, list
}

func (x *decoder) warnUndeclared(s *Suite, order []string, parent *yaml.Node, suiteToo bool) {
	_, mocks := yamlpos.Lookup(parent, "mocks")
	for _, name := range order {
		if _, warned := s.Mocks[name]; x.cross.declared[name] == nil && !(suiteToo && warned) {
			k, _ := yamlpos.Lookup(mocks, name)
			x.warnf(k, "tool %q is mocked but not declared under tools: the model is shown an open object schema", name)
		}
	}
}

// crossCase reports what is wrong between case c and its suite:
// references between scripts, mocks, tools and checks.
func (x *decoder) crossCase(s *Suite, c *Case) {
	k := &x.cross
	if k.scripted && !k.command && len(c.ModelFaults) > 0 {
		x.d.AddAt(yamlpos.Error, c.ModelFaultsPos, "model_faults need model requests to fault: a real provider or agent.command (provider script sends none)")
	}
	x.checkCaseWorkspace(s, c, k.command)
	if k.real {
		x.warnUndeclared(s, c.MockOrder, c.node, true)
	}
	declared := k.declared
	if s.World == "" {
		for _, key := range []string{"scenario", "actor", "toolOverrides", "setup", "seed"} {
			if kn, _ := yamlpos.Lookup(c.node, key); kn != nil {
				x.errorf(kn, "%s is for drills: the suite needs world: (a *.world.yaml file)", key)
			}
		}
	}
	for _, rules := range c.Mocks {
		x.checkWhenKeys(rules, declared)
	}
	tools, knownList := k.toolSet, k.toolList
	if len(c.MockOrder) > 0 {
		tools, knownList = knownTools(k.suiteTools, c.MockOrder)
	}
	rulesFor := func(tool string) []*Rule {
		if r, ok := c.Mocks[tool]; ok {
			return r
		}
		return s.Mocks[tool]
	}

	// A world suite without agent (its drills' agent is a test's own
	// function) takes a script too: it answers the drill's model calls.
	if sk, _ := yamlpos.Lookup(c.node, "script"); sk != nil && k.command && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's agent.command program has its model calls recorded into the case's cassette (set agent.provider: script to answer them from the script instead, or remove the script)")
	} else if sk != nil && k.known && !k.scripted && !k.command {
		x.errorf(sk, "script is only for provider: script; this suite's provider is %q (remove the script, or set agent.provider: script)", s.Agent.Provider)
	}
	if k.scripted && len(c.Script) == 0 && len(s.Script) == 0 && !c.Skip {
		if _, sn := yamlpos.Lookup(c.node, "script"); sn == nil {
			x.errorf(c.node, "%s has no script: provider script needs the model's turns (a script in the case, or one for every case at the suite's top level; or skip: true)", caseLabel(c))
		}
	}
	for ti, t := range c.Script {
		// A program may make model calls a script does not foresee,
		// and a guarded turn waits for its request: reachability is
		// the built-in loop's.
		if len(t.ToolCalls) == 0 && !t.broken && ti+1 < len(c.Script) && c.User == nil && !k.command && !s.NoAgent && t.When == nil && c.Script[ti+1].When == nil {
			next := c.Script[ti+1]
			x.d.AddAt(yamlpos.Warning, next.Pos, "script turn %d is never reached: turn %d has no tool calls, so the case ends there", ti+2, ti+1)
		}
		if g := t.When; g != nil && s.World == "" {
			for _, n := range append(slices.Clip(g.Tools), g.ResultOf) {
				if n != "" && !tools[n] {
					x.d.AddAt(yamlpos.Warning, g.Pos, "script turn %d: when names tool %q, which is neither declared nor mocked, so the guard never holds%s", ti+1, n, suggest.DidYouMean(n, knownList))
				}
			}
		}
		for _, call := range t.ToolCalls {
			if call.Name != "" && len(rulesFor(call.Name)) == 0 && k.scripted && s.World == "" {
				x.d.AddAt(yamlpos.Warning, call.Pos, "no mock rule for tool %q in this case: the call will be unmatched and the case will fail%s", call.Name, suggest.DidYouMean(call.Name, knownList))
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
				x.d.AddAt(yamlpos.Warning, at, "check names tool %q, which is neither declared nor mocked%s", n, suggest.DidYouMean(n, knownList))
			}
		}
		if ch.With != nil && declared[ch.Tool] != nil {
			x.checkPatternKeys(ch.With, declared[ch.Tool], ch.withNode, "with")
		}
	}
}

// user reads a case's user: a list of scripted turns or a model-driven
// user (its model resolved in crossCheck).
func (x *decoder) user(p yamlpos.KV) *User {
	u := &User{Pos: x.pos(p.K), key: p.K, node: p.V}
	switch val := p.Val.(type) {
	case []any:
		u.Script = []*UserTurn{}
		for _, it := range yamlpos.Items(p.V, val) {
			t := &UserTurn{Pos: x.pos(it.N)}
			switch v := it.Val.(type) {
			case string:
				t.Say = v
			case map[string]any:
				for _, q := range yamlpos.Pairs(it.N, v) {
					switch q.Key() {
					case "say":
						t.Say = str(q.Val)
					case "when":
						if s, ok := q.Val.(string); ok {
							t.When = x.regex(q.V, s)
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
		for _, q := range yamlpos.Pairs(p.V, val) {
			switch q.Key() {
			case "provider":
				m.Provider = str(q.Val)
			case "model":
				m.Model = str(q.Val)
			case "instructions":
				m.Instructions = str(q.Val)
			case "stop_when":
				if s, ok := q.Val.(string); ok {
					m.StopWhen = x.regex(q.V, s)
				}
			case "max_turns":
				if i, ok := x.integer(q.V, q.Val); ok {
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
		x.errorf(u.key, "user: needs the suite's agent (provider and model, or command): a suite without one is the drills of a test's own function (runDrills / run_drills, dryfire engine), which takes one input and gives one answer, so no simulated user can talk to it; give the suite an agent, or drive the conversation in the test")
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
	case *prov == "" || *prov == provider.Script:
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
			at, _ = yamlpos.Lookup(n, "provider")
		}
		why := "the agent names none"
		if *prov != s.Agent.Provider {
			why = "the agent's is for the agent's provider"
		}
		x.errorf(at, "%s needs a model name: give the %s model (%s)", who, role, why)
	case *prov == provider.OpenAICompatible && *baseURL == "":
		at, _ := yamlpos.Lookup(n, "provider")
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
	var names []string // for did-you-mean, when a key is not declared
	for _, k := range p.Keys() {
		if _, ok := props[k]; !ok {
			if names == nil {
				names = make([]string, 0, len(props))
				for k := range props {
					names = append(names, k)
				}
				sort.Strings(names)
			}
			at := n
			if kn, _ := yamlpos.Lookup(n, k); kn != nil {
				at = kn
			}
			x.d.Add(yamlpos.Warning, at.Line, at.Column, "%s key %q is not declared in the input_schema of tool %q%s", what, k, t.Name, suggest.DidYouMean(k, names))
		}
	}
}

// compileSchema compiles the JSON Schema written at n and reports a broken
// one at the offending key or value inside it.
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
