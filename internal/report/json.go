package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// JSON renders the report as indented JSON with a trailing newline.
func (r *Report) JSON() ([]byte, error) { return IndentedJSON(r) }

// WriteListJSON writes to w what IndentedJSON renders of a struct whose
// first field, named key, is a list of n items, one item at a time:
// head is the struct with that list nil (the rest is rendered whole), and
// item(i) is the list's i-th entry. A report of many cases is written
// without its whole text in memory.
func WriteListJSON(w io.Writer, head any, key string, n int, item func(i int) any) error {
	rest, err := IndentedJSON(head)
	if err != nil {
		return err
	}
	open := "{\n  " + strconv.Quote(key) + ": null"
	if !bytes.HasPrefix(rest, []byte(open)) {
		return fmt.Errorf("writing JSON: %q is not the first field", key)
	}
	if _, err := io.WriteString(w, "{\n  "+strconv.Quote(key)+": ["); err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ")
	for i := range n {
		b.Reset()
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n    ")
		if err := enc.Encode(item(i)); err != nil {
			return err
		}
		b.Truncate(b.Len() - 1) // the encoder's newline
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if n > 0 {
		io.WriteString(w, "\n  ")
	}
	if _, err := io.WriteString(w, "]"); err != nil {
		return err
	}
	_, err = w.Write(rest[len(open):])
	return err
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
