package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
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
}

type kv struct{ k, v *yaml.Node }

func pairs(n *yaml.Node) []kv {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	out := make([]kv, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			continue
		}
		out = append(out, kv{n.Content[i], n.Content[i+1]})
	}
	return out
}

func items(n *yaml.Node) []*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func (x *decoder) pos(n *yaml.Node) Pos {
	return Pos{File: x.file, Line: max(n.Line, 1), Col: max(n.Column, 1)}
}

func (x *decoder) val(n *yaml.Node) any {
	return x.conv.values[deref(n)]
}

func (x *decoder) str(n *yaml.Node) string {
	s, _ := x.val(n).(string)
	return s
}

func (x *decoder) integer(n *yaml.Node) (int, bool) {
	num, ok := x.val(n).(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(num))
	return i, err == nil
}

func (x *decoder) errorf(n *yaml.Node, format string, args ...any) {
	x.d.add(Error, n.Line, n.Column, format, args...)
}

func (x *decoder) warnf(n *yaml.Node, format string, args ...any) {
	x.d.add(Warning, n.Line, n.Column, format, args...)
}

func (x *decoder) suite(root *yaml.Node) *Suite {
	s := &Suite{File: x.file, Mocks: map[string][]*Rule{}}
	var casesNode, agentNode *yaml.Node
	for _, p := range pairs(root) {
		switch deref(p.k).Value {
		case "name":
			s.Name = x.str(p.v)
		case "agent":
			agentNode = p.v
			s.Agent = x.agent(p.k, p.v)
		case "tools":
			for _, t := range pairs(p.v) {
				s.Tools = append(s.Tools, x.tool(t.k, t.v))
			}
		case "mocks":
			s.Mocks, s.MockOrder = x.mocks(p.v)
		case "cases":
			casesNode = p.v
		}
	}
	if s.Name == "" {
		s.Name = defaultName(x.file)
	}
	firstCase := map[string]*yaml.Node{}
	for _, cn := range items(casesNode) {
		c := x.caseOf(cn, s)
		if c == nil {
			continue
		}
		nameKey, nameNode := lookup(cn, "name")
		if c.Name != "" && nameNode != nil {
			if f, dup := firstCase[c.Name]; dup {
				x.errorf(nameNode, "duplicate case name %q (first at line %d)", c.Name, f.Line)
			} else {
				firstCase[c.Name] = nameKey
			}
		}
		s.Cases = append(s.Cases, c)
	}
	x.crossCheck(s, agentNode)
	return s
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

func (x *decoder) agent(key, n *yaml.Node) Agent {
	a := Agent{Pos: x.pos(key)}
	for _, p := range pairs(n) {
		switch deref(p.k).Value {
		case "provider":
			a.Provider = x.str(p.v)
		case "model":
			a.Model = x.str(p.v)
		case "base_url":
			a.BaseURL = x.str(p.v)
		case "system":
			a.System = x.str(p.v)
		case "max_turns":
			a.MaxTurns, _ = x.integer(p.v)
		case "params":
			a.Params, _ = x.val(p.v).(map[string]any)
		case "command":
			for _, e := range items(p.v) {
				a.Command = append(a.Command, x.str(e))
			}
			x.errorf(p.k, "agent.command (running an existing agent) is not available in this version of dryfire; use provider: script")
		}
	}
	if a.Provider == ProviderOpenAICompatible && a.BaseURL == "" {
		_, pv := lookup(n, "provider")
		x.errorf(pv, "provider openai-compatible needs agent.base_url (the server's URL, e.g. http://localhost:11434/v1)")
	}
	return a
}

func (x *decoder) tool(key, n *yaml.Node) *Tool {
	t := &Tool{Name: deref(key).Value, Pos: x.pos(key)}
	for _, p := range pairs(n) {
		switch deref(p.k).Value {
		case "description":
			t.Description = x.str(p.v)
		case "input_schema":
			t.InputSchema = x.val(p.v)
			if t.InputSchema != nil {
				if _, err := jschema.Compile(t.InputSchema, ""); err != nil {
					x.errorf(p.v, "input_schema of tool %q: %v", t.Name, err)
				}
			}
		}
	}
	return t
}

var outcomeKeys = []string{"return", "error", "sequence", "impl"}

func (x *decoder) mocks(n *yaml.Node) (map[string][]*Rule, []string) {
	out := map[string][]*Rule{}
	var order []string
	for _, p := range pairs(n) {
		name := deref(p.k).Value
		order = append(order, name)
		rules := []*Rule{}
		for _, rn := range items(p.v) {
			if r := x.rule(name, rn); r != nil {
				rules = append(rules, r)
			}
		}
		out[name] = rules
	}
	return out, order
}

func (x *decoder) rule(tool string, n *yaml.Node) *Rule {
	r := &Rule{Tool: tool, Pos: x.pos(n)}
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil // reported by the schema
	}
	var outcomes []kv
	for _, p := range pairs(n) {
		switch k := deref(p.k).Value; k {
		case "when":
			if m, ok := x.val(p.v).(map[string]any); ok {
				r.When = value.Compile(m)
				r.whenNode = p.v
			}
		case "timeout_s":
			if num, ok := x.val(p.v).(json.Number); ok {
				r.TimeoutS, _ = num.Float64()
			}
		case "return", "error", "sequence", "impl":
			outcomes = append(outcomes, p)
		}
	}
	switch len(outcomes) {
	case 0:
		x.errorf(n, "mock rule for %q has no outcome: give one of return, error, sequence or impl (return: null delivers null)", tool)
		return r
	case 1:
	default:
		var names []string
		for _, o := range outcomes {
			names = append(names, deref(o.k).Value)
		}
		x.errorf(outcomes[1].k, "mock rule for %q has %d outcomes (%s); a rule has exactly one", tool, len(outcomes), strings.Join(names, ", "))
	}
	r.Outcome = x.outcome(outcomes[0].k, outcomes[0].v, true)
	if r.TimeoutS > 0 && !usesImpl(r.Outcome) {
		_, tn := lookup(n, "timeout_s")
		x.warnf(tn, "timeout_s only bounds impl outcomes; this rule has none")
	}
	return r
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

func (x *decoder) outcome(k, v *yaml.Node, top bool) Outcome {
	o := Outcome{Kind: OutcomeKind(deref(k).Value), Pos: x.pos(v)}
	switch o.Kind {
	case Return:
		o.Value = x.val(v)
	case Fail:
		o.Message = x.str(v)
	case Impl:
		o.Impl = x.str(v)
		x.checkImpl(v, o.Impl)
	case Sequence:
		if !top {
			return o // reported by the schema
		}
		for _, en := range items(v) {
			var found []kv
			for _, p := range pairs(en) {
				switch deref(p.k).Value {
				case "return", "error", "impl":
					found = append(found, p)
				}
			}
			if deref(en) == nil || deref(en).Kind != yaml.MappingNode {
				continue // reported by the schema
			}
			switch len(found) {
			case 0:
				if len(pairs(en)) == 0 {
					x.errorf(en, "sequence entry has no outcome: give return, error or impl")
				}
				continue
			case 1:
			default:
				x.errorf(found[1].k, "sequence entry has %d outcomes; each entry is exactly one of return, error or impl", len(found))
			}
			o.Sequence = append(o.Sequence, x.outcome(found[0].k, found[0].v, false))
		}
	}
	return o
}

var implRef = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$`)

func (x *decoder) checkImpl(v *yaml.Node, ref string) {
	if _, ok := x.val(v).(string); !ok {
		return // reported by the schema
	}
	if !implRef.MatchString(ref) {
		x.errorf(v, "malformed impl reference %q: want package.module:function", ref)
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

func (x *decoder) caseOf(n *yaml.Node, s *Suite) *Case {
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil
	}
	c := &Case{Pos: x.pos(n)}
	for _, p := range pairs(n) {
		switch deref(p.k).Value {
		case "name":
			c.Name = x.str(p.v)
		case "input":
			c.Input = x.str(p.v)
		case "skip":
			switch v := x.val(p.v).(type) {
			case bool:
				c.Skip = v
			case string:
				c.Skip, c.SkipReason = true, v
			}
		case "max_turns":
			c.MaxTurns, _ = x.integer(p.v)
		case "mocks":
			c.Mocks, c.MockOrder = x.mocks(p.v)
		case "script":
			for ti, tn := range items(p.v) {
				if t := x.turn(tn, ti); t != nil {
					c.Script = append(c.Script, t)
				}
			}
		case "expect":
			for _, cn := range items(p.v) {
				if ch := x.check(cn); ch != nil {
					c.Expect = append(c.Expect, ch)
				}
			}
		}
	}
	return c
}

func (x *decoder) turn(n *yaml.Node, index int) *Turn {
	if deref(n) == nil || deref(n).Kind != yaml.MappingNode {
		return nil
	}
	t := &Turn{Pos: x.pos(n)}
	hasText := false
	for _, p := range pairs(n) {
		switch deref(p.k).Value {
		case "text":
			t.Text = x.str(p.v)
			hasText = true
		case "tool_calls":
			for ci, cn := range items(p.v) {
				if deref(cn) == nil || deref(cn).Kind != yaml.MappingNode {
					continue
				}
				sc := &ScriptCall{Pos: x.pos(cn), Args: map[string]any{}}
				for _, q := range pairs(cn) {
					switch deref(q.k).Value {
					case "id":
						sc.ID = x.str(q.v)
					case "name":
						sc.Name = x.str(q.v)
					case "args":
						if m, ok := x.val(q.v).(map[string]any); ok {
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
	if !hasText && len(t.ToolCalls) == 0 {
		x.errorf(n, "script turn %d has neither text nor tool_calls", index+1)
	}
	return t
}

func (x *decoder) check(n *yaml.Node) *Check {
	ps := pairs(n)
	if len(ps) != 1 {
		return nil // reported by the schema
	}
	k, v := ps[0].k, ps[0].v
	c := &Check{Kind: CheckKind(deref(k).Value), Pos: x.pos(k)}
	c.Source = string(c.Kind) + ": " + flow(v, x.conv)
	switch c.Kind {
	case CheckCalled, CheckNotCalled:
		if s, ok := x.val(v).(string); ok {
			c.Tool = s
			return c
		}
		if _, ok := x.val(v).(map[string]any); !ok {
			return nil
		}
		var timesN, minN, maxN *yaml.Node
		for _, p := range pairs(v) {
			switch deref(p.k).Value {
			case "tool":
				c.Tool = x.str(p.v)
			case "with":
				if m, ok := x.val(p.v).(map[string]any); ok {
					c.With = value.Compile(m)
					c.withNode = p.v
				}
			case "times":
				if i, ok := x.integer(p.v); ok {
					c.Times, timesN = &i, p.k
				}
			case "min":
				if i, ok := x.integer(p.v); ok {
					c.Min, minN = &i, p.k
				}
			case "max":
				if i, ok := x.integer(p.v); ok {
					c.Max, maxN = &i, p.k
				}
			}
		}
		if timesN != nil && (minN != nil || maxN != nil) {
			x.errorf(timesN, "times cannot be combined with min or max: use times for an exact count, min/max for a range")
		}
		if c.Min != nil && c.Max != nil && *c.Min > *c.Max {
			x.errorf(minN, "min (%d) is greater than max (%d)", *c.Min, *c.Max)
		}
	case CheckOrder:
		for _, e := range items(v) {
			c.Order = append(c.Order, x.str(e))
		}
	case CheckOutput:
		for _, p := range pairs(v) {
			switch deref(p.k).Value {
			case "contains":
				if s, ok := x.val(p.v).(string); ok {
					c.Contains = &s
				}
			case "equals":
				if s, ok := x.val(p.v).(string); ok {
					c.Equals = &s
				}
			case "regex":
				if s, ok := x.val(p.v).(string); ok {
					re, err := regexp.Compile(s)
					if err != nil {
						x.errorf(p.v, "invalid regex: %v", strings.TrimPrefix(err.Error(), "error parsing regexp: "))
					} else {
						c.Regex = re
					}
				}
			case "json_schema":
				if sv := x.val(p.v); sv != nil {
					sch, err := jschema.Compile(sv, "")
					if err != nil {
						x.errorf(p.v, "json_schema: %v", err)
					} else {
						c.JSONSchema = sch
					}
				}
			}
		}
	case CheckMaxTurns:
		c.MaxTurns, _ = x.integer(v)
	case CheckNoErrors:
	default:
		return nil
	}
	return c
}

// crossCheck reports what needs the whole file: references between
// scripts, mocks, tools and checks.
func (x *decoder) crossCheck(s *Suite, agentNode *yaml.Node) {
	scripted := s.Agent.Provider == ProviderScript
	real := s.Agent.Provider != "" && !scripted && len(s.Agent.Command) == 0

	declared := map[string]*Tool{}
	for _, t := range s.Tools {
		declared[t.Name] = t
	}
	for _, rules := range s.Mocks {
		x.checkWhenKeys(rules, declared)
	}
	if real {
		for _, t := range s.Tools {
			if t.InputSchema == nil {
				x.d.add(Warning, t.Pos.Line, t.Pos.Col, "tool %q has no input_schema: the model is shown an open object schema", t.Name)
			}
		}
		for _, name := range s.MockOrder {
			if declared[name] == nil && len(s.Mocks[name]) > 0 {
				r := s.Mocks[name][0]
				x.d.add(Warning, r.Pos.Line, r.Pos.Col, "tool %q is mocked but not declared under tools: the model is shown an open object schema", name)
			}
		}
	}

	for ci, c := range s.Cases {
		caseNode := x.caseNode(ci)
		for _, rules := range c.Mocks {
			x.checkWhenKeys(rules, declared)
		}
		known := map[string]bool{}
		var knownList []string
		addKnown := func(n string) {
			if !known[n] {
				known[n] = true
				knownList = append(knownList, n)
			}
		}
		for _, t := range s.Tools {
			addKnown(t.Name)
		}
		for _, n := range s.MockOrder {
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

		if sk, sn := lookup(caseNode, "script"); sk != nil && !scripted {
			_ = sn
			x.errorf(sk, "script is only for provider: script; this suite's provider is %q", s.Agent.Provider)
		}
		if scripted && len(c.Script) == 0 && !c.Skip && caseNode != nil {
			if _, sn := lookup(caseNode, "script"); sn == nil {
				x.errorf(caseNode, "case %q has no script: provider script needs the model's turns", c.Name)
			}
		}
		for ti, t := range c.Script {
			if len(t.ToolCalls) == 0 && ti+1 < len(c.Script) {
				next := c.Script[ti+1]
				x.d.add(Warning, next.Pos.Line, next.Pos.Col, "script turn %d is never reached: turn %d has no tool calls, so the case ends there", ti+2, ti+1)
			}
			for _, call := range t.ToolCalls {
				if call.Name != "" && len(rulesFor(call.Name)) == 0 && scripted {
					x.d.add(Warning, call.Pos.Line, call.Pos.Col, "no mock rule for tool %q in this case: the call will be unmatched and the case will fail%s", call.Name, suggest.DidYouMean(call.Name, knownList))
				}
			}
		}
		for _, ch := range c.Expect {
			var names []string
			switch ch.Kind {
			case CheckCalled, CheckNotCalled:
				names = []string{ch.Tool}
			case CheckOrder:
				names = ch.Order
			}
			for _, n := range names {
				if n != "" && !known[n] {
					x.d.add(Warning, ch.Pos.Line, ch.Pos.Col, "check names tool %q, which is neither declared nor mocked%s", n, suggest.DidYouMean(n, knownList))
				}
			}
			if ch.With != nil && declared[ch.Tool] != nil {
				x.checkPatternKeys(ch.With, declared[ch.Tool], ch.withNode, "with")
			}
		}
	}
}

func (x *decoder) caseNode(i int) *yaml.Node {
	_, cases := lookup(x.root, "cases")
	it := items(cases)
	if i < len(it) {
		return it[i]
	}
	return nil
}

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
