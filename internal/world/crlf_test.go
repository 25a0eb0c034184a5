package world

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A world checked out with CRLF line ends (Git on Windows, core.autocrlf)
// is the same world: the same diagnostics, behavior sources and build
// hash as with LF, so a report made on Windows reads as one made
// elsewhere. The hash differed before the modules' CRLF was read as LF.
func TestCRLFWorldIsTheLFWorld(t *testing.T) {
	load := func(crlf bool) (*World, string) {
		dir := t.TempDir()
		for _, f := range []string{"support.world.yaml", "behaviors.star"} {
			data, err := os.ReadFile(filepath.Join("..", "..", "examples", "world", f))
			if err != nil {
				t.Fatal(err)
			}
			text := strings.ReplaceAll(string(data), "\r\n", "\n")
			if crlf {
				text = strings.ReplaceAll(text, "\n", "\r\n")
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		w, ds := Load(filepath.Join(dir, "support.world.yaml"), &LoadOptions{Root: dir})
		if w == nil || ds.HasErrors() {
			t.Fatalf("crlf %v: %v", crlf, ds)
		}
		return w, strings.ReplaceAll(render(ds), filepath.ToSlash(dir), "DIR")
	}
	lf, lfDiags := load(false)
	crlf, crlfDiags := load(true)
	if lfDiags != crlfDiags {
		t.Errorf("diagnostics\nLF:\n%s\nCRLF:\n%s", lfDiags, crlfDiags)
	}
	if lf.Sources["behaviors.star"] != crlf.Sources["behaviors.star"] {
		t.Error("the behavior module's source keeps its CR")
	}
	scenarios := []string{""}
	for name := range lf.Scenarios {
		scenarios = append(scenarios, name)
	}
	for _, scenario := range scenarios {
		a, err := lf.New(Drill{Scenario: scenario})
		if err != nil {
			t.Fatal(err)
		}
		b, err := crlf.New(Drill{Scenario: scenario})
		if err != nil {
			t.Fatal(err)
		}
		if a.Build().Hash != b.Build().Hash {
			t.Errorf("scenario %q: build hash %s with LF, %s with CRLF", scenario, a.Build().Hash, b.Build().Hash)
		}
	}
}
