package report

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// outcomesOf reads testdata/compare/NAME.
func outcomesOf(t *testing.T, name string) *Outcomes {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "compare", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := ReadOutcomes(f)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// comparePair compares the golden pair base.json and new.json.
func comparePair(t *testing.T) *Comparison {
	t.Helper()
	c, err := Compare(outcomesOf(t, "base.json"), outcomesOf(t, "new.json"), &CompareOptions{BaseName: "base.json", NewName: "new.json"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompareIsItsOwnReverse: comparing NEW with BASE swaps regressed
// and fixed, new and gone, and names the same cases.
func TestCompareIsItsOwnReverse(t *testing.T) {
	fwd := comparePair(t)
	rev, err := Compare(outcomesOf(t, "new.json"), outcomesOf(t, "base.json"), &CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]ChangeKind{{ChangeRegressed, ChangeFixed}, {ChangeNew, ChangeGone}, {ChangeFlaky, ChangeSteady}, {ChangePassDown, ChangePassUp}} {
		if fwd.Count(p[0]) != rev.Count(p[1]) || fwd.Count(p[1]) != rev.Count(p[0]) {
			t.Errorf("%s/%s: %d/%d forwards, %d/%d reversed", p[0], p[1], fwd.Count(p[0]), fwd.Count(p[1]), rev.Count(p[0]), rev.Count(p[1]))
		}
	}
	if fwd.unchanged != rev.unchanged || len(fwd.changes) != len(rev.changes) {
		t.Errorf("unchanged %d, %d changes forwards; %d, %d reversed", fwd.unchanged, len(fwd.changes), rev.unchanged, len(rev.changes))
	}
}

// TestCompareOrderIsTheReportsNot: the comparison of the same runs with
// their cases in another order is the same, byte for byte.
func TestCompareOrderIsTheReportsNot(t *testing.T) {
	var want bytes.Buffer
	comparePair(t).WriteJSON(&want)
	base, new := outcomesOf(t, "base.json"), outcomesOf(t, "new.json")
	slices.Reverse(base.cases)
	slices.Reverse(new.cases)
	c, err := Compare(base, new, &CompareOptions{BaseName: "base.json", NewName: "new.json"})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	c.WriteJSON(&got)
	if got.String() != want.String() {
		t.Error("the comparison depends on the order of the reports' cases")
	}
}

// TestCompareChecksByText pairs checks by their text, the k-th of a text
// with the k-th, wherever they moved.
func TestCompareChecksByText(t *testing.T) {
	ck := func(text string, passed bool) checkOutcome {
		return checkOutcome{Check: text, At: "s:1", Passed: passed}
	}
	base := &Outcomes{cases: []caseOutcome{{Suite: "s", Name: "c", Status: Failed, Checks: []checkOutcome{ck("a", true), ck("b", false), ck("a", false)}}}}
	new := &Outcomes{cases: []caseOutcome{{Suite: "s", Name: "c", Status: Failed, Checks: []checkOutcome{ck("b", false), ck("a", true), ck("a", true), ck("a", false)}}}}
	c, err := Compare(base, new, &CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cc := range c.changes[0].Checks {
		got = append(got, string(cc.Kind)+" "+cc.Check)
	}
	if want := []string{"fixed a", "new a"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCompareErroredCaseLosesNoCheck: a case that erred before its
// checks were judged has them neither gone nor new.
func TestCompareErroredCaseLosesNoCheck(t *testing.T) {
	base := &Outcomes{cases: []caseOutcome{{Suite: "s", Name: "c", Status: Passed, Checks: []checkOutcome{{Check: "a", Passed: true}}}}}
	new := &Outcomes{cases: []caseOutcome{{Suite: "s", Name: "c", Status: Errored, Reason: "boom"}}}
	c, err := Compare(base, new, &CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.changes[0].Kinds; !slices.Equal(got, []ChangeKind{ChangeRegressed}) {
		t.Errorf("kinds %v, want only regressed", got)
	}
	if len(c.changes[0].Checks) != 0 {
		t.Errorf("check changes %v, want none", c.changes[0].Checks)
	}
}

func TestCompareRefusesACaseTwice(t *testing.T) {
	two := &Outcomes{cases: []caseOutcome{{Suite: "s", Name: "c", Status: Passed}, {Suite: "s", Name: "c", Status: Failed}}}
	_, err := Compare(&Outcomes{}, two, &CompareOptions{NewName: "new.json"})
	if err == nil || err.Error() != `new.json has the case "c" of s twice (cases 1 and 2): compare the reports of two runs` {
		t.Errorf("got %v", err)
	}
}
