package examples_test

import (
	"context"
	"testing"

	"github.com/dryfire-dev/dryfire"
)

// Every mock rule and sequence entry of the quickstart is exercised by
// its cases: run --coverage finds none dead.
func TestQuickstartCoversEveryRule(t *testing.T) {
	p, err := dryfire.Load(nil, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Coverage: true})
	if err != nil {
		t.Fatal(err)
	}
	cov := rep.Coverage
	if cov == nil || len(cov.Suites) != 1 {
		t.Fatalf("coverage = %+v, want one suite's", cov)
	}
	rules, entries := 0, 0
	for _, it := range cov.Suites[0].Items {
		switch it.Kind {
		case "rule":
			rules++
		case "entry":
			entries++
		}
		if it.Calls == 0 {
			t.Errorf("%s: %s %s never exercised", it.At, it.Kind, it.Name)
		}
	}
	// The suite's four rules, the retry case's own rule and its two entries.
	if rules != 5 || entries != 2 || cov.Percent != 100 || cov.Exercised != cov.Total {
		t.Errorf("coverage: %d rules, %d entries, %d of %d (%v%%); want 5 rules, 2 entries, all exercised", rules, entries, cov.Exercised, cov.Total, cov.Percent)
	}
}
