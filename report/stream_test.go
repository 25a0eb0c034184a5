package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// junitWhole is the JUnit report encoded whole, as one struct: what the
// streamed ReportJUnit must write byte for byte.
func junitWhole(t *testing.T, r *Report) []byte {
	t.Helper()
	root := junitSuites{Name: "dryfire"}
	index := map[string]int{}
	var total float64
	var ms []float64
	for i := range r.Cases {
		c := &r.Cases[i]
		si, ok := index[c.Suite]
		if !ok {
			si = len(root.Suites)
			index[c.Suite] = si
			root.Suites = append(root.Suites, junitSuite{Name: c.Suite})
			ms = append(ms, 0)
		}
		s := &root.Suites[si]
		jc := junitElement(c, s)
		s.Tests++
		total += c.DurationMS
		ms[si] += c.DurationMS
		s.Cases = append(s.Cases, jc)
	}
	for i := range root.Suites {
		s := &root.Suites[i]
		s.Time = seconds(ms[i])
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	root.Time = seconds(total)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(root); err != nil {
		t.Fatal(err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// junitElement is a case's testcase element; s counts its status.
func junitElement(c *Case, s *junitSuite) junitCase {
	jc := junitCase{Name: c.Name, Classname: c.Suite, Time: seconds(c.DurationMS)}
	if c.Verdict != "" {
		props := []junitProperty{{"verdict", string(c.Verdict)}, {"build_hash", c.BuildHash}}
		if c.Seed != nil {
			props = append(props, junitProperty{"seed", fmt.Sprint(*c.Seed)})
		}
		jc.Properties = &junitProperties{props}
	}
	var details string
	if c.Status == Failed || c.Status == Errored {
		details = xmlText(ansi().ReplaceAllString(strings.Join(c.Details(), "\n"), ""))
	}
	switch c.Status {
	case Failed:
		jc.Failure = &junitProblem{Message: c.Reason, Type: "failure", Text: details}
		s.Failures++
	case Errored:
		jc.Error = &junitProblem{Message: c.Reason, Type: "error", Text: details}
		s.Errors++
	case Skipped:
		jc.Skipped = &junitSkipped{Message: c.Reason}
		s.Skipped++
	}
	return jc
}

func streamReports() map[string]*Report {
	seed := int64(7)
	return map[string]*Report{
		"empty": {Cases: []Case{}},
		"nil":   {},
		"one":   {Cases: []Case{{Suite: "a.dryfire.yaml", Name: "x", Status: Passed, DurationMS: 1.5, Checks: []Check{}, ToolCalls: []ToolCall{}, Notes: []string{}}}},
		// Suites interleaved (a merge may list them so), every status,
		// a drill's properties, text XML must escape.
		"mixed": {Cases: []Case{
			{Suite: "a.dryfire.yaml", Name: "pass", Status: Passed, DurationMS: 2},
			{Suite: "b.dryfire.yaml", Name: `<fail> "q" & 'a'`, Status: Failed, Reason: "1 of 1 checks failed\x00",
				Checks: []Check{{Check: "output: {contains: x}", At: "b.dryfire.yaml:3", Message: "expected ]]> \x1b[31mred\x1b[0m\r\nend"}}, DurationMS: 3.25},
			{Suite: "a.dryfire.yaml", Name: "err", Status: Errored, Reason: "boom", Infra: true, DurationMS: 1},
			{Suite: "c.dryfire.yaml", Name: "skip", Status: Skipped, Reason: "skip: true"},
			{Suite: "c.dryfire.yaml", Name: "drill", Status: Passed, Verdict: Passed, Seed: &seed, BuildHash: "abc", Usage: Usage{InputTokens: 3}},
			{Suite: "a.dryfire.yaml", Name: "again", Status: Passed, DurationMS: 0.001},
		}},
		"varied": variedReport(),
	}
}

// variedReport has varied cases (variedCase) in a few suites, and
// skipped ones with and without a reason.
func variedReport() *Report {
	r := rand.New(rand.NewPCG(16, 3))
	out := &Report{}
	for i := range 500 {
		c := variedCase(r)
		c.Suite = []string{"a.dryfire.yaml", `<b> "&" 'c'.dryfire.yaml`, c.Suite}[i%3]
		if i%7 == 0 {
			c.Status, c.Reason = Skipped, ""
		}
		out.Cases = append(out.Cases, c)
	}
	return out
}

func TestReportJUnitIsTheWholeEncoding(t *testing.T) {
	for name, r := range streamReports() {
		got, err := r.JUnit()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(string(junitWhole(t, r)), string(got)); diff != "" {
			t.Errorf("%s: streamed JUnit differs from the whole encoding (-whole +streamed):\n%s", name, diff)
		}
	}
}

func TestReportJSONIsJSON(t *testing.T) {
	for name, r := range streamReports() {
		if r.Cases == nil {
			continue // a nil list is "null", which no run writes
		}
		r.Tally()
		r.Shard = nil
		if name == "mixed" {
			r.Shard = &Shard{Index: 1, Count: 2, Cases: 12, Positions: []int{0, 3}, Infra: []int{}}
		}
		want, err := r.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		j := newReportJSON(&b)
		for i := range r.Cases {
			if err := j.Case(&r.Cases[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := j.End(r); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), b.String()); diff != "" {
			t.Errorf("%s: streamed JSON differs (-JSON +streamed):\n%s", name, diff)
		}
	}
}

type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n -= len(p); f.n < 0 {
		return 0, errors.New("disk full")
	}
	return len(p), nil
}

func (f *failAfter) ReadAt(p []byte, off int64) (int, error) { return 0, errors.New("unreadable") }

// TestStreamWriteErrors checks that a write that fails is reported, by
// the case that hit it and by the end, and that nothing is written after.
func TestStreamWriteErrors(t *testing.T) {
	r := streamReports()["mixed"]
	j := newReportJSON(&failAfter{n: 100})
	var err error
	for i := range r.Cases {
		if err = j.Case(&r.Cases[i]); err != nil {
			break
		}
	}
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("JSON Case error = %v, want disk full", err)
	}
	if err := j.End(r); err == nil {
		t.Errorf("JSON End after a failed write = nil, want the error")
	}
	u := newReportJUnit(&failAfter{n: 100})
	err = nil
	for i := range r.Cases {
		if err = u.Case(&r.Cases[i]); err != nil {
			break
		}
	}
	if err == nil {
		t.Errorf("JUnit Case into a full body = nil, want the error")
	}
	if err := u.End(&bytes.Buffer{}); err == nil {
		t.Errorf("JUnit End after a failed write = nil, want the error")
	}
}
