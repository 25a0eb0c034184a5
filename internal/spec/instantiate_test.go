package spec

import (
	"fmt"
	"path/filepath"
	"reflect"
	"sync"

	"go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// instantiateByCopy is instantiate as it was before templates were laid
// out in order (a copy made node by node from the template's tree): the
// reference TestMain compares every row's case with.
func instantiateByCopy(t *template, r row, columns []string, source int, file string, d *yamlpos.Collector) *yaml.Node {
	line := yamlpos.VirtualLine(source, r.line)
	if t.nodes < 0 {
		d.Add(yamlpos.Error, line, 1, "case too large: this row's case has more than %d values (the bound is per case)", yamlpos.MaxNodes)
		return nil
	}
	// The copy's nodes, and the lists of their children, each in one piece.
	nodes := make([]yaml.Node, t.nodes)
	kids := make([]*yaml.Node, t.nodes)
	used, usedKids := 0, 0
	var cp func(n *yaml.Node) *yaml.Node
	cp = func(n *yaml.Node) *yaml.Node {
		n = yamlpos.Deref(n)
		c := &nodes[used]
		used++
		*c = yaml.Node{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value, Line: line, Column: 1}
		if ms := t.sites[n]; ms != nil {
			fill(c, ms, r, columns, line, d)
		}
		if len(n.Content) > 0 {
			c.Content = kids[usedKids : usedKids : usedKids+len(n.Content)]
			usedKids += len(n.Content)
			for _, sub := range n.Content {
				c.Content = append(c.Content, cp(sub))
			}
		}
		return c
	}
	c := cp(t.item)
	// Drop from:, and name the case by its row when the template does not.
	hasName := false
	var content []*yaml.Node
	for i := 0; i+1 < len(c.Content); i += 2 {
		switch c.Content[i].Value {
		case "from":
			continue
		case "name":
			hasName = true
		}
		content = append(content, c.Content[i], c.Content[i+1])
	}
	if !hasName {
		name := fmt.Sprintf("%s:%d", filepath.Base(file), r.line)
		content = append([]*yaml.Node{
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: "name", Line: line, Column: 1},
			{Kind: yaml.ScalarNode, Tag: "!!str", Value: name, Style: yaml.DoubleQuotedStyle, Line: line, Column: 1},
		}, content...)
	}
	c.Content = content
	return c
}

var (
	instantiateMismatch sync.Once
	instantiateDiff     string
)

// compareInstantiate fails the tests (TestMain) when case c, which
// instantiate made, is not the reference's.
func compareInstantiate(t *template, r row, columns []string, source int, file string, c *yaml.Node) {
	d := &yamlpos.Collector{}
	want := instantiateByCopy(t, r, columns, source, file, d)
	if !reflect.DeepEqual(c, want) {
		instantiateMismatch.Do(func() {
			got, _ := yaml.Marshal(c)
			ref, _ := yaml.Marshal(want)
			instantiateDiff = fmt.Sprintf("row at line %d of %s:\n%s\nthe reference:\n%s", r.line, filepath.Base(file), got, ref)
		})
	}
}

var (
	fixedMismatch sync.Once
	fixedDiff     string
)

// compareFixed fails the tests (TestMain) when a row case converted with
// the parts no row changes converted once is not what converting it all
// gives.
func compareFixed(n *yaml.Node, val any, over bool) {
	conv := yamlpos.NewConverter(&yamlpos.Collector{})
	conv.BeginCase(n)
	want := conv.Convert(n, 2)
	if conv.Over != over || !reflect.DeepEqual(val, want) {
		fixedMismatch.Do(func() {
			fixedDiff = fmt.Sprintf("at line %d: %#v (too large: %v)\nconverted whole: %#v (too large: %v)", n.Line&(1<<32-1), val, over, want, conv.Over)
		})
	}
}
