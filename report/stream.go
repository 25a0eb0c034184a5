package report

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
)

// Totals is what the lines after a run and its exit code need of its
// cases, counted a case at a time: a run that keeps no result (cases
// streamed to the reports) still has them.
type Totals struct {
	Summary Summary
	Live    int  // model requests that went to a live API
	Failing bool // a case failed, or erred through the suite or the agent
	Infra   bool // a case erred through its surroundings
	// Cases run several times (trials): how many, their runs, how many
	// passed every trial, and the trials of each when all have as many
	// (0 when they differ).
	TrialCases, TrialRuns, AllPassed, SameN int

	// Coverage is the run's coverage, printed before its last line.
	Coverage *Coverage

	roles    RoleUsage // the usage by role; Summary.UsageByRole once a case splits it
	mutation mutationTotals
}

// Add counts one case.
func (t *Totals) Add(c *Case) {
	t.Summary.Usage.InputTokens += c.Usage.InputTokens
	t.Summary.Usage.OutputTokens += c.Usage.OutputTokens
	if c.UsageByRole != nil {
		t.roles.add(c.UsageByRole)
		t.Summary.UsageByRole = &t.roles
	} else {
		addUsage(&t.roles.Agent, c.Usage)
	}
	t.Live += c.Live
	t.mutation.add(c)
	if tr := c.Trials; tr != nil {
		if tr.Flaky {
			t.Summary.Flaky++
		}
		if t.TrialCases == 0 {
			t.SameN = tr.N
		} else if t.SameN != tr.N {
			t.SameN = 0
		}
		t.TrialCases++
		t.TrialRuns += tr.N
		if tr.Passed == tr.N {
			t.AllPassed++
		}
	}
	switch c.Status {
	case Passed:
		t.Summary.Passed++
	case Failed:
		t.Summary.Failed++
		t.Failing = true
	case Errored:
		t.Summary.Error++
		if c.Infra {
			t.Infra = true
		} else {
			t.Failing = true
		}
	case Skipped:
		t.Summary.Skipped++
	}
}

// TotalsOf counts the cases of r.
func TotalsOf(r *Report) *Totals {
	t := &Totals{Coverage: r.Coverage}
	for i := range r.Cases {
		t.Add(&r.Cases[i])
	}
	return t
}

// reportJSON writes the JSON report of a run a case at a time: the same
// bytes as Report.JSON.
type reportJSON struct {
	l *jsonout.List
	c *caseJSON
}

func newReportJSON(w io.Writer) *reportJSON {
	return &reportJSON{jsonout.New(w, "cases"), newCaseJSON()}
}

// Case writes the report's next case.
func (j *reportJSON) Case(c *Case) error {
	b, err := j.c.appendCase(j.l.Start(), c)
	if err != nil {
		// What only encoding/json writes right, or fails on.
		return j.l.Item(c)
	}
	return j.l.Put(b)
}

// End writes the summary and shard of r (its cases are not written).
func (j *reportJSON) End(r *Report) error {
	head := *r
	head.Cases = nil
	return j.l.End(&head)
}

// body is where a JUnit report's cases are kept until its totals are
// known: a temporary file, or memory (memBody).
type body interface {
	io.Writer
	io.ReaderAt
}

// memBody is a body in memory.
type memBody struct{ bytes.Buffer }

func (m *memBody) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m.Bytes()).ReadAt(p, off)
}

// reportJUnit writes a JUnit report a case at a time: each case's
// element goes to a body as it comes, and End writes the report (its
// totals first) with the bodies' parts in place. The same bytes as
// Report.JUnit.
type reportJUnit struct {
	body  body
	off   int64
	root  junitSuites
	index map[string]int
	ms    []float64 // each suite's time
	total float64
	parts [][][2]int64 // each suite's spans of the body
	b     []byte       // a case's element
	err   error
}

// newReportJUnit keeps the cases' elements in body until End.
func newReportJUnit(body body) *reportJUnit {
	return &reportJUnit{body: body, root: junitSuites{Name: "dryfire"}, index: map[string]int{}}
}

// Case adds the report's next case.
func (j *reportJUnit) Case(c *Case) error {
	if j.err != nil {
		return j.err
	}
	si, ok := j.index[c.Suite]
	if !ok {
		si = len(j.root.Suites)
		j.index[c.Suite] = si
		j.root.Suites = append(j.root.Suites, junitSuite{Name: c.Suite})
		j.ms = append(j.ms, 0)
		j.parts = append(j.parts, nil)
	}
	s := &j.root.Suites[si]
	s.Tests++
	switch c.Status {
	case Failed:
		s.Failures++
	case Errored:
		s.Errors++
	case Skipped:
		s.Skipped++
	}
	j.total += c.DurationMS
	j.ms[si] += c.DurationMS
	j.b = appendTestcase(j.b[:0], c)
	start := j.off
	n, err := j.body.Write(j.b)
	j.off += int64(n)
	if err != nil {
		j.err = err
		return err
	}
	ps := j.parts[si]
	if len(ps) > 0 && ps[len(ps)-1][1] == start {
		ps[len(ps)-1][1] = j.off
	} else {
		j.parts[si] = append(ps, [2]int64{start, j.off})
	}
	return nil
}

