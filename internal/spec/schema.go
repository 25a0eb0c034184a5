package spec

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/schema"
)

var suiteSchema = sync.OnceValues(func() (*suiteSchemaT, error) {
	raw, err := value.Parse(schema.Suite)
	if err != nil {
		return nil, fmt.Errorf("parsing the embedded suite schema: %w", err)
	}
	s, err := jschema.Compile(raw, schema.SuiteURL)
	if err != nil {
		return nil, fmt.Errorf("compiling the embedded suite schema: %w", err)
	}
	return &suiteSchemaT{s: s, raw: raw, contexts: schemaContexts}, nil
})

// The suite schema in two parts, for a loader that checks one case at a
// time: the suite with its cases' items unchecked (still a list, not
// empty), and one case.
var splitSchemas = sync.OnceValues(func() ([2]*suiteSchemaT, error) {
	ss, err := suiteSchema()
	if err != nil {
		return [2]*suiteSchemaT{}, err
	}
	top, _ := ss.raw.(map[string]any)
	props, _ := top["properties"].(map[string]any)
	cases, _ := props["cases"].(map[string]any)
	if cases == nil {
		return [2]*suiteSchemaT{}, fmt.Errorf("the embedded suite schema has no cases")
	}
	head := maps.Clone(top)
	head["properties"] = maps.Clone(props)
	c := maps.Clone(cases)
	c["items"] = map[string]any{}
	head["properties"].(map[string]any)["cases"] = c
	hs, err := jschema.Compile(head, schema.SuiteURL)
	if err != nil {
		return [2]*suiteSchemaT{}, fmt.Errorf("compiling the embedded suite schema: %w", err)
	}
	cs, err := jschema.CompileAt(ss.raw, schema.SuiteURL, "#/$defs/case")
	if err != nil {
		return [2]*suiteSchemaT{}, fmt.Errorf("compiling the embedded case schema: %w", err)
	}
	return [2]*suiteSchemaT{
		{s: hs, raw: ss.raw, contexts: ss.contexts},
		{s: cs, raw: ss.raw, contexts: ss.contexts},
	}, nil
})

// suiteSchemaT is a compiled format schema with what messages call its
// parts: the suite's, or another format's (worlds).
type suiteSchemaT struct {
	s        *jschema.Schema
	raw      any
	contexts []SchemaContext
}

// SchemaContext names the part of a format schema under Prefix (a JSON
// Pointer into the schema) in messages: "unknown key x in Label".
type SchemaContext struct{ Prefix, Label string }

// Where in the schema an error arose, and what to call that place.
var schemaContexts = []SchemaContext{
	{"/$defs/check/properties/output", "output check"},
	{"/$defs/check/properties/judge", "judge check"},
	{"/$defs/check/properties/trajectory", "trajectory check"},
	{"/$defs/call_match", "called check"},
	{"/$defs/call_filter", "not_called check"},
	{"/$defs/sequence_entry", "sequence entry"},
	{"/$defs/content_block/allOf/0/then", "text block"},
	{"/$defs/content_block/allOf/1/then", "image block"},
	{"/$defs/content_block/allOf/2/then", "audio block"},
	{"/$defs/content_block/allOf/3/then", "resource block"},
	{"/$defs/content_block/allOf/4/then", "resource_link block"},
	{"/$defs/content_block", "content block"},
	{"/$defs/embedded_resource", "embedded resource"},
	{"/$defs/annotations", "annotations"},
	{"/$defs/log_message", "log message"},
	{"/$defs/tool_call", "tool call"},
	{"/$defs/normalize_rule", "normalize rule"},
	{"/$defs/match", "match"},
	{"/$defs/clock", "clock"},
	{"/$defs/model_fault", "model fault"},
	{"/$defs/agent", "agent"},
	{"/$defs/tool", "tool"},
	{"/$defs/rule", "mock rule"},
	{"/$defs/case/properties/user/items", "user turn"},
	{"/$defs/case/properties/user", "user"},
	{"/$defs/case", "case"},
	{"/$defs/turn", "script turn"},
	{"/$defs/file_check", "file check"},
	{"/$defs/check", "check"},
	{"", "suite"},
}

// keywordPointer turns an absolute keyword location into a pointer within
// the suite schema: ".../suite.schema.json#/$defs/rule/type" → "/$defs/rule/type".
func keywordPointer(kw string) string {
	if i := strings.IndexByte(kw, '#'); i >= 0 {
		return kw[i+1:]
	}
	return ""
}

func (ss *suiteSchemaT) contextOf(ptr string) (prefix, label string) {
	for _, c := range ss.contexts {
		if c.Prefix == "" || ptr == c.Prefix || strings.HasPrefix(ptr, c.Prefix+"/") {
			return c.Prefix, c.Label
		}
	}
	return "", "suite"
}

