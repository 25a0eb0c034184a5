package yamlpos

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jsonschema/kind"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// FormatSchema is a compiled JSON Schema of a file format, with the names
// messages give its parts.
type FormatSchema struct {
	s        *jschema.Schema
	raw      any
	contexts []SchemaContext
	wording  *Wording
}

// SchemaContext names the part of a format schema under Prefix (a JSON
// Pointer into the schema) in messages: "unknown key x in Label".
type SchemaContext struct{ Prefix, Label string }

// Wording lets a format word some failures its own way; a nil function,
// or one that returns "", leaves the generic wording.
type Wording struct {
	// Name names the value at path (from the file's top) in messages.
	Name func(path []string) string
	// Message words one failure.
	Message func(f Failure) string
}

// A Failure is one schema failure, as a format's Wording sees it.
type Failure struct {
	jschema.Leaf
	// Label names the part of the format it is in (SchemaContext), Name
	// the failing value; Got is that value.
	Label, Name string
	Got         any
	// For an unknown key: the key, and the keys the part declares.
	Property string
	Allowed  []string
}

// NewFormatSchema compiles a format schema shipped in the binary (given as
// JSON text) registered under url: its validator on first need (see
// jschema.Embedded). contexts name its parts in messages, the most
// specific first; the last, with an empty prefix, names the whole file.
func NewFormatSchema(data []byte, url string, contexts []SchemaContext) (*FormatSchema, error) {
	raw, err := value.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parsing a format schema: %w", err)
	}
	return &FormatSchema{s: jschema.Embedded(raw, url, ""), raw: raw, contexts: contexts}, nil
}

// Compiled makes a format schema of s, compiled from (part of) the
// schema raw, whose parts contexts name, worded by w (nil: generically).
func Compiled(s *jschema.Schema, raw any, contexts []SchemaContext, w *Wording) *FormatSchema {
	return &FormatSchema{s: s, raw: raw, contexts: contexts, wording: w}
}

// Raw is the schema's JSON value.
func (fs *FormatSchema) Raw() any { return fs.raw }

// Validate applies the schema to v.
func (fs *FormatSchema) Validate(v any) []jschema.Leaf { return fs.s.Validate(v) }

// keywordPointer turns an absolute keyword location into a pointer within
// the format schema: ".../suite.schema.json#/$defs/rule/type" → "/$defs/rule/type".
func keywordPointer(kw string) string {
	_, ptr, _ := strings.Cut(kw, "#")
	return ptr
}

func (fs *FormatSchema) contextOf(ptr string, d *Collector) (prefix, label string) {
	for _, c := range fs.contexts {
		if c.Prefix == "" || ptr == c.Prefix || strings.HasPrefix(ptr, c.Prefix+"/") {
			return c.Prefix, c.Label
		}
	}
	return "", d.kindName()
}

// allowedKeys lists the property names the schema object at ptr declares.
func (fs *FormatSchema) allowedKeys(ptr string) []string {
	m, _ := PointerAt(fs.raw, ptr).(map[string]any)
	props, _ := m["properties"].(map[string]any)
	return slices.Sorted(maps.Keys(props))
}

func (fs *FormatSchema) name(path []string, d *Collector) string {
	if w := fs.wording; w != nil && w.Name != nil {
		if s := w.Name(path); s != "" {
			return s
		}
	}
	if len(path) == 0 {
		return "the " + d.kindName()
	}
	last := path[len(path)-1]
	if IsIndex(last) {
		parent := "the list"
		if len(path) > 1 {
			parent = path[len(path)-2]
		}
		return fmt.Sprintf("%s[%s]", parent, last)
	}
	return last
}

func (fs *FormatSchema) message(f Failure) string {
	if w := fs.wording; w != nil && w.Message != nil {
		return w.Message(f)
	}
	return ""
}

