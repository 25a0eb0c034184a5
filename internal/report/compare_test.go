package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/report"
	pub "github.com/dryfire-dev/dryfire/report"
)

// readOutcomes reads testdata/compare/NAME.
func readOutcomes(t *testing.T, name string) *report.Outcomes {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "compare", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, _, _, err := report.ReadOutcomes(f)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// compareGolden compares the hand-written base.json and new.json, which
// hold a case for every kind of change (each named for what it does).
func compareGolden(t *testing.T) *report.Comparison {
	t.Helper()
	c, err := report.Compare(readOutcomes(t, "base.json"), readOutcomes(t, "new.json"), report.CompareOptions{BaseName: "base.json", NewName: "new.json"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompareGolden: the text, Markdown and JSON of a comparison with
// every kind of change.
func TestCompareGolden(t *testing.T) {
	c := compareGolden(t)
	for _, k := range report.ChangeKinds {
		if c.Count(k) == 0 {
			t.Errorf("the golden pair has no change of kind %s", k)
		}
	}
	var text, md, js bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	golden(t, "compare/compare.txt", text.Bytes())
	golden(t, "compare/compare.md", md.Bytes())
	golden(t, "compare/compare.json", js.Bytes())
	if !json.Valid(js.Bytes()) {
		t.Error("the JSON is not valid")
	}
	// Outside text reaches no terminal as a control character.
	if strings.ContainsAny(text.String(), "\x1b\r") || strings.Contains(text.String(), "\n::error::") {
		t.Errorf("the text lets a control character or a workflow command through:\n%s", text.String())
	}
}

// TestCompareIsItsOwnReverse: comparing NEW with BASE swaps regressed
// and fixed, new and gone, and names the same cases.
func TestCompareIsItsOwnReverse(t *testing.T) {
	fwd := compareGolden(t)
	rev, err := report.Compare(readOutcomes(t, "new.json"), readOutcomes(t, "base.json"), report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range [][2]report.ChangeKind{{pub.ChangeRegressed, pub.ChangeFixed}, {pub.ChangeNew, pub.ChangeGone}, {pub.ChangeFlaky, pub.ChangeSteady}, {pub.ChangePassDown, pub.ChangePassUp}} {
		if fwd.Count(p[0]) != rev.Count(p[1]) || fwd.Count(p[1]) != rev.Count(p[0]) {
			t.Errorf("%s/%s: %d/%d forwards, %d/%d reversed", p[0], p[1], fwd.Count(p[0]), fwd.Count(p[1]), rev.Count(p[0]), rev.Count(p[1]))
		}
	}
	if fwd.Unchanged != rev.Unchanged || len(fwd.Changes) != len(rev.Changes) {
		t.Errorf("unchanged %d, %d changes forwards; %d, %d reversed", fwd.Unchanged, len(fwd.Changes), rev.Unchanged, len(rev.Changes))
	}
}

// TestCompareOrderIsTheReportsNot: the comparison of the same runs with
// their cases in another order is the same, byte for byte.
func TestCompareOrderIsTheReportsNot(t *testing.T) {
	var want bytes.Buffer
	compareGolden(t).WriteJSON(&want)
	base, new := readOutcomes(t, "base.json"), readOutcomes(t, "new.json")
	slices.Reverse(base.Cases)
	slices.Reverse(new.Cases)
	c, err := report.Compare(base, new, report.CompareOptions{BaseName: "base.json", NewName: "new.json"})
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
	ck := func(text string, passed bool) report.CheckOutcome {
		return report.CheckOutcome{Check: text, At: "s:1", Passed: passed}
	}
	base := &report.Outcomes{Cases: []report.Outcome{{Suite: "s", Name: "c", Status: report.Failed, Checks: []report.CheckOutcome{ck("a", true), ck("b", false), ck("a", false)}}}}
	new := &report.Outcomes{Cases: []report.Outcome{{Suite: "s", Name: "c", Status: report.Failed, Checks: []report.CheckOutcome{ck("b", false), ck("a", true), ck("a", true), ck("a", false)}}}}
	c, err := report.Compare(base, new, report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, cc := range c.Changes[0].Checks {
		got = append(got, string(cc.Kind)+" "+cc.Check)
	}
	if want := []string{"fixed a", "new a"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCompareErroredCaseLosesNoCheck: a case that erred before its
// checks were judged has them neither gone nor new.
func TestCompareErroredCaseLosesNoCheck(t *testing.T) {
	base := &report.Outcomes{Cases: []report.Outcome{{Suite: "s", Name: "c", Status: report.Passed, Checks: []report.CheckOutcome{{Check: "a", Passed: true}}}}}
	new := &report.Outcomes{Cases: []report.Outcome{{Suite: "s", Name: "c", Status: report.Errored, Reason: "boom"}}}
	c, err := report.Compare(base, new, report.CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Changes[0].Kinds; !slices.Equal(got, []report.ChangeKind{pub.ChangeRegressed}) {
		t.Errorf("kinds %v, want only regressed", got)
	}
	if len(c.Changes[0].Checks) != 0 {
		t.Errorf("check changes %v, want none", c.Changes[0].Checks)
	}
}

func TestCompareRefusesACaseTwice(t *testing.T) {
	two := &report.Outcomes{Cases: []report.Outcome{{Suite: "s", Name: "c", Status: report.Passed}, {Suite: "s", Name: "c", Status: report.Failed}}}
	_, err := report.Compare(&report.Outcomes{}, two, report.CompareOptions{NewName: "new.json"})
	if err == nil || err.Error() != `new.json has the case "c" of s twice (cases 1 and 2): compare the reports of two runs` {
		t.Errorf("got %v", err)
	}
}

// TestReadOutcomesErrors: a file that is not a report is said to be so,
// at its line and column.
func TestReadOutcomesErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`[]`, "1:1: not a dryfire JSON report: it is not a JSON object"},
		{`{"summary": {}}`, "not a dryfire JSON report: it has no cases"},
		{"{\"cases\": [\n  {\"suite\": \"s\", \"name\": \"a\", \"status\": \"passed\"},\n  {\"suite\": \"s\", \"name\": \"b\", \"status\": \"fine\"}]}", `3:3: case 2 ("b"): status "fine" is not passed, failed, error or skipped`},
		{"{\"cases\": [\n  {\"suite\": \"s\", \"name\": 7}]}", "2:3: case 1: name is a number, not what a report has there"},
		{"{\"cases\": [\n  {\"name\": \"a\", \"status\": \"passed\"}]}", "2:3: case 1 has no suite or no name: not a case of a dryfire report"},
		{"{\"cases\": [\n  {\"suite\": \"s\", \"name\": \"a\", \"status\": \"passed\", \"trials\": {\"n\": 2, \"passed\": 3}}]}", `2:3: case 1 ("a"): trials say 3 of 2 passed`},
		{"{\"cases\": [\n  {\"suite\": \"s\", \"name\": \"a\", \"status\": \"passed\"},", "2:51: case 2: the JSON ends early (a report cut short?)"},
		{"{\"cases\": [\n  {\"suite\": \"s\" \"name\"}]}", "2:17: case 1: invalid JSON: invalid character '\"' after object key:value pair"},
		{`{"cases": {}}`, "1:11: not a dryfire JSON report: cases is not a list"},
	} {
		_, _, _, err := report.ReadOutcomes(strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}
