package world

import (
	"cmp"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// CoverageItem is one part of a world a drill can exercise (run
// --coverage): an operation, an operation's behavior, an override, a
// fault or a scheduled event, with how often the drill used it.
type CoverageItem struct {
	Kind  string // operation, behavior, override, fault or event
	Name  string // package/operation; package/operation=function; an id
	Pos   yamlpos.Pos
	Calls int
	// Own marks a part of the drill's own (its case's overrides, its
	// inline setup, its behavior overrides), not the world file's.
	Own bool
}

// CoverageItems are the world file's parts, each with Calls 0: every
// operation, every operation's behavior, and the overrides, faults and
// events of the baseline and of every scenario.
func (w *World) CoverageItems() []CoverageItem {
	var out []CoverageItem
	for _, k := range w.OpList {
		op := w.Operations[k]
		out = append(out, CoverageItem{Kind: "operation", Name: k, Pos: op.Pos})
		if op.Behavior != "" {
			out = append(out, CoverageItem{Kind: "behavior", Name: k + "=" + op.Behavior, Pos: op.Pos})
		}
	}
	setups := []*Setup{w.Baseline}
	for _, name := range sortedKeys(w.Scenarios) {
		setups = append(setups, w.Scenarios[name])
	}
	for _, s := range setups {
		if s == nil {
			continue
		}
		out = append(out, setupItems(s, false)...)
	}
	return out
}

func setupItems(s *Setup, own bool) []CoverageItem {
	var out []CoverageItem
	for _, o := range s.Overrides {
		out = append(out, CoverageItem{Kind: "override", Name: overrideName(o), Pos: o.Pos, Own: own})
	}
	for _, f := range s.Faults {
		out = append(out, CoverageItem{Kind: "fault", Name: f.ID, Pos: f.Pos, Own: own})
	}
	for _, e := range s.Events {
		out = append(out, CoverageItem{Kind: "event", Name: e.ID, Pos: e.Pos, Own: own})
	}
	return out
}

// overrideName is an override's id, else its operation.
func overrideName(o *Override) string { return cmp.Or(o.ID, o.Operation) }

// Coverage is what the drill exercised: the operations and behaviors it
// called (those it did not are left out), and every override, fault and
// event of its setup and rules, with their counts (0: unused), read off
// its evidence and its overrides' match counts.
func (in *Instance) Coverage() []CoverageItem {
	in.mu.Lock()
	defer in.mu.Unlock()
	own := in.setup == in.drill.Inline && in.drill.Inline != nil
	calls := map[string]int{}
	behaved := map[string]int{}
	faults := map[string]int{}
	events := map[string]int{}
	for i := range in.evidence {
		ev := &in.evidence[i]
		if in.w.Operations[ev.Operation] == nil {
			continue
		}
		calls[ev.Operation]++
		if ev.Fault != nil {
			faults[*ev.Fault]++
		}
		if id, ok := strings.CutPrefix(ev.Actor, "event:"); ok {
			events[id]++
		}
		if ev.Fault == nil && (ev.Outcome == OutcomeBehavior || ev.Outcome == OutcomeOriginal) {
			behaved[ev.Operation]++
		}
	}
	var out []CoverageItem
	for _, k := range in.w.OpList {
		n := calls[k]
		if n == 0 {
			continue
		}
		op := in.w.Operations[k]
		out = append(out, CoverageItem{Kind: "operation", Name: k, Pos: op.Pos, Calls: n})
		run, mine := op, false
		if b := in.behav[k]; b != nil {
			run, mine = b, true
		}
		if b := behaved[k]; b > 0 && run.fn != nil {
			out = append(out, CoverageItem{Kind: "behavior", Name: k + "=" + run.Behavior, Pos: op.Pos, Calls: b, Own: mine})
		}
	}
	for op, fn := range in.drill.BehaviorOverrides {
		if behaved[op] == 0 && in.w.Operations[op] != nil {
			out = append(out, CoverageItem{Kind: "behavior", Name: op + "=" + fn, Pos: in.w.Operations[op].Pos, Own: true})
		}
	}
	for i, r := range in.rules {
		out = append(out, CoverageItem{Kind: "override", Name: overrideName(r), Pos: r.Pos, Calls: in.ruleUsed[i], Own: r.Scope >= ScopeDrill})
	}
	for _, f := range in.setup.Faults {
		out = append(out, CoverageItem{Kind: "fault", Name: f.ID, Pos: f.Pos, Calls: faults[f.ID], Own: own})
	}
	for _, e := range in.setup.Events {
		out = append(out, CoverageItem{Kind: "event", Name: e.ID, Pos: e.Pos, Calls: events[e.ID], Own: own})
	}
	return out
}
