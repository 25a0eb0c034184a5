package value

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		name           string
		pattern, value string
		want           bool
	}{
		{"equal objects", `{"a":"x"}`, `{"a":"x"}`, true},
		{"extra keys in the value are fine", `{"a":"x"}`, `{"a":"x","b":2,"c":{"d":null}}`, true},
		{"empty pattern matches any object", `{}`, `{"a":1}`, true},
		{"empty pattern matches the empty object", `{}`, `{}`, true},
		{"empty object pattern needs an object", `{}`, `[]`, false},
		{"empty object pattern vs null", `{}`, `null`, false},
		{"missing key", `{"a":"x"}`, `{"b":"x"}`, false},
		{"every key must match", `{"a":"x","b":"y"}`, `{"a":"x","b":"z"}`, false},

		{"nested maps recurse as subsets", `{"o":{"p":{"q":1}}}`, `{"o":{"p":{"q":1,"r":2},"s":3}}`, true},
		{"nested mismatch", `{"o":{"p":{"q":1}}}`, `{"o":{"p":{"q":2}}}`, false},
		{"nested object vs scalar", `{"o":{"p":1}}`, `{"o":"p"}`, false},
		{"nested empty object needs an object", `{"o":{}}`, `{"o":null}`, false},
		{"nested empty object matches any object", `{"o":{}}`, `{"o":{"x":1}}`, true},

		{"arrays element-wise", `{"a":[1,"x",null]}`, `{"a":[1,"x",null]}`, true},
		{"shorter array does not match", `{"a":[1,2]}`, `{"a":[1]}`, false},
		{"longer array does not match", `{"a":[1,2]}`, `{"a":[1,2,3]}`, false},
		{"array order matters", `{"a":[1,2]}`, `{"a":[2,1]}`, false},
		{"empty array matches only an empty array", `{"a":[]}`, `{"a":[]}`, true},
		{"empty array vs non-empty", `{"a":[]}`, `{"a":[1]}`, false},
		{"objects inside arrays are subsets", `{"a":[{"sku":"X"}]}`, `{"a":[{"sku":"X","qty":2}]}`, true},
		{"objects inside arrays mismatch", `{"a":[{"sku":"X"}]}`, `{"a":[{"sku":"Y"}]}`, false},
		{"array vs object", `{"a":[]}`, `{"a":{}}`, false},

		{"1 == 1.0", `{"n":1}`, `{"n":1.0}`, true},
		{"1 == 1e0", `{"n":1}`, `{"n":1e0}`, true},
		{"1.0 == 1", `{"n":1.0}`, `{"n":1}`, true},
		{"-0 == 0", `{"n":-0}`, `{"n":0}`, true},
		{"1 != 1.00000000000000000001", `{"n":1}`, `{"n":1.00000000000000000001}`, false},
		{"big ints differing in the last digit", `{"n":123456789012345678901234567890}`, `{"n":123456789012345678901234567891}`, false},
		{"big ints equal", `{"n":123456789012345678901234567890}`, `{"n":123456789012345678901234567890}`, true},
		{`"1" != 1`, `{"n":"1"}`, `{"n":1}`, false},
		{`1 != "1"`, `{"n":1}`, `{"n":"1"}`, false},

		{"strings are case-sensitive", `{"s":"Gold"}`, `{"s":"gold"}`, false},
		{"strings equal", `{"s":"gold"}`, `{"s":"gold"}`, true},
		{"empty string is not null", `{"s":""}`, `{"s":null}`, false},

		{"true", `{"b":true}`, `{"b":true}`, true},
		{"true != false", `{"b":true}`, `{"b":false}`, false},
		{"false != null", `{"b":false}`, `{"b":null}`, false},
		{"false != 0", `{"b":false}`, `{"b":0}`, false},

		{"null matches a present null", `{"k":null}`, `{"k":null}`, true},
		{"null does not match an absent key", `{"k":null}`, `{}`, false},
		{"null does not match a value", `{"k":null}`, `{"k":0}`, false},
		{"null does not match an empty string", `{"k":null}`, `{"k":""}`, false},
		{"a value does not match null", `{"k":0}`, `{"k":null}`, false},

		{"object pattern vs non-object args", `{"a":1}`, `[1]`, false},
		{"object pattern vs string args", `{"a":1}`, `"a"`, false},
		{"top-level scalar pattern", `5`, `5.0`, true},
		{"top-level array pattern", `[1]`, `[1]`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := Compile(mustParse(t, tt.pattern))
			v := mustParse(t, tt.value)
			if got := p.Match(v); got != tt.want {
				t.Errorf("Compile(%s).Match(%s) = %v, want %v", tt.pattern, tt.value, got, tt.want)
			}
			// Match and Diff must agree.
			if n, mm := p.Diff(v); (n == 0) != tt.want {
				t.Errorf("Diff(%s) = %d, %+v, but Match = %v", tt.value, n, mm, tt.want)
			}
		})
	}
}

