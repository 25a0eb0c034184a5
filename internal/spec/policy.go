package spec

import (
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Policy rules: how a policy check relates its calls to the others.
const (
	PolicyPrecededBy = "preceded_by" // each call has an earlier call of Other
	PolicyNotAfter   = "not_after"   // no call after one of Other (until one of Until)
	PolicyAtMost     = "at_most"     // at most AtMost calls (per value of Per)
)

// Policy is a policy check: a rule over the whole trajectory.
type Policy struct {
	Name  string
	Calls *CallSel
	Rule  string   // PolicyPrecededBy, PolicyNotAfter or PolicyAtMost
	Other *CallSel // preceded_by, not_after
	Until *CallSel // not_after only; nil: the ban is never lifted
	// Same pairs an argument of the call with the other call's argument
	// whose value it must equal.
	Same   [][2]string
	AtMost int
	Per    []string
	// If is the condition: the rule applies only when it passes.
	If *Check
}

// CallSel says which calls: by tool (any when Tools is empty), a deep
// subset of the arguments, the answer (an error or not), where it ran.
type CallSel struct {
	Tools []string
	With  *value.Pattern
	Error *bool
	Where string
}

// policy decodes a policy check's value; the schema has checked its
// shape, this what it cannot say: exactly one rule, and the keys that go
// with it.
func (x *decoder) policy(c *Check, k, v *yaml.Node, val any) {
	p := &Policy{}
	var rules []*yaml.Node
	var sameN, untilN, perN *yaml.Node
	where := ""
	for _, kv := range yamlpos.Pairs(v, val) {
		switch kv.Key() {
		case "name":
			p.Name = str(kv.Val)
		case "calls":
			p.Calls = x.callSel(kv.V, kv.Val, &c.toolNodes)
		case "preceded_by", "not_after":
			p.Rule, p.Other = kv.Key(), x.callSel(kv.V, kv.Val, &c.toolNodes)
			rules = append(rules, kv.K)
		case "at_most":
			p.Rule = PolicyAtMost
			p.AtMost, _ = x.integer(kv.V, kv.Val)
			rules = append(rules, kv.K)
		case "until":
			p.Until, untilN = x.callSel(kv.V, kv.Val, &c.toolNodes), kv.K
		case "same":
			sameN = kv.K
			switch s := kv.Val.(type) {
			case []any:
				for _, e := range s {
					p.Same = append(p.Same, [2]string{str(e), str(e)})
				}
			case map[string]any:
				for _, kv2 := range yamlpos.Pairs(kv.V, s) {
					p.Same = append(p.Same, [2]string{kv2.Key(), str(kv2.Val)})
				}
			}
		case "per":
			perN = kv.K
			for _, e := range yamlpos.Items(kv.V, kv.Val) {
				p.Per = append(p.Per, str(e.Val))
			}
		case "where":
			where = str(kv.Val)
		case "if":
			if m, ok := kv.Val.(map[string]any); ok && len(m) == 1 {
				p.If = x.check(yamlpos.Item{N: kv.V, Val: kv.Val})
			}
		}
	}
	if _, ok := val.(map[string]any); !ok {
		return // reported by the schema
	}
	// The policy's where is each selector's that names none: the calls
	// keep their numbers among all calls.
	for _, s := range []*CallSel{p.Calls, p.Other, p.Until} {
		if s != nil && s.Where == "" {
			s.Where = where
		}
	}
	switch {
	case len(rules) == 0:
		x.errorf(k, "a policy needs its rule: preceded_by, not_after or at_most")
	case len(rules) > 1:
		x.errorf(rules[1], "a policy has one rule: preceded_by, not_after or at_most, not %s and %s (write two policies)", yamlpos.Deref(rules[0]).Value, yamlpos.Deref(rules[1]).Value)
	}
	if untilN != nil && p.Rule != PolicyNotAfter {
		x.errorf(untilN, "until goes with not_after: it lifts the ban again")
	}
	if sameN != nil && p.Rule == PolicyAtMost {
		x.errorf(sameN, "same goes with preceded_by or not_after; at_most counts per value of per")
	}
	if perN != nil && p.Rule != PolicyAtMost {
		x.errorf(perN, "per goes with at_most")
	}
	c.Policy = p
}

// callSel decodes a call selector: a tool name, a list of them, or
// {tool, with, error, where}. Each tool name's node goes into nodes, for
// the warning about a tool nobody declares.
func (x *decoder) callSel(n *yaml.Node, val any, nodes *[]*yaml.Node) *CallSel {
	s := &CallSel{}
	addTools := func(n *yaml.Node, val any) {
		switch t := val.(type) {
		case string:
			s.Tools = append(s.Tools, t)
			*nodes = append(*nodes, n)
		case []any:
			for _, e := range yamlpos.Items(n, t) {
				if name, ok := e.Val.(string); ok {
					s.Tools = append(s.Tools, name)
					*nodes = append(*nodes, e.N)
				}
			}
		}
	}
	m, ok := val.(map[string]any)
	if !ok {
		addTools(n, val)
		return s
	}
	for _, kv := range yamlpos.Pairs(n, m) {
		switch kv.Key() {
		case "tool":
			addTools(kv.V, kv.Val)
		case "with":
			if w, ok := kv.Val.(map[string]any); ok {
				s.With = value.Compile(w)
			}
		case "error":
			if b, ok := kv.Val.(bool); ok {
				s.Error = &b
			}
		case "where":
			s.Where = str(kv.Val)
		}
	}
	return s
}

// condition is a policy check's if: check; nil for every other check.
func (c *Check) condition() *Check {
	if c.Policy == nil {
		return nil
	}
	return c.Policy.If
}
