package runner

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// Checks proven able to fail (run --mutate, Options.Mutate): a passing
// case's transcript, as its report stores it, mutated one way at a time
// and its checks applied again to each mutant, as recheck applies them
// (storedFacts, check.Evaluate): nothing runs again.

// MaxMutants bounds the mutants tried of one case; the others are counted
// as untried.
const MaxMutants = 256

// mutant is one change to a case's facts, and what it says it changed.
type mutant struct {
	what  string
	apply func(f *check.Facts)
}

// mutateCase tries the mutants of passing case c against its checks; nil
// when none of its checks is judged from its transcript (a judge, a
// command or a file check is not mutated) or it has nothing to mutate.
func mutateCase(j job, c *report.Case) *report.CaseMutation {
	var checks []*spec.Check
	for _, ch := range j.c.Expect {
		if ch.Kind != spec.CheckJudge && ch.Kind != spec.CheckCommand && ch.Kind != spec.CheckFile {
			checks = append(checks, ch)
		}
	}
	base, err := storedFacts(c)
	if len(checks) == 0 || err != nil {
		return nil
	}
	ms := mutants(base)
	if len(ms) == 0 {
		return nil
	}
	out := &report.CaseMutation{}
	if len(ms) > MaxMutants {
		out.Untried, ms = len(ms)-MaxMutants, ms[:MaxMutants]
	}
	failed := make([]bool, len(checks))
	for _, m := range ms {
		f := *base
		m.apply(&f)
		caught := false
		for i, r := range check.Evaluate(checks, &f) {
			if !r.Passed {
				failed[i], caught = true, true
			}
		}
		out.Mutants++
		if caught {
			out.Caught++
		} else {
			out.Survived = append(out.Survived, m.what)
		}
	}
	for i, ch := range checks {
		if !failed[i] {
			out.Unfailed = append(out.Unfailed, ch.Source+" ("+ch.Pos.FileLine()+")")
		}
	}
	return out
}

// mutants are the ways f is mutated, in a fixed order: each call
// dropped, made twice, swapped with the next (when they differ),
// answered with an error, an argument of it changed; a model turn more;
// the output empty, each of its numbers changed; a record of each collection of the
// world changed; each of the agent's operations in its evidence dropped
// and made twice.
func mutants(f *check.Facts) []mutant {
	var out []mutant
	calls := f.Calls
	name := func(i int) string { return fmt.Sprintf("call %d (%s)", i+1, calls[i].Name) }
	for i := range calls {
		out = append(out,
			mutant{name(i) + " dropped", func(f *check.Facts) { f.Calls = slices.Delete(slices.Clone(calls), i, i+1) }},
			mutant{name(i) + " made twice", func(f *check.Facts) { f.Calls = slices.Insert(slices.Clone(calls), i, calls[i]) }})
		if i+1 < len(calls) && (calls[i].Name != calls[i+1].Name || !value.Equal(calls[i].Args, calls[i+1].Args)) {
			out = append(out, mutant{fmt.Sprintf("calls %d and %d swapped", i+1, i+2), func(f *check.Facts) {
				f.Calls = slices.Clone(calls)
				f.Calls[i], f.Calls[i+1] = f.Calls[i+1], f.Calls[i]
			}})
		}
		if !calls[i].Result.IsError {
			out = append(out, mutant{name(i) + " answered with an error", func(f *check.Facts) {
				f.Calls = slices.Clone(calls)
				r := &f.Calls[i].Result
				r.IsError, r.Content = true, "error"
				if r.Outcome == tool.Return {
					r.Outcome = tool.Error
				}
			}})
		}
		if path, old, args, ok := changeLeaf("", calls[i].Args); ok {
			out = append(out, mutant{fmt.Sprintf("%s: argument %s changed from %s", name(i), path, old), func(f *check.Facts) {
				f.Calls = slices.Clone(calls)
				r := &f.Calls[i]
				r.Args, r.Call.Args = args, value.Canonical(args)
			}})
		}
	}
	if f.Turns > 0 {
		out = append(out, mutant{"one model turn more", func(f *check.Facts) { f.Turns++ }})
	}
	if f.Output != "" {
		out = append(out, mutant{"the output empty", func(f *check.Facts) { f.Output = "" }})
	}
	for _, loc := range numberRE.FindAllStringIndex(f.Output, maxNumberMutants) {
		num := f.Output[loc[0]:loc[1]]
		out = append(out, mutant{fmt.Sprintf("the output's number %s changed", num), func(f *check.Facts) {
			f.Output = f.Output[:loc[0]] + bump(num) + f.Output[loc[1]:]
		}})
	}
	if w := f.World; w != nil {
		out = append(out, worldMutants(w)...)
	}
	return out
}

// maxNumberMutants bounds the numbers of an output changed, one mutant
// each.
const maxNumberMutants = 8

var numberRE = regexp.MustCompile(`\d+(\.\d+)?`)

// bump is a number written one more (its last digit's place).
func bump(num string) string {
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		return strconv.FormatInt(n+1, 10)
	}
	if f, err := strconv.ParseFloat(num, 64); err == nil {
		return strconv.FormatFloat(f+1, 'f', -1, 64)
	}
	return num + "1"
}

