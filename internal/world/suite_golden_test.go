package world

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// TestInvalidWorldSuitesGolden: malformed world suites, each problem at
// its position in the suite (NAME.golden; -update rewrites them).
func TestInvalidWorldSuitesGolden(t *testing.T) {
	files, _ := filepath.Glob("testdata/suites/*.dryfire.yaml")
	if len(files) < 7 {
		t.Fatalf("%d suites", len(files))
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".dryfire.yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, ds := spec.Parse(filepath.ToSlash(file), data, nil)
			if s != nil && s.World != "" {
				_, wds := AttachSuite(s, Cache{}, "")
				ds = SortDiagnostics(append(ds, wds...))
			}
			got := render(ds)
			golden := strings.TrimSuffix(file, ".dryfire.yaml") + ".golden"
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, _ := os.ReadFile(golden)
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("diagnostics differ from %s (-want +got):\n%s", golden, diff)
			}
			if !ds.HasErrors() {
				t.Error("no error")
			}
		})
	}
}
