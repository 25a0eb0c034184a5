package runner_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
)

func loadWorldSuite(t *testing.T) []*spec.Suite {
	t.Helper()
	suites, ds, err := spec.Load([]string{"../../examples/world/support.dryfire.yaml"}, nil)
	if err != nil || ds.HasErrors() {
		t.Fatal(err, ds)
	}
	if ds := world.AttachSuite(suites[0], world.Cache{}); ds.HasErrors() {
		t.Fatal(ds)
	}
	return suites
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
	suites := loadWorldSuite(t)
	var first string
	for _, j := range []int{1, 2, 8, 1} {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: j})
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
	seed := int64(5)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Seed: &seed})
	if err != nil {
		t.Fatal(err)
	}
	if *rep.Cases[0].Seed != 5 {
		t.Errorf("seed %d", *rep.Cases[0].Seed)
	}
}
