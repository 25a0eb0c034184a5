package examples_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/cli"
	"github.com/dryfire-dev/dryfire/report"
)

// TestDocsWorlds writes the files of docs/worlds.md (each fenced block
// after a "<!-- file: NAME -->" line) to a directory and runs its drills:
// the page's example stays true.
func TestDocsWorlds(t *testing.T) {
	dir := writeWorldFiles(t)
	p, err := dryfire.Load(nil, filepath.Join(dir, "records.dryfire.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Passed || c.Verdict != report.Passed {
			t.Errorf("%s: %s %s %+v", c.Name, c.Status, c.Reason, c.Checks)
		}
	}
}

// writeWorldFiles writes the files of docs/worlds.md (each fenced block
// after a "<!-- file: NAME -->" line) to a new directory.
func writeWorldFiles(t *testing.T) string {
	t.Helper()
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
	return dir
}

// TestDocsCI checks the workflows of docs/ci.md: each block is YAML, and
// each dryfire command in it runs as written on this repository (with
// GITHUB_ACTIONS=true, as on GitHub), exit 0.
func TestDocsCI(t *testing.T) {
	page, err := os.ReadFile("../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)<!-- ci: ([a-z]+) -->\n```yaml\n(.*?)```")
	command := regexp.MustCompile(`(?m)^\s*(?:- )?(?:run: )?dryfire (.+)$`)
	blocks := block.FindAllSubmatch(page, -1)
	if len(blocks) != 2 {
		t.Fatalf("found %d CI blocks in docs/ci.md; want 2", len(blocks))
	}
	for _, m := range blocks {
		var doc map[string]any
		if err := yaml.Unmarshal(m[2], &doc); err != nil || len(doc) == 0 {
			t.Errorf("%s: not YAML: %v", m[1], err)
		}
		cmds := command.FindAllSubmatch(m[2], -1)
		if len(cmds) == 0 {
			t.Errorf("%s: no dryfire command", m[1])
		}
		for _, c := range cmds {
			args := strings.Fields(string(c[1]))
			dir := t.TempDir()
			for i, a := range args {
				switch {
				case strings.HasPrefix(a, "examples/"):
					args[i] = filepath.Join("..", a)
				case strings.HasSuffix(a, ".xml") || strings.HasSuffix(a, ".json"):
					args[i] = filepath.Join(dir, a)
				}
			}
			t.Setenv("GITHUB_ACTIONS", "true")
			t.Setenv("GITHUB_STEP_SUMMARY", filepath.Join(dir, "summary.md"))
			t.Setenv("CI", "true")
			var out, errOut strings.Builder
			if code := cli.Main(args, strings.NewReader(""), &out, &errOut); code != 0 {
				t.Errorf("%s: dryfire %s: exit %d\n%s%s", m[1], c[1], code, out.String(), errOut.String())
			}
			if s, err := os.ReadFile(filepath.Join(dir, "summary.md")); err != nil || !strings.HasPrefix(string(s), "### dryfire: 3 passed, 0 failed") {
				t.Errorf("%s: job summary %q, %v", m[1], s, err)
			}
		}
	}
}
