package jschema

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Each keyword's edges: what the quick tree says, and that the validator
// agrees wherever it is sure.
func TestQuickKeywordEdges(t *testing.T) {
	tests := []struct {
		name, schema, value string
		want                verdict
	}{
		{"true schema", `true`, `{"a": 1}`, yes},
		{"false schema", `false`, `null`, no},
		{"empty schema", `{}`, `[1, "x"]`, yes},
		{"type string", `{"type": "string"}`, `"x"`, yes},
		{"type string, number", `{"type": "string"}`, `1`, no},
		{"type list", `{"type": ["string", "object"]}`, `{}`, yes},
		{"type list, miss", `{"type": ["string", "object"]}`, `[]`, no},
		{"integer 1", `{"type": "integer"}`, `1`, yes},
		{"integer 1.0", `{"type": "integer"}`, `1.0`, yes},
		{"integer 1e2", `{"type": "integer"}`, `1e2`, yes},
		{"integer 1.5e1", `{"type": "integer"}`, `1.5e1`, yes},
		{"integer 1.5", `{"type": "integer"}`, `1.5`, no},
		{"integer 15e-1", `{"type": "integer"}`, `15e-1`, no},
		{"integer -0", `{"type": "integer"}`, `-0`, yes},
		{"integer 0.000", `{"type": "integer"}`, `0.000`, yes},
		{"integer long", `{"type": "integer"}`, `123456789012345678901234567890`, yes},
		{"integer string", `{"type": "integer"}`, `"1"`, no},
		{"number integer", `{"type": "number"}`, `7`, yes},
		{"integer huge exponent", `{"type": "integer"}`, `1e5000`, unsure},
		{"boolean", `{"type": "boolean"}`, `false`, yes},
		{"null", `{"type": "null"}`, `null`, yes},
		{"null, false", `{"type": "null"}`, `false`, no},

		{"minimum equal", `{"minimum": 1}`, `1`, yes},
		{"minimum below", `{"minimum": 1}`, `0.999`, no},
		{"minimum 1.0 against 1", `{"minimum": 1.0}`, `1`, yes},
		{"minimum string ignored", `{"minimum": 1}`, `"0"`, yes},
		{"maximum equal", `{"maximum": 2.5}`, `2.5`, yes},
		{"maximum above", `{"maximum": 2.5}`, `2.50000000000001`, no},
		{"maximum too precise", `{"maximum": 1}`, `1.0000000000000000001`, unsure},
		{"exclusiveMinimum equal", `{"exclusiveMinimum": 0}`, `0`, no},
		{"exclusiveMinimum -0", `{"exclusiveMinimum": 0}`, `-0.0`, no},
		{"exclusiveMinimum above", `{"exclusiveMinimum": 0}`, `1e-300`, yes},
		{"exclusiveMinimum subnormal", `{"exclusiveMinimum": 0}`, `1e-320`, unsure},
		{"exclusiveMaximum", `{"exclusiveMaximum": 3}`, `3`, no},

		{"minLength code points", `{"minLength": 2}`, `"é"`, no},
		{"maxLength code points", `{"maxLength": 1}`, `"é"`, yes},
		{"maxLength emoji", `{"maxLength": 1}`, `"👍"`, yes},
		{"minLength empty", `{"minLength": 1}`, `""`, no},
		{"minLength not a string", `{"minLength": 3}`, `1`, yes},

		{"required", `{"required": ["a"]}`, `{"a": null}`, yes},
		{"required missing", `{"required": ["a"]}`, `{"b": 1}`, no},
		{"required not an object", `{"required": ["a"]}`, `[]`, yes},
		{"properties", `{"properties": {"a": {"type": "string"}}}`, `{"a": 1}`, no},
		{"additionalProperties false", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1, "b": 2}`, no},
		{"additionalProperties false, known", `{"properties": {"a": {}}, "additionalProperties": false}`, `{"a": 1}`, yes},
		{"additionalProperties schema", `{"additionalProperties": {"type": "string"}}`, `{"a": "x", "b": 2}`, no},
		{"minProperties", `{"minProperties": 1}`, `{}`, no},
		{"maxProperties", `{"maxProperties": 1}`, `{"a": 1, "b": 2}`, no},

		{"items", `{"items": {"type": "string"}}`, `["a", 1]`, no},
		{"items false", `{"items": false}`, `[]`, yes},
		{"minItems", `{"minItems": 1}`, `[]`, no},
		{"maxItems", `{"maxItems": 1}`, `[1, 2]`, no},

		{"enum", `{"enum": ["a", "b"]}`, `"b"`, yes},
		{"enum miss", `{"enum": ["a", "b"]}`, `"c"`, no},
		{"enum numbers", `{"enum": [1, 2]}`, `2.0`, yes},
		{"enum number vs string", `{"enum": ["1"]}`, `1`, no},
		{"enum null", `{"enum": [null]}`, `null`, yes},
		{"enum of objects", `{"enum": [{"a": 1}]}`, `{"a": 1}`, unsure},
		{"const true", `{"const": true}`, `true`, yes},
		{"const true, 1", `{"const": true}`, `1`, no},
		{"const 1 vs 1.0", `{"const": 1}`, `1.0`, yes},
		{"const string vs list", `{"const": "a"}`, `["a"]`, no},

		{"not", `{"not": {"required": ["a"]}}`, `{"a": 1}`, no},
		{"not, passes", `{"not": {"required": ["a"]}}`, `{}`, yes},
		{"not unsure", `{"not": {"pattern": "a"}}`, `"a"`, unsure},
		{"allOf", `{"allOf": [{"type": "object"}, {"required": ["a"]}]}`, `{}`, no},
		{"anyOf", `{"anyOf": [{"type": "string"}, {"type": "object"}]}`, `{}`, yes},
		{"anyOf none", `{"anyOf": [{"type": "string"}, {"type": "object"}]}`, `1`, no},
		{"oneOf two", `{"oneOf": [{"type": "number"}, {"type": "integer"}]}`, `1`, no},
		{"oneOf one", `{"oneOf": [{"type": "number"}, {"type": "string"}]}`, `1`, yes},
		{"if then", `{"if": {"required": ["a"]}, "then": {"required": ["b"]}}`, `{"a": 1}`, no},
		{"if then, if fails", `{"if": {"required": ["a"]}, "then": {"required": ["b"]}}`, `{}`, yes},
		{"if else", `{"if": {"required": ["a"]}, "else": {"required": ["b"]}}`, `{}`, no},
		{"if without then", `{"if": {"required": ["a"]}}`, `{}`, yes},
		{"then without if", `{"then": false}`, `{}`, yes},

		{"$ref", `{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s"}`, `1`, no},
		{"$ref with sibling", `{"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "minLength": 2}`, `"a"`, no},
		{"$ref recursive", `{"properties": {"next": {"$ref": "#"}}, "required": ["v"]}`, `{"v": 1, "next": {"v": 2, "next": {}}}`, no},
		{"$ref escaped", `{"$defs": {"a/b": {"type": "string"}}, "$ref": "#/$defs/a~1b"}`, `"x"`, yes},
		{"$ref cycle", `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"}`, `1`, unsure},
		{"$ref anchor", `{"$defs": {"a": {"$anchor": "x", "type": "string"}}, "$ref": "#x"}`, `"s"`, unsure},

		{"annotations", `{"title": "t", "description": "d", "default": 1, "examples": [1], "type": "number"}`, `1`, yes},
		{"unknown keyword", `{"pattern": "^a$"}`, `"a"`, unsure},
		{"format is not asserted", `{"format": "email"}`, `"a"`, yes},
		{"content is not asserted", `{"contentMediaType": "application/json", "contentSchema": {"type": "object"}}`, `"x"`, yes},
		{"definitions", `{"definitions": {"s": {"type": "string"}}, "$ref": "#/definitions/s"}`, `1`, no},
		{"unknown keyword under properties", `{"properties": {"a": {"pattern": "x"}}}`, `{"a": "x"}`, unsure},
		{"unknown keyword on an untaken branch", `{"properties": {"a": {"pattern": "x"}}}`, `{"b": "x"}`, yes},
		{"unevaluatedProperties", `{"properties": {"a": {}}, "unevaluatedProperties": false}`, `{"a": 1}`, unsure},
		{"type and a false branch", `{"type": "string", "allOf": [false]}`, `1`, no},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := value.Parse([]byte(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(raw, "")
			if err != nil {
				t.Fatal(err)
			}
			v, err := value.Parse([]byte(tc.value))
			if err != nil {
				t.Fatal(err)
			}
			if s.q == nil {
				t.Fatal("no quick tree")
			}
			got := s.q.check(v, 0)
			if got != tc.want {
				t.Errorf("quick verdict %s, want %s", got, tc.want)
			}
			valid := len(s.validate(v)) == 0
			if got == yes && !valid || got == no && valid {
				t.Errorf("quick verdict %s, but the validator says valid=%v", got, valid)
			}
			if valid != (len(s.Validate(v)) == 0) {
				t.Errorf("Validate differs from the validator")
			}
		})
	}
}

// A document the quick tree cannot follow gets none: the validator alone.
func TestQuickTreeRefused(t *testing.T) {
	for _, doc := range []string{
		`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"}`,
		`{"$defs": {"a": {"$id": "http://x/a.json", "type": "string"}}, "$ref": "#/$defs/a"}`,
	} {
		raw, err := value.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		s, err := Compile(raw, "")
		if err != nil {
			t.Fatal(err)
		}
		if s.q != nil {
			t.Errorf("%s: has a quick tree", doc)
		}
	}
}

// The quick check of a valid value allocates nothing.
func TestQuickAllocatesNothing(t *testing.T) {
	raw, _ := value.Parse([]byte(`{"type": "object", "required": ["a"], "properties": {"a": {"type": "integer", "minimum": 0}, "b": {"type": "array", "items": {"enum": ["x", "y"]}}}, "additionalProperties": false}`))
	s, err := Compile(raw, "")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := value.Parse([]byte(`{"a": 3, "b": ["x", "y", "x"]}`))
	if n := testing.AllocsPerRun(100, func() {
		if s.q.check(v, 0) != yes {
			t.Fatal("not valid")
		}
	}); n != 0 {
		t.Errorf("%v allocations a check", n)
	}
}
