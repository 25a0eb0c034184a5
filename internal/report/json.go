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
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
