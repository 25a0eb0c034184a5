package report_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the actual output")

// runExample runs an example suite from the repository root, so that the
// paths in the report are the docs', and zeroes the durations: the only
// field that varies between runs.
func runExample(t *testing.T, path string) *report.Report {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir("..")
	p, err := dryfire.Load(nil, path)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Concurrency: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	for i := range rep.Cases {
		rep.Cases[i].DurationMS = 0
	}
	return rep
}

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s differs (-want +got; run with -update if the change is right):\n%s", path, diff)
	}
}

func TestJSONGolden(t *testing.T) {
	for _, tc := range []struct{ name, path string }{
		{"quickstart.json", "examples/quickstart"},
		{"failing.json", "examples/failing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runExample(t, tc.path)
			data, err := rep.JSON()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, tc.name, data)
		})
	}
}

// TestJSONKeys checks the report against the description in docs/running.md: these
// keys and no others (near_miss only on unmatched calls).
func TestJSONKeys(t *testing.T) {
	rep := runExample(t, "examples/failing")
	data, err := rep.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cases   []map[string]json.RawMessage `json:"cases"`
		Summary map[string]json.RawMessage   `json:"summary"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m map[string]json.RawMessage) []string {
		var ks []string
		for k := range m {
			ks = append(ks, k)
		}
		slices.Sort(ks)
		return ks
	}
	sorted := func(ks ...string) []string { slices.Sort(ks); return ks }
	if diff := cmp.Diff(sorted("cases", "summary"), keys(top)); diff != "" {
		t.Errorf("top-level keys (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted("passed", "failed", "error", "skipped", "usage"), keys(doc.Summary)); diff != "" {
		t.Errorf("summary keys (-want +got):\n%s", diff)
	}
	caseKeys := sorted("suite", "name", "input", "status", "reason", "checks", "tool_calls", "output", "turns", "usage", "notes", "duration_ms")
	callKeys := sorted("turn", "id", "tool", "args", "outcome", "rule", "is_error", "result")
	for _, c := range doc.Cases {
		if diff := cmp.Diff(caseKeys, keys(c)); diff != "" {
			t.Errorf("case keys (-want +got):\n%s", diff)
		}
		var checks, calls []map[string]json.RawMessage
		var usage map[string]json.RawMessage
		if err := json.Unmarshal(c["checks"], &checks); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c["tool_calls"], &calls); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c["usage"], &usage); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(sorted("input_tokens", "output_tokens"), keys(usage)); diff != "" {
			t.Errorf("usage keys (-want +got):\n%s", diff)
		}
		for _, ch := range checks {
			if diff := cmp.Diff(sorted("check", "at", "passed", "message"), keys(ch)); diff != "" {
				t.Errorf("check keys (-want +got):\n%s", diff)
			}
		}
		for _, call := range calls {
			want := callKeys
			if string(call["outcome"]) == `"unmatched"` {
				want = sorted(append(slices.Clone(callKeys), "near_miss")...)
			}
			if diff := cmp.Diff(want, keys(call)); diff != "" {
				t.Errorf("tool call keys (-want +got):\n%s", diff)
			}
		}
	}
}

func TestJUnit(t *testing.T) {
	rep := runExample(t, "examples/failing")
	data, err := rep.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "failing.junit.xml", data)

	// Parsed back, the XML says what the report says.
	var got struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Tests int    `xml:"tests,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("JUnit XML does not parse: %v", err)
	}
	if got.Tests != 2 || got.Failures != 1 || len(got.Suites) != 1 || len(got.Suites[0].Cases) != 2 {
		t.Fatalf("parsed JUnit = %+v, want 1 suite of 2 cases, 1 failure", got)
	}
	typo := got.Suites[0].Cases[0]
	if typo.Name != "typo in the order id" || typo.Failure == nil {
		t.Fatalf("first case = %+v, want the failing typo case", typo)
	}
	if got.Suites[0].Cases[1].Failure != nil {
		t.Errorf("the passing case has a failure")
	}
	// The failure text holds every failed check's message and the near
	// miss of the unmatched call, as the report has them.
	c := rep.Cases[0]
	var want []string
	for _, ch := range c.Checks {
		if !ch.Passed {
			want = append(want, ch.Message)
		}
	}
	for _, tc := range c.ToolCalls {
		if tc.Outcome == "unmatched" {
			nm := tc.NearMiss
			want = append(want, nm.Rule, "differs at "+nm.Path+": expected "+nm.Expected+", got "+nm.Got)
		}
	}
	if len(want) != 4 {
		t.Fatalf("the failing case has %d failed checks and near misses, want 4", len(want))
	}
	for _, w := range want {
		if !strings.Contains(typo.Failure.Text, w) {
			t.Errorf("failure text lacks %q:\n%s", w, typo.Failure.Text)
		}
	}
}

