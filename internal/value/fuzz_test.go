package value

import (
	"encoding/json"
	"math/big"
	"regexp"
	"testing"
)

// FuzzMatch checks the matcher's invariants on two arbitrary JSON texts, a
// pattern and a value:
//   - nothing panics;
//   - Match(v) is exactly Diff(v) reporting no differing leaf, and a miss
//     always says where;
//   - every value matches itself as a pattern, and values that are Equal
//     match each other;
//   - Canonical output parses back to an Equal value whose Canonical form
//     is the same text.
func FuzzMatch(f *testing.F) {
	seeds := [][2]string{
		{`{"order_id":"A-991"}`, `{"order_id":"A-991","reason":"late"}`},
		{`{"order_id":"A-991"}`, `{"order_id":"a-991"}`},
		{`{}`, `{"a":1}`},
		{`{}`, `[]`},
		{`{"k":null}`, `{}`},
		{`{"k":null}`, `{"k":null}`},
		{`{"n":1}`, `{"n":1.0}`},
		{`{"n":1}`, `{"n":1e0}`},
		{`{"n":"1"}`, `{"n":1}`},
		{`{"n":123456789012345678901234567890}`, `{"n":123456789012345678901234567891}`},
		{`{"n":-0}`, `{"n":0.0e5}`},
		{`{"n":1e400}`, `{"n":10e399}`},
		{`{"a":[1,2]}`, `{"a":[1]}`},
		{`{"a":[{"sku":"X"}]}`, `{"a":[{"sku":"X","qty":2}]}`},
		{`{"o":{"p":{"q":true}}}`, `{"o":{"p":{"q":false}}}`},
		{`{"s":"<&>\u0000\"\\é"}`, `{"s":"<&>\u0000\"\\é"}`},
		{`[1,"x",null,true]`, `[1,"x",null,true]`},
		{`"str"`, `"str"`},
		{`null`, `null`},
		{`{"":{"":[]}}`, `{"":{"":[],"x":1}}`},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, patternText, valueText string) {
		pv, perr := Parse([]byte(patternText))
		v, verr := Parse([]byte(valueText))
		if perr == nil {
			checkSelf(t, pv)
		}
		if verr == nil {
			checkSelf(t, v)
		}
		if perr != nil || verr != nil {
			return
		}
		p := Compile(pv)
		m := p.Match(v)
		n, mm := p.Diff(v)
		if m != (n == 0) {
			t.Fatalf("Match = %v but Diff counts %d (%+v)\npattern %s\nvalue   %s", m, n, mm, patternText, valueText)
		}
		if m && mm != (Mismatch{}) {
			t.Fatalf("a match described a mismatch %+v", mm)
		}
		if !m && (mm.Path == "" || mm.Expected == "" || mm.Got == "") {
			t.Fatalf("a miss with an incomplete description %+v", mm)
		}
		eq := Equal(pv, v)
		if eq != Equal(v, pv) {
			t.Fatalf("Equal is not symmetric\n%s\n%s", patternText, valueText)
		}
		if eq && (!m || !Compile(v).Match(pv)) {
			t.Fatalf("Equal values do not match each other\n%s\n%s", patternText, valueText)
		}
		if eq && Canonical(pv) != Canonical(v) && !hasNumber(pv) {
			t.Fatalf("Equal values without numbers have different Canonical forms")
		}
	})
}

func checkSelf(t *testing.T, v any) {
	t.Helper()
	p := Compile(v)
	if !p.Match(v) {
		t.Fatalf("a value does not match itself: %s", Canonical(v))
	}
	if n, mm := p.Diff(v); n != 0 {
		t.Fatalf("a value differs from itself: %d %+v", n, mm)
	}
	if !Equal(v, v) {
		t.Fatalf("a value is not Equal to itself: %s", Canonical(v))
	}
	c := Canonical(v)
	back, err := Parse([]byte(c))
	if err != nil {
		t.Fatalf("Canonical gave invalid JSON %q: %v", c, err)
	}
	if c2 := Canonical(back); c2 != c {
		t.Fatalf("Canonical is not stable:\n%s\n%s", c, c2)
	}
	if !Equal(v, back) {
		t.Fatalf("Canonical changed the value: %s", c)
	}
}

func hasNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		return true
	case []any:
		for _, e := range x {
			if hasNumber(e) {
				return true
			}
		}
	case map[string]any:
		for _, e := range x {
			if hasNumber(e) {
				return true
			}
		}
	}
	return false
}

var modestNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]{0,40})(\.[0-9]{1,40})?([eE][+-]?[0-9]{1,3})?$`)

// FuzzNumberEqual checks the digit-wise comparison against exact rational
// arithmetic, on numbers small enough for big.Rat to be quick.
func FuzzNumberEqual(f *testing.F) {
	for _, s := range [][2]string{
		{"1", "1.0"}, {"1", "1e0"}, {"1", "1.00000000000000000001"}, {"-0", "0"},
		{"0.001", "1e-3"}, {"123456789012345678901234567890", "1.2345678901234567890123456789e29"},
		{"100", "1e2"}, {"10", "1"}, {"0.10", "1E-1"}, {"-5e-1", "-0.5"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		got := NumberEqual(json.Number(a), json.Number(b))
		if got != NumberEqual(json.Number(b), json.Number(a)) {
			t.Fatalf("NumberEqual(%s, %s) is not symmetric", a, b)
		}
		if !modestNumber.MatchString(a) || !modestNumber.MatchString(b) {
			return
		}
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if want := ra.Cmp(rb) == 0; got != want {
			t.Fatalf("NumberEqual(%s, %s) = %v, exact arithmetic says %v", a, b, got, want)
		}
	})
}
