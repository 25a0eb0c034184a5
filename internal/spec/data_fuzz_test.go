package spec

import "testing"

// FuzzDataRows: the readers of data files never panic or hang, and every
// row they give is at a line of the file.
func FuzzDataRows(f *testing.F) {
	for _, s := range []string{
		"{\"a\": 1}\n{\"a\": 2}\n", "[{\"a\": 1}, {\"b\": [1, 2]}]", "a,b\n1,2\n\"x\n", "- {a: 1}\n- b\n",
		"\ufeffa\n1\n", "{", "[", "a,b\n1\n", "\"", "- &x {a: *x}\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := 1
		for _, c := range data {
			if c == '\n' {
				lines++
			}
		}
		bad := func(line int, format string, args ...any) {
			if line < 1 || line > lines+1 {
				t.Errorf("a problem at line %d of %d", line, lines)
			}
		}
		var rows []row
		each := func(r row) bool { rows = append(rows, r); return true }
		new(jsonLinesFile).read(data, bad, each, false)
		jsonArray(data, bad, each)
		csvRows(data, bad, each)
		yamlRows(data, bad, each)
		for _, r := range rows {
			if r.line < 1 || r.line > lines {
				t.Errorf("a row at line %d of %d", r.line, lines)
			}
		}
	})
}
