package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/dryfire-dev/dryfire"
)

// TestDocsWorlds writes the files of docs/worlds.md (each fenced block
// after a "<!-- file: NAME -->" line) to a directory and runs its drills:
// the page's example stays true.
func TestDocsWorlds(t *testing.T) {
	page, err := os.ReadFile("../docs/worlds.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- file: ([^ ]+) -->\n```[a-z]*\n(.*?)```")
	dir := t.TempDir()
	n := 0
	for _, m := range block.FindAllSubmatch(page, -1) {
		if err := os.WriteFile(filepath.Join(dir, string(m[1])), m[2], 0o644); err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 3 {
		t.Fatalf("found %d files in docs/worlds.md; want 3", n)
	}
	p, err := dryfire.Load(nil, filepath.Join(dir, "records.dryfire.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Status != dryfire.Passed || c.Verdict != dryfire.Passed {
			t.Errorf("%s: %s %s %+v", c.Name, c.Status, c.Reason, c.Checks)
		}
	}
}
