package spec

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/schema"
)

// The cases of a data file's rows differ only where a row's values are
// filled in. Checked against the case schema, every part of a row's case
// that holds no filled-in value fails the same way for every row, and so
// does what the schema says of the parts above them (their keys, their
// lengths), as long as what it says of a part depends on each child only
// through the child's own check (properties, items, $ref, allOf, and an
// if that reads keys alone). A rowPlan finds the smallest parts above the
// filled-in values where that holds (units), checks the first row's case
// whole for the failures outside them, and then checks only the units of
// each row: the same failures, at the same places, as checking each
// row's case whole.
type rowPlan struct {
	units []planUnit
	fixed []jschema.Leaf
}

// A planUnit is a part of the case checked for each row: where it is,
// and the schemas that apply there (their locations in the suite schema).
type planUnit struct {
	path    []string
	locs    []string
	schemas []*jschema.Schema
}

// validate checks case val of a row as checking it whole would.
func (p *rowPlan) validate(val any) []jschema.Leaf {
	out := slices.Clone(p.fixed)
	for _, u := range p.units {
		v, ok := valueAtPath(val, u.path)
		if !ok {
			continue
		}
		for _, s := range u.schemas {
			for _, l := range s.Validate(v) {
				l.Path = append(slices.Clone(u.path), l.Path...)
				out = append(out, l)
			}
		}
	}
	return out
}

// verifyRowPlan makes every planned check of a row be compared with the
// whole check (tests); the first difference is kept in rowPlanMismatch.
var (
	verifyRowPlan   bool
	rowPlanMismatch sync.Once
	rowPlanDiff     string
)

func checkRowPlan(planned, whole []jschema.Leaf) {
	key := func(ls []jschema.Leaf) []string {
		var out []string
		for _, l := range ls {
			out = append(out, fmt.Sprintf("%q %s %s", l.Path, l.Keyword, l.Message))
		}
		slices.Sort(out)
		return out
	}
	if a, b := key(planned), key(whole); !slices.Equal(a, b) {
		rowPlanMismatch.Do(func() {
			rowPlanDiff = fmt.Sprintf("planned:\n%s\nwhole:\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
		})
	}
}

// valueAtPath is the value at path in val, if there is one.
func valueAtPath(val any, path []string) (any, bool) {
	for _, step := range path {
		switch x := val.(type) {
		case map[string]any:
			v, ok := x[step]
			if !ok {
				return nil, false
			}
			val = v
		case []any:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			val = x[i]
		default:
			return nil, false
		}
	}
	return val, true
}

// newRowPlan plans the checks of the cases of template t, whose first
// row's case converts to refVal, against the case schema whole. It
// returns nil when each row's case is best checked whole.
func newRowPlan(t *template, refVal any, whole *yamlpos.FormatSchema) *rowPlan {
	raw := whole.Raw()
	sites := siteTree(t)
	if sites == nil {
		return nil
	}
	p := &rowPlan{}
	var unitPaths [][]string
	var walk func(locs []string, val any, path []string, here *siteNode)
	walk = func(own []string, val any, path []string, here *siteNode) {
		locs, simple := expand(raw, own, val)
		if !simple || here.site {
			p.units = append(p.units, planUnit{path: slices.Clone(path), locs: own})
			unitPaths = append(unitPaths, slices.Clone(path))
			return
		}
		steps := slices.Sorted(maps.Keys(here.kids))
		for _, step := range steps {
			child := here.kids[step]
			cv, exists := valueAtPath(val, []string{step})
			if !exists {
				continue
			}
			var cl []string
			for _, l := range locs {
				cl = append(cl, childLocs(raw, l, val, step)...)
			}
			if len(cl) == 0 {
				continue // nothing checks it (an unknown key is reported above)
			}
			walk(cl, cv, append(path, step), child)
		}
	}
	walk([]string{"/$defs/case"}, refVal, nil, sites)
	var frags []string
	for _, u := range p.units {
		for _, l := range u.locs {
			frags = append(frags, "#"+l)
		}
	}
	compiled, err := jschema.CompileFragments(raw, schema.SuiteURL, frags)
	if err != nil {
		return nil
	}
	for i := range p.units {
		u := &p.units[i]
		u.schemas, compiled = compiled[:len(u.locs)], compiled[len(u.locs):]
	}
	whole0 := whole.Validate(refVal)
	for _, l := range whole0 {
		under := false
		for _, up := range unitPaths {
			if len(l.Path) >= len(up) && slices.Equal(l.Path[:len(up)], up) {
				under = true
				break
			}
		}
		if !under {
			p.fixed = append(p.fixed, l)
		}
	}
	return p
}

// A siteNode is a part of a template that holds filled-in values: a site
// itself, or the parent of some (kids by key or index).
type siteNode struct {
	site bool
	kids map[string]*siteNode
}

// siteTree is where t's filled-in values are in the case a row makes
// (from: dropped; a name added before the rest is not filled in).
func siteTree(t *template) *siteNode {
	root := &siteNode{}
	var walk func(n *yaml.Node, here *siteNode, depth int) bool
	walk = func(n *yaml.Node, here *siteNode, depth int) bool {
		n = yamlpos.Deref(n)
		if depth > yamlpos.MaxDepth {
			return false
		}
		if _, ok := t.sites[n]; ok {
			here.site = true
			return true
		}
		found := false
		add := func(step string, c *yaml.Node) {
			kid := &siteNode{}
			if walk(c, kid, depth+1) {
				if here.kids == nil {
					here.kids = map[string]*siteNode{}
				}
				here.kids[step] = kid
				found = true
			}
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := yamlpos.Deref(n.Content[i])
				if depth == 0 && k.Value == "from" {
					continue
				}
				if _, ok := t.sites[k]; ok {
					here.site = true // a key is filled in: the keys differ
					return true
				}
				add(k.Value, n.Content[i+1])
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				add(strconv.Itoa(i), c)
			}
		}
		return found
	}
	if !walk(t.item, root, 0) {
		return nil
	}
	return root
}

