package toolrec

import (
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/yamlnode"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// editor inserts text into a YAML file between its lines, so that what
// was there stays byte for byte: comments, blank lines, quoting, order.
// Positions are 0-based line indices of the file as read.
type editor struct {
	file  string
	lines []string // without their newlines
	final bool     // the file ends with a newline
	ends  map[*yaml.Node]int
	ins   []insertion
	cut   map[int]string // lines replaced ("key: {}" becoming "key:"; dropped)
	top   *yaml.Node
}

// dropped is a line cut out whole.
const droppedLine = "\x00"

type insertion struct {
	at   int // before this line
	n    int // order among insertions at one line
	text string
}

func newEditor(file string, data []byte, top *yaml.Node) *editor {
	s := string(data)
	e := &editor{file: file, final: strings.HasSuffix(s, "\n"), ends: map[*yaml.Node]int{}, cut: map[int]string{}, top: top}
	e.lines = strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	e.region(top, len(e.lines))
	return e
}

// region notes where each node's lines end (exclusive): before the next
// key of its mapping or item of its list, else where its parent's end,
// less the blank and comment lines before that (which belong to what
// follows).
func (e *editor) region(n *yaml.Node, end int) {
	last := end
	for ; last > n.Line && last <= len(e.lines); last-- {
		if t := strings.TrimSpace(e.lines[last-1]); t != "" && !strings.HasPrefix(t, "#") {
			break
		}
	}
	e.ends[n] = last
	if n.Style&yaml.FlowStyle != 0 {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			next := end
			if i+2 < len(n.Content) {
				next = n.Content[i+2].Line - 1
			}
			e.region(n.Content[i+1], next)
		}
	case yaml.SequenceNode:
		for i, it := range n.Content {
			next := end
			if i+1 < len(n.Content) {
				next = n.Content[i+1].Line - 1
			}
			e.region(it, next)
		}
	}
}

func (e *editor) insert(at int, text string) {
	e.ins = append(e.ins, insertion{at: at, n: len(e.ins), text: text})
}

