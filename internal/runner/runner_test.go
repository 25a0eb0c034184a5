package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

func load(t testing.TB, path string) []*spec.Suite {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, ds := spec.Parse(path, data, nil)
	if ds.HasErrors() {
		t.Fatalf("%s:\n%v", path, ds)
	}
	return []*spec.Suite{s}
}

var durations = regexp.MustCompile(`"duration_ms": [0-9.e+-]+`)

// stableJSON is the report as JSON without its durations, the only field
// that may vary between runs.
func stableJSON(t testing.TB, rep *report.Report) string {
	t.Helper()
	data, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	return durations.ReplaceAllString(string(data), `"duration_ms": 0`)
}

func TestMixedResults(t *testing.T) {
	rep, err := runner.Run(context.Background(), load(t, "testdata/mixed.dryfire.yaml"), runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range rep.Cases {
		got = append(got, fmt.Sprintf("%s: %s", c.Name, c.Status))
	}
	want := []string{
		"passes with a retry: passed",
		"unmatched call and failing checks: failed",
		"sequence runs to its last entry: failed",
		"case mocks replace the suite's: passed",
		"script runs out: error",
		"max turns reached: error",
		"skipped: skipped",
		"sequence state is per case: passed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if want := (report.Summary{Passed: 3, Failed: 2, Error: 2, Skipped: 1}); rep.Summary != want {
		t.Errorf("summary = %+v, want %+v", rep.Summary, want)
	}
	// The sequence advanced once per call and stuck on its last entry.
	var results []string
	for _, tc := range rep.Cases[2].ToolCalls {
		results = append(results, tc.Result)
	}
	if diff := cmp.Diff([]string{`{"tier":"silver"}`, "busy", `{"cached":true,"tier":"silver"}`, `{"cached":true,"tier":"silver"}`}, results); diff != "" {
		t.Errorf("sequence results (-want +got):\n%s", diff)
	}
	if c := rep.Cases[1]; c.ToolCalls[0].Outcome != "unmatched" || c.ToolCalls[0].NearMiss == nil {
		t.Errorf("first call of %q = %+v, want unmatched with a near miss", c.Name, c.ToolCalls[0])
	}
	if c := rep.Cases[6]; c.Reason != "not today" {
		t.Errorf("skip reason = %q", c.Reason)
	}
}

// TestDeterminism: the same suite gives a byte-identical report (durations
// aside) on every run, at any concurrency.
func TestDeterminism(t *testing.T) {
	suites := load(t, "testdata/mixed.dryfire.yaml")
	first, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := stableJSON(t, first)
	runs := 20
	if testing.Short() {
		runs = 5
	}
	for _, n := range []int{1, 2, 16} {
		for i := range runs {
			rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: n})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, stableJSON(t, rep)); diff != "" {
				t.Fatalf("run %d at concurrency %d differs from the first (-first +this):\n%s", i, n, diff)
			}
		}
	}
}

// TestDeterminismShared runs several reports at once over the same loaded
// suites: compiled mocks are shared, state is per case.
func TestDeterminismShared(t *testing.T) {
	suites := load(t, "testdata/mixed.dryfire.yaml")
	first, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := stableJSON(t, first)
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Go(func() {
			rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 16})
			if err != nil {
				t.Error(err)
				return
			}
			got[i] = stableJSON(t, rep)
		})
	}
	wg.Wait()
	for i, g := range got {
		if g != want {
			t.Errorf("concurrent run %d differs: %s", i, cmp.Diff(want, g))
		}
	}
}

