package value

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// mustParse parses JSON text or fails the test.
func mustParse(t testing.TB, s string) any {
	t.Helper()
	v, err := Parse([]byte(s))
	if err != nil {
		t.Fatalf("Parse(%q): %v", s, err)
	}
	return v
}

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want any
	}{
		{`null`, nil},
		{`true`, true},
		{`"x"`, "x"},
		{`1.50`, json.Number("1.50")},
		{`123456789012345678901234567890`, json.Number("123456789012345678901234567890")},
		{` {"a": [1, "1", null, false]} `, map[string]any{"a": []any{json.Number("1"), "1", nil, false}}},
		{`{"a":1,"a":2}`, map[string]any{"a": json.Number("2")}}, // the last duplicate wins, as in encoding/json
	}
	for _, tt := range tests {
		got, err := Parse([]byte(tt.in))
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Parse(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{``, `   `, `{`, `{"a":1}{}`, `1 2`, `[1,]`, `nul`, `{'a':1}`} {
		if v, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) = %#v, want an error", in, v)
		}
	}
}

func TestCanonical(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"null", nil, `null`},
		{"booleans", []any{true, false}, `[true,false]`},
		{"number digits kept", []any{json.Number("1.50"), json.Number("1e0"), json.Number("-0"), json.Number("123456789012345678901234567890")},
			`[1.50,1e0,-0,123456789012345678901234567890]`},
		{"keys sorted at every level", map[string]any{"b": map[string]any{"z": "1", "a": "2"}, "a": []any{map[string]any{"y": nil, "x": true}}},
			`{"a":[{"x":true,"y":null}],"b":{"a":"2","z":"1"}}`},
		{"keys sorted bytewise", map[string]any{"a": "1", "B": "2", "é": "3", "_": "4"}, `{"B":"2","_":"4","a":"1","é":"3"}`},
		{"empty containers", map[string]any{"o": map[string]any{}, "a": []any{}}, `{"a":[],"o":{}}`},
		{"no HTML escaping", "<b>&amp;</b>", `"<b>&amp;</b>"`},
		{"quote and backslash", `say "hi" \o/`, `"say \"hi\" \\o/"`},
		{"short escapes", "a\nb\rc\td", `"a\nb\rc\td"`},
		{"other control chars", "\x00\x01\x08\x0c\x1f", `"\u0000\u0001\u0008\u000c\u001f"`},
		{"DEL is not a control char in JSON", "\x7f", "\"\x7f\""},
		{"unicode kept", "café 日本 🙂 \u2028", "\"café 日本 🙂 \u2028\""},
		{"invalid UTF-8 replaced", "a\xffb\xc3", `"a\ufffdb\ufffd"`},
		{"invalid UTF-8 in a key", map[string]any{"k\xff": "v"}, `{"k\ufffd":"v"}`},
		{"Go values via encoding/json", map[string]any{"n": 3, "f": 1.5, "s": []string{"x"}}, `{"f":1.5,"n":3,"s":["x"]}`},
		{"Go struct", struct {
			B int    `json:"b"`
			A string `json:"a"`
		}{1, "<"}, `{"a":"<","b":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Canonical(tt.in); got != tt.want {
				t.Errorf("Canonical = %s, want %s", got, tt.want)
			}
		})
	}
}

// Canonical output is JSON that parses back to the same value.
func TestCanonicalRoundTrip(t *testing.T) {
	in := `{"z":[1.50,-0,1e400,"\u0000\"\\<&>é🙂"],"a":{"":null,"k":false},"big":123456789012345678901234567890}`
	v := mustParse(t, in)
	c := Canonical(v)
	if !json.Valid([]byte(c)) {
		t.Fatalf("Canonical gave invalid JSON: %s", c)
	}
	back := mustParse(t, c)
	if !Equal(v, back) {
		t.Errorf("round trip changed the value:\n in: %s\nout: %s", in, Canonical(back))
	}
	if c2 := Canonical(back); c2 != c {
		t.Errorf("Canonical is not stable:\n%s\n%s", c, c2)
	}
}

func TestRender(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"plain text, verbatim", "plain text, verbatim"},
		{`{"looks":"like json"}`, `{"looks":"like json"}`},
		{"", ""},
		{nil, "null"},
		{json.Number("1.50"), "1.50"},
		{true, "true"},
		{map[string]any{"b": "<&>", "a": json.Number("1")}, `{"a":1,"b":"<&>"}`},
		{[]any{"x"}, `["x"]`},
	}
	for _, tt := range tests {
		if got := Render(tt.in); got != tt.want {
			t.Errorf("Render(%#v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestNumberEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"1", "1", true},
		{"1", "1.0", true},
		{"1", "1e0", true},
		{"1", "1E+0", true},
		{"1", "10e-1", true},
		{"1", "0.1e1", true},
		{"1.0", "1e0", true},
		{"1.5", "1.50", true},
		{"100", "1e2", true},
		{"100", "1E2", true},
		{"0.001", "1e-3", true},
		{"-0", "0", true},
		{"-0.0", "0e10", true},
		{"0", "0.000", true},
		{"-1.5", "-15e-1", true},
		{"1e400", "10e399", true},
		{"1e-400", "0.1e-399", true},
		{"1e99999999999999999999", "10e99999999999999999998", true},
		{"1e+0000000000000000000000001", "10", true},
		{"123456789012345678901234567890", "1.23456789012345678901234567890e29", true},

		{"1", "2", false},
		{"1", "-1", false},
		{"1", "1.00000000000000000001", false}, // same float64, different number
		{"123456789012345678901234567890", "123456789012345678901234567891", false},
		{"9007199254740993", "9007199254740992", false}, // 2^53+1 vs 2^53: one float64
		{"1e400", "2e400", false},                       // both overflow float64
		{"1e400", "1e401", false},
		{"1e-400", "0", false},
		{"1e99999999999999999999", "1e99999999999999999998", false},
		{"1e-99999999999999999999", "1e99999999999999999999", false},
		{"10", "1", false},
		{"0.5", "5", false},
		{"-0", "0.0000001", false},

		// Text outside JSON's number grammar (only reachable through the
		// Go API) equals only itself.
		{"0x10", "16", false},
		{"1/2", "0.5", false},
		{"+1", "1", false},
		{"01", "1", false},
		{".5", "0.5", false},
		{"1.", "1", false},
		{"1e", "1", false},
		{"", "0", false},
		{"NaN", "NaN", true},
	}
	for _, tt := range tests {
		a, b := json.Number(tt.a), json.Number(tt.b)
		if got := NumberEqual(a, b); got != tt.want {
			t.Errorf("NumberEqual(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := NumberEqual(b, a); got != tt.want {
			t.Errorf("NumberEqual(%s, %s) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

// A hostile exponent must not cost arithmetic on a million-digit number.
func TestNumberEqualHugeExponentIsCheap(t *testing.T) {
	allocs := testing.AllocsPerRun(100, func() {
		NumberEqual("1e999999", "2e999999")
		NumberEqual("1e999999", "5")
		NumberEqual("1.50", "1.5")
	})
	if allocs != 0 {
		t.Errorf("NumberEqual allocated %v times per run, want 0", allocs)
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{`null`, `null`, true},
		{`true`, `true`, true},
		{`true`, `false`, false},
		{`"a"`, `"a"`, true},
		{`"a"`, `"A"`, false}, // case-sensitive
		{`"1"`, `1`, false},   // a string is never a number
		{`1`, `1.0`, true},
		{`1`, `1e0`, true},
		{`1`, `1.00000000000000000001`, false},
		{`-0`, `0`, true},
		{`123456789012345678901234567890`, `123456789012345678901234567891`, false},
		{`0`, `false`, false},
		{`0`, `null`, false},
		{`""`, `null`, false},
		{`false`, `null`, false},
		{`[]`, `{}`, false},
		{`[1,2]`, `[1,2]`, true},
		{`[1,2]`, `[2,1]`, false},
		{`[1,2]`, `[1,2,3]`, false},
		{`[1.0,{"a":[1e0]}]`, `[1,{"a":[1]}]`, true},
		{`{"a":1,"b":2}`, `{"b":2.0,"a":1}`, true},
		{`{"a":1}`, `{"a":1,"b":2}`, false}, // Equal is not a subset match
		{`{"a":null}`, `{}`, false},
		{`{"a":null}`, `{"b":null}`, false},
	}
	for _, tt := range tests {
		a, b := mustParse(t, tt.a), mustParse(t, tt.b)
		if got := Equal(a, b); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := Equal(b, a); got != tt.want {
			t.Errorf("Equal(%s, %s) = %v, want %v (not symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestEqualForeignTypes(t *testing.T) {
	// Go values that are not values of this package are never equal,
	// even to themselves: Parse never produces them.
	if Equal(1.0, 1.0) || Equal(json.Number("1"), 1) {
		t.Error("Equal accepted a Go float or int")
	}
}

func TestTypeName(t *testing.T) {
	tests := []struct {
		v    any
		want string
	}{
		{nil, "null"}, {true, "boolean"}, {"", "string"}, {json.Number("1"), "number"},
		{[]any{}, "array"}, {map[string]any{}, "object"}, {3.5, "float64"},
	}
	for _, tt := range tests {
		if got := TypeName(tt.v); got != tt.want {
			t.Errorf("TypeName(%#v) = %q, want %q", tt.v, got, tt.want)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		s    string
		n    int
		want string
	}{
		{"hello", 5, "hello"},
		{"hello", 10, "hello"},
		{"hello", 3, "hel…"},
		{"日本語テキスト", 3, "日本語…"}, // runes, not bytes
		{"", 0, ""},
		{strings.Repeat("a", 300), 200, strings.Repeat("a", 200) + "…"},
	}
	for _, tt := range tests {
		if got := Truncate(tt.s, tt.n); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.s, tt.n, got, tt.want)
		}
	}
}

// BenchmarkCanonical renders a typical tool result: a nested object with
// strings, numbers, a list and a null.
func BenchmarkCanonical(b *testing.B) {
	v := mustParse(b, `{"order_id":"A-991","status":"shipped","tier":"gold","total":{"amount":129.50,"currency":"EUR"},
		"items":[{"sku":"SKU-1","qty":2,"name":"Espresso beans, 1 kg"},{"sku":"SKU-7","qty":1,"name":"Grinder <burr> & brush"}],
		"customer":{"id":123456789012345678,"email":"ann@example.com","vip":true},"note":null}`)
	b.ReportAllocs()
	for b.Loop() {
		Canonical(v)
	}
}

func BenchmarkNumberEqual(b *testing.B) {
	for _, p := range []struct{ name, a, b string }{
		{"same-text", "42", "42"},
		{"differ", "42", "43"},
		{"1.5=1.50", "1.5", "1.50"},
		{"bigint-last-digit", "123456789012345678901234567890", "123456789012345678901234567891"},
		{"1e999999-vs-5", "1e999999", "5"},
	} {
		b.Run(p.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NumberEqual(json.Number(p.a), json.Number(p.b))
			}
		})
	}
}

// An indented Form is json.Indent of the compact form, and ByValue writes
// numbers equal by value alike.
func TestForm(t *testing.T) {
	for _, src := range []string{
		`{"b":[1,{"x":[],"y":{}},"s\u0001<>"],"a":null,"c":{"d":true,"e":1.50}}`,
		`[]`, `{}`, `"x"`, `[[],[[]],{"":{"":[1]}}]`, `12345678901234567890`,
	} {
		v := mustParse(t, src)
		f := Form{Prefix: "  ", Indent: "\t"}
		var want bytes.Buffer
		if err := json.Indent(&want, []byte(Canonical(v)), f.Prefix, f.Indent); err != nil {
			t.Fatal(err)
		}
		if got := f.Append(nil, v); string(got) != want.String() {
			t.Errorf("%s indented:\n%s\nwant\n%s", src, got, want.String())
		}
	}
	byValue := Form{ByValue: true}
	a := byValue.Append(nil, mustParse(t, `{"n":[1.0,1e2,-0.50]}`))
	b := byValue.Append(nil, mustParse(t, `{"n":[1,100,-0.5]}`))
	if string(a) != string(b) || string(a) != `{"n":[1,100,-0.5]}` {
		t.Errorf("by value: %s and %s", a, b)
	}
}

// AppendString writes a string as encoding/json does without HTML
// escaping; Canonical does the same but for U+2028 and U+2029, backspace
// and form feed.
func TestAppendString(t *testing.T) {
	for _, s := range []string{"", "plain", "\x00\x1f", "q\"b\\s\n\r\t\x01\x7f", "\b\f", "<&>", "é€😀 𝄞", "bad \xff utf8", "sep \u2028 \u2029"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		if got := string(AppendString(nil, s)); got+"\n" != want.String() {
			t.Errorf("AppendString(%q) = %s, encoding/json %s", s, got, want.String())
		}
	}
	if got := Canonical("a\u2028b\b\f"); got != "\"a\u2028b\\u0008\\u000c\"" {
		t.Errorf("Canonical keeps U+2028 as it is and writes \\u0008 and \\u000c: %s", got)
	}
}

// Two numbers share a NumberKey exactly when NumberEqual says they are
// equal; a plain integer is its own key.
func TestNumberKey(t *testing.T) {
	nums := []string{"0", "-0", "0.0", "0e5", "1", "1.0", "1e0", "10e-1", "0.1e1", "100", "1e2", "1E+2", "100.00",
		"-1", "-1.0", "-100", "-1e2", "2", "12", "1.2e1", "120e-1", "0.5", "5e-1", "0.05", "123456789012345678901",
		"1234567890123456789012", "1.234567890123456789012e21", "1e21", "1e22", "1000000000000000000000",
		"10000000000000000000000", "1e400", "10e399", "1e-400", "1e99999999999999999999", "10e99999999999999999998",
		"01", "1.", ".5", "+1", "abc", ""}
	for _, a := range nums {
		ka, okA := NumberKey(json.Number(a))
		for _, b := range nums {
			kb, okB := NumberKey(json.Number(b))
			if !okA || !okB {
				continue
			}
			if eq := NumberEqual(json.Number(a), json.Number(b)); eq != (ka == kb) {
				t.Errorf("NumberEqual(%s, %s) = %v, keys %q and %q", a, b, eq, ka, kb)
			}
		}
		if _, bad := map[string]bool{"01": true, "1.": true, ".5": true, "+1": true, "abc": true, "": true}[a]; bad == okA {
			t.Errorf("NumberKey(%q) ok = %v", a, okA)
		}
	}
	for _, n := range []string{"100", "-7", "0", "123456789012345678901"} {
		if k, _ := NumberKey(json.Number(n)); k != n {
			t.Errorf("NumberKey(%s) = %q, want itself", n, k)
		}
		if a := testing.AllocsPerRun(10, func() { NumberKey(json.Number(n)) }); a != 0 {
			t.Errorf("NumberKey(%s) allocates %v times", n, a)
		}
	}
}
