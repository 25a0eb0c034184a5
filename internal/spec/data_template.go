package spec

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// A template is the case item of a data file, made ready once for all its
// rows: how many nodes a copy has, where each templated scalar's
// placeholders are, and the copy's nodes in order (ops), so that a row
// fills them in one loop.
type template struct {
	item *yaml.Node
	// nodes is the count of a copy's nodes (aliases followed); -1 when it
	// passes the bound on one case's values or on nesting.
	nodes int
	sites map[*yaml.Node][][]int
	// ops are the nodes of a copy, the item's first, each parent before
	// its children (aliases followed); kids the children of each.
	ops  []tnode
	kids []int32
}

// A tnode is one node of a template's copy: the node it copies (aliases
// followed), its placeholders, and where its children are in kids; fixed:
// no row changes it or what is under it, but one changes its parent.
type tnode struct {
	src        *yaml.Node
	sites      [][]int
	kid0, nkid int32
	fixed      bool
}

func newTemplate(item *yaml.Node) *template {
	t := &template{item: item, sites: map[*yaml.Node][][]int{}}
	var count func(n *yaml.Node, depth int) bool
	count = func(n *yaml.Node, depth int) bool {
		n = yamlpos.Deref(n)
		if t.nodes++; t.nodes > yamlpos.MaxNodes || depth > yamlpos.MaxDepth {
			return false
		}
		if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "{{") {
			if _, done := t.sites[n]; !done {
				t.sites[n] = placeholder().FindAllStringSubmatchIndex(n.Value, -1)
			}
		}
		for _, sub := range n.Content {
			if !count(sub, depth+1) {
				return false
			}
		}
		return true
	}
	if !count(item, 0) {
		t.nodes = -1
		return t
	}
	t.ops = make([]tnode, 0, t.nodes)
	// flat lays out n and what is under it, and reports whether a row
	// changes any of it.
	var flat func(n *yaml.Node) (int32, bool)
	flat = func(n *yaml.Node) (int32, bool) {
		n = yamlpos.Deref(n)
		i := int32(len(t.ops))
		t.ops = append(t.ops, tnode{src: n, sites: t.sites[n]})
		changes := t.sites[n] != nil
		if len(n.Content) > 0 {
			kids := make([]int32, len(n.Content))
			fixed := make([]bool, len(n.Content))
			for j, sub := range n.Content {
				k, ch := flat(sub)
				kids[j], fixed[j] = k, !ch
				changes = changes || ch
			}
			for j, k := range kids {
				t.ops[k].fixed = fixed[j] && changes
			}
			t.ops[i].kid0, t.ops[i].nkid = int32(len(t.kids)), int32(len(kids))
			t.kids = append(t.kids, kids...)
		}
		return i, changes
	}
	flat(item)
	return t
}

// fixedIn is the Converter.Fixed of the row cases in slab: the parts no
// row changes.
func (t *template) fixedIn(slab *rowSlab) map[*yaml.Node]*yamlpos.Fixed {
	m := map[*yaml.Node]*yamlpos.Fixed{}
	for i := range t.ops {
		if t.ops[i].fixed {
			m[&slab.nodes[i]] = &yamlpos.Fixed{}
		}
	}
	return m
}

// A rowSlab holds the nodes of a row's case, to be used again for the
// next row once nothing holds the case's nodes. Nothing changes a case's
// nodes once made, so the next row of the same template changes only
// their lines and the filled-in values.
type rowSlab struct {
	t     *template // whose copy the nodes are (nil: none yet)
	nodes []yaml.Node
	kids  []*yaml.Node
	// fixed, when made (counted suites), is the values of the parts of
	// t's copy no row changes, for the converter (template.fixedIn).
	fixed map[*yaml.Node]*yamlpos.Fixed
}

// instantiate is the case one row makes of a template: a copy without
// from:, its placeholders filled, its nodes at the row's line. It returns
// nil when the copy passes the bound on one case's values.
func instantiate(t *template, r row, columns []string, source int, file string, d *yamlpos.Collector) *yaml.Node {
	return instantiateIn(nil, t, r, columns, source, file, d)
}

