package jschema

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// MaxExpanded bounds a schema's size with every local $ref expanded: the
// number of subschemas one validation may visit for each value. A small
// document can name 20^6 branches through nested anyOf and $ref, and one
// value that matches none of them then takes unbounded memory; such a
// schema is refused when it is compiled.
const MaxExpanded = 100_000

// expanded counts the subschemas of doc with local $refs expanded, up to
// limit; a $ref back into a schema being counted (recursion, bounded by
// the value's depth) counts once.
func expanded(doc any, limit int) (int, error) {
	c := &coster{root: doc, limit: limit, memo: map[string]int{}, active: map[string]bool{}}
	n := c.count(doc, "")
	if c.err != nil {
		return n, c.err
	}
	return n, nil
}

type coster struct {
	root   any
	limit  int
	memo   map[string]int // JSON pointer → expanded size
	active map[string]bool
	err    error
	steps  int
}

// keywords whose values are subschemas, a list of them, or a map of them.
var (
	oneSchema  = []string{"not", "if", "then", "else", "items", "contains", "additionalProperties", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems", "contentSchema"}
	listSchema = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	mapSchema  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

func (c *coster) count(v any, ptr string) int {
	if c.err != nil {
		return c.limit + 1
	}
	c.steps++
	if c.steps > 10*c.limit {
		c.err = fmt.Errorf("the schema is too complex to check (more than %d subschemas with its $refs expanded)", MaxExpanded)
		return c.limit + 1
	}
	m, ok := v.(map[string]any)
	if !ok {
		return 1
	}
	if n, ok := c.memo[ptr]; ok {
		return n
	}
	if c.active[ptr] {
		return 1
	}
	c.active[ptr] = true
	defer delete(c.active, ptr)
	n := 1
	add := func(k int) {
		n += k
		if n > c.limit {
			n = c.limit + 1
		}
	}
	for _, k := range oneSchema {
		if s, ok := m[k].(map[string]any); ok {
			add(c.count(s, ptr+"/"+k))
		}
	}
	for _, k := range listSchema {
		if l, ok := m[k].([]any); ok {
			for i, s := range l {
				add(c.count(s, ptr+"/"+k+"/"+strconv.Itoa(i)))
			}
		}
	}
	for _, k := range mapSchema {
		if mm, ok := m[k].(map[string]any); ok && k != "$defs" && k != "definitions" {
			for name, s := range mm {
				add(c.count(s, ptr+"/"+k+"/"+escape(name)))
			}
		}
	}
	for _, k := range []string{"$ref", "$dynamicRef"} {
		if ref, ok := m[k].(string); ok {
			if target, tptr, ok := c.resolve(ref); ok {
				add(c.count(target, tptr))
			}
		}
	}
	if n > c.limit {
		c.err = fmt.Errorf("the schema expands to more than %d subschemas through $ref, anyOf, oneOf and allOf: one value that matches none of its branches would take unbounded time and memory; simplify it", MaxExpanded)
	}
	c.memo[ptr] = n
	return n
}

func escape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// resolve finds a local reference "#/a/b" in the document.
func (c *coster) resolve(ref string) (any, string, bool) {
	frag, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, "", false
	}
	if u, err := url.PathUnescape(frag); err == nil {
		frag = u
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		return nil, "", false // an anchor: counted where it is defined
	}
	v, ok := lookup(c.root, frag)
	return v, frag, ok
}
