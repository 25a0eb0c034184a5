// Package yamlnode builds the YAML that dryfire writes for a user to read
// and edit (a world imported from OpenAPI, mock rules recorded from real
// tools): JSON values as YAML nodes, keys in a stable order, encoded the
// one way.
package yamlnode

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// Scalar is a string scalar.
func Scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// Pair is a mapping's key and value.
type Pair [2]*yaml.Node

// KV is the pair of a string key and a value. A key of several lines, or
// with control characters, is double quoted (on one line) rather than a
// complex "? |-" key.
func KV(k string, v *yaml.Node) Pair { return Pair{Key(k), v} }

// Key is a string scalar for a mapping key: double quoted when it holds
// a line break or a control character.
func Key(k string) *yaml.Node {
	n := Scalar(k)
	if strings.ContainsFunc(k, func(r rune) bool {
		return r < ' ' || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029'
	}) {
		n.Style = yaml.DoubleQuotedStyle
	}
	return n
}

// Mapping is a block mapping of pairs, in order.
func Mapping(pairs ...Pair) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, p := range pairs {
		n.Content = append(n.Content, p[0], p[1])
	}
	return n
}

// FlowSeq is a flow sequence of strings.
func FlowSeq(items ...string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
	for _, s := range items {
		n.Content = append(n.Content, Scalar(s))
	}
	return n
}

// Flow is a JSON value (as encoding/json or package value decode it) as a
// flow-style node, keys sorted ("type" first, then "properties", "items"
// and "required", so that a schema reads naturally).
func Flow(v any) *yaml.Node { return node(v, yaml.FlowStyle) }

// Block is a JSON value as a block-style node (keys ordered as Flow's).
func Block(v any) *yaml.Node { return node(v, 0) }

// Fit is a JSON value on one line (flow style) when its JSON text is at
// most width bytes long, else as a block whose members fit the same way:
// short parts stay on a line, long ones are spread.
func Fit(v any, width int) *yaml.Node {
	if len(canonicalLen(v)) <= width {
		return Flow(v)
	}
	switch x := v.(type) {
	case map[string]any:
		n := Block(map[string]any{})
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, Scalar(k), Fit(x[k], width))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range x {
			n.Content = append(n.Content, Fit(e, width))
		}
		return n
	}
	return Flow(v)
}

// canonicalLen is v as JSON, for its length.
func canonicalLen(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

func sortedKeys(x map[string]any) []string {
	return slices.SortedFunc(maps.Keys(x), func(a, b string) int {
		return cmp.Or(cmp.Compare(keyRank(a), keyRank(b)), strings.Compare(a, b))
	})
}

func node(v any, style yaml.Style) *yaml.Node {
	switch x := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode, Style: style}
		for _, k := range sortedKeys(x) {
			n.Content = append(n.Content, Scalar(k), node(x[k], style))
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Style: style}
		for _, e := range x {
			n.Content = append(n.Content, node(e, style))
		}
		return n
	case string:
		return Scalar(x)
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case float64:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!float", Value: strconv.FormatFloat(x, 'g', -1, 64)}
	case int:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(x)}
	}
	return Scalar(fmt.Sprint(v))
}

func keyRank(k string) int {
	switch k {
	case "type":
		return 0
	case "properties":
		return 1
	case "items":
		return 2
	case "required":
		return 3
	}
	return 4
}

// Dump encodes a node (a document's content) with an indent of 2 and no
// line wrapping; more options go after those.
func Dump(n *yaml.Node, more ...yaml.Option) []byte {
	var b bytes.Buffer
	out, err := yaml.Dump(&yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{n}}, append([]yaml.Option{yaml.WithIndent(2), yaml.WithLineWidth(-1)}, more...)...)
	if err != nil {
		// A tree of scalars, mappings and sequences always encodes.
		panic(fmt.Sprintf("yamlnode: encoding: %v", err))
	}
	b.Write(out)
	return b.Bytes()
}