// allowedKeys lists the property names the schema object at ptr declares.
func (ss *suiteSchemaT) allowedKeys(ptr string) []string {
	var cur any = ss.raw
	for _, step := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if step == "" {
			continue
		}
		switch c := cur.(type) {
		case map[string]any:
			cur = c[step]
		case []any: // allOf/0/then
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	m, _ := cur.(map[string]any)
	props, _ := m["properties"].(map[string]any)
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkSchema validates the converted document against the suite schema
// and reports each failure at the offending key or value.
func checkSchema(root *yaml.Node, doc any, conv *converter, d *diags) {
	ss, err := suiteSchema()
	if err != nil {
		d.add(Error, 1, 1, "internal error: %v", err)
		return
	}
	for _, l := range ss.s.Validate(doc) {
		reportLeaf(ss, root, doc, conv, l, 0, d)
	}
}

// reportLeaf reports one failure. The first base steps of its path lead
// to root (and doc) from the suite's top: a case checked on its own is at
// cases[i].
func reportLeaf(ss *suiteSchemaT, root *yaml.Node, doc any, conv *converter, l jschema.Leaf, base int, d *diags) {
	val, key := at(root, l.Path[base:])
	if conv.isBad(val) {
		return // reported by the converter; its value is not what was written
	}
	pos := val
	if key != nil && isEmptyNull(val) {
		pos = key // "agent:" with nothing after it: point at the key
	}
	ptr := keywordPointer(l.Keyword)
	prefix, label := ss.contextOf(ptr)
	name := fieldName(l.Path)
	got := valueAt(doc, l.Path[base:])

	switch k := l.Kind.(type) {
	case *kind.AdditionalProperties:
		allowed := ss.allowedKeys(prefix)
		for _, p := range k.Properties {
			kn, _ := lookup(val, p)
			if kn == nil {
				kn = val
			}
			switch {
			case label == "check":
				d.add(Error, kn.Line, kn.Column, "unknown check %q%s; checks are %s", p, suggest.DidYouMean(p, allowed), strings.Join(CheckKinds, ", "))
			case label == "sequence entry" && (p == "when" || p == "sequence" || p == "timeout_s" || p == "delay_ms" || p == "log" || p == "progress"):
				d.add(Error, kn.Line, kn.Column, "a sequence entry is an outcome (return, content, error or impl); %q belongs on the rule, not on an entry", p)
			default:
				if s := suggest.DidYouMean(p, allowed); s != "" {
					d.add(Error, kn.Line, kn.Column, "unknown key %q in %s%s", p, label, s)
				} else {
					d.add(Error, kn.Line, kn.Column, "unknown key %q in %s; expected one of %s", p, label, strings.Join(allowed, ", "))
				}
			}
		}
	case *kind.Required:
		if conv.isMerged(val) {
			return // the merge key is reported; what it holds is unknown
		}
		at := val
		if key != nil {
			at = key // agent: is missing..., not its first key
		}
		allowed := ss.allowedKeys(prefix)
		for _, m := range k.Missing {
			if misspelt(val, m, allowed) {
				continue // the unknown key's did-you-mean says it
			}
			d.add(Error, at.Line, at.Column, "%s is missing required key %q", label, m)
		}
	case *kind.Type:
		if label == "check" && got == nil && len(l.Path) > 0 && isIndex(l.Path[len(l.Path)-1]) {
			d.add(Error, pos.Line, pos.Column, "empty check: give one of %s", strings.Join(CheckKinds, ", "))
			return
		}
		if label == "sequence entry" && len(l.Path) > 0 && isIndex(l.Path[len(l.Path)-1]) {
			d.add(Error, pos.Line, pos.Column, "a sequence entry must be an outcome mapping such as {return: ...} or {error: ...}, not %s", describe(got))
			return
		}
		if isRuleList(l.Path) {
			hint := ""
			if _, ok := got.(map[string]any); ok {
				hint = ` (start each rule with "- ")`
			}
			d.add(Error, pos.Line, pos.Column, "%s must be a list of rules, not %s%s", name, describe(got), hint)
			return
		}
		d.add(Error, pos.Line, pos.Column, "%s must be %s, not %s", name, wantTypes(k.Want), describe(got))
	case *kind.Const:
		if name == "no_errors" {
			d.add(Error, pos.Line, pos.Column, "no_errors takes only true, not %s; remove the check to allow tool errors", describe(got))
			return
		}
		d.add(Error, pos.Line, pos.Column, "%s must be %s, not %s", name, value.Canonical(k.Want), describe(got))
	case *kind.Enum:
		var opts []string
		for _, w := range k.Want {
			opts = append(opts, fmt.Sprint(w))
		}
		s, _ := got.(string)
		d.add(Error, pos.Line, pos.Column, "unknown %s %s%s; expected one of %s", name, value.Canonical(got), suggest.DidYouMean(s, opts), strings.Join(opts, ", "))
	case *kind.MinItems:
		d.add(Error, pos.Line, pos.Column, "%s must not be empty", name)
	case *kind.MinLength:
		d.add(Error, pos.Line, pos.Column, "%s must not be empty", name)
	case *kind.Minimum:
		d.add(Error, pos.Line, pos.Column, "%s must be at least %s, not %s", name, ratString(k.Want), value.Canonical(got))
	case *kind.Maximum:
		d.add(Error, pos.Line, pos.Column, "%s must be at most %s, not %s", name, ratString(k.Want), value.Canonical(got))
	case *kind.ExclusiveMinimum:
		d.add(Error, pos.Line, pos.Column, "%s must be greater than %s, not %s", name, ratString(k.Want), value.Canonical(got))
	case *kind.MinProperties:
		switch label {
		case "output check":
			d.add(Error, pos.Line, pos.Column, "empty output check: give contains, regex, equals or json_schema")
		default:
			d.add(Error, pos.Line, pos.Column, "empty check: give one of %s", strings.Join(CheckKinds, ", "))
		}
	case *kind.MaxProperties:
		m, _ := got.(map[string]any)
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		d.add(Error, pos.Line, pos.Column, "one check per list entry; this one has %d (%s): write each as its own \"- \" item", len(keys), strings.Join(keys, ", "))
	default:
		d.add(Error, pos.Line, pos.Column, "%s: %s", name, l.Message)
	}
}

// misspelt reports whether mapping n has an unknown key that is a likely
// typo of the missing key want.
func misspelt(n *yaml.Node, want string, allowed []string) bool {
	for _, p := range pairs(n, nil) {
		k := deref(p.k).Value
		if !slices.Contains(allowed, k) && suggest.Closest(k, allowed) == want {
			return true
		}
	}
	return false
}

// isEmptyNull reports whether n is a null written as nothing at all.
func isEmptyNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Value == "" && n.Style == 0 && n.ShortTag() == "!!null"
}

// isRuleList reports whether path leads to a tool's rule list under mocks.
func isRuleList(path []string) bool {
	return len(path) == 2 && path[0] == "mocks" ||
		len(path) == 4 && path[0] == "cases" && path[2] == "mocks"
}

func ratString(v any) string {
	s := fmt.Sprint(v)
	return strings.TrimSuffix(s, "/1")
}

func isIndex(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// fieldName names the value at path for messages: its key, or KEY[N] for
// an item of a list. A tool's entry under tools or mocks is named with its
// parent (mocks.lookup, mocks.lookup[0]): the tool name alone says nothing.
func fieldName(path []string) string {
	if len(path) == 0 {
		return "the suite"
	}
	last := path[len(path)-1]
	t := -1
	switch {
	case len(path) >= 2 && (path[0] == "tools" || path[0] == "mocks"):
		t = 1
	case len(path) >= 4 && path[0] == "cases" && path[2] == "mocks":
		t = 3
	}
	if t > 0 {
		name := path[t-1] + value.PathKey(path[t])
		switch {
		case t == len(path)-1:
			return name
		case t == len(path)-2 && path[t-1] == "mocks" && isIndex(last):
			return name + "[" + last + "]"
		}
	}
	if isIndex(last) {
		parent := "the list"
		if len(path) > 1 {
			parent = path[len(path)-2]
		}
		return fmt.Sprintf("%s[%s]", parent, last)
	}
	return last
}

func valueAt(doc any, path []string) any {
	cur := doc
	for _, p := range path {
		switch x := cur.(type) {
		case map[string]any:
			cur = x[p]
		case []any:
			var i int
			if _, err := fmt.Sscan(p, &i); err != nil || i < 0 || i >= len(x) {
				return nil
			}
			cur = x[i]
		default:
			return nil
		}
	}
	return cur
}

// describe names a value's type the YAML way, with the value when short.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return fmt.Sprintf("a boolean (%v)", x)
	case string:
		return fmt.Sprintf("a string (%s)", value.Truncate(value.Canonical(x), 40))
	case json.Number:
		return fmt.Sprintf("a number (%s)", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// typeNames names the JSON Schema types the YAML way, in the order
// messages list them.
var typeNames = []struct{ json, yaml string }{
	{"string", "a string"},
	{"object", "a mapping"},
	{"array", "a list"},
	{"integer", "an integer"},
	{"number", "a number"},
	{"boolean", "a boolean"},
	{"null", "null"},
}

func wantTypes(want []string) string {
	if len(want) == 1 && want[0] == "boolean" {
		return "true or false"
	}
	var parts []string
	for _, t := range typeNames {
		if slices.Contains(want, t.json) {
			parts = append(parts, t.yaml)
		}
	}
	return strings.Join(parts, " or ")
}
