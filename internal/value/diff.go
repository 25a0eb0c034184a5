package value

import (
	"slices"
	"strconv"
)

// Differ walks two JSON values in step and says where they differ: the
// one diff walk of dryfire, behind the reproduction of a drill, a state
// check's equals, and a replayed request that strays from its recording.
// Each of those writes its paths in its own syntax (Path), so that what
// a report says stays as it was.
type Differ struct {
	// Path renders the steps of a path; nil renders them as PathKey and
	// [i] do.
	Path Path
	// Depth is how many levels of objects (and arrays) to descend into
	// below the first value; 0 descends all the way. At the last level
	// two values are compared whole.
	Depth int
	// Items descends into arrays item by item: a difference in length
	// first (Diff.Length), then each item, those one side lacks included.
	// Without it an array is compared whole.
	Items bool
	// MissingIsNull takes a key an object lacks for a key holding null.
	// Two objects that then differ in no key, but are not Equal (one
	// holds a null the other lacks), are one difference, at the object.
	MissingIsNull bool
	// Equal compares two values that are not both objects (or both
	// arrays, with Items); nil is Equal.
	Equal func(a, b any) bool
}

// Path renders the steps of a path: a member of an object and an item of
// an array, after the path so far.
type Path interface {
	Key(path, key string) string
	Index(path string, i int) string
}

// Diff is one place where two values differ.
type Diff struct {
	Path string
	A, B any
	// InA and InB say the place exists on that side: false for a key, or
	// an array item, that side lacks (its value is then nil).
	InA, InB bool
	// Length is set on the difference of two arrays' lengths, before
	// their items (A and B are the arrays).
	Length bool
}

// Diffs walks a and b from path, calling at for each difference in key
// order, until at returns false. It reports whether at was called.
func (d *Differ) Diffs(path string, a, b any, at func(Diff) bool) bool {
	w := walk{d: *d, at: at}
	if w.d.Path == nil {
		w.d.Path = JSONPath
	}
	if w.d.Equal == nil {
		w.d.Equal = Equal
	}
	w.value(path, a, b, 0)
	return w.called
}

type walk struct {
	d       Differ
	at      func(Diff) bool
	called  bool
	stopped bool
}

func (w *walk) report(df Diff) {
	w.called = true
	if !w.at(df) {
		w.stopped = true
	}
}

func (w *walk) deeper(depth int) bool { return w.d.Depth == 0 || depth < w.d.Depth }

func (w *walk) value(path string, a, b any, depth int) {
	if am, ok := a.(map[string]any); ok && w.deeper(depth) {
		if bm, ok := b.(map[string]any); ok {
			w.object(path, am, bm, depth)
			return
		}
	}
	if aa, ok := a.([]any); ok && w.d.Items && w.deeper(depth) {
		if ba, ok := b.([]any); ok {
			w.array(path, aa, ba, depth)
			return
		}
	}
	if !w.d.Equal(a, b) {
		w.report(Diff{Path: path, A: a, B: b, InA: true, InB: true})
	}
}

func (w *walk) object(path string, a, b map[string]any, depth int) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	before := w.called
	w.called = false
	for _, k := range keys {
		av, inA := a[k]
		bv, inB := b[k]
		p := w.d.Path.Key(path, k)
		switch {
		case w.d.MissingIsNull:
			w.value(p, av, bv, depth+1)
		case !inA || !inB:
			w.report(Diff{Path: p, A: av, B: bv, InA: inA, InB: inB})
		default:
			w.value(p, av, bv, depth+1)
		}
		if w.stopped {
			w.called = true
			return
		}
	}
	if !w.called && w.d.MissingIsNull && !Equal(a, b) {
		w.report(Diff{Path: path, A: a, B: b, InA: true, InB: true})
	}
	w.called = w.called || before
}

func (w *walk) array(path string, a, b []any, depth int) {
	if len(a) != len(b) {
		w.report(Diff{Path: path, A: a, B: b, InA: true, InB: true, Length: true})
		if w.stopped {
			return
		}
	}
	for i := range max(len(a), len(b)) {
		p := w.d.Path.Index(path, i)
		switch {
		case i >= len(a):
			w.report(Diff{Path: p, B: b[i], InB: true})
		case i >= len(b):
			w.report(Diff{Path: p, A: a[i], InA: true})
		default:
			w.value(p, a[i], b[i], depth+1)
		}
		if w.stopped {
			return
		}
	}
}

// jsonPath is the path syntax of PathKey: .name or ["odd key"], and [i].
type jsonPath struct{}

func (jsonPath) Key(path, key string) string     { return path + PathKey(key) }
func (jsonPath) Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// JSONPath is the path syntax of PathKey: .name or ["odd key"], and [i].
var JSONPath Path = jsonPath{}