// TestJUnitEscapes checks that text XML cannot hold (control characters,
// invalid UTF-8, markup, an ANSI colour) still gives a well-formed file
// with the text readable.
func TestJUnitEscapes(t *testing.T) {
	rep := &report.Report{Cases: []report.Case{{
		Suite:  "a&b.dryfire.yaml",
		Name:   `<case> "one"`,
		Status: report.Failed,
		Reason: "1 of 1 checks failed\x00",
		Checks: []report.Check{{Check: "output: {contains: x}", At: "a.yaml:3", Message: "expected ]]> & <tag>\x1b[31m red\x1b[0m \x07bell \xff\r\nend"}},
		Output: "out",
	}}}
	rep.Tally()
	data, err := rep.JUnit()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Suites []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(data, &got); err != nil {
		t.Fatalf("JUnit XML does not parse: %v\n%s", err, data)
	}
	tc := got.Suites[0].Cases[0]
	if got.Suites[0].Name != "a&b.dryfire.yaml" || tc.Name != `<case> "one"` {
		t.Errorf("names = %q, %q", got.Suites[0].Name, tc.Name)
	}
	if tc.Failure.Message != "1 of 1 checks failed\uFFFD" {
		t.Errorf("message = %q", tc.Failure.Message)
	}
	wantText := "check failed at a.yaml:3: output: {contains: x}\n  expected ]]> & <tag> red \uFFFDbell \uFFFD\r\nend\noutput after 0 turn(s): \"out\""
	if tc.Failure.Text != wantText {
		t.Errorf("failure text = %q\nwant %q", tc.Failure.Text, wantText)
	}
}

func TestTextLogGolden(t *testing.T) {
	for _, tc := range []struct {
		name, path string
		verbose    bool
	}{
		{"quickstart.txt", "examples/quickstart", false},
		{"quickstart-verbose.txt", "examples/quickstart", true},
		{"failing.txt", "examples/failing", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := runExample(t, tc.path)
			var b bytes.Buffer
			// Cases finish in any order; the log is in report order.
			pr := report.NewText(&b, report.TextOptions{Verbose: tc.verbose})
			pr.Start(len(rep.Cases))
			for i := len(rep.Cases) - 1; i >= 0; i-- {
				pr.CaseStarted(i, rep.Cases[i].Suite, rep.Cases[i].Name)
				pr.CaseDone(i, &rep.Cases[i])
			}
			pr.Finish(rep)
			golden(t, tc.name, b.Bytes())
		})
	}
}

func TestTally(t *testing.T) {
	rep := &report.Report{Cases: []report.Case{
		{Status: report.Passed}, {Status: report.Failed}, {Status: report.Errored},
		{Status: report.Skipped}, {Status: report.Passed},
	}}
	rep.Tally()
	if want := (report.Summary{Passed: 2, Failed: 1, Error: 1, Skipped: 1}); rep.Summary != want {
		t.Errorf("Tally = %+v, want %+v", rep.Summary, want)
	}
}
