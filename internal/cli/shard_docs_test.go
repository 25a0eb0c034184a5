package cli_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

// The GitHub Actions workflow of docs/ci.md is docs/ci/dryfire.yml, word
// for word (scripts/ci.d/55-actionlint.sh lints the file).
func TestDocsWorkflowIsTheFile(t *testing.T) {
	root := repoRoot(t)
	block, err := docBlock(filepath.Join(root, "docs/ci.md"), "# .github/workflows/dryfire.yml")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join(root, "docs/ci/dryfire.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if block != string(file) {
		t.Errorf("docs/ci.md's workflow is not docs/ci/dryfire.yml: copy the file into the page again")
	}
}

// The GitHub Actions workflow of docs/ci.md (docs/ci/dryfire.yml), run:
// each shard's dryfire steps with its matrix value and environment, then
// the merge job's, in a directory that stands for the artifacts, with the
// unsharded run's report as the base branch's. The merged report is the
// unsharded run's; the comparison goes to the job summary.
func TestDocsShardWorkflow(t *testing.T) {
	root := repoRoot(t)
	data, err := os.ReadFile(filepath.Join(root, "docs/ci/dryfire.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		Run string
		Env map[string]string
	}
	var wf struct {
		Jobs map[string]struct {
			Needs    string
			Strategy struct {
				Matrix struct{ Shard []int }
			}
			Steps []step
		}
	}
	if err := yaml.Unmarshal(data, &wf); err != nil {
		t.Fatal(err)
	}
	shard, merge := wf.Jobs["shard"], wf.Jobs["report"]
	if len(shard.Strategy.Matrix.Shard) != 3 || merge.Needs != "shard" {
		t.Fatalf("the workflow's jobs: %+v", wf.Jobs)
	}
	dir := t.TempDir()
	t.Chdir(root)
	summary := filepath.Join(dir, "summary.md")
	// compare is there once the command is (issue 27): until then its step is left out.
	hasCompare := cli.Main([]string{"compare", "--help"}, strings.NewReader(""), io.Discard, io.Discard) == 0
	skipped := 0
	// dryfire runs a step's ./dryfire lines (uses:, go build and gh are
	// GitHub's: this test is its own dryfire), with vars for ${{ }}.
	dryfire := func(s step, vars map[string]string) (int, string) {
		expand := func(v string) string {
			for k, x := range vars {
				v = strings.ReplaceAll(v, "${{ "+k+" }}", x)
			}
			return v
		}
		for k, v := range s.Env {
			t.Setenv(k, expand(v))
		}
		code, out := -1, ""
		for _, line := range strings.Split(s.Run, "\n") {
			line = strings.TrimSpace(expand(line))
			args := strings.Fields(line)
			if len(args) == 0 || args[0] != "./dryfire" {
				continue
			}
			if args[1] == "compare" {
				if !hasCompare {
					skipped++
					continue
				}
				// On GitHub Actions compare appends its Markdown to the job summary.
				t.Setenv("GITHUB_ACTIONS", "true")
				t.Setenv("GITHUB_STEP_SUMMARY", summary)
			}
			var argv []string
			for _, a := range args[1:] {
				switch {
				case strings.Contains(a, "*"):
					m, _ := filepath.Glob(filepath.Join(dir, a))
					argv = append(argv, m...)
				case strings.HasSuffix(a, ".json") || strings.HasSuffix(a, ".xml") || strings.HasSuffix(a, ".md"):
					argv = append(argv, filepath.Join(dir, a))
				default:
					argv = append(argv, a)
				}
			}
			var o bytes.Buffer
			code = cli.Main(argv, strings.NewReader(""), &o, &o)
			out = o.String()
			if code != 0 {
				return code, out
			}
		}
		return code, out
	}
	// The base branch's report: the unsharded run's.
	var single bytes.Buffer
	if err := os.Mkdir(filepath.Join(dir, "base"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code := cli.Main([]string{"run", "examples/quickstart", "--json", filepath.Join(dir, "base/report.json")}, strings.NewReader(""), &single, &single); code != 0 {
		t.Fatalf("single run: exit %d\n%s", code, single.String())
	}
	ran := 0
	for _, n := range shard.Strategy.Matrix.Shard {
		for _, s := range shard.Steps {
			vars := map[string]string{"matrix.shard": strconv.Itoa(n), "strategy.job-total": strconv.Itoa(len(shard.Strategy.Matrix.Shard))}
			if code, out := dryfire(s, vars); code > 0 {
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
		isMerge := s.Run == "./"+strings.TrimSpace(cmd)
		found = found || isMerge
		code, out := dryfire(s, nil)
		if code > 0 {
			t.Fatalf("merge: %s: exit %d\n%s", s.Run, code, out)
		}
		if code == 0 {
			ran++
		}
		if isMerge {
			merged = out
		}
	}
	if !found {
		t.Errorf("no step of the merge job runs the page's %s", cmd)
	}
	if ran+skipped != 5 {
		t.Fatalf("%d dryfire steps ran (%d left out), want 3 shards, a merge and a comparison", ran, skipped)
	}
	if hasCompare {
		sum, err := os.ReadFile(summary)
		if err != nil || len(sum) == 0 {
			t.Errorf("the comparison wrote no job summary (%v)", err)
		}
		if md, err := os.ReadFile(filepath.Join(dir, "comparison.md")); err != nil || len(md) == 0 || !strings.Contains(string(sum), string(md)) {
			t.Errorf("comparison.md is not in the job summary (%v):\n%s\n--- summary:\n%s", err, md, sum)
		}
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