// instantiateIn is instantiate with the case's nodes in slab (nil: new
// ones), which the case holds until slab is used again.
func instantiateIn(slab *rowSlab, t *template, r row, columns []string, source int, file string, d *yamlpos.Collector) *yaml.Node {
	line := yamlpos.VirtualLine(source, r.line)
	if t.nodes < 0 {
		d.Add(yamlpos.Error, line, 1, "case too large: this row's case has more than %d values (the bound is per case)", yamlpos.MaxNodes)
		return nil
	}
	// The copy's nodes (and the name's two), and the lists of their
	// children (and the item's own, without from: and with the name).
	top := len(t.ops[0].src.Content) + 2
	if slab == nil {
		slab = &rowSlab{}
	}
	again := slab.t == t
	if !again {
		slab.t, slab.fixed = t, nil
		if len(slab.nodes) < len(t.ops)+2 {
			slab.nodes = make([]yaml.Node, len(t.ops)+2)
		}
		if len(slab.kids) < len(t.kids)+top {
			slab.kids = make([]*yaml.Node, len(t.kids)+top)
		}
	}
	nodes, kids := slab.nodes, slab.kids
	for i := range t.ops {
		op := &t.ops[i]
		n, c := op.src, &nodes[i]
		if again && op.sites == nil && i > 0 {
			c.Line = line // the rest is the last row's, the same
			continue
		}
		*c = yaml.Node{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value, Line: line, Column: 1}
		if op.sites != nil {
			fill(c, op.sites, r, columns, line, d)
		}
		if op.nkid > 0 {
			ks := kids[op.kid0 : op.kid0+op.nkid : op.kid0+op.nkid]
			for j, k := range t.kids[op.kid0 : op.kid0+op.nkid] {
				ks[j] = &nodes[k]
			}
			c.Content = ks
		}
	}
	// Drop from:, and name the case by its row when the template does not.
	c := &nodes[0]
	hasName := false
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value == "name" {
			hasName = true
		}
	}
	content := kids[len(t.kids) : len(t.kids) : len(t.kids)+top]
	if !hasName {
		name := filepath.Base(file) + ":" + strconv.Itoa(r.line)
		k, v := &nodes[len(t.ops)], &nodes[len(t.ops)+1]
		*k = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: line, Column: 1}
		*v = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Style: yaml.DoubleQuotedStyle, Line: line, Column: 1}
		content = append(content, k, v)
	}
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value != "from" {
			content = append(content, c.Content[i], c.Content[i+1])
		}
	}
	c.Content = content
	if verifyInstantiate != nil {
		verifyInstantiate(t, r, columns, source, file, c)
	}
	return c
}

// verifyInstantiate, when set (tests), is shown every case instantiate
// makes.
var verifyInstantiate func(t *template, r row, columns []string, source int, file string, c *yaml.Node)

// fill replaces the placeholders of scalar n, at ms, with the row's values.
func fill(n *yaml.Node, ms [][]int, r row, columns []string, line int, d *yamlpos.Collector) {
	if len(ms) == 0 {
		return
	}
	value := func(col string) (any, bool) {
		v, ok := r.values[col]
		// A column of no row is reported once, at the template.
		if !ok && slices.Contains(columns, col) {
			d.Add(yamlpos.Error, line, 1, "this row has no value for column %q", col)
		}
		return v, ok
	}
	// One placeholder and nothing else: the value with its type.
	if len(ms) == 1 && ms[0][0] == 0 && ms[0][1] == len(n.Value) {
		if IsAskPlaceholder(n.Value[ms[0][2]:ms[0][3]]) {
			return
		}
		v, ok := value(n.Value[ms[0][2]:ms[0][3]])
		if !ok {
			return
		}
		if s, isStr := v.(string); isStr {
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle, Line: line, Column: 1}
			return
		}
		if tag, text, ok := scalarOf(v); ok {
			*n = yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text, Line: line, Column: 1}
			return
		}
		var enc yaml.Node
		if err := enc.Encode(jsonish(v)); err != nil {
			d.Add(yamlpos.Error, line, 1, "column %q: %v", n.Value, err)
			return
		}
		atLine(&enc, line)
		*n = enc
		return
	}
	var b strings.Builder
	last := 0
	for _, m := range ms {
		b.WriteString(n.Value[last:m[0]])
		if name := n.Value[m[2]:m[3]]; IsAskPlaceholder(name) {
			b.WriteString(n.Value[m[0]:m[1]]) // the call's, not the row's
		} else if v, ok := value(name); ok {
			b.WriteString(text(v))
		}
		last = m[1]
	}
	b.WriteString(n.Value[last:])
	*n = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: b.String(), Style: yaml.DoubleQuotedStyle, Line: line, Column: 1}
}

// text is a value inside a longer string: a string as it is, anything
// else as JSON.
func text(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, _ := json.Marshal(v)
	return string(data)
}

// scalarOf is the tag and text of the YAML scalar that encoding v gives,
// for the values that need no encoder: integers, booleans and null.
func scalarOf(v any) (tag, text string, ok bool) {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return "!!int", strconv.FormatInt(i, 10), true
		}
	case bool:
		return "!!bool", strconv.FormatBool(x), true
	case nil:
		return "!!null", "null", true
	}
	return "", "", false
}

// jsonish turns json.Number into int64 or float64, which YAML encodes as
// numbers (a json.Number would be a string).
func jsonish(v any) any {
	return value.Map(v, func(v any) any {
		x, ok := v.(json.Number)
		if !ok {
			return v
		}
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	})
}

// atLine sets the line of every node of n.
func atLine(n *yaml.Node, line int) {
	n.Line, n.Column = line, 1
	for _, c := range n.Content {
		atLine(c, line)
	}
}