// appendTestcase appends a case's testcase element, on a line of its own
// inside its testsuite, as encoding/xml writes junitCase indented (the
// same bytes, written directly: a large run writes one per case). A
// drill's verdict, seed and build hash are its properties; a case that
// did not pass has a failure or error element with its details.
func appendTestcase(b []byte, c *Case) []byte {
	b = append(b, "\n    <testcase name=\""...)
	b = appendXMLAttr(b, c.Name)
	b = append(b, `" classname="`...)
	b = appendXMLAttr(b, c.Suite)
	b = append(b, `" time="`...)
	b = appendSeconds(b, c.DurationMS)
	b = append(b, `">`...)
	inner := false
	switch c.Status {
	case Failed, Errored:
		typ := "failure"
		if c.Status == Errored {
			typ = "error"
		}
		b = append(b, "\n      <"...)
		b = append(b, typ...)
		b = append(b, ` message="`...)
		b = appendXMLAttr(b, c.Reason)
		b = append(b, `" type="`...)
		b = append(b, typ...)
		b = append(b, `">`...)
		b = append(b, xmlText(ansi().ReplaceAllString(strings.Join(c.Details(), "\n"), ""))...)
		b = append(b, "</"...)
		b = append(b, typ...)
		b = append(b, '>')
		inner = true
	case Skipped:
		b = append(b, "\n      <skipped"...)
		if c.Reason != "" {
			b = append(b, ` message="`...)
			b = appendXMLAttr(b, c.Reason)
			b = append(b, '"')
		}
		b = append(b, "></skipped>"...)
		inner = true
	}
	if c.Verdict != "" {
		b = append(b, "\n      <properties>"...)
		b = appendProperty(b, "verdict", string(c.Verdict))
		b = appendProperty(b, "build_hash", c.BuildHash)
		if c.Seed != nil {
			b = appendProperty(b, "seed", strconv.FormatInt(*c.Seed, 10))
		}
		b = append(b, "\n      </properties>"...)
		inner = true
	}
	if inner {
		b = append(b, "\n    "...)
	}
	return append(b, "</testcase>"...)
}

func appendProperty(b []byte, name, value string) []byte {
	b = append(b, "\n        <property name=\""...)
	b = append(b, name...)
	b = append(b, `" value="`...)
	b = appendXMLAttr(b, value)
	return append(b, `"></property>`...)
}

// appendSeconds appends what seconds returns.
func appendSeconds(b []byte, ms float64) []byte {
	if math.IsInf(ms, 0) || math.IsNaN(ms) {
		return append(b, seconds(ms)...)
	}
	return strconv.AppendFloat(b, ms/1000, 'f', 3, 64)
}

// appendXMLAttr appends s escaped as encoding/xml escapes an attribute's
// value: quotes, &, <, >, tab, newline and carriage return as
// references, what XML cannot hold (and invalid UTF-8) as U+FFFD.
func appendXMLAttr(b []byte, s string) []byte {
	last := 0
	for i := 0; i < len(s); {
		r, width := rune(s[i]), 1
		if r >= utf8.RuneSelf {
			r, width = utf8.DecodeRuneInString(s[i:])
		}
		i += width
		var esc string
		switch r {
		case '"':
			esc = "&#34;"
		case '\'':
			esc = "&#39;"
		case '&':
			esc = "&amp;"
		case '<':
			esc = "&lt;"
		case '>':
			esc = "&gt;"
		case '\t':
			esc = "&#x9;"
		case '\n':
			esc = "&#xA;"
		case '\r':
			esc = "&#xD;"
		default:
			if xmlChar(r) && (r != utf8.RuneError || width > 1) {
				continue
			}
			esc = "\uFFFD"
		}
		b = append(b, s[last:i-width]...)
		b = append(b, esc...)
		last = i
	}
	return append(b, s[last:]...)
}

// xmlChar says whether XML 1.0 can hold r.
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D || r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD || r >= 0x10000 && r <= 0x10FFFF
}

