package main_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Mastra as a real client (examples/mastra-agent, issue 37): its
// MCPClient shows dryfire's tools to the model as dryfire_lookup_order,
// and the script and the checks, saying lookup_order, hold; its model's
// two calls in one turn, which Mastra runs at once, give one report byte
// for byte (durations aside) in runs at -j 1 and at -j 8
// (sameReportRuns: 5 each).
func TestE2EMastra(t *testing.T) {
	if testing.Short() {
		t.Skip("runs of the Mastra agent at each of two concurrencies")
	}
	dir := filepath.Join("..", "..", "examples", "mastra-agent")
	nodeReady(t, dir)
	bin := buildBinary(t, t.TempDir())
	env := exampleEnv("CI=true")
	validate := exec.Command(bin, "validate", "support.dryfire.yaml")
	validate.Dir, validate.Env = dir, env
	if out, err := validate.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "1 file, 2 cases: ok" {
		t.Errorf("validate: %v\n%s", err, out)
	}
	first, runs := "", sameReportRuns(t)
	for _, j := range []string{"1", "8"} {
		for run := range runs {
			got := dryfireRunPath(t, bin, dir, "support.dryfire.yaml", env, "-j", j)
			if first == "" {
				first = got
				if !strings.Contains(got, `"passed": 2,`) || !strings.Contains(got, `tool \"dryfire_lookup_order\"`) {
					t.Fatalf("support.dryfire.yaml:\n%s", got)
				}
				continue
			}
			if got != first {
				t.Fatalf("run %d at -j %s differs from the first:\n%s\nthe first:\n%s", run+1, j, got, first)
			}
		}
	}
}
