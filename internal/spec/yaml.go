package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// Limits that keep hostile input (alias bombs, deep nesting) from taking
// the loader down.
const (
	maxDepth = 200
	maxNodes = 1_000_000
)

// parseYAML reads the one document of a file. On a syntax error it reports
// the position and returns nil.
func parseYAML(data []byte, d *diags) *yaml.Node {
	ld, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		d.add(Error, 1, 1, "yaml: %v", err)
		return nil
	}
	var doc yaml.Node
	if err := ld.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.add(Error, 1, 1, "empty suite file: expected a mapping with version, agent and cases")
			return nil
		}
		reportYAMLError(err, d)
		return nil
	}
	var second yaml.Node
	switch err := ld.Load(&second); {
	case err == nil:
		d.add(Error, second.Line, second.Column, "a suite file holds one YAML document; found a second one here")
	case !errors.Is(err, io.EOF):
		reportYAMLError(err, d)
		return nil
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	d.add(Error, 1, 1, "empty suite file: expected a mapping with version, agent and cases")
	return nil
}

func reportYAMLError(err error, d *diags) {
	var le *yaml.LoadError
	var les *yaml.LoadErrors
	switch {
	case errors.As(err, &les):
		for _, e := range les.Errors {
			reportLoadError(e, d)
		}
	case errors.As(err, &le):
		reportLoadError(le, d)
	default:
		d.add(Error, 1, 1, "yaml: %v", err)
	}
}

func reportLoadError(le *yaml.LoadError, d *diags) {
	msg := strings.TrimPrefix(le.Message, "yaml: ")
	if le.ContextMsg != "" {
		msg += " (" + le.ContextMsg
		if le.ContextMark.Line > 0 && le.ContextMark != le.Mark {
			msg += " started at " + strconv.Itoa(le.ContextMark.Line) + ":" + strconv.Itoa(le.ContextMark.Column)
		}
		msg += ")"
	}
	d.add(Error, le.Mark.Line, le.Mark.Column, "yaml: %s", msg)
}

// converter turns a YAML node tree into plain JSON values, reporting what
// JSON cannot hold: duplicate keys, merge keys, non-finite numbers, binary.
type converter struct {
	d     *diags
	nodes int
	// values remembers the conversion of each node so that the decoder
	// reads values without converting (and reporting) twice.
	values map[*yaml.Node]any
}

func (c *converter) convert(n *yaml.Node, depth int) any {
	c.nodes++
	if c.nodes > maxNodes {
		if c.nodes == maxNodes+1 {
			c.d.add(Error, n.Line, n.Column, "document too large: more than %d values once aliases are expanded", maxNodes)
		}
		return nil
	}
	if depth > maxDepth {
		c.d.add(Error, n.Line, n.Column, "nesting deeper than %d levels", maxDepth)
		return nil
	}
	if v, ok := c.values[n]; ok && n.Kind != yaml.AliasNode {
		return v
	}
	var v any
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		return c.convert(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			v = c.convert(n.Content[0], depth+1)
		}
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		first := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			key, ok := c.key(k)
			if !ok {
				continue
			}
			if f, dup := first[key]; dup {
				c.d.add(Error, k.Line, k.Column, "duplicate key %q (first at line %d)", key, f.Line)
				continue
			}
			first[key] = k
			m[key] = c.convert(val, depth+1)
		}
		v = m
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			a = append(a, c.convert(e, depth+1))
		}
		v = a
	case yaml.ScalarNode:
		v = c.scalar(n)
	}
	c.values[n] = v
	return v
}

func (c *converter) key(k *yaml.Node) (string, bool) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		c.d.add(Error, k.Line, k.Column, "mapping keys must be plain strings, not a %s", kindName(k))
		return "", false
	}
	if k.ShortTag() == "!!merge" {
		c.d.add(Error, k.Line, k.Column, "merge keys (<<) are not supported: write the keys out, or alias the whole value")
		return "", false
	}
	return k.Value, true
}

var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

func (c *converter) scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			c.d.add(Error, n.Line, n.Column, "invalid boolean %q", n.Value)
			return nil
		}
		return b
	case "!!int":
		if jsonNumber.MatchString(n.Value) {
			return json.Number(n.Value)
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			return json.Number(strconv.FormatInt(i, 10))
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return json.Number(strconv.FormatUint(u, 10))
		}
		if b, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0); ok {
			return json.Number(b.String())
		}
		c.d.add(Error, n.Line, n.Column, "invalid integer %q", n.Value)
		return nil
	case "!!float":
		if jsonNumber.MatchString(n.Value) {
			return json.Number(n.Value)
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			c.d.add(Error, n.Line, n.Column, "invalid number %q", n.Value)
			return nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			c.d.add(Error, n.Line, n.Column, "%s is not a JSON number; quote it to make it a string", n.Value)
			return nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!binary":
		c.d.add(Error, n.Line, n.Column, "binary values (!!binary) are not supported; use a string")
		return nil
	}
	// !!str, !!timestamp and any other tag: the text as written.
	return n.Value
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "list"
	case yaml.ScalarNode:
		return "scalar"
	case yaml.AliasNode:
		return "alias"
	}
	return "document"
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < maxDepth; i++ {
		n = n.Alias
	}
	return n
}

// lookup returns the key and value nodes of key in a mapping node.
func lookup(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := deref(n.Content[i])
		if kn != nil && kn.Kind == yaml.ScalarNode && kn.Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// at walks a JSON-pointer-like path of keys and indexes from n. It returns
// the deepest node reached and, when the last step is a key, its key node.
func at(n *yaml.Node, path []string) (val, key *yaml.Node) {
	val = n
	for _, step := range path {
		d := deref(val)
		if d == nil {
			return val, key
		}
		switch d.Kind {
		case yaml.MappingNode:
			k, v := lookup(d, step)
			if v == nil {
				return val, key
			}
			val, key = v, k
		case yaml.SequenceNode:
			i, err := strconv.Atoi(step)
			if err != nil || i < 0 || i >= len(d.Content) {
				return val, key
			}
			val, key = d.Content[i], nil
		default:
			return val, key
		}
	}
	return val, key
}
