package spec

import (
	"bytes"

	yaml "go.yaml.in/yaml/v4"
)

// A suite's cases are most of a large suite file. When the cases list is
// a plain block sequence under a top-level cases: key, the loader cuts its
// items apart in the text and parses each on its own, so that it never
// holds the YAML tree of more than a few cases (and can parse them on
// several cores). Anything the cut could get wrong (an alias between
// items, a flow collection across lines, a tab) makes some part fail to
// parse alone, and the file is then parsed whole, as any other.

// span is one item of the cases list in the file: its bytes and the line
// it starts at.
type span struct {
	start, end int
	line       int
}

// cutCases finds the items of the top-level cases block sequence. head is
// the file with the items' lines blanked (the suite without its cases,
// every line where it was). ok is false when the file is not of that
// shape, or has no item.
func cutCases(data []byte) (head []byte, items []span, ok bool) {
	type line struct{ start, end, indent int }
	var lines []line
	for i := 0; i < len(data); {
		j := bytes.IndexByte(data[i:], '\n')
		end := len(data)
		if j >= 0 {
			end = i + j
		}
		indent := 0
		for indent < end-i && data[i+indent] == ' ' {
			indent++
		}
		lines = append(lines, line{i, end, indent})
		if j < 0 {
			break
		}
		i = end + 1
	}
	blank := func(l line) bool {
		rest := bytes.TrimRight(data[l.start+l.indent:l.end], " \r")
		return len(rest) == 0 || rest[0] == '#'
	}
	keyLine := -1
	for n, l := range lines {
		text := data[l.start:l.end]
		if bytes.IndexByte(text, '\t') >= 0 && !blank(l) && l.indent < len(text) && text[l.indent] == '\t' {
			return nil, nil, false // a tab in the indentation: the whole parse says so
		}
		if l.indent == 0 && bytes.HasPrefix(text, []byte("cases:")) {
			rest := bytes.TrimRight(text[len("cases:"):], " \r")
			if len(rest) > 0 && rest[0] != '#' && !(rest[0] == ' ' && bytes.HasPrefix(bytes.TrimLeft(rest, " "), []byte("#"))) {
				return nil, nil, false // a value on the key's line
			}
			if keyLine >= 0 {
				return nil, nil, false // a duplicate key: the whole parse says so
			}
			keyLine = n
		}
	}
	if keyLine < 0 {
		return nil, nil, false
	}
	isItem := func(l line, k int) bool {
		if l.indent != k || l.start+k >= l.end || data[l.start+k] != '-' {
			return false
		}
		next := l.start + k + 1
		return next == l.end || data[next] == ' ' || data[next] == '\r'
	}
	k := -1
	endLine := len(lines)
	for n := keyLine + 1; n < len(lines); n++ {
		l := lines[n]
		if blank(l) {
			continue
		}
		if k < 0 {
			if !isItem(l, l.indent) {
				return nil, nil, false
			}
			k = l.indent
		}
		if isItem(l, k) {
			items = append(items, span{start: l.start, line: n + 1})
			continue
		}
		if l.indent <= k {
			endLine = n
			break
		}
	}
	if len(items) == 0 {
		return nil, nil, false
	}
	end := len(data)
	if endLine < len(lines) {
		end = lines[endLine].start
	}
	for i := range items {
		if i+1 < len(items) {
			items[i].end = items[i+1].start
		} else {
			items[i].end = end
		}
	}
	// Blank the items' lines, keeping their line breaks.
	head = make([]byte, 0, len(data)-(end-items[0].start)+endLine-keyLine)
	head = append(head, data[:items[0].start]...)
	head = append(head, bytes.Repeat([]byte{'\n'}, bytes.Count(data[items[0].start:end], []byte{'\n'}))...)
	head = append(head, data[end:]...)
	return head, items, true
}

// shiftLines moves every node of n down by delta lines.
func shiftLines(n *yaml.Node, delta int) {
	n.Line += delta
	for _, c := range n.Content {
		shiftLines(c, delta)
	}
}
