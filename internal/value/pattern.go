package value

import (
	"encoding/json"
	"maps"
	"slices"
	"sort"
	"strconv"
)

// A Pattern is a compiled `when` or `with`: a deep subset of a value.
//
// Every key of a mapping pattern must be present in the value with a
// matching value (mappings recurse as subsets); an array pattern matches an
// array of the same length element-wise; scalars compare as JSON values; a
// null pattern matches only a present null.
type Pattern struct {
	kind   kind
	keys   []string // object: sorted
	vals   []*Pattern
	elems  []*Pattern // array
	scalar any        // nil, bool, string or json.Number
	source any
}

type kind uint8

const (
	kScalar kind = iota
	kObject
	kArray
)

// Compile turns a value into a Pattern.
func Compile(v any) *Pattern {
	p := &Pattern{source: v}
	switch x := v.(type) {
	case map[string]any:
		p.kind = kObject
		p.keys = slices.AppendSeq(make([]string, 0, len(x)), maps.Keys(x)) // one allocation, as Sorted's is not
		slices.Sort(p.keys)
		p.vals = make([]*Pattern, len(p.keys))
		for i, k := range p.keys {
			p.vals[i] = Compile(x[k])
		}
	case []any:
		p.kind = kArray
		p.elems = make([]*Pattern, len(x))
		for i, e := range x {
			p.elems[i] = Compile(e)
		}
	default:
		p.kind = kScalar
		p.scalar = v
	}
	return p
}

// Source is the value the pattern was compiled from.
func (p *Pattern) Source() any { return p.source }

// Keys lists the top-level keys of an object pattern, sorted.
func (p *Pattern) Keys() []string { return p.keys }

// ScalarAt returns the scalar a mapping pattern requires under its
// top-level key k (nil, a bool, a string or a json.Number), and whether it
// requires one: only a value equal to it under k can match.
func (p *Pattern) ScalarAt(k string) (any, bool) {
	if p.kind != kObject {
		return nil, false
	}
	i := sort.SearchStrings(p.keys, k)
	if i == len(p.keys) || p.keys[i] != k || p.vals[i].kind != kScalar {
		return nil, false
	}
	return p.vals[i].scalar, true
}

// Match reports whether v contains the pattern.
func (p *Pattern) Match(v any) bool {
	switch p.kind {
	case kObject:
		m, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for i, k := range p.keys {
			got, ok := m[k]
			if !ok || !p.vals[i].Match(got) {
				return false
			}
		}
		return true
	case kArray:
		a, ok := v.([]any)
		if !ok || len(a) != len(p.elems) {
			return false
		}
		for i, e := range p.elems {
			if !e.Match(a[i]) {
				return false
			}
		}
		return true
	}
	switch s := p.scalar.(type) {
	case nil:
		return v == nil
	case string:
		g, ok := v.(string)
		return ok && g == s
	case json.Number:
		g, ok := v.(json.Number)
		return ok && NumberEqual(s, g)
	case bool:
		g, ok := v.(bool)
		return ok && g == s
	}
	return Equal(p.scalar, v)
}

// Absent stands for a key that is not there, in a Mismatch.
const Absent = "(absent)"

// A Mismatch is where a value first departs from a pattern.
type Mismatch struct {
	Path     string // JSONPath-like: $.items[0].sku
	Expected string // canonical JSON of the pattern there
	Got      string // canonical JSON of the value there, or Absent
	Reason   string // optional detail, e.g. "length 2, want 3"
}

// Diff counts how many leaves of the pattern v fails, and describes the
// first failure in key order. It is for near-miss reports, not the hot path.
//
// A leaf is a scalar, or an empty mapping or array. A leaf under a key
// the value lacks, or under a value of another type, fails. Arrays of
// different lengths compare their common prefix element-wise; each
// missing element counts its leaves and surplus elements count one. The
// count is 0 exactly when Match(v) is true.
func (p *Pattern) Diff(v any) (int, Mismatch) {
	var first Mismatch
	n := p.diff("$", v, true, &first)
	return n, first
}

func (p *Pattern) diff(path string, v any, present bool, first *Mismatch) int {
	note := func(reason string) {
		if first.Path == "" {
			first.Path = path
			first.Expected = Truncate(Canonical(p.source), 200)
			if present {
				first.Got = Truncate(Canonical(v), 200)
			} else {
				first.Got = Absent
			}
			first.Reason = reason
		}
	}
	miss := func(reason string) int {
		note(reason)
		return p.leaves()
	}
	if !present {
		return miss("")
	}
	switch p.kind {
	case kObject:
		m, ok := v.(map[string]any)
		if !ok {
			return miss("not an object")
		}
		n := 0
		for i, k := range p.keys {
			got, ok := m[k]
			n += p.vals[i].diff(JSONPath.Key(path, k), got, ok, first)
		}
		return n
	case kArray:
		a, ok := v.([]any)
		if !ok {
			return miss("not an array")
		}
		n := 0
		if len(a) != len(p.elems) {
			// The length is what is reported; the count still compares
			// the common prefix element-wise, so that [a, b] is closer to
			// [a, b, c] (one leaf missing) than to [z] (one leaf differs,
			// and one element too many).
			note("length " + strconv.Itoa(len(a)) + ", want " + strconv.Itoa(len(p.elems)))
			for _, e := range p.elems[min(len(a), len(p.elems)):] {
				n += e.leaves()
			}
			if len(a) > len(p.elems) {
				n++
			}
		}
		for i, e := range p.elems[:min(len(a), len(p.elems))] {
			n += e.diff(JSONPath.Index(path, i), a[i], true, first)
		}
		return n
	}
	if p.Match(v) {
		return 0
	}
	return miss("")
}

func (p *Pattern) leaves() int {
	switch p.kind {
	case kObject:
		n := 0
		for _, c := range p.vals {
			n += c.leaves()
		}
		return max(n, 1)
	case kArray:
		n := 0
		for _, c := range p.elems {
			n += c.leaves()
		}
		return max(n, 1)
	}
	return 1
}

// PathKey renders one object key as a path step: .name, or ["odd key"].
func PathKey(k string) string {
	if k != "" && isIdent(k) {
		return "." + k
	}
	b := append(make([]byte, 0, len(k)+4), '[')
	b = append(appendString(b, k), ']')
	return string(b)
}

// isIdent reports whether a key reads unambiguously after a dot: ASCII
// letters, digits, _ and -, starting with a letter or _.
func isIdent(s string) bool {
	for i, r := range s {
		switch {
		case r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z'):
		case (r == '-' || (r >= '0' && r <= '9')) && i > 0:
		default:
			return false
		}
	}
	return true
}
