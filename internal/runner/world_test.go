package runner_test

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// loadWorld loads a world suite and its world.
func loadWorld(t *testing.T, path string) ([]*spec.Suite, world.Worlds) {
	t.Helper()
	suites, worlds, ds := world.LoadFiles([]string{path}, nil, "")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return suites, worlds
}

func reportJSONValue(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

var duration = regexp.MustCompile(`"duration_ms": [0-9.e+-]+`)

func reportJSON(t *testing.T, rep *report.Report) string {
	t.Helper()
	b, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return duration.ReplaceAllString(string(b), "")
}

// Drills run on the script model through the world's tool session; the
// same seed gives byte-identical evidence and verdicts at any concurrency.
func TestWorldDrillsDeterministic(t *testing.T) {
	suites, worlds := loadWorld(t, "../../examples/world/support.dryfire.yaml")
	var first string
	for _, j := range []int{1, 2, 8, 1} {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Concurrency: j})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cases {
			if c.Status != report.Passed || c.Verdict != report.Passed || c.BuildHash == "" || c.Seed == nil || *c.Seed != 42 || len(c.Evidence) == 0 {
				t.Fatalf("%s: %s %s (verdict %s)", c.Name, c.Status, c.Reason, c.Verdict)
			}
		}
		got := reportJSON(t, rep)
		if first == "" {
			first = got
		} else if got != first {
			t.Fatalf("-j %d: the report differs", j)
		}
	}
	// The initial state is the scenario's, beside the final one; a drill
	// that refunds changes the final one only.
	rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds})
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for _, c := range rep.Cases {
		if len(c.InitialState) == 0 || len(c.InitialState) != len(c.State) {
			t.Errorf("%s: initial state %v, final %v", c.Name, c.InitialState, c.State)
		}
		if c.Input == "" {
			t.Errorf("%s: no input in the report", c.Name)
		}
		if reportJSONValue(c.InitialState) != reportJSONValue(c.State) {
			changed++
		}
	}
	if changed == 0 {
		t.Errorf("no drill changed the world's state: the initial state is the final one")
	}
	seed := int64(5)
	rep, err = runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if *rep.Cases[0].Seed != 5 {
		t.Errorf("seed %d", *rep.Cases[0].Seed)
	}
}

// A world suite without agent: (an SDK's) loads, and a run reports its
// drills as skipped, saying why, without asking for any key; with a
// command (dryfire reproduce -- COMMAND) they run.
func TestWorldSuiteWithoutAgentIsSkipped(t *testing.T) {
	suites, worlds := loadWorld(t, "../engine/testdata/project/tests/records.dryfire.yaml")
	if !suites[0].NoAgent {
		t.Fatal("NoAgent is not set")
	}
	rep, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Env: []string{}, Record: "once"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 3 || rep.Summary.Skipped != 3 {
		t.Fatalf("summary %+v", rep.Summary)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Skipped || c.Reason != "its agent is the test's own function: run it with runDrills / run_drills, or give the suite an agent" {
			t.Errorf("%s: %s %q", c.Name, c.Status, c.Reason)
		}
	}
	rep, err = runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Env: []string{}, Record: "none", Command: []string{"sh", "-c", "echo sent"}, Filter: regexp.MustCompile("^mail-twice$")})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != report.Failed || c.Output != "sent" {
		t.Errorf("with a command: %s %q %q; want it run (and failed: it sends no mail)", c.Status, c.Reason, c.Output)
	}
}
