package value

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// arrowPath is a path syntax of a caller's own: /key and /i.
type arrowPath struct{}

func (arrowPath) Key(path, key string) string     { return path + "/" + key }
func (arrowPath) Index(path string, i int) string { return path + "/" + strconv.Itoa(i) }

func TestDiffer(t *testing.T) {
	show := func(d Diff) string {
		side := func(v any, in bool) string {
			if !in {
				return "-"
			}
			return Canonical(v)
		}
		s := d.Path + " " + side(d.A, d.InA) + " " + side(d.B, d.InB)
		if d.Length {
			s += " (length)"
		}
		return s
	}
	tests := []struct {
		name string
		d    Differ
		a, b string
		want string // the differences, one a line; "" for none
	}{
		{"equal, numbers by value", Differ{}, `{"a":[1,2],"b":{"c":1.0}}`, `{"b":{"c":1},"a":[1,2.00]}`, ""},
		{"keys in order, missing and extra", Differ{}, `{"b":1,"a":{"x":1,"y":2},"odd key":3}`, `{"a":{"x":2},"c":4,"b":1}`,
			`$.a.x 1 2
$.a.y 2 -
$.c - 4
$["odd key"] 3 -`},
		{"an array whole without Items", Differ{}, `{"a":[1,2]}`, `{"a":[1,3,4]}`, `$.a [1,2] [1,3,4]`},
		{"arrays item by item", Differ{Items: true}, `{"a":[1,{"k":2}]}`, `{"a":[1,{"k":3},5]}`,
			`$.a [1,{"k":2}] [1,{"k":3},5] (length)
$.a[1].k 2 3
$.a[2] - 5`},
		{"different kinds", Differ{Items: true}, `{"a":[1]}`, `{"a":{"0":1}}`, `$.a [1] {"0":1}`},
		{"depth 1: values whole", Differ{Depth: 1}, `{"a":{"x":1},"b":2}`, `{"a":{"x":2},"b":2}`, `$.a {"x":1} {"x":2}`},
		{"the caller's path syntax", Differ{Path: arrowPath{}, Items: true}, `{"a":[{"b":1}]}`, `{"a":[{"b":2}]}`, `$/a/0/b 1 2`},
		{"the caller's equality", Differ{Equal: func(a, b any) bool { return Canonical(a) == Canonical(b) }}, `{"a":1.0}`, `{"a":1}`, `$.a 1.0 1`},
		// With MissingIsNull an absent key is null: a null beside nothing
		// is no difference of a key, but the object holding it differs.
		{"missing is null", Differ{MissingIsNull: true}, `{"a":{"x":null,"y":1},"b":1}`, `{"a":{"y":1},"b":2}`,
			`$.a {"x":null,"y":1} {"y":1}
$.b 1 2`},
		{"missing is null, a value beside nothing", Differ{MissingIsNull: true}, `{"a":1}`, `{}`, `$.a 1 null`},
	}
	for _, tt := range tests {
		var got []string
		tt.d.Diffs("$", mustParse(t, tt.a), mustParse(t, tt.b), func(d Diff) bool {
			got = append(got, show(d))
			return true
		})
		if g := strings.Join(got, "\n"); g != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, g, tt.want)
		}
	}
}

// Returning false stops the walk; Diffs says whether it found any.
func TestDifferStops(t *testing.T) {
	var d Differ
	n := 0
	found := d.Diffs("$", mustParse(t, `{"a":1,"b":{"c":1},"d":1}`), mustParse(t, `{"a":2,"b":{"c":2},"d":2}`), func(Diff) bool {
		n++
		return n < 2
	})
	if n != 2 || !found {
		t.Errorf("called %d times (found %v), want 2 (true)", n, found)
	}
	if d.Diffs("$", mustParse(t, `[1]`), mustParse(t, `[1]`), func(Diff) bool { panic(fmt.Sprint("called")) }) {
		t.Error("equal values: found a difference")
	}
}
