package toolrec

import (
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// With Options.Refresh, a recorded rule (one under its Origin comment,
// with one outcome, not a sequence) that answers a call otherwise than
// the upstream does now takes the upstream's answer: its outcome is
// replaced, its when and other keys kept. A hand-written rule, or a
// recorded sequence, stays a conflict.

// swap is a recorded rule to answer as the upstream did in e.
type swap struct {
	item *yaml.Node
	e    Exchange
}

// recordedItem is the recorded rule at rule ("FILE:LINE") of file, if
// it is one a refresh may replace; nil otherwise.
func recordedItem(file string, top *yaml.Node, lines []string, rule string) *yaml.Node {
	at, ok := strings.CutPrefix(rule, file+":")
	line, err := strconv.Atoi(at)
	if !ok || err != nil || line < 2 || line > len(lines) {
		return nil
	}
	item := itemAt(top, line)
	if item == nil || item.Style&yaml.FlowStyle != 0 || !strings.HasPrefix(strings.TrimSpace(lines[line-2]), Origin) {
		return nil
	}
	if k, _ := yamlpos.Lookup(item, "sequence"); k != nil {
		return nil
	}
	// Written "- KEY: …" on its own line, its dash two columns before it.
	l, dash := lines[line-1], item.Column-3
	if dash < 0 || len(l) < dash+2 || l[dash:dash+2] != "- " || strings.TrimSpace(l[:dash]) != "" {
		return nil
	}
	return item
}

// itemAt is the block mapping that is an item of a list and starts at
// line (1-based) of the tree n.
func itemAt(n *yaml.Node, line int) *yaml.Node {
	for _, c := range n.Content {
		if n.Kind == yaml.SequenceNode && c.Kind == yaml.MappingNode && c.Line == line {
			return c
		}
		if c.Kind != yaml.AliasNode {
			if found := itemAt(c, line); found != nil {
				return found
			}
		}
	}
	return nil
}

// swapped is rule item with its outcome (return, error or content) now
// a's.
func swapped(item *yaml.Node, a Answer) *yaml.Node {
	n := &yaml.Node{Kind: yaml.MappingNode}
	for i := 0; i+1 < len(item.Content); i += 2 {
		switch item.Content[i].Value {
		case "return", "error", "content":
		default:
			n.Content = append(n.Content, clone(item.Content[i]), clone(item.Content[i+1]))
		}
	}
	k, v := outcome(a)
	n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	return n
}

// replaceItem replaces list item (a rule written "- KEY: …") by n, its
// comment above kept.
func (e *editor) replaceItem(item, n *yaml.Node) {
	pre := e.lines[item.Line-1][:item.Column-3]
	start, end := item.Line-1, max(e.ends[item], item.Line)
	e.cut[start] = strings.TrimSuffix(itemsText([]*yaml.Node{n}, []string{""}, pre), "\n")
	for i := start + 1; i < end; i++ {
		e.cut[i] = droppedLine
	}
}
