package openapi

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// The schema rules: what an OpenAPI schema becomes in the world's JSON
// Schema, its local $refs followed.

// deref follows a local $ref (#/components/...) of a parameter, request
// body or response to what it names, with that value's node.
func (im *importer) deref(n *yaml.Node, v any) (any, *yaml.Node) {
	for i := 0; i < MaxRefDepth; i++ {
		m, _ := v.(map[string]any)
		ref, ok := m["$ref"].(string)
		if !ok {
			return v, n
		}
		target, tn, err := im.resolve(ref)
		if err != nil {
			rn, _ := yamlpos.Lookup(n, "$ref")
			im.doc.Warnf(rn, "%v", err)
			return nil, n
		}
		v, n = target, tn
	}
	return v, n
}

// resolve finds a local reference in the document.
func (im *importer) resolve(ref string) (any, *yaml.Node, error) {
	ptr, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, nil, fmt.Errorf("$ref %q is not imported: only references inside the document (#/components/...) are", ref)
	}
	var cur any = im.root
	n := im.doc.Root
	for _, tok := range strings.Split(ptr, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		m, _ := cur.(map[string]any) // nil, which has no tok, when not a mapping
		if cur, ok = m[tok]; !ok {
			return nil, nil, fmt.Errorf("$ref %q names nothing in the document", ref)
		}
		_, n = yamlpos.Lookup(n, tok)
	}
	return cur, n, nil
}

// schema converts an OpenAPI schema to the JSON Schema a world checks:
// local $refs inlined (a recursive one becomes {} with a warning), 3.0's
// nullable and boolean exclusive bounds rewritten, allOf of objects
// flattened, and annotations JSON Schema does not have dropped.
func (im *importer) schema(n *yaml.Node, v any, depth int, stack []string) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if im.nodes++; im.nodes > MaxSchemaNodes {
		if im.nodes == MaxSchemaNodes+1 {
			im.doc.Warnf(n, "the schemas grow past %d nodes with their $refs inlined (openapi.MaxSchemaNodes); from here on a schema is imported as {} (any value)", MaxSchemaNodes)
		}
		return map[string]any{}
	}
	if ref, ok := m["$ref"].(string); ok {
		rn, _ := yamlpos.Lookup(n, "$ref")
		if slices.Contains(stack, ref) || depth >= MaxRefDepth {
			im.doc.Warnf(rn, "$ref %q is recursive; it is imported as {} (any value) past its first level", ref)
			return map[string]any{}
		}
		target, tn, err := im.resolve(ref)
		if err != nil {
			im.doc.Warnf(rn, "%v; it is imported as {} (any value)", err)
			return map[string]any{}
		}
		return im.schema(tn, target, depth+1, append(stack, ref))
	}
	out := map[string]any{}
	for _, p := range yamlpos.Pairs(n, m) {
		k := p.Key()
		switch k {
		case "example", "examples", "xml", "externalDocs", "discriminator", "deprecated", "nullable":
			continue
		case "pattern":
			// JSON Schema's patterns are ECMA 262; the world checks them
			// with Go's RE2, which lacks look-around and back-references.
			if re, ok := p.Val.(string); ok && !im.re2(p.V, re, "pattern") {
				continue
			}
			out[k] = p.Val
		case "properties", "patternProperties", "$defs", "definitions", "dependentSchemas":
			sub := map[string]any{}
			for _, q := range yamlpos.Pairs(p.V, p.Val) {
				if k == "patternProperties" && !im.re2(q.K, q.Key(), "patternProperties key") {
					continue
				}
				sub[q.Key()] = im.schema(q.V, q.Val, depth, stack)
			}
			out[k] = sub
		case "items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else", "unevaluatedProperties", "unevaluatedItems", "additionalItems":
			out[k] = im.schema(p.V, p.Val, depth, stack)
		case "allOf", "anyOf", "oneOf", "prefixItems":
			var list []any
			for _, it := range yamlpos.Items(p.V, p.Val) {
				list = append(list, im.schema(it.N, it.Val, depth, stack))
			}
			out[k] = list
		case "exclusiveMinimum", "exclusiveMaximum":
			if b, isBool := p.Val.(bool); isBool {
				if b {
					bound := "minimum"
					if k == "exclusiveMaximum" {
						bound = "maximum"
					}
					if lim, ok := m[bound]; ok {
						out[k] = lim
						out["__drop_"+bound] = true
					}
				}
				continue
			}
			out[k] = p.Val
		default:
			if strings.HasPrefix(k, "x-") {
				continue
			}
			out[k] = p.Val
		}
	}
	for _, b := range []string{"minimum", "maximum"} {
		if out["__drop_"+b] == true {
			delete(out, b)
			delete(out, "__drop_"+b)
		}
	}
	if im.v30 && m["nullable"] == true {
		if t, ok := out["type"].(string); ok {
			out["type"] = []any{t, "null"}
		}
	}
	return flattenAllOf(out)
}

// re2 says a schema's regular expression compiles as the world will
// compile it (Go's RE2); when not, it warns at n that the pattern is
// dropped.
func (im *importer) re2(n *yaml.Node, re, what string) bool {
	if _, err := regexp.Compile(re); err != nil {
		msg := err.Error()
		if e, ok := errors.AsType[*syntax.Error](err); ok {
			msg = string(e.Code) + ": " + e.Expr
		}
		im.doc.Warnf(n, "%s %q uses syntax Go's RE2 lacks (%s): it is dropped, so the world does not check it (write it without look-around or back-references to keep it)", what, re, msg)
		return false
	}
	return true
}

// flattenAllOf merges an allOf of plain object schemas into one.
func flattenAllOf(s map[string]any) map[string]any {
	list, ok := s["allOf"].([]any)
	if !ok {
		return s
	}
	props := map[string]any{}
	var req []any
	for _, e := range list {
		m, _ := e.(map[string]any)
		if m == nil {
			return s
		}
		for k := range m {
			if k != "type" && k != "properties" && k != "required" && k != "description" && k != "title" {
				return s
			}
		}
		if t, ok := m["type"]; ok && t != "object" {
			return s
		}
		maps.Copy(props, properties(m))
		for _, r := range asList(m["required"]) {
			if !slices.ContainsFunc(req, func(x any) bool { return value.Equal(x, r) }) {
				req = append(req, r)
			}
		}
	}
	out := map[string]any{"type": "object", "properties": props}
	if len(req) > 0 {
		out["required"] = req
	}
	for k, v := range s {
		if k != "allOf" && k != "type" && k != "properties" && k != "required" {
			out[k] = v
		}
	}
	return out
}

func withoutWriteOnly(v any) any {
	s, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for k, p := range props {
			if pm, _ := p.(map[string]any); pm["writeOnly"] == true {
				delete(props, k)
			}
		}
	}
	if items, ok := s["items"]; ok {
		s["items"] = withoutWriteOnly(items)
	}
	return s
}
