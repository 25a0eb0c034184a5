package report_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/report"
)

// readOutcomes reads testdata/compare/NAME.
func readOutcomes(t *testing.T, name string) *report.Outcomes {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "compare", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o, err := report.ReadOutcomes(f)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// compareGolden compares the hand-written base.json and new.json, which
// hold a case for every kind of change (each named for what it does).
func compareGolden(t *testing.T) *report.Comparison {
	t.Helper()
	c, err := report.Compare(readOutcomes(t, "base.json"), readOutcomes(t, "new.json"), &report.CompareOptions{BaseName: "base.json", NewName: "new.json"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCompareGolden: the text, Markdown and JSON of a comparison with
// every kind of change.
func TestCompareGolden(t *testing.T) {
	c := compareGolden(t)
	for _, k := range report.ChangeKinds() {
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
		_, err := report.ReadOutcomes(strings.NewReader(tc.in))
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q:\n got %v\nwant %s", tc.in, err, tc.want)
		}
	}
}
