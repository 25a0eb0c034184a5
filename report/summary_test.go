package report

import (
	"reflect"
	"testing"
)

func TestSummaryLine(t *testing.T) {
	for _, tc := range []struct {
		s    Summary
		want string
	}{
		{Summary{}, "0 passed, 0 failed"},
		{Summary{Passed: 3}, "3 passed, 0 failed"},
		{Summary{Passed: 1, Failed: 1}, "1 passed, 1 failed"},
		{Summary{Failed: 2, Error: 1}, "0 passed, 2 failed, 1 error"},
		{Summary{Passed: 1, Error: 2}, "1 passed, 0 failed, 2 errors"},
		{Summary{Passed: 1, Skipped: 1}, "1 passed, 0 failed, 1 skipped"},
		{Summary{Passed: 4, Failed: 3, Error: 2, Skipped: 5}, "4 passed, 3 failed, 2 errors, 5 skipped"},
	} {
		if got := summaryLine(tc.s); got != tc.want {
			t.Errorf("summaryLine(%+v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

// TestMergeCoverageOfAnEmptyPart: a part that ran nothing adds nothing
// to a merge's coverage.
func TestMergeCoverageOfAnEmptyPart(t *testing.T) {
	one := &Coverage{Suites: []CoverageSuite{{Suite: "s.dryfire.yaml", Items: []CoverageItem{
		{Kind: "rule", At: "s.dryfire.yaml:9", Name: "a", Calls: 3},
		{Kind: "rule", At: "s.dryfire.yaml:4", Name: "b"},
	}}}}
	one.Tally()
	if one.Total != 2 || one.Exercised != 1 || one.Percent != 50 || one.Suites[0].Items[0].At != "s.dryfire.yaml:4" {
		t.Fatalf("tallied %+v", one)
	}
	if got := mergeCoverage([]*Coverage{{Suites: []CoverageSuite{}}, one}); !reflect.DeepEqual(got, one) {
		t.Errorf("merged:\n%+v\nwant\n%+v", got, one)
	}
}
