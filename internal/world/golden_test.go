package world

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

func render(ds yamlpos.Diagnostics) string {
	var b strings.Builder
	for _, d := range ds {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// TestInvalidWorldsGolden loads every world of testdata/invalid and
// compares its diagnostics with NAME.golden (-update rewrites them). Files
// named warn_* load with warnings only; every other one has an error.
func TestInvalidWorldsGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.world.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 30 {
		t.Fatalf("golden corpus has %d worlds; want at least 30", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".world.yaml")
		t.Run(name, func(t *testing.T) {
			w, ds := Load(filepath.ToSlash(file), nil)
			got := render(ds)
			golden := strings.TrimSuffix(file, ".world.yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestInvalidWorldsGolden -update)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("diagnostics differ from %s (-want +got):\n%s", golden, diff)
			}
			errs, warns := ds.Count()
			if strings.HasPrefix(name, "warn_") {
				if errs > 0 || warns == 0 || w == nil {
					t.Errorf("a warn_ world must load with warnings only; got %d errors, %d warnings", errs, warns)
				}
			} else if errs == 0 {
				t.Error("no error reported for an invalid world")
			}
			for _, d := range ds {
				if !strings.Contains(d.Pos.File, "testdata/invalid/") || d.Pos.Line < 1 || d.Pos.Col < 1 {
					t.Errorf("unpositioned diagnostic %v", d)
				}
			}
		})
	}
}
