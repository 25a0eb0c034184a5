// Package jsonout writes JSON as dryfire's reports are written:
// indented by two spaces, HTML characters not escaped, a list of many
// items one item at a time.
package jsonout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Indented is v as the JSON report is written: indented by two
// spaces, HTML characters not escaped, with a trailing newline.
func Indented(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	compact := b.Bytes()
	out := AppendIndented(make([]byte, 0, len(compact)+len(compact)/2), compact[:len(compact)-1], "", "  ")
	return append(out, '\n'), nil
}

// maxIndent is the deepest level a report's lines are broken and
// indented at: a value nested deeper is written on one line. Indented
// lines grow with their depth, so 9,000 nested arrays (18 KB) made a
// 162 MB report.
const maxIndent = 32

// AppendIndented appends compact JSON (encoding/json's output: no space
// outside strings) as json.Indent would indent it, with prefix and indent:
// the same bytes, without the general scanner's cost (the JSON report of
// a large run is written a case at a time); but what is nested more than
// maxIndent levels deep in the report stays on one line, as compact as it
// came. prefix is the indentation of the levels src is inside of.
func AppendIndented(dst, src []byte, prefix, indent string) []byte {
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

// List writes what Indented renders of a struct whose first
// field, named key, is a list, one item at a time (Item), then the rest of
// the struct (End): a report of many cases is written as they come,
// without its text or its cases in memory.
type List struct {
	w       io.Writer
	key     string
	n       int
	compact bytes.Buffer // an item as enc writes it
	b       []byte       // indented
	enc     *json.Encoder
	err     error // the first write that failed; nothing is written after it
}

// New writes the list named key to w; nothing is written before
// the first Item or End.
func New(w io.Writer, key string) *List {
	l := &List{w: w, key: key}
	l.enc = json.NewEncoder(&l.compact)
	l.enc.SetEscapeHTML(false)
	return l
}

func (l *List) write(s []byte) {
	if l.err == nil {
		_, l.err = l.w.Write(s)
	}
}

func (l *List) open() string { return "{\n  " + strconv.Quote(l.key) + ": [" }

// Item writes the list's next item.
func (l *List) Item(v any) error {
	l.compact.Reset()
	if err := l.enc.Encode(v); err != nil {
		return err
	}
	item := l.compact.Bytes()
	return l.Put(AppendIndented(l.Start(), item[:len(item)-1], "    ", "  ")) // without the encoder's newline
}

// Start is the buffer of the next item, with what comes before it: a
// writer of its own appends the item, indented by four spaces, and hands
// it to Put.
func (l *List) Start() []byte {
	l.b = l.b[:0]
	if l.n == 0 {
		l.b = append(l.b, l.open()...)
	} else {
		l.b = append(l.b, ',')
	}
	return append(l.b, "\n    "...)
}

// Put writes the next item: b is Start's buffer with the item appended.
func (l *List) Put(b []byte) error {
	l.b = b
	l.n++
	l.write(l.b)
	return l.err
}

// End closes the list and writes the rest: head is the struct with the
// list nil (rendered whole).
func (l *List) End(head any) error {
	rest, err := Indented(head)
	if err != nil {
		return err
	}
	null := "{\n  " + strconv.Quote(l.key) + ": null"
	if !bytes.HasPrefix(rest, []byte(null)) {
		return fmt.Errorf("writing JSON: %q is not the first field", l.key)
	}
	if l.n == 0 {
		l.write([]byte(l.open()))
	} else {
		l.write([]byte("\n  "))
	}
	l.write([]byte("]"))
	l.write(rest[len(null):])
	return l.err
}