func TestPatternDiff(t *testing.T) {
	tests := []struct {
		name           string
		pattern, value string
		count          int
		first          Mismatch
	}{
		{"match", `{"a":1}`, `{"a":1.0,"b":2}`, 0, Mismatch{}},
		{"scalar differs", `{"order_id":"A-991"}`, `{"order_id":"A-992"}`, 1,
			Mismatch{Path: "$.order_id", Expected: `"A-991"`, Got: `"A-992"`}},
		{"absent key", `{"order_id":"A-991"}`, `{"id":"A-991"}`, 1,
			Mismatch{Path: "$.order_id", Expected: `"A-991"`, Got: "(absent)"}},
		{"absent key wanted null", `{"k":null}`, `{}`, 1,
			Mismatch{Path: "$.k", Expected: `null`, Got: "(absent)"}},
		{"type differs", `{"n":1}`, `{"n":"1"}`, 1,
			Mismatch{Path: "$.n", Expected: `1`, Got: `"1"`}},
		{"first failure in key order, all counted", `{"b":1,"a":1,"c":1}`, `{"a":2,"b":2,"c":1}`, 2,
			Mismatch{Path: "$.a", Expected: `1`, Got: `2`}},
		{"nested path", `{"o":{"p":{"q":"x"}}}`, `{"o":{"p":{"q":"y"}}}`, 1,
			Mismatch{Path: "$.o.p.q", Expected: `"x"`, Got: `"y"`}},
		{"array element path", `{"items":[{"sku":"X"},{"sku":"Y"}]}`, `{"items":[{"sku":"X"},{"sku":"Z"}]}`, 1,
			Mismatch{Path: "$.items[1].sku", Expected: `"Y"`, Got: `"Z"`}},
		{"array too short counts the missing leaves", `{"a":[1,2,{"x":3,"y":4}]}`, `{"a":[1,2]}`, 2,
			Mismatch{Path: "$.a", Expected: `[1,2,{"x":3,"y":4}]`, Got: `[1,2]`, Reason: "length 2, want 3"}},
		{"array too long counts one", `{"a":[1]}`, `{"a":[1,2,3]}`, 1,
			Mismatch{Path: "$.a", Expected: `[1]`, Got: `[1,2,3]`, Reason: "length 3, want 1"}},
		{"array of another length compares its prefix", `{"a":[1,2]}`, `{"a":[9,9,9]}`, 3,
			Mismatch{Path: "$.a", Expected: `[1,2]`, Got: `[9,9,9]`, Reason: "length 3, want 2"}},
		{"empty array pattern vs non-empty", `{"a":[]}`, `{"a":[1]}`, 1,
			Mismatch{Path: "$.a", Expected: `[]`, Got: `[1]`, Reason: "length 1, want 0"}},
		{"not an array", `{"a":[1,2]}`, `{"a":"1,2"}`, 2,
			Mismatch{Path: "$.a", Expected: `[1,2]`, Got: `"1,2"`, Reason: "not an array"}},
		{"not an object counts every leaf", `{"o":{"x":1,"y":{"z":2}}}`, `{"o":5}`, 2,
			Mismatch{Path: "$.o", Expected: `{"x":1,"y":{"z":2}}`, Got: `5`, Reason: "not an object"}},
		{"absent subtree counts every leaf", `{"o":{"x":1,"y":2}}`, `{}`, 2,
			Mismatch{Path: "$.o", Expected: `{"x":1,"y":2}`, Got: "(absent)"}},
		{"empty pattern is one leaf", `{"o":{}}`, `{"o":[]}`, 1,
			Mismatch{Path: "$.o", Expected: `{}`, Got: `[]`, Reason: "not an object"}},
		{"args not an object", `{"a":1}`, `null`, 1,
			Mismatch{Path: "$", Expected: `{"a":1}`, Got: `null`, Reason: "not an object"}},
		{"odd keys are quoted", `{"order id":1,"":2}`, `{"order id":2,"":2}`, 1,
			Mismatch{Path: `$["order id"]`, Expected: `1`, Got: `2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, mm := Compile(mustParse(t, tt.pattern)).Diff(mustParse(t, tt.value))
			if n != tt.count {
				t.Errorf("count = %d, want %d", n, tt.count)
			}
			if diff := cmp.Diff(tt.first, mm); diff != "" {
				t.Errorf("first mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPatternDiffTruncatesLongValues(t *testing.T) {
	long := `"` + strings.Repeat("x", 500) + `"`
	_, mm := Compile(mustParse(t, `{"a":"y"}`)).Diff(mustParse(t, `{"a":`+long+`}`))
	if got := []rune(mm.Got); len(got) != 201 || got[200] != '…' {
		t.Errorf("Got = %q (%d runes), want 200 runes and …", mm.Got, len(got))
	}
}

func TestPatternSourceAndKeys(t *testing.T) {
	src := mustParse(t, `{"b":1,"a":{"c":2}}`)
	p := Compile(src)
	if diff := cmp.Diff(src, p.Source()); diff != "" {
		t.Errorf("Source (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b"}, p.Keys()); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}
	if k := Compile(mustParse(t, `[1]`)).Keys(); len(k) != 0 {
		t.Errorf("Keys of an array pattern = %v, want none", k)
	}
}

func TestPathKey(t *testing.T) {
	tests := []struct{ key, want string }{
		{"order_id", ".order_id"},
		{"OrderID", ".OrderID"},
		{"_x", "._x"},
		{"order-id", ".order-id"},
		{"a1", ".a1"},
		{"1a", `["1a"]`},
		{"0", `["0"]`},
		{"-x", `["-x"]`},
		{"", `[""]`},
		{"order id", `["order id"]`},
		{"a.b", `["a.b"]`},
		{`a"b`, `["a\"b"]`},
		{"a[0]", `["a[0]"]`},
		{"café", `["café"]`},
		{"new\nline", `["new\nline"]`},
	}
	for _, tt := range tests {
		if got := PathKey(tt.key); got != tt.want {
			t.Errorf("PathKey(%q) = %s, want %s", tt.key, got, tt.want)
		}
	}
}

// ScalarAt says which scalar a mapping pattern requires under a key: the
// rule index keys on it.
func TestScalarAt(t *testing.T) {
	p := Compile(map[string]any{"sku": "A-1", "n": json.Number("1"), "z": nil, "b": true, "o": map[string]any{"sku": "x"}, "l": []any{"x"}})
	for _, tt := range []struct {
		key  string
		want any
		ok   bool
	}{
		{"sku", "A-1", true},
		{"n", json.Number("1"), true},
		{"z", nil, true},
		{"b", true, true},
		{"o", nil, false},
		{"l", nil, false},
		{"absent", nil, false},
	} {
		if got, ok := p.ScalarAt(tt.key); got != tt.want || ok != tt.ok {
			t.Errorf("ScalarAt(%q) = %#v, %v; want %#v, %v", tt.key, got, ok, tt.want, tt.ok)
		}
	}
	if _, ok := Compile("sku").ScalarAt("sku"); ok {
		t.Error("a scalar pattern requires nothing under a key")
	}
}