// changeLeaf is v with its first leaf (keys in order) changed: a string
// marked, a number one more, a boolean flipped, null a string; the
// leaf's path and former value. ok is false when v has no leaf.
func changeLeaf(path string, v any) (at, old string, out any, ok bool) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if at, old, nv, ok := changeLeaf(path+value.PathKey(k), x[k]); ok {
				m := maps.Clone(x)
				m[k] = nv
				return at, old, m, true
			}
		}
		return "", "", v, false
	case []any:
		for i, e := range x {
			if at, old, nv, ok := changeLeaf(path+"["+strconv.Itoa(i)+"]", e); ok {
				l := slices.Clone(x)
				l[i] = nv
				return at, old, l, true
			}
		}
		return "", "", v, false
	}
	path = cmp.Or(path, "$")
	old = value.Truncate(value.Canonical(v), 40)
	switch x := v.(type) {
	case string:
		return path, old, x + "~", true
	case bool:
		return path, old, !x, true
	case nil:
		return path, old, "~", true
	}
	return path, old, json.Number(bump(value.Canonical(v))), true
}

// maxRecordsMutated bounds the records of one collection mutated.
const maxRecordsMutated = 4

// worldMutants change a drill's final state and evidence: each
// collection's first record removed; each field of its first records
// (maxRecordsMutated) changed; each of the agent's operations dropped
// and made twice; each event the behaviors emitted dropped.
func worldMutants(w *check.WorldFacts) []mutant {
	var out []mutant
	set := func(pkg, coll string, v any) func(f *check.Facts) {
		return func(f *check.Facts) {
			wf := *w
			wf.State = maps.Clone(w.State)
			c := maps.Clone(wf.State[pkg].(map[string]any))
			c[coll] = v
			wf.State[pkg] = c
			f.World = &wf
		}
	}
	for _, pkg := range slices.Sorted(maps.Keys(w.State)) {
		colls, _ := w.State[pkg].(map[string]any)
		for _, coll := range slices.Sorted(maps.Keys(colls)) {
			path := pkg + "." + coll
			switch recs := colls[coll].(type) {
			case map[string]any:
				keys := slices.Sorted(maps.Keys(recs))
				if len(keys) > 0 {
					less := maps.Clone(recs)
					delete(less, keys[0])
					out = append(out, mutant{"world record " + path + value.PathKey(keys[0]) + " removed", set(pkg, coll, less)})
				}
				for _, k := range keys[:min(len(keys), maxRecordsMutated)] {
					out = append(out, fieldMutants(path+value.PathKey(k), recs[k], func(r any) func(f *check.Facts) {
						m := maps.Clone(recs)
						m[k] = r
						return set(pkg, coll, m)
					})...)
				}
			case []any:
				if len(recs) > 0 {
					out = append(out, mutant{"world record " + path + "[0] removed", set(pkg, coll, recs[1:])})
				}
				for i := range min(len(recs), maxRecordsMutated) {
					out = append(out, fieldMutants(fmt.Sprintf("%s[%d]", path, i), recs[i], func(r any) func(f *check.Facts) {
						l := slices.Clone(recs)
						l[i] = r
						return set(pkg, coll, l)
					})...)
				}
			}
		}
	}
	ev := w.Evidence
	for i, e := range ev {
		if e.Actor != "agent" {
			continue
		}
		name := fmt.Sprintf("operation %d (%s)", e.Seq, e.Operation)
		out = append(out,
			mutant{name + " dropped", func(f *check.Facts) { f.World = withEvidence(w, slices.Delete(slices.Clone(ev), i, i+1)) }},
			mutant{name + " made twice", func(f *check.Facts) { f.World = withEvidence(w, slices.Insert(slices.Clone(ev), i, ev[i])) }})
	}
	for i, e := range w.Emitted {
		out = append(out, mutant{fmt.Sprintf("event %d (%s) dropped", e.Seq, e.Type), func(f *check.Facts) {
			wf := *w
			wf.Emitted = slices.Delete(slices.Clone(w.Emitted), i, i+1)
			f.World = &wf
		}})
	}
	return out
}

// fieldMutants change each field of record r at path (its first leaf,
// for a record that is not an object), put back by with.
func fieldMutants(path string, r any, with func(any) func(f *check.Facts)) []mutant {
	m, ok := r.(map[string]any)
	if !ok {
		if at, old, nv, ok := changeLeaf(path, r); ok {
			return []mutant{{"world record " + at + " changed from " + old, with(nv)}}
		}
		return nil
	}
	var out []mutant
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if at, old, nv, ok := changeLeaf(path+value.PathKey(k), m[k]); ok {
			c := maps.Clone(m)
			c[k] = nv
			out = append(out, mutant{"world record " + at + " changed from " + old, with(c)})
		}
	}
	return out
}

func withEvidence(w *check.WorldFacts, ev []world.Evidence) *check.WorldFacts {
	wf := *w
	wf.Evidence = ev
	return &wf
}
