package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

// The GitHub Actions matrix of docs/ci.md, run: each shard's dryfire steps
// with its matrix value, then the merge job's, in a directory that
// stands for the artifacts. The merged report is the unsharded run's.
func TestDocsShardWorkflow(t *testing.T) {
	root := repoRoot(t)
	block, err := docBlock(filepath.Join(root, "docs/ci.md"), "# .github/workflows/dryfire.yml")
	if err != nil {
		t.Fatal(err)
	}
	var wf struct {
		Jobs map[string]struct {
			Needs    string
			Strategy struct {
				Matrix struct{ Shard []int }
			}
			Steps []struct{ Run string }
		}
	}
	if err := yaml.Unmarshal([]byte(block), &wf); err != nil {
		t.Fatal(err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["report"]
	if len(shard.Strategy.Matrix.Shard) != 3 || merge.Needs != "shard" {
		t.Fatalf("the workflow's jobs: %+v", wf.Jobs)
	}
	dir := t.TempDir()
	t.Chdir(root)
	dryfire := func(line string, vars map[string]string) (int, string) {
		for k, v := range vars {
			line = strings.ReplaceAll(line, "${{ "+k+" }}", v)
		}
		args := strings.Fields(line)
		if len(args) == 0 || args[0] != "./dryfire" {
			return -1, "" // uses: and go build: this test is its own dryfire
		}
		var argv []string
		for _, a := range args[1:] {
			switch {
			case strings.Contains(a, "*"):
				m, _ := filepath.Glob(filepath.Join(dir, a))
				argv = append(argv, m...)
			case strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".xml"):
				argv = append(argv, filepath.Join(dir, a))
			default:
				argv = append(argv, a)
			}
		}
		var out bytes.Buffer
		code := cli.Main(argv, strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	ran := 0
	for _, n := range shard.Strategy.Matrix.Shard {
		for _, s := range shard.Steps {
			if code, out := dryfire(s.Run, map[string]string{"matrix.shard": strconv.Itoa(n)}); code > 0 {
				t.Fatalf("shard %d: %s: exit %d\n%s", n, s.Run, code, out)
			} else if code == 0 {
				ran++
			}
		}
	}
	// The page's merge command is the workflow's merge step.
	cmd, err := docBlock(filepath.Join(root, "docs/ci.md"), "dryfire merge shard-*.json")
	if err != nil {
		t.Fatal(err)
	}
	var merged string
	found := false
	for _, s := range merge.Steps {
		found = found || s.Run == "./"+strings.TrimSpace(cmd)
		code, out := dryfire(s.Run, nil)
		if code > 0 {
			t.Fatalf("merge: %s: exit %d\n%s", s.Run, code, out)
		}
		if code == 0 {
			ran++
			merged = out
		}
	}
	if !found {
		t.Errorf("no step of the merge job runs the page's %s", cmd)
	}
	if ran != 4 {
		t.Fatalf("%d dryfire steps ran, want 3 shards and a merge", ran)
	}
	var single bytes.Buffer
	if code := cli.Main([]string{"run", "examples/quickstart", "--json", filepath.Join(dir, "single.json")}, strings.NewReader(""), &single, &single); code != 0 {
		t.Fatalf("single run: exit %d\n%s", code, single.String())
	}
	if merged != single.String() {
		t.Errorf("the merge prints\n%s\nthe single run\n%s", merged, single.String())
	}
	for _, f := range []string{"report.json", "junit.xml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
