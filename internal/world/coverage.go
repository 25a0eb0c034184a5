package world

import (
	"cmp"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/report"
)

// CoverageItems are the world file's parts (run --coverage), each with
// Calls 0: every operation, every operation's behavior, and the
// overrides, faults and events of the baseline and of every scenario.
func (w *World) CoverageItems() []report.CoverageItem {
	var out []report.CoverageItem
	add := func(kind, name string, pos yamlpos.Pos) {
		out = append(out, report.CoverageItem{Kind: kind, At: pos.FileLine(), Name: name})
	}
	for _, k := range w.OpList {
		op := w.Operations[k]
		add("operation", k, op.Pos)
		if op.Behavior != "" {
			add("behavior", k+"="+op.Behavior, op.Pos)
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
		for _, o := range s.Overrides {
			add("override", overrideName(o), o.Pos)
		}
		for _, f := range s.Faults {
			add("fault", f.ID, f.Pos)
		}
		for _, e := range s.Events {
			add("event", e.ID, e.Pos)
		}
	}
	return out
}

// overrideName is an override's id, else its operation.
func overrideName(o *Override) string { return cmp.Or(o.ID, o.Operation) }

// Coverage is what the drill exercised: the operations and behaviors it
// called (those it did not are left out), and every override, fault and
// event of its setup and rules, with their counts (0: unused), read off
// its evidence and its overrides' match counts. A part of the drill's own
// (its case's overrides, its inline setup, its behavior overrides) names
// its case, cas; one in neither suiteFile nor the world file (an inline
// setup's) is placed at its case, caseAt.
func (in *Instance) Coverage(cas, caseAt, suiteFile string) []report.CoverageItem {
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
	var out []report.CoverageItem
	add := func(kind, name string, pos yamlpos.Pos, calls int, own bool) {
		it := report.CoverageItem{Kind: kind, At: pos.FileLine(), Name: name, Calls: calls}
		if own {
			it.Case = cas
			if pos.File != suiteFile && pos.File != in.w.File {
				it.At = caseAt
			}
		}
		out = append(out, it)
	}
	for _, k := range in.w.OpList {
		n := calls[k]
		if n == 0 {
			continue
		}
		op := in.w.Operations[k]
		add("operation", k, op.Pos, n, false)
		run, mine := op, false
		if b := in.behav[k]; b != nil {
			run, mine = b, true
		}
		if b := behaved[k]; b > 0 && run.fn != nil {
			add("behavior", k+"="+run.Behavior, op.Pos, b, mine)
		}
	}
	for op, fn := range in.drill.BehaviorOverrides {
		if behaved[op] == 0 && in.w.Operations[op] != nil {
			add("behavior", op+"="+fn, in.w.Operations[op].Pos, 0, true)
		}
	}
	for i, r := range in.rules {
		add("override", overrideName(r), r.Pos, in.ruleUsed[i], r.Scope >= ScopeDrill)
	}
	for _, f := range in.setup.Faults {
		add("fault", f.ID, f.Pos, faults[f.ID], own)
	}
	for _, e := range in.setup.Events {
		add("event", e.ID, e.Pos, events[e.ID], own)
	}
	return out
}
