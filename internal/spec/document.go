package spec

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Document is a YAML file of another dryfire format (a world) parsed with
// the suite loader's machinery: positions, the JSON conversion with its
// checks (duplicate keys, merge keys, non-JSON scalars), a format schema
// applied with positioned messages, and the same did-you-mean. Other
// packages decode their format from it and report through it, so every
// format reads its problems out the same way.
type Document struct {
	File string
	// Root is the document's top node; nil when the file could not be
	// parsed (the syntax error is reported).
	Root *yaml.Node
	// Value is Root converted to JSON values.
	Value any

	d    *diags
	conv *converter
}

// FormatSchema is a compiled JSON Schema of a file format, with the names
// messages give its parts.
type FormatSchema struct{ s *suiteSchemaT }

// NewFormatSchema compiles a format schema (given as JSON text) registered
// under url. contexts name its parts in messages, the most specific first;
// the last, with an empty prefix, names the whole file.
func NewFormatSchema(data []byte, url string, contexts []SchemaContext) (*FormatSchema, error) {
	raw, err := value.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("parsing a format schema: %w", err)
	}
	s, err := jschema.Compile(raw, url)
	if err != nil {
		return nil, err
	}
	return &FormatSchema{&suiteSchemaT{s: s, raw: raw, contexts: contexts}}, nil
}

// ParseDocument parses one YAML document. kind names the format in
// messages ("world"); empty is the message for an empty file.
func ParseDocument(file string, data []byte, kind, empty string) *Document {
	d := &diags{file: file, kind: kind, empty: empty}
	doc := &Document{File: file, d: d, conv: newConverter(d)}
	root := parseYAML(data, d)
	if root == nil {
		return doc
	}
	v := doc.conv.convert(root, 0)
	if doc.conv.large {
		return doc
	}
	doc.Root, doc.Value = root, v
	return doc
}

// CheckSchema applies a format schema and reports each failure at the
// offending key or value.
func (doc *Document) CheckSchema(fs *FormatSchema) {
	if doc.Root == nil {
		return
	}
	for _, l := range fs.s.s.Validate(doc.Value) {
		reportLeaf(fs.s, doc.Root, doc.Value, doc.conv, l, 0, doc.d)
	}
}

// Errorf reports an error at n.
func (doc *Document) Errorf(n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil {
		line, col = n.Line, n.Column
	}
	doc.d.add(Error, line, col, format, args...)
}

// Warnf reports a warning at n.
func (doc *Document) Warnf(n *yaml.Node, format string, args ...any) {
	line, col := 1, 1
	if n != nil {
		line, col = n.Line, n.Column
	}
	doc.d.add(Warning, line, col, format, args...)
}

// Pos is n's position in the document.
func (doc *Document) Pos(n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: doc.File, Line: 1, Col: 1}
	}
	return Pos{File: doc.File, Line: max(n.Line, 1), Col: max(n.Column, 1)}
}

// IsBad reports whether the converter reported n already (its value is
// not what was written): say nothing more of it.
func (doc *Document) IsBad(n *yaml.Node) bool { return doc.conv.isBad(n) }

// Diagnostics returns what was reported, in position order.
func (doc *Document) Diagnostics() Diagnostics {
	sortWithin(doc.d.list)
	return Diagnostics(doc.d.list)
}

// CompileSchema compiles a JSON Schema written at n and reports a broken
// one at the offending key or value inside it.
func (doc *Document) CompileSchema(n *yaml.Node, v any, what string) *jschema.Schema {
	x := &decoder{root: doc.Root, file: doc.File, d: doc.d, conv: doc.conv}
	return x.compileSchema(n, v, what)
}

// A KV is an entry of a mapping: key and value nodes, and the value
// converted to JSON.
type KV struct {
	K, V *yaml.Node
	Val  any
}

// Key is the entry's key text.
func (p KV) Key() string { return deref(p.K).Value }

// Pairs lists the entries of mapping n (converted value val) in file
// order; keys the converter dropped are left out.
func Pairs(n *yaml.Node, val any) []KV {
	ps := pairs(n, val)
	out := make([]KV, len(ps))
	for i, p := range ps {
		out[i] = KV{p.k, p.v, p.val}
	}
	return out
}

// Item is an entry of a list with its converted value.
type Item struct {
	N   *yaml.Node
	Val any
}

// Items yields the entries of list n (converted value val).
func Items(n *yaml.Node, val any) iter.Seq2[int, Item] {
	return func(yield func(int, Item) bool) {
		for i, it := range items(n, val) {
			if !yield(i, Item{it.n, it.val}) {
				return
			}
		}
	}
}

// Lookup returns the key and value nodes of key in mapping n.
func Lookup(n *yaml.Node, key string) (k, v *yaml.Node) { return lookup(n, key) }

// At walks a path of keys and indexes from n: the deepest node reached
// and, when its last step is a key, the key node.
func At(n *yaml.Node, path ...string) (val, key *yaml.Node) { return at(n, path) }

// Deref follows aliases.
func Deref(n *yaml.Node) *yaml.Node { return deref(n) }

// Describe names a value's type the YAML way, with the value when short.
func Describe(v any) string { return describe(v) }

// PathAt finds the node written at line:col under root (a mapping key or
// a value) and returns the steps to it (keys, and list indexes as
// decimal text, as At takes them) and the same path as text: .key or
// ["key"] for a key, [i] for an index. ok is false when no node starts
// there.
func PathAt(root *yaml.Node, line, col int) (steps []string, text string, ok bool) {
	var b strings.Builder
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		n = deref(n)
		if n == nil {
			return false
		}
		if n.Line == line && n.Column == col {
			return true
		}
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if walk(c) {
					return true
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				mark := b.Len()
				steps = append(steps, k.Value)
				b.WriteString(value.PathKey(k.Value))
				if (k.Line == line && k.Column == col) || walk(v) {
					return true
				}
				steps = steps[:len(steps)-1]
				truncate(&b, mark)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				mark := b.Len()
				steps = append(steps, strconv.Itoa(i))
				fmt.Fprintf(&b, "[%d]", i)
				if walk(c) {
					return true
				}
				steps = steps[:len(steps)-1]
				truncate(&b, mark)
			}
		}
		return false
	}
	if !walk(root) {
		return nil, "", false
	}
	return steps, b.String(), true
}

func truncate(b *strings.Builder, n int) {
	s := b.String()[:n]
	b.Reset()
	b.WriteString(s)
}