// Report reports one failure of the schema at the offending key or value.
// The first base steps of its path lead to root (and doc) from the file's
// top: a suite's case checked on its own is at cases[i].
func (fs *FormatSchema) Report(root *yaml.Node, doc any, conv *Converter, l jschema.Leaf, base int, d *Collector) {
	val, key := At(root, l.Path[base:]...)
	if conv.IsBad(val) {
		return // reported by the converter; its value is not what was written
	}
	pos := val
	if key != nil && isEmptyNull(val) {
		pos = key // "agent:" with nothing after it: point at the key
	}
	ptr := keywordPointer(l.Keyword)
	prefix, label := fs.contextOf(ptr, d)
	f := Failure{Leaf: l, Label: label, Name: fs.name(l.Path, d), Got: ValueAt(doc, l.Path[base:])}
	name, got := f.Name, f.Got
	if _, ok := l.Kind.(*kind.AdditionalProperties); !ok {
		if msg := fs.message(f); msg != "" {
			d.Add(Error, pos.Line, pos.Column, "%s", msg)
			return
		}
	}

	switch k := l.Kind.(type) {
	case *kind.AdditionalProperties:
		f.Allowed = fs.allowedKeys(prefix)
		for _, p := range k.Properties {
			kn, _ := Lookup(val, p)
			kn = cmp.Or(kn, val)
			f.Property = p
			if msg := fs.message(f); msg != "" {
				d.Add(Error, kn.Line, kn.Column, "%s", msg)
			} else if s := suggest.DidYouMean(p, f.Allowed); s != "" {
				d.Add(Error, kn.Line, kn.Column, "unknown key %q in %s%s", p, label, s)
			} else {
				d.Add(Error, kn.Line, kn.Column, "unknown key %q in %s; expected one of %s", p, label, strings.Join(f.Allowed, ", "))
			}
		}
	case *kind.Required:
		if conv.IsMerged(val) {
			return // the merge key is reported; what it holds is unknown
		}
		at := cmp.Or(key, val) // agent: is missing..., not its first key
		allowed := fs.allowedKeys(prefix)
		for _, m := range k.Missing {
			if misspelt(val, m, allowed) {
				continue // the unknown key's did-you-mean says it
			}
			d.Add(Error, at.Line, at.Column, "%s is missing required key %q", label, m)
		}
	case *kind.Type:
		d.Add(Error, pos.Line, pos.Column, "%s must be %s, not %s", name, wantTypes(k.Want), Describe(got))
	case *kind.Const:
		d.Add(Error, pos.Line, pos.Column, "%s must be %s, not %s", name, value.Canonical(k.Want), Describe(got))
	case *kind.Enum:
		var opts []string
		for _, w := range k.Want {
			opts = append(opts, fmt.Sprint(w))
		}
		s, _ := got.(string)
		d.Add(Error, pos.Line, pos.Column, "unknown %s %s%s; expected one of %s", name, value.Canonical(got), suggest.DidYouMean(s, opts), strings.Join(opts, ", "))
	case *kind.MinItems, *kind.MinLength, *kind.MinProperties:
		d.Add(Error, pos.Line, pos.Column, "%s must not be empty", name)
	case *kind.Minimum:
		d.Add(Error, pos.Line, pos.Column, "%s must be at least %s, not %s", name, ratString(k.Want), value.Canonical(got))
	case *kind.Maximum:
		d.Add(Error, pos.Line, pos.Column, "%s must be at most %s, not %s", name, ratString(k.Want), value.Canonical(got))
	case *kind.ExclusiveMinimum:
		d.Add(Error, pos.Line, pos.Column, "%s must be greater than %s, not %s", name, ratString(k.Want), value.Canonical(got))
	default:
		d.Add(Error, pos.Line, pos.Column, "%s: %s", name, l.Message)
	}
}

