package toolserver

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

func TestInputSchema(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
		note string
	}{
		{nil, `{"type":"object"}`, ""},
		{map[string]any{"type": "object", "properties": map[string]any{}}, `{"properties":{},"type":"object"}`, ""},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}}, `{"properties":{"a":{"type":"string"}},"type":"object"}`, ""},
		{map[string]any{"type": "string"}, `{"type":"object"}`, `input_schema has type "string", not object: MCP clients are shown {"type": "object"}`},
		{true, `{"type":"object"}`, `input_schema is boolean, not a mapping: MCP clients are shown {"type": "object"}`},
	} {
		got, note := inputSchema(tt.in)
		if string(got) != tt.want || note != tt.note {
			t.Errorf("inputSchema(%v) = %s, %q; want %s, %q", tt.in, got, note, tt.want, tt.note)
		}
	}
	// The suite's value is not changed.
	m := map[string]any{"properties": map[string]any{}}
	inputSchema(m)
	if _, ok := m["type"]; ok {
		t.Error("inputSchema changed the suite's schema")
	}
}

func TestToolsOrderAndNotes(t *testing.T) {
	data := []byte(`version: 1
agent: {provider: script}
tools:
  b: {description: B, input_schema: {type: string}}
  a: {description: A}
mocks:
  z: [{return: 1}]
  a: [{return: 2}]
  b: [{return: 3}]
cases:
  - name: c
    input: x
    mocks:
      y: [{return: 4}]
      z: [{return: 5}]
    script: [{text: ok}]
`)
	su, ds := spec.Parse("order.dryfire.yaml", data, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	sc := NewScope(ScopeOptions{Suite: su, Case: su.Cases[0]})
	var names []string
	for _, tl := range sc.Tools() {
		names = append(names, tl.Name)
		if !json.Valid(tl.InputSchema) {
			t.Errorf("%s: schema %s", tl.Name, tl.InputSchema)
		}
	}
	if got, want := names, []string{"b", "a", "z", "y"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if got := sc.Notes(); len(got) != 1 || got[0] != `order.dryfire.yaml:4:3: warning: tool "b": input_schema has type "string", not object: MCP clients are shown {"type": "object"}` {
		t.Errorf("notes %q", got)
	}
}
