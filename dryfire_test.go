package dryfire_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

var durations = regexp.MustCompile(`"duration_ms": [0-9.e+-]+`)

// TestReportDeterministic runs the examples through the public API at
// several concurrencies: the JSON report is byte-identical once the
// durations are removed.
func TestReportDeterministic(t *testing.T) {
	p, err := dryfire.Load(nil, "examples/quickstart", "examples/failing")
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for _, n := range []int{1, 16, 3} {
		for range 5 {
			rep, err := p.Run(context.Background(), &dryfire.RunOptions{Concurrency: n})
			if err != nil {
				t.Fatal(err)
			}
			data, err := rep.JSON()
			if err != nil {
				t.Fatal(err)
			}
			got := durations.ReplaceAllString(string(data), `"duration_ms": 0`)
			if first == "" {
				first = got
				continue
			}
			if diff := cmp.Diff(first, got); diff != "" {
				t.Fatalf("concurrency %d: report differs (-first +this):\n%s", n, diff)
			}
		}
	}
}

func TestRunFilter(t *testing.T) {
	p, err := dryfire.Load(nil, "examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Filter: "coupon|outage"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range rep.Cases {
		names = append(names, c.Name)
	}
	want := []string{"refund outage is reported, not hidden", "no coupon for a standard customer"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("cases (-want +got):\n%s", diff)
	}
	if _, err := p.Run(context.Background(), &dryfire.RunOptions{Filter: "("}); err == nil || err.Error() != "invalid filter \"(\": error parsing regexp: missing closing ): `(`" {
		t.Errorf("invalid filter: err = %v", err)
	}
}

func TestLoadErrors(t *testing.T) {
	if _, err := dryfire.Load(nil); err == nil {
		t.Error("Load() with no paths succeeded")
	}
	_, err := dryfire.Load(nil, "examples/does-not-exist")
	var ds dryfire.Diagnostics
	if err == nil || errors.As(err, &ds) {
		t.Errorf("Load of a missing path: err = %v, want a plain error", err)
	}
}

// A project loaded with CheckOnly counts the cases it checked, and says
// it cannot run them.
func TestLoadCheckOnly(t *testing.T) {
	full, err := dryfire.Load(nil, "examples/quickstart", "examples/failing")
	if err != nil {
		t.Fatal(err)
	}
	p, err := dryfire.Load(&dryfire.LoadOptions{CheckOnly: true}, "examples/quickstart", "examples/failing")
	if err != nil {
		t.Fatal(err)
	}
	if p.CaseCount() != full.CaseCount() || p.CaseCount() == 0 {
		t.Errorf("CheckOnly counts %d cases, a full load %d", p.CaseCount(), full.CaseCount())
	}
	if _, err := p.Run(context.Background(), nil); err == nil || !strings.Contains(err.Error(), "CheckOnly") {
		t.Errorf("running a CheckOnly project: %v", err)
	}
	if _, err := p.ToolServer(nil); err == nil || !strings.Contains(err.Error(), "CheckOnly") {
		t.Errorf("serving a CheckOnly project: %v", err)
	}
}

// WriteJSON writes, a case at a time, the bytes JSON renders: for a run's
// report, a shard's, and one of no cases.
func TestWriteJSONIsJSON(t *testing.T) {
	p, err := dryfire.Load(nil, "examples/quickstart", "examples/failing")
	if err != nil {
		t.Fatal(err)
	}
	run, err := p.Run(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	shard, err := p.Run(context.Background(), &dryfire.RunOptions{Shard: &dryfire.Shard{Index: 1, Count: 2}})
	if err != nil {
		t.Fatal(err)
	}
	for name, r := range map[string]*report.Report{
		"run": run, "shard": shard, "no cases": {Cases: []report.Case{}}, "nil cases": {},
	} {
		want, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := r.WriteJSON(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(string(want), b.String()); diff != "" {
			t.Errorf("%s: WriteJSON differs from JSON (-JSON +WriteJSON):\n%s", name, diff)
		}
	}
}