// apply is the file with the insertions.
func (e *editor) apply() []byte {
	slices.SortStableFunc(e.ins, func(a, b insertion) int { return a.at - b.at })
	var b strings.Builder
	k := 0
	for i := 0; i <= len(e.lines); i++ {
		for k < len(e.ins) && e.ins[k].at == i {
			b.WriteString(e.ins[k].text)
			k++
		}
		if i == len(e.lines) {
			break
		}
		if c, ok := e.cut[i]; ok {
			if c == droppedLine {
				continue
			}
			b.WriteString(c)
		} else {
			b.WriteString(e.lines[i])
		}
		if i < len(e.lines)-1 || e.final || k < len(e.ins) {
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// indent prefixes every line of text.
func indent(text []byte, pre string) string {
	var b strings.Builder
	for l := range strings.Lines(string(text)) {
		if strings.TrimSpace(l) != "" {
			b.WriteString(pre)
		}
		b.WriteString(l)
	}
	return b.String()
}

var dumpOpts = []yaml.Option{yaml.WithCompactSeqIndent(false)}

// pairsText is pairs as the lines of a block mapping at an indentation.
func pairsText(pairs []yamlnode.Pair, pre string) string {
	return indent(yamlnode.Dump(yamlnode.Mapping(pairs...), dumpOpts...), pre)
}

// itemsText is rule nodes as the items of a block list with its dash at
// pre, each under its origin comment (none: "").
func itemsText(items []*yaml.Node, comments []string, pre string) string {
	var b strings.Builder
	for i, it := range items {
		if comments[i] != "" {
			b.WriteString(pre + comments[i] + "\n")
		}
		body := yamlnode.Dump(it, dumpOpts...)
		first := true
		for l := range strings.Lines(string(body)) {
			if first {
				b.WriteString(pre + "- " + l)
				first = false
			} else if strings.TrimSpace(l) == "" {
				b.WriteString(l)
			} else {
				b.WriteString(pre + "  " + l)
			}
		}
	}
	return b.String()
}

func (e *editor) errorf(n *yaml.Node, format string, args ...any) error {
	return fmt.Errorf("%s:%d:%d: %s", e.file, n.Line, n.Column, fmt.Sprintf(format, args...))
}

// empty says n holds nothing: no value, null, {} or [].
func empty(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Tag == "!!null"
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) == 0
	}
	return false
}

// clear turns "key: {}" (or [] or null) into "key:", so that a block
// can follow; the line must hold nothing else but a comment.
func (e *editor) clear(k, v *yaml.Node) error {
	if v.Line == 0 || v.Line != k.Line {
		return nil // no value written: "key:" alone
	}
	line := e.lines[v.Line-1]
	rest := line[v.Column-1:]
	tok := "null"
	switch {
	case strings.HasPrefix(rest, "{}"), strings.HasPrefix(rest, "[]"):
		tok = rest[:2]
	case strings.HasPrefix(rest, "~"):
		tok = "~"
	case strings.HasPrefix(rest, "null"):
	default:
		return e.errorf(v, "cannot write into this %s: write it as a block", k.Value)
	}
	after := strings.TrimSpace(rest[len(tok):])
	if after != "" && !strings.HasPrefix(after, "#") {
		return e.errorf(v, "cannot write into this %s: write it as a block", k.Value)
	}
	kept := strings.TrimRight(line[:v.Column-1], " ")
	if after != "" {
		kept += " " + after
	}
	e.cut[v.Line-1] = kept
	return nil
}

// keyIndent is the indentation of a block mapping's keys; def when it
// has none.
func keyIndent(m *yaml.Node, def string) string {
	if len(m.Content) > 0 {
		return strings.Repeat(" ", m.Content[0].Column-1)
	}
	return def
}

// childIndent is the indentation of what goes under key k.
func childIndent(k *yaml.Node) string { return strings.Repeat(" ", k.Column-1+2) }

// addPairs adds pairs to the mapping under key of m (made when missing:
// before the first of the keys named in before that m has, else at its
// end).
func (e *editor) addPairs(m *yaml.Node, key string, pairs []yamlnode.Pair, before []string) error {
	k, v := yamlpos.Lookup(m, key)
	if k == nil {
		e.insertText(m, pairsText([]yamlnode.Pair{yamlnode.KV(key, yamlnode.Mapping(pairs...))}, keyIndent(m, "")), before)
		return nil
	}
	v = yamlpos.Deref(v)
	switch {
	case empty(v):
		if err := e.clear(k, v); err != nil {
			return err
		}
		e.insert(k.Line, pairsText(pairs, childIndent(k)))
	case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0:
		e.insert(e.ends[v], pairsText(pairs, keyIndent(v, childIndent(k))))
	default:
		return e.errorf(v, "%s is written in flow style or is not a mapping: write it as a block mapping to record into it", key)
	}
	return nil
}

// replaceValue replaces the value of key name in the block mapping
// under section of m, with its key line, by n (its comments go with it).
func (e *editor) replaceValue(m *yaml.Node, section, name string, n *yaml.Node) error {
	_, v := yamlpos.Lookup(m, section)
	v = yamlpos.Deref(v)
	if v == nil || v.Kind != yaml.MappingNode || v.Style&yaml.FlowStyle != 0 {
		return fmt.Errorf("%s: %s is written in flow style or is not a mapping: write it as a block mapping to refresh %s", e.file, section, name)
	}
	k, tv := yamlpos.Lookup(v, name)
	if k == nil || tv == nil || k.Line == 0 {
		return fmt.Errorf("%s: %s.%s is not written in the file (an alias?): cannot refresh it", e.file, section, name)
	}
	start, end := k.Line-1, max(e.ends[tv], k.Line)
	e.cut[start] = strings.TrimSuffix(pairsText([]yamlnode.Pair{yamlnode.KV(name, n)}, strings.Repeat(" ", k.Column-1)), "\n")
	for i := start + 1; i < end; i++ {
		e.cut[i] = droppedLine
	}
	return nil
}

// group is the new rules of one tool.
type group struct {
	tool  string
	rules []*pending
}

// addRules appends each group's rules to its tool's list under key of m
// (a mapping of lists by tool, such as mocks), making what is missing:
// the mapping before the first key of before that m has, else at its
// end.
func (e *editor) addRules(m *yaml.Node, key string, groups []group, label string, before []string) error {
	items := func(g group, pre string) string {
		nodes := make([]*yaml.Node, len(g.rules))
		comments := make([]string, len(g.rules))
		for i, p := range g.rules {
			nodes[i] = ruleNode(p)
			comments[i] = Origin + yamlnode.CommentText(fmt.Sprintf("%s, case %q", label, p.cse))
			if p.cse == "" {
				comments[i] = Origin + yamlnode.CommentText(label+" (dryfire serve)")
			}
		}
		return itemsText(nodes, comments, pre)
	}
	k, v := yamlpos.Lookup(m, key)
	if k == nil {
		pre := keyIndent(m, "")
		text := pre + key + ":\n"
		for _, g := range groups {
			text += pre + "  " + yamlnode.KeyText(g.tool) + ":\n" + items(g, pre+"    ")
		}
		e.insertText(m, text, before)
		return nil
	}
	v = yamlpos.Deref(v)
	if empty(v) {
		if err := e.clear(k, v); err != nil {
			return err
		}
		pre := childIndent(k)
		text := ""
		for _, g := range groups {
			text += pre + yamlnode.KeyText(g.tool) + ":\n" + items(g, pre+"  ")
		}
		e.insert(k.Line, text)
		return nil
	}
	if v.Kind != yaml.MappingNode || v.Style&yaml.FlowStyle != 0 {
		return e.errorf(v, "%s is written in flow style: write it as a block mapping to record into it", key)
	}
	for _, g := range groups {
		tk, tv := yamlpos.Lookup(v, g.tool)
		if tk == nil {
			pre := keyIndent(v, childIndent(k))
			e.insert(e.ends[v], pre+yamlnode.KeyText(g.tool)+":\n"+items(g, pre+"  "))
			continue
		}
		tv = yamlpos.Deref(tv)
		if empty(tv) {
			if err := e.clear(tk, tv); err != nil {
				return err
			}
			e.insert(tk.Line, items(g, childIndent(tk)))
			continue
		}
		if tv.Kind != yaml.SequenceNode || tv.Style&yaml.FlowStyle != 0 {
			return e.errorf(tv, "the rules of %s are written in flow style: write them as a block list to record into it", g.tool)
		}
		e.insert(e.ends[tv], items(g, strings.Repeat(" ", tv.Column-1)))
	}
	return nil
}

// insertText puts text into block mapping m before the first key of
// before it has (and that key's comments), else at m's end.
func (e *editor) insertText(m *yaml.Node, text string, before []string) {
	at := e.ends[m]
	for i := 0; i+1 < len(m.Content); i += 2 {
		if slices.Contains(before, m.Content[i].Value) {
			at = m.Content[i].Line - 1
			for at > 0 && strings.HasPrefix(strings.TrimSpace(e.lines[at-1]), "#") {
				at--
			}
			break
		}
	}
	if len(m.Content) > 0 && m.Content[0].Column == 1 {
		// A new section of the file: a blank line between it and the next.
		if at < len(e.lines) {
			text += "\n"
		} else if at > 0 && strings.TrimSpace(e.lines[at-1]) != "" {
			text = "\n" + text
		}
	}
	e.insert(at, text)
}

// caseItem is the mapping of case c in the file's cases list.
func (e *editor) caseItem(top *yaml.Node, c *spec.Case) (*yaml.Node, error) {
	_, list := yamlpos.Lookup(top, "cases")
	list = yamlpos.Deref(list)
	if list != nil && list.Kind == yaml.SequenceNode && list.Style&yaml.FlowStyle == 0 {
		for _, it := range list.Content {
			it = yamlpos.Deref(it)
			if it.Kind != yaml.MappingNode || it.Style&yaml.FlowStyle != 0 {
				continue
			}
			if _, n := yamlpos.Lookup(it, "name"); n != nil && n.Value == c.Name {
				return it, nil
			}
		}
	}
	return nil, fmt.Errorf("%s: case %q made calls whose answers differ from another case's, so its rules go into its own mocks, but it is not written as a block mapping in the file's cases (from a data file?): record it alone (--filter)", e.file, c.Name)
}
