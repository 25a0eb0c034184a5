// Package verify says how recordings drifted from their upstreams
// (dryfire verify): a cassette's model answers against the same requests
// sent again through the one live client, and record-tools' declarations
// and recorded answers against the real tools. It compares shapes, not
// values: a real model says other words every time.
package verify

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Shape is a JSON value's shape: an object's keys with their shapes, an
// array's items merged into one shape, a scalar's type name ("string",
// "number", "boolean", "null"; "null|string" for both).
func Shape(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Shape(e)
		}
		return out
	case []any:
		var item any
		for i, e := range x {
			if i == 0 {
				item = Shape(e)
			} else {
				item = merge(item, Shape(e))
			}
		}
		if item == nil {
			return []any{}
		}
		return []any{item}
	}
	return value.TypeName(v)
}

// merge is the shape of values of shape a or b: objects and arrays
// merged, other types joined.
func merge(a, b any) any {
	am, aok := a.(map[string]any)
	bm, bok := b.(map[string]any)
	if aok && bok {
		out := maps.Clone(am)
		for k, e := range bm {
			if o, ok := out[k]; ok {
				out[k] = merge(o, e)
			} else {
				out[k] = e
			}
		}
		return out
	}
	aa, aok := a.([]any)
	ba, bok := b.([]any)
	if aok && bok {
		switch {
		case len(aa) == 0:
			return b
		case len(ba) == 0:
			return a
		}
		return []any{merge(aa[0], ba[0])}
	}
	as, bs := kind(a), kind(b)
	if as == bs {
		return a
	}
	types := strings.Split(as+"|"+bs, "|")
	slices.Sort(types)
	return strings.Join(slices.Compact(types), "|")
}

// kind names a shape's type.
func kind(s any) string {
	switch x := s.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return x
	}
	return fmt.Sprint(s)
}

var shapeDiff = value.Differ{Items: true, Equal: func(a, b any) bool { return kind(a) == kind(b) }}

// ShapeDiff lists how shape now differs from shape was, by path: a field
// added or removed (with its type), or retyped ("string → number").
// An array empty on one side is not a change of shape.
func ShapeDiff(path string, was, now any) []string {
	var out []string
	was, now = fill(was, now)
	shapeDiff.Diffs(path, was, now, func(d value.Diff) bool {
		p := strings.ReplaceAll(d.Path, "[0]", "[]")
		switch {
		case !d.InA:
			out = append(out, p+": added ("+kind(d.B)+")")
		case !d.InB:
			out = append(out, p+": removed ("+kind(d.A)+")")
		default:
			out = append(out, p+": "+kind(d.A)+" → "+kind(d.B))
		}
		return true
	})
	return out
}

// fill gives an empty array of one shape the items of the other's.
func fill(a, b any) (any, any) {
	switch x := a.(type) {
	case map[string]any:
		if y, ok := b.(map[string]any); ok {
			a2, b2 := maps.Clone(x), maps.Clone(y)
			for k := range x {
				if _, ok := y[k]; ok {
					a2[k], b2[k] = fill(x[k], y[k])
				}
			}
			return a2, b2
		}
	case []any:
		if y, ok := b.([]any); ok {
			switch {
			case len(x) == 0:
				return b, b
			case len(y) == 0:
				return a, a
			}
			i, j := fill(x[0], y[0])
			return []any{i}, []any{j}
		}
	}
	return a, b
}
