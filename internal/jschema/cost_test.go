package jschema

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// nestedAnyOf is a schema of depth levels of $defs, each an anyOf of
// width $refs to the next: width^depth branches in a few hundred bytes.
func nestedAnyOf(width, depth int) map[string]any {
	defs := map[string]any{fmt.Sprintf("d%d", depth): map[string]any{"type": "string", "minLength": 5}}
	for i := depth - 1; i >= 0; i-- {
		var refs []any
		for range width {
			refs = append(refs, map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i+1)})
		}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"anyOf": refs}
	}
	return map[string]any{"$defs": defs, "$ref": "#/$defs/d0"}
}

// A JSON Schema with nested anyOf (20^6 branches) compiled, then one
// value that matched none exhausted memory: it is refused at compile.
func TestHostileNestedAnyOfSchemaIsRefusedAtCompile(t *testing.T) {
	start := time.Now()
	_, err := Compile(nestedAnyOf(20, 6), "")
	if err == nil || !strings.Contains(err.Error(), "the schema expands to more than 100000 subschemas through $ref, anyOf, oneOf and allOf") {
		t.Fatalf("compile: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refusing took %v", d)
	}
	// A modest one still compiles and validates.
	s, err := Compile(nestedAnyOf(3, 4), "")
	if err != nil {
		t.Fatal(err)
	}
	if leaves := s.Validate("abc"); len(leaves) == 0 {
		t.Error("abc matched minLength 5")
	}
	// Recursive schemas (a tree) are fine: recursion is bounded by the value.
	tree := map[string]any{"$defs": map[string]any{"node": map[string]any{"type": "object", "properties": map[string]any{"kids": map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/node"}}}}}, "$ref": "#/$defs/node"}
	if _, err := Compile(tree, ""); err != nil {
		t.Errorf("tree: %v", err)
	}
}

// The schemas dryfire ships stay far below the bound.
func TestShippedSchemasAreWithinTheExpansionBound(t *testing.T) {
	for _, f := range []string{"../../schema/suite.schema.json", "../../schema/world.schema.json"} {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			t.Fatal(err)
		}
		n, err := expanded(v, MaxExpanded)
		if err != nil || n > MaxExpanded/10 {
			t.Errorf("%s expands to %d subschemas: %v", f, n, err)
		}
	}
}
