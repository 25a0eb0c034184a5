package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// WorldFacts is what a drill's world ended with.
type WorldFacts struct {
	State    map[string]any
	Evidence []world.Evidence
	Emitted  []world.Emitted
	// Ordered reports whether a collection's order matters.
	Ordered func(pkg, coll string) bool
}

func worldCheck(c *spec.Check, f *Facts) (bool, string) {
	if f.World == nil {
		return false, fmt.Sprintf("%s checks need a world suite (world: in the suite)", c.Kind)
	}
	switch c.Kind {
	case spec.CheckState:
		return stateCheck(c, f.World)
	case spec.CheckEvent:
		return eventCheck(c, f.World)
	}
	return calledOperation(c, f.World)
}

func stateCheck(c *spec.Check, w *WorldFacts) (bool, string) {
	steps, err := world.SplitPath(c.Path)
	if err != nil {
		return false, fmt.Sprintf("state path %q: %v", c.Path, err)
	}
	got, ok := world.Lookup(w.State, steps)
	at := c.Path
	switch {
	case c.Absent:
		if !ok {
			return true, fmt.Sprintf("%s is absent (expected absent)", at)
		}
		return false, fmt.Sprintf("expected %s to be absent; it is %s", at, short(got))
	case !ok:
		return false, fmt.Sprintf("expected %s to exist; it is absent%s", at, nearest(w.State, steps))
	case c.Count != nil:
		n := -1
		switch x := got.(type) {
		case map[string]any:
			n = len(x)
		case []any:
			n = len(x)
		}
		if n < 0 {
			return false, fmt.Sprintf("expected %s to hold %d entries; it is not a collection but %s", at, *c.Count, short(got))
		}
		if n == *c.Count {
			return true, fmt.Sprintf("%s holds %d entries (expected %d)", at, n, *c.Count)
		}
		return false, fmt.Sprintf("expected %s to hold %d entries; it holds %d: %s", at, *c.Count, n, short(got))
	case c.HasEquals:
		if equalState(c.StateEquals, got, steps, c.StateOrdered, w.Ordered) {
			return true, fmt.Sprintf("%s equals %s", at, short(got))
		}
		return false, fmt.Sprintf("expected %s to equal %s; it is %s%s", at, short(c.StateEquals), short(got), diff(c.StateEquals, got))
	case c.HasContains:
		if containsState(got, c.StateHas) {
			return true, fmt.Sprintf("%s contains %s", at, short(c.StateHas))
		}
		return false, fmt.Sprintf("expected %s to contain %s; it is %s", at, short(c.StateHas), short(got))
	}
	return false, "a state check needs equals, contains, absent or count"
}

func short(v any) string { return value.Truncate(value.Canonical(v), 300) }

// equalState compares the value at steps with want. How lists compare
// (ordered, from the check's ordered: key): nil, every list as a multiset
// at any depth, except a collection its package declares ordered: (its
// entries' own lists are multisets still); true, every list in order;
// false, every list as a multiset, a declared ordered collection too.
func equalState(want, got any, steps []string, ordered *bool, declared func(pkg, coll string) bool) bool {
	if ordered != nil && *ordered {
		return value.Equal(want, got)
	}
	keep := func(at []string) bool {
		return ordered == nil && len(at) == 2 && declared != nil && declared(at[0], at[1])
	}
	return value.Equal(unorder(want, steps, keep), unorder(got, steps, keep))
}

// unorder is v with every list sorted by its entries' canonical JSON (by
// value), at any depth, except a list at a path keep keeps in order: two
// values equal as multisets are then equal.
func unorder(v any, at []string, keep func([]string) bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = unorder(e, append(at[:len(at):len(at)], k), keep)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = unorder(e, append(at[:len(at):len(at)], "[]"), keep)
		}
		if keep(at) {
			return out
		}
		type keyed struct {
			key string
			v   any
		}
		ks := make([]keyed, len(out))
		form := value.Form{ByValue: true}
		for i, e := range out {
			ks[i] = keyed{string(form.Append(nil, e)), e}
		}
		slices.SortStableFunc(ks, func(a, b keyed) int { return strings.Compare(a.key, b.key) })
		for i, k := range ks {
			out[i] = k.v
		}
		return out
	}
	return v
}

// containsState: a mapping contains a deep subset; a list an element
// matching it (or, for a list, every element); a string a substring.
func containsState(got, want any) bool {
	switch g := got.(type) {
	case string:
		s, ok := want.(string)
		return ok && strings.Contains(g, s)
	case []any:
		if ws, ok := want.([]any); ok {
			return !slices.ContainsFunc(ws, func(w any) bool { return !containsState(g, w) })
		}
		return slices.ContainsFunc(g, value.Compile(want).Match)
	}
	return value.Compile(want).Match(got)
}

// stateDiff compares a state's top-level keys, each value whole.
var stateDiff = value.Differ{Depth: 1}

