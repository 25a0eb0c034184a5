package value

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var parseSeeds = []string{
	`{"order_id":"A-991"}`,
	` {"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"} `,
	"{\n\t\"a\": [1, -2.5e+3, 0, -0, 1E9, 0.25],\r\n \"b\": {\"c\": [true, false, null, {}], \"d\": []}}",
	`{"a":1,"a":2}`,
	`{"é":"日本語","k":"ü"}`,
	`[]`, `{}`, `[[[[]]]]`, `"x"`, `""`, `12`, `-0.0e-0`, `true`, `null`,
	`123456789012345678901234567890`,
	// Not the fast path's: encoding/json decides.
	`{"s":"a\"b"}`, `{"s":"\u00e9"}`, `"\ud800"`, "\"\xff\"", "\"a\x01\"",
	`{"a":1}}`, `[1]]`, `1]`, `{} }`, `"a"]`, `{"a":1} x`, `1 2`, `01`, `1.`, `.5`, `-`, `1e`, `+1`, `1e+`,
	`{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `{"a":1`, `[1`, `"abc`, `tru`, `nul`, `falsey`,
	``, ` `, "\xef\xbb\xbf{}", `NaN`, `{"a":[1,{"b":}]}`,
	strings.Repeat("[", 300) + strings.Repeat("]", 300),
	strings.Repeat(`{"a":`, 10001) + "1" + strings.Repeat("}", 10001),
}

// The fast path reads the usual arguments itself, and whatever it reads
// is exactly what encoding/json makes of the text; the rest is left to
// encoding/json (same values, same errors, by construction).
func TestParseFastPath(t *testing.T) {
	fast := map[string]bool{
		`{"order_id":"A-991"}`: true,
		` {"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"} `: true,
		`{"é":"日本語","k":"ü"}`: true,
		`{"a":1,"a":2}`:       true,
		`[[[[]]]]`:            true,
		`-0.0e-0`:             true,
		`{"s":"a\"b"}`:        false,
		"\"\xff\"":            false,
		`{"a":1}}`:            false,
		`01`:                  false,
		strings.Repeat("[", 300) + strings.Repeat("]", 300): false,
	}
	for _, text := range parseSeeds {
		checkParse(t, text)
		if want, ok := fast[text]; ok {
			if _, got := parseFast(text); got != want {
				t.Errorf("%.40q: fast path %v, want %v", text, got, want)
			}
		}
	}
	v, err := Parse([]byte(`{"a":1,"a":[2]}`))
	if err != nil || !reflect.DeepEqual(v, map[string]any{"a": []any{json.Number("2")}}) {
		t.Errorf("repeated key: %#v %v", v, err)
	}
	if _, err := Parse([]byte(`{"a":1} x`)); err == nil || err.Error() != "unexpected data after the JSON value" {
		t.Errorf("trailing data: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range parseSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) { checkParse(t, text) })
}

// checkParse: when the fast path reads text, encoding/json reads it too,
// to a deeply equal value (maps and slices never nil, numbers as written).
func checkParse(t *testing.T, text string) {
	t.Helper()
	if _, err := Parse([]byte(text)); (err == nil) != json.Valid([]byte(text)) {
		t.Fatalf("%.60q: Parse's error %v, json.Valid %v", text, err, json.Valid([]byte(text)))
	}
	got, ok := parseFast([]byte(text))
	if got2, ok2 := parseFast(text); ok2 != ok || !reflect.DeepEqual(got2, got) {
		t.Fatalf("%.60q: the fast path reads bytes to %#v (%v), a string to %#v (%v)", text, got, ok, got2, ok2)
	}
	if !ok {
		return
	}
	want, err := parseStd([]byte(text))
	if err != nil {
		t.Fatalf("%.60q: the fast path read %#v, encoding/json failed: %v", text, got, err)
	}
	if !json.Valid([]byte(text)) {
		t.Fatalf("%.60q: the fast path read %#v, json.Valid says it is not JSON", text, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%.60q: the fast path read %#v, encoding/json %#v", text, got, want)
	}
}
