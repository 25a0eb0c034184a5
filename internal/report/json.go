package report

import (
	"bytes"
	"encoding/json"
)

// JSON renders the report as indented JSON with a trailing newline.
func (r *Report) JSON() ([]byte, error) { return IndentedJSON(r) }

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
