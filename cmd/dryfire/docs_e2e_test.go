package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/docblock"
)

// docCommands returns the commands of a docs block, one a line, each
// without its # comment.
func docCommands(t *testing.T, block string) []string {
	t.Helper()
	var cmds []string
	for _, l := range strings.Split(strings.TrimSpace(block), "\n") {
		cmd, _, _ := strings.Cut(l, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	return cmds
}

// TestDocsInstall: the install command of docs/getting-started.md builds
// a dryfire that runs (here into a temporary directory, not the clone).
func TestDocsInstall(t *testing.T) {
	block, err := docblock.Find("../../docs/getting-started.md", "go build -o dryfire ./cmd/dryfire")
	if err != nil {
		t.Fatal(err)
	}
	if cmds := docCommands(t, block); len(cmds) != 1 || cmds[0] != "go build -o dryfire ./cmd/dryfire" {
		t.Fatalf("the install block runs %q", cmds)
	}
	bin := filepath.Join(t.TempDir(), "dryfire")
	build := exec.Command("go", "build", "-o", bin, "./cmd/dryfire")
	build.Dir = filepath.Join("..", "..")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "--version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "dryfire ") {
		t.Fatalf("dryfire --version: %v: %s", err, out)
	}
}

// TestDocsWorldCommands: the commands at the top of docs/worlds.md, run
// from the repository root as the page says (go run ./cmd/dryfire being
// this package's binary): three drills pass, reproduce finds them
// identical, and, once the example agent's packages are installed, its
// two drills replay offline.
func TestDocsWorldCommands(t *testing.T) {
	block, err := docblock.Find("../../docs/worlds.md", "go run ./cmd/dryfire run examples/world/support.dryfire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cmds := docCommands(t, block)
	want := []string{
		"go run ./cmd/dryfire run examples/world/support.dryfire.yaml --json report.json",
		"go run ./cmd/dryfire reproduce report.json",
		"(cd examples/existing-agent && npm ci)",
		"go run ./cmd/dryfire run examples/world/agent.dryfire.yaml",
	}
	if strings.Join(cmds, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the page's commands are\n%s\nthis test runs\n%s", strings.Join(cmds, "\n"), strings.Join(want, "\n"))
	}
	bin := buildBinary(t, t.TempDir())
	report := filepath.Join(t.TempDir(), "report.json")
	root := filepath.Join("..", "..")
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "CI=true")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("dryfire %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := run("run", "examples/world/support.dryfire.yaml", "--json", report); !strings.Contains(out, "3 passed, 0 failed") {
		t.Errorf("the three drills:\n%s", out)
	}
	if out := run("reproduce", report); !strings.Contains(out, "3 identical, 0 different") {
		t.Errorf("reproduce:\n%s", out)
	}
	if testing.Short() {
		t.Skip("the example agent's drills run Node; skipped with -short")
	}
	nodeReady(t, exampleDir) // npm ci in examples/existing-agent
	if out := run("run", "examples/world/agent.dryfire.yaml"); !strings.Contains(out, "2 passed, 0 failed") {
		t.Errorf("the drills with the existing agent:\n%s", out)
	}
}

// TestReadmeQuickstart runs the README's first command as it is written,
// `go run ./cmd/dryfire run examples/quickstart`, from the repository root:
// one line per case, the summary, exit 0. (The block's other command,
// scripts/test.sh, is the one .ci/run runs: examples' TestReadmeCommands.)
func TestReadmeQuickstart(t *testing.T) {
	block, err := docblock.Find("../../README.md", "go run ./cmd/dryfire run examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	cmd := docCommands(t, block)[0]
	if cmd != "go run ./cmd/dryfire run examples/quickstart" {
		t.Fatalf("the README's first command is %q", cmd)
	}
	run := exec.Command("go", strings.Fields(cmd)[1:]...)
	run.Dir = filepath.Join("..", "..")
	run.Env = append(os.Environ(), "CI=true", "NO_COLOR=1", "CGO_ENABLED=0") // as buildBinary: one build in the cache
	out, err := run.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 || lines[3] != "3 passed, 0 failed" {
		t.Errorf("%s printed:\n%s", cmd, out)
	}
}
