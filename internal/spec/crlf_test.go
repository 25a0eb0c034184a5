package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A suite checked out with CRLF line ends (Git on Windows, core.autocrlf)
// is the same suite: every file of the golden corpus and every example
// gives the same diagnostics (positions and messages) with CRLF as with
// LF, and every suite that loads decodes to the same values (block
// scalars, folded and quoted multi-line strings included). The Windows
// build of this test runs under Wine (scripts/ci.d/70-wine.sh).
func TestCRLFSuitesReadAsLF(t *testing.T) {
	files := invalidSuites(t)
	examples, _ := filepath.Glob("../../examples/*/*.dryfire.yaml")
	files = append(files, examples...)
	files = append(files, "testdata/crlf.dryfire.yaml")
	opts := &Options{ResolveImpl: func(string) error { return nil }}
	decoded := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lf := strings.ReplaceAll(string(data), "\r\n", "\n")
		crlf := strings.ReplaceAll(lf, "\n", "\r\n")
		name := filepath.ToSlash(file)
		s1, ds1 := Parse(name, []byte(lf), opts)
		s2, ds2 := Parse(name, []byte(crlf), opts)
		if diff := cmp.Diff(render(ds1), render(ds2)); diff != "" {
			t.Errorf("%s: diagnostics with CRLF (-LF +CRLF):\n%s", file, diff)
		}
		if (s1 == nil) != (s2 == nil) {
			t.Errorf("%s: suite %v with LF, %v with CRLF", file, s1 != nil, s2 != nil)
			continue
		}
		if s1 == nil || ds1.HasErrors() {
			if strings.HasSuffix(file, "crlf.dryfire.yaml") {
				t.Errorf("%s does not load: %v", file, ds1)
			}
			continue
		}
		j1, err1 := json.Marshal(s1)
		j2, err2 := json.Marshal(s2)
		if err1 != nil || err2 != nil {
			t.Fatalf("%s: %v %v", file, err1, err2)
		}
		if diff := cmp.Diff(string(j1), string(j2)); diff != "" {
			t.Errorf("%s: decoded suite with CRLF (-LF +CRLF):\n%s", file, diff)
		}
		decoded++
	}
	if decoded < 10 {
		t.Errorf("only %d suites decoded to compare", decoded)
	}
}
