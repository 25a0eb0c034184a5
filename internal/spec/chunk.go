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
	// Each line: where it starts and ends, and its indentation.
	type line struct{ start, end, indent int }
	at := func(i int) line {
		end := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			end = i + j
		}
		indent := 0
		for i+indent < end && data[i+indent] == ' ' {
			indent++
		}
		return line{i, end, indent}
	}
	next := func(l line) int { return l.end + 1 } // past the end when l is the last line
	blank := func(l line) bool {
		rest := bytes.TrimRight(data[l.start+l.indent:l.end], " \r")
		return len(rest) == 0 || rest[0] == '#'
	}
	isItem := func(l line, k int) bool {
		if l.indent != k || l.start+k >= l.end || data[l.start+k] != '-' {
			return false
		}
		n := l.start + k + 1
		return n == l.end || data[n] == ' ' || data[n] == '\r'
	}
	// The cases: key, alone on its line at the margin, once.
	keyEnd, keyLineNo := -1, 0
	lineNo := 0
	for i := 0; i < len(data); {
		l := at(i)
		lineNo++
		if l.indent < l.end-l.start && data[l.start+l.indent] == '\t' {
			return nil, nil, false // a tab in the indentation: the whole parse says so
		}
		if l.indent == 0 && bytes.HasPrefix(data[l.start:l.end], []byte("cases:")) {
			rest := bytes.TrimLeft(bytes.TrimRight(data[l.start+len("cases:"):l.end], " \r"), " ")
			if len(rest) > 0 && (rest[0] != '#' || data[l.start+len("cases:")] != ' ') {
				return nil, nil, false // a value on the key's line
			}
			if keyEnd >= 0 {
				return nil, nil, false // a duplicate key: the whole parse says so
			}
			keyEnd, keyLineNo = next(l), lineNo
		}
		i = next(l)
	}
	if keyEnd < 0 || keyEnd > len(data) {
		return nil, nil, false
	}
	k := -1
	end := len(data)
	lineNo = keyLineNo
	for i := keyEnd; i < len(data); {
		l := at(i)
		lineNo++
		i = next(l)
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
			items = append(items, span{start: l.start, line: lineNo})
			continue
		}
		if l.indent <= k {
			end = l.start
			break
		}
	}
	if len(items) == 0 {
		return nil, nil, false
	}
	for i := range items {
		if i+1 < len(items) {
			items[i].end = items[i+1].start
		} else {
			items[i].end = end
		}
	}
	// Blank the items' lines, keeping their line breaks.
	breaks := bytes.Count(data[items[0].start:end], []byte{'\n'})
	head = make([]byte, 0, len(data)-(end-items[0].start)+breaks)
	head = append(head, data[:items[0].start]...)
	head = append(head, bytes.Repeat([]byte{'\n'}, breaks)...)
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
