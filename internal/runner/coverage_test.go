package runner_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// Coverage counts every call of every case, whatever the concurrency:
// the same figure at -j 1 and -j 8, each trial counted (the shards'
// merge: coverage.txtar in internal/cli).
func TestCoverageCountsEveryCall(t *testing.T) {
	suites := bigSuite(t, 90)
	run := func(o runner.Options) *report.Report {
		t.Helper()
		o.Coverage = true
		rep, err := runner.Run(context.Background(), suites, o)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	one := run(runner.Options{Concurrency: 1}).Coverage
	if got := run(runner.Options{Concurrency: 8}).Coverage; !reflect.DeepEqual(got, one) {
		t.Fatalf("-j 8 coverage differs from -j 1:\n%+v\n%+v", got, one)
	}
	calls := map[string]int{}
	for _, it := range one.Suites[0].Items {
		k := it.Kind + " " + it.At
		if it.Entry != nil {
			k += fmt.Sprintf(" #%d", *it.Entry)
		}
		calls[k] = it.Calls
	}
	// 30 cases each of; each refunds once (the sequence's
	// first entry: timeout) and looks for a gold coupon.
	want := map[string]int{
		"rule big.dryfire.yaml:9": 30, "rule big.dryfire.yaml:10": 30, "rule big.dryfire.yaml:11": 30,
		"rule big.dryfire.yaml:13": 0, "rule big.dryfire.yaml:14": 90,
		"entry big.dryfire.yaml:14 #0": 90, "entry big.dryfire.yaml:14 #1": 0, // both on the rule's line
		"rule big.dryfire.yaml:16": 90, "rule big.dryfire.yaml:17": 0,
	}
	if !reflect.DeepEqual(calls, want) {
		t.Errorf("calls = %v\nwant %v", calls, want)
	}
	if one.Total != 9 || one.Exercised != 6 || one.Percent != 66.6 {
		t.Errorf("coverage %d of %d (%v%%), want 6 of 9 (66.6%%)", one.Exercised, one.Total, one.Percent)
	}

	// Trials: each trial's calls count.
	twice := run(runner.Options{Concurrency: 4, Trials: 2})
	if got := twice.Coverage.Suites[0].Items[0].Calls; got != 60 {
		t.Errorf("two trials: %d calls of the first rule, want 60", got)
	}
}