// diff says where two mappings differ: keys missing, extra or different.
func diff(want, got any) string {
	_, ok1 := want.(map[string]any)
	_, ok2 := got.(map[string]any)
	if !ok1 || !ok2 {
		return ""
	}
	var parts, extra []string
	stateDiff.Diffs("", want, got, func(d value.Diff) bool {
		switch {
		case !d.InB:
			parts = append(parts, "missing "+d.Path)
		case !d.InA:
			extra = append(extra, "unexpected "+d.Path)
		default:
			parts = append(parts, fmt.Sprintf("%s: expected %s, got %s", d.Path, value.Truncate(value.Canonical(d.A), 80), value.Truncate(value.Canonical(d.B), 80)))
		}
		return true
	})
	parts = append(parts, extra...)
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// nearest says how far a missing path got.
func nearest(state map[string]any, steps []string) string {
	for i := len(steps) - 1; i > 0; i-- {
		if v, ok := world.Lookup(state, steps[:i]); ok {
			keys := ""
			if m, ok := v.(map[string]any); ok {
				keys = fmt.Sprintf("; it holds %s", value.Truncate(strings.Join(slices.Sorted(maps.Keys(m)), ", "), 200))
				if len(m) == 0 {
					keys = "; it is empty"
				}
			}
			return fmt.Sprintf(" (%s exists%s)", strings.Join(steps[:i], "."), keys)
		}
	}
	return ""
}

func eventCheck(c *spec.Check, w *WorldFacts) (bool, string) {
	n, typed := 0, 0
	for _, e := range w.Emitted {
		if e.Type != c.EventType {
			continue
		}
		typed++
		if c.EventData == nil || c.EventData.Match(e.Data) {
			n++
		}
	}
	subject := c.EventType
	if c.EventData != nil {
		subject += " with " + value.Canonical(c.EventData.Source())
	}
	if c.Count != nil {
		if n == *c.Count {
			return true, fmt.Sprintf("%s was emitted %s (expected %d)", subject, termtext.Count(n, "time"), *c.Count)
		}
		return false, fmt.Sprintf("expected %s to be emitted %s; it was emitted %s%s", subject, termtext.Count(*c.Count, "time"), termtext.Count(n, "time"), others(w, typed-n, c.EventType))
	}
	if n > 0 {
		return true, fmt.Sprintf("%s was emitted %s (expected at least once)", subject, termtext.Count(n, "time"))
	}
	return false, fmt.Sprintf("expected %s to be emitted; it never was%s", subject, others(w, typed, c.EventType))
}

func others(w *WorldFacts, sameType int, typ string) string {
	if sameType > 0 {
		return fmt.Sprintf(" (%s of type %s had other data)", termtext.Count(sameType, "event"), typ)
	}
	if len(w.Emitted) == 0 {
		return " (no event was emitted at all)"
	}
	types := []string{}
	seen := map[string]bool{}
	for _, e := range w.Emitted {
		if !seen[e.Type] {
			seen[e.Type] = true
			types = append(types, e.Type)
		}
	}
	return " (emitted: " + strings.Join(types, ", ") + ")"
}

// calledOperation is called / not_called by operation, over the evidence
// of the agent's calls (scheduled events are the world's own doing).
func calledOperation(c *spec.Check, w *WorldFacts) (bool, string) {
	n, other := 0, 0
	for _, e := range w.Evidence {
		if e.Operation != c.Operation || strings.HasPrefix(e.Actor, "event:") {
			continue
		}
		if c.Actor != "" && e.Actor != c.Actor || c.Outcome != "" && e.Outcome != c.Outcome {
			other++
			continue
		}
		if c.With != nil && !c.With.Match(e.Arguments) {
			other++
			continue
		}
		n++
	}
	subject := c.Operation
	if c.With != nil {
		subject += " with " + value.Canonical(c.With.Source())
	}
	if c.Actor != "" {
		subject += " by " + c.Actor
	}
	if c.Outcome != "" {
		subject += " answered by " + c.Outcome
	}
	if c.Kind == spec.CheckNotCalled {
		if n == 0 {
			return true, fmt.Sprintf("%s was not called (expected never)", subject)
		}
		return false, fmt.Sprintf("expected %s never to be called; it was called %s", subject, termtext.Count(n, "time"))
	}
	lo, hi := countRange(c)
	want := string(appendWant(nil, c))
	if n >= lo && (hi < 0 || n <= hi) {
		return true, fmt.Sprintf("%s was called %s (expected %s)", subject, termtext.Count(n, "time"), want)
	}
	msg := fmt.Sprintf("expected %s to be called %s; it was called %s", subject, want, termtext.Count(n, "time"))
	if other > 0 {
		msg += fmt.Sprintf(" (and %s to %s did not match)", termtext.Count(other, "call"), c.Operation)
	}
	return false, msg
}
