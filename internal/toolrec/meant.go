package toolrec

import (
	"fmt"
	"slices"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlnode"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// meant is the suite file as the edits mean it to read: the tree read
// from the file, copied, with the new nodes put where the editor puts
// their text. The merged text is read back and compared with it
// (yamlnode.Equal) before anything is written, so that a name or an
// answer from the upstream can add no key, rule or section of its own.
type meant struct {
	top *yaml.Node
}

// clone copies a tree; an alias stays an alias (Equal compares its name).
func clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Kind == yaml.AliasNode {
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = clone(e)
	}
	return &c
}

// section is the value of key in mapping m, made (before the first of
// before m has, else at its end) when missing, and turned into an empty
// node of kind when it is empty (null, {} or []).
func section(m *yaml.Node, key string, kind yaml.Kind, before []string) *yaml.Node {
	_, v := yamlpos.Lookup(m, key)
	if v == nil {
		v = &yaml.Node{Kind: kind}
		at := len(m.Content)
		for i := 0; i+1 < len(m.Content); i += 2 {
			if slices.Contains(before, m.Content[i].Value) {
				at = i
				break
			}
		}
		m.Content = slices.Insert(m.Content, at, yamlnode.Scalar(key), v)
		return v
	}
	v = yamlpos.Deref(v)
	if empty(v) {
		*v = yaml.Node{Kind: kind}
	}
	return v
}

func (m *meant) addPairs(parent *yaml.Node, key string, pairs []yamlnode.Pair, before []string) {
	s := section(parent, key, yaml.MappingNode, before)
	for _, p := range pairs {
		s.Content = append(s.Content, p[0], p[1])
	}
}

func (m *meant) addRules(parent *yaml.Node, key string, groups []group, before []string) {
	s := section(parent, key, yaml.MappingNode, before)
	for _, g := range groups {
		list := section(s, g.tool, yaml.SequenceNode, nil)
		for _, p := range g.rules {
			list.Content = append(list.Content, ruleNode(p))
		}
	}
}

// caseItem is the mapping of the case named name in the copy.
func (m *meant) caseItem(name string) *yaml.Node {
	_, list := yamlpos.Lookup(m.top, "cases")
	for _, it := range yamlpos.Deref(list).Content {
		it = yamlpos.Deref(it)
		if _, n := yamlpos.Lookup(it, "name"); n != nil && n.Value == name {
			return it
		}
	}
	return nil
}

// check reads the merged text back and compares it with what was meant.
func (m *meant) check(file string, data []byte) error {
	if err := yamlnode.Check(data, m.top); err != nil {
		return fmt.Errorf("%s: the merged text does not read as the rules meant (a bug of dryfire record-tools; the file is unchanged): %w", file, err)
	}
	return nil
}
