package yamlpos

import (
	"fmt"
	"iter"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Document is a YAML file of a dryfire format parsed whole: positions, the
// JSON conversion with its checks (duplicate keys, merge keys, non-JSON
// scalars), a format schema applied with positioned messages, and the
// same did-you-mean as the suite loader's. A format's package decodes its
// format from it and reports through it, so every format reads its
// problems out the same way.
type Document struct {
	// The Collector (its File is the document's) is what Errorf, Warnf
	// and Pos report to.
	*Collector
	// Root is the document's top node; nil when the file could not be
	// parsed (the syntax error is reported).
	Root *yaml.Node
	// Value is Root converted to JSON values.
	Value any

	conv *Converter
}

// ParseDocument parses one YAML document. kind names the format in
// messages ("world"); empty is the message for an empty file.
func ParseDocument(file string, data []byte, kind, empty string) *Document {
	d := &Collector{File: file, Kind: kind, Empty: empty}
	doc := &Document{Collector: d, conv: NewConverter(d)}
	root := Parse(data, d)
	if root == nil {
		return doc
	}
	v := doc.conv.Convert(root, 0)
	if doc.conv.Large {
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
	for _, l := range fs.s.Validate(doc.Value) {
		fs.Report(doc.Root, doc.Value, doc.conv, l, 0, doc.Collector)
	}
}

// IsBad reports whether the converter reported n already (its value is
// not what was written): say nothing more of it.
func (doc *Document) IsBad(n *yaml.Node) bool { return doc.conv.IsBad(n) }

// Diagnostics returns what was reported, in position order.
func (doc *Document) Diagnostics() Diagnostics {
	Sort(doc.List)
	return Diagnostics(doc.List)
}

// CompileSchema compiles a JSON Schema written at n and reports a broken
// one at the offending key or value inside it.
func (doc *Document) CompileSchema(n *yaml.Node, v any, what string) *jschema.Schema {
	sch, at, msg := CompileSchema(n, v, what)
	if msg != "" {
		doc.Errorf(at, "%s", msg)
	}
	return sch
}

// A KV is an entry of a mapping: key and value nodes, and the value
// converted to JSON. Decoders read values from their parents' conversions
// as they walk down, so nothing converts a node twice.
type KV struct {
	K, V *yaml.Node
	Val  any
}

// Key is the entry's key text.
func (p KV) Key() string { return Deref(p.K).Value }

// Pairs lists the entries of mapping n, whose converted value is val, in
// file order. Keys the converter dropped (merge keys, keys that are not
// strings, duplicates after the first) are left out, as in val.
func Pairs(n *yaml.Node, val any) []KV {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	return AppendPairs(make([]KV, 0, len(n.Content)/2), n, val)
}

// Get is the entry of key in mapping n (whose converted value is val) as
// Pairs lists it; the zero KV when there is none.
func Get(n *yaml.Node, val any, key string) KV {
	k, v := Lookup(n, key)
	m, _ := val.(map[string]any)
	return KV{k, v, m[key]}
}

// AppendPairs appends the entries Pairs lists to buf.
func AppendPairs(buf []KV, n *yaml.Node, val any) []KV {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return buf
	}
	m, _ := val.(map[string]any)
	start := len(buf)
next:
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := Deref(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || IsMerge(k) {
			continue
		}
		for _, p := range buf[start:] {
			if Deref(p.K).Value == k.Value {
				continue next // a duplicate key: reported, and the first wins
			}
		}
		buf = append(buf, KV{n.Content[i], n.Content[i+1], m[k.Value]})
	}
	return buf
}

// An Item is an entry of a list, with its converted value.
type Item struct {
	N   *yaml.Node
	Val any
}

// Items yields the index and entries of list n, whose converted value is val.
func Items(n *yaml.Node, val any) iter.Seq2[int, Item] {
	return func(yield func(int, Item) bool) {
		n = Deref(n)
		if n == nil || n.Kind != yaml.SequenceNode {
			return
		}
		a, _ := val.([]any)
		for i, e := range n.Content {
			it := Item{N: e}
			if i < len(a) {
				it.Val = a[i]
			}
			if !yield(i, it) {
				return
			}
		}
	}
}

// PathAt finds the node written at line:col under root (a mapping key or
// a value) and returns the steps to it (keys, and list indexes as
// decimal text, as At takes them) and the same path as text: .key or
// ["key"] for a key, [i] for an index. ok is false when no node starts
// there.
func PathAt(root *yaml.Node, line, col int) (steps []string, text string, ok bool) {
	var b strings.Builder
	var walk func(n *yaml.Node) bool
	walk = func(n *yaml.Node) bool {
		n = Deref(n)
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
