package runner_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/passthrough"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
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
			t.Errorf("%s: %s %s\n%s\n%s", c.Name, c.Status, c.Reason, strings.Join(c.Details(), "\n"), c.Stderr)
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
	text := strings.Join(failed.Details(), "\n")
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

// implWorkspaceAgent calls the case's impl tool once over MCP and prints
// what it answered.
const implWorkspaceAgent = `import json, os, sys, urllib.request
body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "note", "arguments": {"text": os.environ["DRYFIRE_CASE"]}}}
req = urllib.request.Request(os.environ["DRYFIRE_MCP_URL"], data=json.dumps(body).encode(), headers={"Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
with urllib.request.urlopen(req, timeout=30) as r:
    answer = r.read().decode()
print(json.loads(answer)["result"]["content"][0]["text"])
`

// The impl: code of a case with a workspace runs in that workspace: its
// working directory and DRYFIRE_WORKSPACE are the case's copy (the same
// as its program's), and its modules still come from the suite's
// directory. Eight cases at once write the same file name from impl
// code; each file check sees its own.
func TestWorkspaceImpl(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "template"), 0o755)
	os.WriteFile(filepath.Join(dir, "template", "seed.txt"), []byte("seed\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "shop"), 0o755)
	os.WriteFile(filepath.Join(dir, "shop", "__init__.py"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "shop", "tools.py"), []byte(`import os, time
def note(args):
    with open("out.txt", "w") as f:
        f.write(args["text"])
    time.sleep(0.1)
    same = os.path.samefile(os.getcwd(), os.environ["DRYFIRE_WORKSPACE"])
    return "%s %s %s" % (open("out.txt").read(), "same" if same else "elsewhere", open("seed.txt").read().strip())
`), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.py"), []byte(implWorkspaceAgent), 0o644)
	var b strings.Builder
	b.WriteString("version: 1\nworkspace: template\nagent:\n  command: [python3, agent.py]\ntools:\n  note:\n    input_schema: {type: object}\nmocks:\n  note:\n    - impl: shop.tools:note\ncases:\n")
	for i := 1; i <= 8; i++ {
		fmt.Fprintf(&b, "  - name: c%d\n    input: go\n    expect:\n      - output: {equals: \"c%d same seed\"}\n      - file: {path: out.txt, equals: c%d}\n", i, i, i)
	}
	path := filepath.Join(dir, "ws.dryfire.yaml")
	os.WriteFile(path, []byte(b.String()), 0o644)
	s, ds := spec.Parse(path, []byte(b.String()), &spec.Options{ResolveImpl: func(string) error { return nil }})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	impl := passthrough.New(passthrough.Options{Dir: dir})
	defer impl.Close(context.Background(), io.Discard)
	rep, err := runner.Run(context.Background(), []*spec.Suite{s}, runner.Options{Concurrency: 8, Record: cassette.None, Env: commandEnv(), Impl: impl})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Passed {
			t.Errorf("%s: %s %s\n%s\n%s", c.Name, c.Status, c.Reason, strings.Join(c.Details(), "\n"), c.Stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "out.txt")); err == nil {
		t.Error("impl code wrote into the suite's directory")
	}
}

// Hole 6 of issue 36: recheck reads a file check's file in the report's
// workspace.kept, and a report may name any directory there. Only a
// directory --keep-workspaces makes (dryfire-workspace-* in the temporary
// directory, not a symlink) is read: a report naming another (/etc, one
// outside the project, a dryfire-workspace-* link leading out) errs its
// case, naming the bound, and no file there is read or printed.
func TestRecheckKeptWorkspaceIsConfined(t *testing.T) {
	dir := t.TempDir()
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	os.MkdirAll(filepath.Join(dir, "template"), 0o755)
	outside := t.TempDir()
	const secret = "TOP-SECRET-outside-the-project"
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte(secret), 0o644)
	os.WriteFile(filepath.Join(dir, "agent.sh"), []byte("echo mine > secret.txt\necho done\n"), 0o755)
	suites := writeSuite(t, dir, "kept.dryfire.yaml", "version: 1\nworkspace: template\nagent:\n  command: [sh, agent.sh]\ncases:\n  - name: a\n    input: go\n    expect:\n      - file: {path: secret.txt, equals: never}\n")
	opts := runner.Options{Record: cassette.None, Env: commandEnv(), KeepWorkspaces: true}
	rep, err := runner.Run(context.Background(), suites, opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != report.Failed || c.Workspace == nil || c.Workspace.Kept == "" {
		t.Fatalf("the run: %s %s, workspace %+v", c.Status, c.Reason, c.Workspace)
	}
	// The kept workspace is read.
	again, err := runner.Recheck(context.Background(), suites, rep, "report.json", opts)
	if err != nil {
		t.Fatal(err)
	}
	if c := again.Cases[0]; c.Status != report.Failed || !strings.Contains(strings.Join(c.Details(), "\n"), `"mine\n"`) {
		t.Errorf("the kept workspace was not read: %s %s\n%s", c.Status, c.Reason, strings.Join(c.Details(), "\n"))
	}
	link := filepath.Join(tmp, "dryfire-workspace-link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	for _, kept := range []string{outside, link, filepath.Join(tmp, "..", filepath.Base(outside))} {
		rep.Cases[0].Workspace.Kept = kept
		again, err := runner.Recheck(context.Background(), suites, rep, "report.json", opts)
		if err != nil {
			t.Fatal(err)
		}
		js, _ := again.JSON()
		text := strings.Join(again.Cases[0].Details(), "\n")
		if strings.Contains(string(js)+text, secret) {
			t.Errorf("kept %s: the file outside was read:\n%s", kept, text)
		}
		if c := again.Cases[0]; c.Status != report.Errored || !strings.Contains(c.Reason, "dryfire-workspace-") {
			t.Errorf("kept %s: %s %q, want an error naming where workspaces are kept", kept, c.Status, c.Reason)
		}
	}
}