func TestFilter(t *testing.T) {
	suites := load(t, "testdata/mixed.dryfire.yaml")
	rep, err := runner.Run(context.Background(), suites, runner.Options{Filter: regexp.MustCompile(`^sequence|skip`)})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
	}
	want := []string{"sequence runs to its last entry", "skipped", "sequence state is per case"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("filtered cases (-want +got):\n%s", diff)
	}
	if want := (report.Summary{Passed: 1, Failed: 1, Skipped: 1}); rep.Summary != want {
		t.Errorf("summary = %+v, want %+v", rep.Summary, want)
	}
	// A filtered-out case leaves no trace, and does not change the others.
	full, err := runner.Run(context.Background(), suites, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	last := full.Cases[len(full.Cases)-1]
	last.DurationMS, rep.Cases[2].DurationMS = 0, 0
	if diff := cmp.Diff(last, rep.Cases[2]); diff != "" {
		t.Errorf("a case run alone differs from the same case in a full run:\n%s", diff)
	}

	none, err := runner.Run(context.Background(), suites, runner.Options{Filter: regexp.MustCompile(`nothing`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(none.Cases) != 0 || none.Summary != (report.Summary{}) {
		t.Errorf("a filter matching nothing gave %+v", none)
	}
}

// progress records events and can cancel the run after a number of cases.
type progress struct {
	mu      sync.Mutex
	total   int
	started []int
	done    map[int]report.Status
	cancel  func()
	after   int
}

func (p *progress) Start(total int) { p.total = total }
func (p *progress) CaseStarted(i int, suite, name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = append(p.started, i)
}

func (p *progress) CaseDone(i int, c *report.Case) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done[i] = c.Status
	if len(p.done) == p.after && p.cancel != nil {
		p.cancel()
	}
}

func TestInterruptedBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := &progress{done: map[int]report.Status{}}
	rep, err := runner.Run(ctx, load(t, "testdata/mixed.dryfire.yaml"), runner.Options{Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Skipped || c.Reason != "interrupted before it started" {
			t.Errorf("%s: %s (%s), want skipped, interrupted before it started", c.Name, c.Status, c.Reason)
		}
		if len(c.Checks) != 0 || len(c.ToolCalls) != 0 || c.Checks == nil || c.ToolCalls == nil || c.Notes == nil {
			t.Errorf("%s: a case that never ran has checks %v, calls %v, notes %v; want empty lists", c.Name, c.Checks, c.ToolCalls, c.Notes)
		}
	}
	if len(p.started) != 0 {
		t.Errorf("cases %v started after the interrupt", p.started)
	}
	if p.total != len(rep.Cases) || len(p.done) != len(rep.Cases) {
		t.Errorf("progress heard of %d of %d cases (total %d)", len(p.done), len(rep.Cases), p.total)
	}
	if rep.Summary.Skipped != len(rep.Cases) {
		t.Errorf("summary = %+v", rep.Summary)
	}
}

// TestInterruptedMidway: one case at a time, cancelled after the second:
// those two keep their results, every later one is skipped.
func TestInterruptedMidway(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := &progress{done: map[int]report.Status{}, cancel: cancel, after: 2}
	rep, err := runner.Run(ctx, load(t, "testdata/mixed.dryfire.yaml"), runner.Options{Concurrency: 1, Progress: p})
	if err != nil {
		t.Fatal(err)
	}
	var got []report.Status
	for _, c := range rep.Cases {
		got = append(got, c.Status)
	}
	want := []report.Status{report.Passed, report.Failed}
	for range len(rep.Cases) - 2 {
		want = append(want, report.Skipped)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("statuses (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 1}, p.started); diff != "" {
		t.Errorf("started (-want +got):\n%s", diff)
	}
	if r := rep.Cases[2].Reason; r != "interrupted before it started" {
		t.Errorf("reason = %q", r)
	}
}

func TestMissingKeyStopsTheRun(t *testing.T) {
	data := []byte("version: 1\nagent: {provider: openai, model: gpt-x}\ncases: [{name: a, input: hi}, {name: b, input: hi, skip: true}]\n")
	s, ds := spec.Parse(filepath.Join(t.TempDir(), "real.dryfire.yaml"), data, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	p := &progress{done: map[int]report.Status{}}
	rep, err := runner.Run(context.Background(), []*spec.Suite{s}, runner.Options{Progress: p, Env: []string{}})
	if err == nil || rep != nil {
		t.Fatalf("Run = %v, %v; want an error", rep, err)
	}
	want := "OPENAI_API_KEY is not set, and this case needs the live model:\n  " + s.File + ": a (no cassette yet: " +
		filepath.Join(filepath.Dir(s.File), "cassettes", "real", "a.json") + ")\nset it, or replay only with --record none"
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if p.total != 0 || len(p.done) != 0 {
		t.Errorf("progress heard of a run that should not start")
	}
}