// spineKeys are the keywords whose verdict on a part depends on its
// children only through their own checks, or on its keys and length.
var spineKeys = map[string]bool{
	"$ref": true, "allOf": true, "properties": true, "additionalProperties": true, "items": true,
	"required": true, "type": true, "minItems": true, "maxItems": true, "minProperties": true, "maxProperties": true,
	"description": true, "title": true, "if": true, "then": true, "else": true,
	// Of strings and numbers only: nothing to a mapping or a list.
	"minLength": true, "maxLength": true, "minimum": true, "maximum": true, "exclusiveMinimum": true,
}

// expand follows $ref and allOf from the schemas at locs, and an if that
// reads keys alone to its branch for val. simple is false when some
// keyword there judges the part other than through its children's checks.
func expand(raw any, locs []string, val any) (out []string, simple bool) {
	seen := map[string]bool{}
	simple = true
	var add func(loc string, depth int)
	add = func(loc string, depth int) {
		if seen[loc] || depth > 50 {
			return
		}
		seen[loc] = true
		out = append(out, loc)
		m, _ := yamlpos.PointerAt(raw, loc).(map[string]any)
		if m == nil {
			if b, isBool := yamlpos.PointerAt(raw, loc).(bool); !isBool || !b {
				simple = false
			}
			return
		}
		for k := range m {
			if !spineKeys[k] {
				simple = false
			}
		}
		if ref, ok := m["$ref"].(string); ok {
			if !strings.HasPrefix(ref, "#/") {
				simple = false
				return
			}
			add(ref[1:], depth+1)
		}
		if all, ok := m["allOf"].([]any); ok {
			for i := range all {
				add(loc+"/allOf/"+strconv.Itoa(i), depth+1)
			}
		}
		if cond, ok := m["if"]; ok {
			if !keysOnly(cond) {
				simple = false
				return
			}
			branch := "else"
			if keysHold(cond, val) {
				branch = "then"
			}
			if _, ok := m[branch]; ok {
				add(loc+"/"+branch, depth+1)
			}
		}
	}
	for _, l := range locs {
		add(l, 0)
	}
	return out, simple
}

// keysOnly reports whether schema s judges a mapping by its keys alone.
func keysOnly(s any) bool {
	m, ok := s.(map[string]any)
	if !ok {
		return false
	}
	for k, v := range m {
		switch k {
		case "required", "minProperties", "maxProperties", "description":
		case "not":
			if !keysOnly(v) {
				return false
			}
		case "allOf", "anyOf", "oneOf":
			list, _ := v.([]any)
			for _, e := range list {
				if !keysOnly(e) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// keysHold reports whether val passes s, a schema of keys alone
// (keysOnly).
func keysHold(s any, val any) bool {
	m, _ := s.(map[string]any)
	obj, isObj := val.(map[string]any)
	for k, v := range m {
		switch k {
		case "required":
			list, _ := v.([]any)
			for _, e := range list {
				name, _ := e.(string)
				if _, ok := obj[name]; isObj && !ok {
					return false
				}
			}
		case "minProperties", "maxProperties":
			n, err := strconv.Atoi(fmt.Sprint(v))
			if err != nil {
				return false
			}
			if isObj && (k == "minProperties" && len(obj) < n || k == "maxProperties" && len(obj) > n) {
				return false
			}
		case "not":
			if keysHold(v, val) {
				return false
			}
		case "allOf", "anyOf", "oneOf":
			list, _ := v.([]any)
			n := 0
			for _, e := range list {
				if keysHold(e, val) {
					n++
				}
			}
			if k == "allOf" && n != len(list) || k == "anyOf" && n == 0 || k == "oneOf" && n != 1 {
				return false
			}
		}
	}
	return true
}

// childLocs are the schemas the schema at loc applies to val's child step.
func childLocs(raw any, loc string, val any, step string) []string {
	m, _ := yamlpos.PointerAt(raw, loc).(map[string]any)
	if m == nil {
		return nil
	}
	switch val.(type) {
	case map[string]any:
		if props, ok := m["properties"].(map[string]any); ok {
			if _, ok := props[step]; ok {
				return []string{loc + "/properties/" + escapePointer(step)}
			}
		}
		if _, ok := m["additionalProperties"].(map[string]any); ok {
			return []string{loc + "/additionalProperties"}
		}
	case []any:
		if _, ok := m["items"].(map[string]any); ok {
			return []string{loc + "/items"}
		}
	}
	return nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}
