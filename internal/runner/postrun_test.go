package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// A command check runs after the program, in its workspace: its exit
// code, its output (standard error too) and its timeout decide; the end
// of its output is in the message.
func TestCommandChecks(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "repo"), 0o755)
	os.WriteFile(filepath.Join(dir, "repo", "calc.txt"), []byte("broken\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "s.dryfire.yaml"), []byte(`version: 1
agent:
  command: [sh, -c, 'if [ "$DRYFIRE_INPUT" = fix ]; then echo fixed > calc.txt; fi; echo done']
  network: open
  provider: script
script: [{text: unused, optional: true}]
workspace: repo
cases:
  - name: fixes
    input: fix
    expect:
      - command: grep -q fixed calc.txt
      - command: {run: "echo tests ran >&2; seq 1 50", contains: "tests ran", regex: "^tests ran\n1\n"}
  - name: does not fix
    input: leave it
    expect:
      - command: {run: "cat calc.txt; grep -q fixed calc.txt"}
      - command: {run: "exit 3", exit_code: 3}
      - command: {run: "sleep 5", timeout_s: 0.2}
`), 0o644)
	rep, err := runner.Run(context.Background(), load(t, filepath.Join(dir, "s.dryfire.yaml")), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, c.Name+": "+string(c.Status))
		for _, ch := range c.Checks {
			got = append(got, strings.ReplaceAll(ch.Message, dir, "DIR"))
			if !ch.Passed {
				got[len(got)-1] = "FAILED " + got[len(got)-1]
			}
		}
	}
	want := []string{
		"fixes: " + string(report.Passed),
		"`grep -q fixed calc.txt` exited 0 (expected 0); no output",
		"`echo tests ran >&2; seq 1 50` exited 0 (expected 0); its output: \"tests ran\\n1\\n2\\n",
		"does not fix: " + string(report.Failed),
		"FAILED `cat calc.txt; grep -q fixed calc.txt` exited 1; expected 0; its output: \"broken\"",
		"`exit 3` exited 3 (expected 3); no output",
		"FAILED `sleep 5` did not finish within 0.2 s (its timeout_s), and was killed; no output",
	}
	if len(got) != len(want) {
		t.Fatalf("got\n%s", strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("%d: got\n%s\nwant it to start\n%s", i, got[i], want[i])
		}
	}
}
