package report

import (
	"bytes"
	"encoding/json"
	"io"
)

// JSON renders the report as indented JSON with a trailing newline.
func (r *Report) JSON() ([]byte, error) { return IndentedJSON(r) }

// WriteListJSON writes to w what IndentedJSON renders of a struct whose
// first field, named key, is a list of n items, one item at a time:
// head is the struct with that list nil (the rest is rendered whole), and
// item(i) is the list's i-th entry. A report of many cases is written
// without its whole text in memory.
func WriteListJSON(w io.Writer, head any, key string, n int, item func(i int) any) error {
	l := NewListJSON(w, key)
	for i := range n {
		if err := l.Item(item(i)); err != nil {
			return err
		}
	}
	return l.End(head)
}

// IndentedJSON is v as the JSON report is written: indented by two
// spaces, HTML characters not escaped, with a trailing newline. The public
// report type, which has the same fields, is written through it too.
func IndentedJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	compact := b.Bytes()
	out := appendIndented(make([]byte, 0, len(compact)+len(compact)/2), compact[:len(compact)-1], "", "  ")
	return append(out, '\n'), nil
}

// maxIndent is the deepest level a report's lines are broken and
// indented at: a value nested deeper is written on one line. Indented
// lines grow with their depth, so 9,000 nested arrays (18 KB) made a
// 162 MB report.
const maxIndent = 32

// appendIndented appends compact JSON (encoding/json's output: no space
// outside strings) as json.Indent would indent it, with prefix and indent:
// the same bytes, without the general scanner's cost (the JSON report of
// a large run is written a case at a time); but what is nested more than
// maxIndent levels deep in the report stays on one line, as compact as it
// came. prefix is the indentation of the levels src is inside of.
func appendIndented(dst, src []byte, prefix, indent string) []byte {
	depth, open := 0, false // open: a { or [ whose first element is not yet seen
	limit := maxIndent - len(prefix)/len(indent)
	newline := func() {
		if depth > limit {
			return
		}
		dst = append(dst, '\n')
		dst = append(dst, prefix...)
		for range depth {
			dst = append(dst, indent...)
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		if open && c != '}' && c != ']' {
			open = false
			depth++
			newline()
		}
		switch c {
		case '"':
			// The string whole: up to its closing quote, past escapes.
			j := i + 1
			for j < len(src) && src[j] != '"' {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(src))
			dst = append(dst, src[i:j]...)
			i = j - 1
		case '{', '[':
			open = true
			dst = append(dst, c)
		case ',':
			dst = append(dst, c)
			newline()
		case ':':
			dst = append(dst, c)
			if depth <= limit {
				dst = append(dst, ' ')
			}
		case '}', ']':
			if open {
				open = false // {} and [] stay as they are
			} else {
				depth--
				newline()
			}
			dst = append(dst, c)
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// CompactArgs puts a stored case's call arguments (and its trials') on
// one line again, as its run kept them: the JSON report has them
// indented, and a merge's or a re-check's text would show them so.
func (c *Case) CompactArgs() {
	for i := range c.ToolCalls {
		var b bytes.Buffer
		if a := c.ToolCalls[i].Args; json.Compact(&b, a) == nil && b.Len() != len(a) {
			c.ToolCalls[i].Args = b.Bytes()
		}
	}
	if c.Trials != nil {
		for i := range c.Trials.Runs {
			c.Trials.Runs[i].CompactArgs()
		}
	}
}
