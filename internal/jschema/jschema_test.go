package jschema_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/jschema"
)

// A failure naming several unknown keys names them in one order, whatever
// the map's: the output check prints it in the report.
func TestAdditionalPropertiesInOrder(t *testing.T) {
	s, err := jschema.Compile(map[string]any{"type": "object", "additionalProperties": false}, "")
	if err != nil {
		t.Fatal(err)
	}
	v := map[string]any{}
	for _, k := range []string{"k", "c", "h", "a", "j", "e", "b", "i", "d", "g", "f"} {
		v[k] = true
	}
	const want = "additional properties 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k' not allowed"
	for range 20 {
		l := s.Validate(v)
		if len(l) != 1 || l[0].Message != want {
			t.Fatalf("got %v\nwant one failure: %s", l, want)
		}
	}
}

// Numbers in messages are written as in JSON: no thousands separators,
// no "×10⁶" (the English printer's, before).
func TestMessageNumbers(t *testing.T) {
	s, err := jschema.Compile(map[string]any{"properties": map[string]any{
		"n": map[string]any{"maximum": json.Number("1000")},
		"f": map[string]any{"minimum": json.Number("1e30")},
		"s": map[string]any{"maxItems": json.Number("1000")},
	}}, "")
	if err != nil {
		t.Fatal(err)
	}
	long := make([]any, 1001)
	l := s.Validate(map[string]any{"n": json.Number("1001"), "f": json.Number("2.5"), "s": long})
	var got []string
	for _, x := range l {
		got = append(got, jschema.Pointer(x.Path)+": "+x.Message)
	}
	want := []string{"/f: minimum: got 2.5, want 1e+30", "/n: maximum: got 1001, want 1000", "/s: maxItems: got 1001, want 1000"}
	if !slices.Equal(got, want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// A draft-07 schema asserts the formats JSON Schema defines, and ignores
// any other (semver and period were the library's own, now gone).
func TestDraft7Formats(t *testing.T) {
	for format, valid := range map[string]bool{"date": false, "uuid": false, "ipv4": false, "semver": true, "period": true, "no-such": true} {
		s, err := jschema.Compile(map[string]any{"$schema": "http://json-schema.org/draft-07/schema#", "format": format}, "")
		if err != nil {
			t.Fatal(err)
		}
		if got := len(s.Validate("x")) == 0; got != valid {
			t.Errorf("format %s: %q valid=%v, want %v", format, "x", got, valid)
		}
	}
}
