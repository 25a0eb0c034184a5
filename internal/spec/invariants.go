package spec

import (
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// invariants decodes the suite's invariants: checks every case must keep
// beside its own (Checks), and whose failure at a point of a fault sweep
// makes the point unsafe. Neither a judge nor a command check: both are
// work of their own per case, asked for by the case.
func (x *decoder) invariants(n *yaml.Node, val any) []*Check {
	var out []*Check
	for _, it := range yamlpos.Items(n, val) {
		ch := x.standalone(it, "an invariant is not a %s check: each case asks for its own (in its expect)")
		if ch == nil {
			continue
		}
		for c := ch; c != nil; c = c.condition() {
			c.Invariant = true
		}
		out = append(out, ch)
	}
	return out
}

// Checks are the checks of case c: its own, then the suite's invariants.
func (s *Suite) Checks(c *Case) []*Check {
	if len(s.Invariants) == 0 {
		return c.Expect
	}
	out := make([]*Check, 0, len(c.Expect)+len(s.Invariants))
	return append(append(out, c.Expect...), s.Invariants...)
}

// standalone decodes a check of no case (an invariant, a payload's
// goal): its source made at once, a judge or command check refused (why
// says so, with %s for its kind), and no pointer into the YAML tree kept.
func (x *decoder) standalone(it yamlpos.Item, why string) *Check {
	ch := x.check(it)
	if ch == nil {
		return nil
	}
	if ps := yamlpos.Pairs(it.N, it.Val); len(ps) == 1 {
		ch.Source = checkSource(ch.Kind, ps[0].V, ps[0].Val)
		if ch.Kind == CheckJudge || ch.Kind == CheckCommand {
			x.errorf(ps[0].K, why, ch.Kind)
			return nil
		}
	}
	detach(ch)
	return ch
}

// detach drops a check's pointers into the YAML tree (a suite-level
// check, which no case releases).
func detach(ch *Check) {
	for c := ch; c != nil; c = c.condition() {
		c.withNode, c.toolNodes, c.judgeNode, c.turnNode, c.srcNode, c.srcVal = nil, nil, nil, nil, nil, nil
	}
}
