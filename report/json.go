package report

import (
	"io"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
)

// JSON renders the report as `dryfire run --json` writes it: indented
// JSON with a trailing newline.
func (r *Report) JSON() ([]byte, error) { return jsonout.Indented(r) }

// WriteJSON writes what JSON renders to w, one case at a time: the
// report's text is never in memory whole.
func (r *Report) WriteJSON(w io.Writer) error {
	if r.Cases == nil {
		data, err := r.JSON()
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
	head := *r
	head.Cases = nil
	l := jsonout.New(w, "cases")
	for i := range r.Cases {
		if err := l.Item(&r.Cases[i]); err != nil {
			return err
		}
	}
	return l.End(&head)
}
