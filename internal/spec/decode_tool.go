package spec

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Decoding a suite's tools and their mock rules (match, outcome, sequence, impl).

func (x *decoder) tool(tool yamlpos.KV) *Tool {
	m, _ := tool.Val.(map[string]any)
	t := &Tool{Name: tool.Key(), Pos: x.d.Pos(tool.K), Description: str(m["description"])}
	for _, p := range yamlpos.Pairs(tool.V, tool.Val) {
		switch p.Key() {
		case "aliases":
			for _, it := range yamlpos.Items(p.V, p.Val) {
				if a, ok := it.Val.(string); ok {
					t.Aliases = append(t.Aliases, a)
				}
			}
		case "input_schema":
			t.InputSchema = p.Val
			t.SchemaPos = x.d.Pos(yamlpos.Deref(p.V))
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
	r := &Rule{Tool: tool, Pos: x.d.Pos(n)}
	if yamlpos.Deref(n) == nil || yamlpos.Deref(n).Kind != yaml.MappingNode {
		return nil // reported by the schema
	}
	var outcomes, asks []yamlpos.KV
	misspelt := false // an unknown key that is likely a misspelt outcome
	for _, p := range yamlpos.Pairs(n, rule.Val) {
		switch k := p.Key(); k {
		case "when":
			if m, ok := p.Val.(map[string]any); ok {
				r.When = value.Compile(m)
				r.whenNode = p.V
			}
		case "timeout_s":
			r.TimeoutS = number(p.Val)
		case "delay_ms":
			r.DelayMS = number(p.Val)
		case "log":
			r.Log = x.logMessages(p.V, p.Val)
		case "progress":
			r.Progress = x.progress(p.V, p.Val)
		case "elicit", "sample":
			asks = append(asks, p)
			if r.Ask == nil {
				r.Ask = x.ask(p)
			}
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
	x.checkAsk(r, n, asks)
	if r.TimeoutS > 0 && !usesImpl(r.Outcome) && r.Ask == nil {
		_, tn := yamlpos.Lookup(n, "timeout_s")
		x.warnf(tn, "timeout_s only bounds impl outcomes and the client's answer to elicit or sample; this rule has none")
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
	return o.Kind == Impl || slices.ContainsFunc(o.Sequence, func(e Outcome) bool { return e.Kind == Impl })
}

func (x *decoder) outcome(p yamlpos.KV, top bool) Outcome {
	v := p.V
	o := Outcome{Kind: OutcomeKind(p.Key()), Pos: x.d.Pos(v), node: v}
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