// End writes the report to w: the totals, then each suite with its cases.
func (j *reportJUnit) End(w io.Writer) error {
	if j.err != nil {
		return j.err
	}
	root := j.root
	root.Suites = nil
	for i := range j.root.Suites {
		s := &j.root.Suites[i]
		s.Time = seconds(j.ms[i])
		root.Tests += s.Tests
		root.Failures += s.Failures
		root.Errors += s.Errors
		root.Skipped += s.Skipped
	}
	root.Time = seconds(j.total)
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	if err := enc.Encode(root); err != nil {
		return err
	}
	if len(j.root.Suites) == 0 {
		b.WriteByte('\n')
		_, err := w.Write(b.Bytes())
		return err
	}
	b.Truncate(b.Len() - len("</testsuites>"))
	for i := range j.root.Suites {
		s := j.root.Suites[i]
		b.WriteString("\n  ")
		if err := enc.EncodeElement(s, xml.StartElement{Name: xml.Name{Local: "testsuite"}}); err != nil {
			return err
		}
		if err := enc.Flush(); err != nil {
			return err
		}
		b.Truncate(b.Len() - len("</testsuite>"))
		if _, err := w.Write(b.Bytes()); err != nil {
			return err
		}
		b.Reset()
		for _, p := range j.parts[i] {
			if _, err := io.Copy(w, io.NewSectionReader(j.body, p[0], p[1]-p[0])); err != nil {
				return fmt.Errorf("reading the cases back: %w", err)
			}
		}
		b.WriteString("\n  </testsuite>")
	}
	b.WriteString("\n</testsuites>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// Stream writes the JSON and JUnit reports of a run while it runs, a
// case at a time (the dryfire package's RunOptions.Stream), and keeps no
// case's result: the memory of a run does not grow with its cases. The
// reports are the same bytes as Report.JSON and Report.JUnit write. A
// Stream serves one run.
type Stream struct {
	// Keep is how many of the cases that did not pass the run's Report
	// keeps whole, the first ones in report order (for annotations, say);
	// the rest are only counted in its summary.
	Keep int

	json   *reportJSON
	junit  *reportJUnit
	junitW io.Writer
	body   *os.File // the JUnit report's cases, until Close (through buf)
	closed bool
}

// NewStream writes the JSON report to json and the JUnit report to
// junit; either may be nil. The JSON report is written as the cases are
// done (buffer w), the JUnit one whole at Close: its totals come first,
// so its cases wait in a temporary file until then.
func NewStream(json, junit io.Writer) (*Stream, error) {
	s := &Stream{}
	if json != nil {
		s.json = newReportJSON(json)
	}
	if junit != nil {
		f, err := os.CreateTemp("", "dryfire-junit-*.xml")
		if err != nil {
			return nil, fmt.Errorf("making room for the JUnit report: %w", err)
		}
		s.body, s.junitW, s.junit = f, junit, newReportJUnit(&bufferedBody{bufio.NewWriterSize(f, 64<<10), f})
	}
	return s, nil
}

// bufferedBody is a temporary file written through a buffer (a case's
// testcase element is a hundred bytes or so), flushed before it is read.
type bufferedBody struct {
	*bufio.Writer
	f *os.File
}

func (b *bufferedBody) ReadAt(p []byte, off int64) (int, error) {
	if err := b.Flush(); err != nil {
		return 0, err
	}
	return b.f.ReadAt(p, off)
}

// Add writes the run's next case, in report order. A write that fails is
// kept and returned by Close; the run goes on.
func (s *Stream) Add(c *Case) {
	if s.json != nil {
		s.json.Case(c)
	}
	if s.junit != nil {
		s.junit.Case(c)
	}
}

// Close writes the ends of the reports (r's summary and shard: the
// Report the run returned) and removes the temporary file. The error
// says which report could not be written.
func (s *Stream) Close(r *Report) error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.json != nil {
		if err := s.json.End(r); err != nil {
			errs = append(errs, fmt.Errorf("writing the JSON report: %w", err))
		}
	}
	if s.junit != nil {
		if err := s.junit.End(s.junitW); err != nil {
			errs = append(errs, fmt.Errorf("writing the JUnit report: %w", err))
		}
	}
	s.Discard()
	return errors.Join(errs...)
}

// Discard removes the temporary file without writing the reports' ends:
// for a run that did not take place.
func (s *Stream) Discard() {
	if s.body != nil {
		s.body.Close()
		os.Remove(s.body.Name())
		s.body = nil
	}
}

// Outcome says whether a case of the run failed or erred through the
// suite or the agent, and whether one erred through its surroundings (a
// provider unreachable, a cassette missing): what decides the exit code.
// It counts every case, also of a streamed run's Report, which keeps only
// some (Totals).
func (r *Report) Outcome() (failing, infra bool) {
	t := r.Totals
	if t == nil {
		t = TotalsOf(r)
	}
	return t.Failing, t.Infra
}
