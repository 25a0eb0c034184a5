package cli

import (
	"bytes"
	"io"
	"testing"
)

// FuzzCaseIDs: what --cases reads (ids a line, JSON of ids, --list's
// JSON) is ids or a usage error; nothing panics.
func FuzzCaseIDs(f *testing.F) {
	f.Add([]byte("a-12345678\n# x\n\nb-87654321  suite.dryfire.yaml: b\n"))
	f.Add([]byte(`["a-12345678", {"id": "b-87654321"}]`))
	f.Add([]byte(`{"version": 1, "suites": "x", "cases": [{"id": "a-1"}]}`))
	f.Add([]byte(`{"cases": 3}`))
	f.Add([]byte("[\n\"a\",\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		e := &env{stdin: bytes.NewReader(data), stdout: io.Discard, stderr: io.Discard}
		ids, err := readCaseIDs(e, "-")
		if err == nil && len(ids) == 0 {
			t.Errorf("no error and no id")
		}
		for _, id := range ids {
			if !isCaseID(id) {
				t.Errorf("%q taken as an id", id)
			}
		}
	})
}
