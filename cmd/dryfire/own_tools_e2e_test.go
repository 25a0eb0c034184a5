package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// The Vercel AI SDK as a real client of the transcript (issue 37): own.mjs,
// a ten-line agent whose tools are its own functions, has every call
// checked (called, with, order, a strict trajectory) and marked "where":
// "own" in the JSON report, with no warning from validate; agent.ts, whose
// model asks for two MCP calls in one turn (the SDK runs them at once),
// gives one report byte for byte (durations aside) in runs at -j 1 and at
// -j 8 (sameReportRuns: 5 each): the calls are in the model's order, not their arrival's.
func TestE2EOwnTools(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of the example agent at each of two concurrencies")
	}
	nodeReady(t, exampleDir)
	bin := buildBinary(t, t.TempDir())
	env := exampleEnv("CI=true")

	validate := exec.Command(bin, "validate", "own.dryfire.yaml", "scripted.dryfire.yaml")
	validate.Dir, validate.Env = exampleDir, env
	out, err := validate.CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "2 files, 3 cases: ok" {
		t.Errorf("validate: %v\n%s", err, out)
	}

	own := dryfireRunPath(t, bin, exampleDir, "own.dryfire.yaml", env)
	if !strings.Contains(own, `"passed": 1,`) || strings.Count(own, `"where": "own"`) != 2 {
		t.Errorf("own.dryfire.yaml:\n%s", own)
	}

	first, runs := "", sameReportRuns(t)
	for _, j := range []string{"1", "8"} {
		for run := range runs {
			got := dryfireRunPath(t, bin, exampleDir, "scripted.dryfire.yaml", env, "-j", j)
			if first == "" {
				first = got
				if !strings.Contains(got, `"passed": 2,`) {
					t.Fatalf("scripted.dryfire.yaml:\n%s", got)
				}
				continue
			}
			if got != first {
				t.Fatalf("run %d at -j %s differs from the first:\n%s\nthe first:\n%s", run+1, j, got, first)
			}
		}
	}
}
