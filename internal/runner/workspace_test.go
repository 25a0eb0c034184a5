package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/runner"
)

// workspaceAgent writes the case's name into out.txt of its working
// directory, waits so that the other cases write theirs meanwhile, prints
// what it reads back, and changes the template's files.
const workspaceAgent = `printf '%s' "$DRYFIRE_CASE" > out.txt
pwd -P > where.txt
[ "$(cd "$DRYFIRE_WORKSPACE" && pwd -P)" = "$(pwd -P)" ] || echo "DRYFIRE_WORKSPACE is not the working directory" >&2
sleep 0.2
cat out.txt
rm scratch.txt
echo "seen by $DRYFIRE_CASE" >> notes.txt
`

// Sixteen cases at once write the same file name, each in its own copy of
// the template: every file check sees only its own case's; the report
// lists each workspace's changes; --keep-workspaces keeps the one that
// failed, and nothing else is left behind.
func TestWorkspacePerCase(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tpl := filepath.Join(dir, "template")
	os.MkdirAll(filepath.Join(tpl, "sub"), 0o755)
	os.WriteFile(filepath.Join(tpl, "notes.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(tpl, "scratch.txt"), []byte("scratch\n"), 0o644)
	os.WriteFile(filepath.Join(tpl, "sub", "keep.json"), []byte(`{"a": {"b": [1, 2]}}`), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte(workspaceAgent), 0o755)
	var b strings.Builder
	b.WriteString("version: 1\nworkspace: template\nagent:\n  command: [sh, agent.sh]\ncases:\n")
	for i := 1; i <= 16; i++ {
		name := fmt.Sprintf("c%02d", i)
		want := name
		if i == 16 {
			want = "someone else"
		}
		fmt.Fprintf(&b, `  - name: %s
    input: go
    expect:
      - output: {equals: %s}
      - file: {path: out.txt, equals: %q}
      - file: {path: scratch.txt, absent: true}
      - file: {path: notes.txt, regex: "^hello\\nseen by %s\\n$"}
      - file: {path: sub/keep.json, json_path: "$.a.b[1]", equals: 2}
`, name, name, want, name)
	}
	suites := writeSuite(t, dir, "ws.dryfire.yaml", b.String())
	rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 16, Record: cassette.None, Env: commandEnv(), KeepWorkspaces: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range rep.Cases {
		if i == 15 {
			continue
		}
		if c.Status != report.Passed {
			t.Errorf("%s: %s %s\n%s\n%s", c.Name, c.Status, c.Reason, strings.Join(report.Details(&c), "\n"), c.Stderr)
			continue
		}
		ws := c.Workspace
		if ws == nil || ws.Kept != "" || len(ws.Changes) != 4 {
			t.Errorf("%s: workspace %+v", c.Name, ws)
			continue
		}
		got := fmt.Sprintf("%s %s|%s %s|%s %s|%s %s", ws.Changes[0].Change, ws.Changes[0].Path, ws.Changes[1].Change, ws.Changes[1].Path,
			ws.Changes[2].Change, ws.Changes[2].Path, ws.Changes[3].Change, ws.Changes[3].Path)
		if want := "modified notes.txt|added out.txt|removed scratch.txt|added where.txt"; got != want {
			t.Errorf("%s: changes %s, want %s", c.Name, got, want)
		}
		if want := "+seen by " + c.Name; !strings.Contains(ws.Changes[0].Diff, want) {
			t.Errorf("%s: the diff of notes.txt lacks %q:\n%s", c.Name, want, ws.Changes[0].Diff)
		}
	}
	failed := rep.Cases[15]
	if failed.Status != report.Failed || failed.Workspace == nil || failed.Workspace.Kept == "" {
		t.Fatalf("c16: %s %s, workspace %+v", failed.Status, failed.Reason, failed.Workspace)
	}
	kept := failed.Workspace.Kept
	if data, err := os.ReadFile(filepath.Join(kept, "out.txt")); err != nil || string(data) != "c16" {
		t.Errorf("the kept workspace holds %q (%v)", data, err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "dryfire-workspace-*"))
	if len(left) != 1 || left[0] != kept {
		t.Errorf("workspaces left behind: %v (want only %s)", left, kept)
	}
	// The template is never written.
	if data, _ := os.ReadFile(filepath.Join(tpl, "notes.txt")); string(data) != "hello\n" {
		t.Errorf("the template changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(tpl, "out.txt")); err == nil {
		t.Error("the agent wrote into the template")
	}
	text := strings.Join(report.Details(&failed), "\n")
	text = strings.ReplaceAll(strings.ReplaceAll(text, kept, "$KEPT"), dir, "$DIR")
	golden(t, "testdata/workspace_failed.golden", text+"\n")
	js, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(js), `"change": "removed"`) || !strings.Contains(string(js), `"kept": `) {
		t.Errorf("the JSON report lacks the workspace:\n%.2000s", js)
	}
}
