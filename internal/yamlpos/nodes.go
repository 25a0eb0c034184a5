package yamlpos

import (
	"strconv"

	yaml "go.yaml.in/yaml/v4"
)

// Deref follows aliases.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < MaxDepth; i++ {
		n = n.Alias
	}
	return n
}

// Lookup returns the key and value nodes of key in mapping n.
func Lookup(n *yaml.Node, key string) (k, v *yaml.Node) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn := Deref(n.Content[i])
		if kn != nil && kn.Kind == yaml.ScalarNode && kn.Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// At walks a path of keys and indexes (decimal text) from n: the deepest
// node reached and, when its last step is a key, the key node.
func At(n *yaml.Node, path ...string) (val, key *yaml.Node) {
	val = n
	for _, step := range path {
		d := Deref(val)
		if d == nil {
			return val, key
		}
		switch d.Kind {
		case yaml.MappingNode:
			k, v := Lookup(d, step)
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
