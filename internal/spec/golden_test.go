package spec

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/invalid")

// invalidSuites lists the malformed suites of the golden corpus.
func invalidSuites(t testing.TB) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/invalid/*.dryfire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func render(ds yamlpos.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestInvalidGolden loads every suite of testdata/invalid and compares its
// diagnostics with NAME.golden. Files named warn_* must load with warnings
// only; every other file must have at least one error. Run with -update to
// rewrite the goldens, then read every changed line.
func TestInvalidGolden(t *testing.T) {
	files := invalidSuites(t)
	if len(files) < 45 {
		t.Fatalf("golden corpus has %d suites; want at least 45", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".dryfire.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, ds := Parse(filepath.ToSlash(file), data, nil)
			got := render(ds)
			golden := strings.TrimSuffix(file, ".dryfire.yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestInvalidGolden -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("diagnostics differ from %s (-want +got):\n%s", golden, diff)
			}

			errs, warns := ds.Count()
			if strings.HasPrefix(name, "warn_") {
				if errs > 0 || warns == 0 {
					t.Errorf("a warn_ suite must give warnings only; got %d errors, %d warnings", errs, warns)
				}
				if s == nil {
					t.Error("a suite with warnings only must load")
				}
			} else if errs == 0 {
				t.Errorf("no error reported for an invalid suite")
			}
			for _, d := range ds {
				if d.Pos.File != filepath.ToSlash(file) {
					t.Errorf("diagnostic names file %q; want %q", d.Pos.File, file)
				}
			}
		})
	}
}