// misspelt reports whether mapping n has an unknown key that is a likely
// typo of the missing key want.
func misspelt(n *yaml.Node, want string, allowed []string) bool {
	for _, p := range Pairs(n, nil) {
		k := p.Key()
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

func ratString(v any) string {
	s := fmt.Sprint(v)
	return strings.TrimSuffix(s, "/1")
}

// PointerAt is the part of JSON value v at JSON Pointer ptr, nil when
// there is none.
func PointerAt(v any, ptr string) any {
	for _, step := range strings.Split(strings.TrimPrefix(ptr, "/"), "/") {
		if step == "" {
			continue
		}
		step = strings.ReplaceAll(strings.ReplaceAll(step, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[step]
		case []any: // allOf/0/then
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			v = c[i]
		default:
			return nil
		}
	}
	return v
}

// IsIndex reports whether a path step is a list index.
func IsIndex(s string) bool {
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

// ValueAt walks a path of keys and indexes from the JSON value doc; nil
// when it leads nowhere.
func ValueAt(doc any, path []string) any {
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

// Describe names a value's type the YAML way, with the value when short.
func Describe(v any) string {
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

// schemaURL names every JSON Schema a file holds while it compiles; it is
// cut out of the compiler's messages.
const schemaURL = "mem://dryfire/schema.json"

var (
	schemaAt      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^not a valid JSON Schema: at (/.*?): (.*)$`) })
	missingRef    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`json-pointer in "(#[^"]*)" not found`) })
	externalRef   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`external \$ref "([^"]*)" is not allowed`) })
	jsonTypeNames = []string{"array", "boolean", "integer", "null", "number", "object", "string"}
)

// CompileSchema compiles the JSON Schema written at n (v converted; a
// suite tool's input_schema, an output check's json_schema). A broken one
// gives the offending key or value inside it and the message to report
// there; what names the schema in it. A v that is no schema at all (not a
// mapping or a boolean) gives nothing: the format's schema reports it.
func CompileSchema(n *yaml.Node, v any, what string) (sch *jschema.Schema, at *yaml.Node, msg string) {
	switch v.(type) {
	case map[string]any, bool:
	default:
		return nil, nil, ""
	}
	sch, err := jschema.Compile(v, schemaURL)
	if err == nil {
		return sch, nil, ""
	}
	msg = strings.ReplaceAll(err.Error(), schemaURL, "")
	at = n
	switch {
	case schemaAt().MatchString(msg):
		m := schemaAt().FindStringSubmatch(msg)
		path := pointerSteps(m[1])
		node, _ := At(n, path...)
		at = node
		if t, ok := ValueAt(v, path).(string); ok && len(path) > 0 && (path[len(path)-1] == "type" || len(path) > 1 && path[len(path)-2] == "type") && !slices.Contains(jsonTypeNames, t) {
			msg = fmt.Sprintf("unknown type %q%s; types are %s", t, suggest.DidYouMean(t, jsonTypeNames), strings.Join(jsonTypeNames, ", "))
		} else {
			msg = "not a valid JSON Schema: at " + m[1] + ": " + m[2]
		}
	case missingRef().MatchString(msg):
		ref := missingRef().FindStringSubmatch(msg)[1]
		at = findRef(n, ref, at)
		msg = fmt.Sprintf("$ref %q points at nothing in this schema", ref)
	case externalRef().MatchString(msg):
		ref := externalRef().FindStringSubmatch(msg)[1]
		at = findRef(n, ref, at)
		msg = fmt.Sprintf("$ref %q: a schema cannot refer outside itself; put the definition under $defs", ref)
	}
	return nil, at, what + ": " + msg
}

// pointerSteps splits a JSON Pointer into its unescaped steps.
func pointerSteps(ptr string) []string {
	steps := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	for i, s := range steps {
		steps[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return steps
}

// findRef returns the value node of the first "$ref: ref" under n, or def.
func findRef(n *yaml.Node, ref string, def *yaml.Node) *yaml.Node {
	var walk func(n *yaml.Node, depth int) *yaml.Node
	walk = func(n *yaml.Node, depth int) *yaml.Node {
		n = Deref(n)
		if n == nil || depth > MaxDepth {
			return nil
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := Deref(n.Content[i]), Deref(n.Content[i+1])
				if k != nil && k.Value == "$ref" && v != nil && v.Kind == yaml.ScalarNode && v.Value == ref {
					return v
				}
			}
		}
		for _, c := range n.Content {
			if f := walk(c, depth+1); f != nil {
				return f
			}
		}
		return nil
	}
	if f := walk(n, 0); f != nil {
		return f
	}
	return def
}
