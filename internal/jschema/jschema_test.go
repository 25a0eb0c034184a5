package jschema_test

import (
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
