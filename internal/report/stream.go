package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
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

// ListJSON writes what IndentedJSON renders of a struct whose first
// field, named key, is a list, one item at a time (Item), then the rest of
// the struct (End): a report of many cases is written as they come,
// without its text or its cases in memory.
type ListJSON struct {
	w       io.Writer
	key     string
	n       int
	compact bytes.Buffer // an item as enc writes it
	b       []byte       // indented
	enc     *json.Encoder
	err     error // the first write that failed; nothing is written after it
}

// NewListJSON writes the list named key to w; nothing is written before
// the first Item or End.
func NewListJSON(w io.Writer, key string) *ListJSON {
	l := &ListJSON{w: w, key: key}
	l.enc = json.NewEncoder(&l.compact)
	l.enc.SetEscapeHTML(false)
	return l
}

func (l *ListJSON) write(s []byte) {
	if l.err == nil {
		_, l.err = l.w.Write(s)
	}
}

func (l *ListJSON) open() string { return "{\n  " + strconv.Quote(l.key) + ": [" }

// Item writes the list's next item.
func (l *ListJSON) Item(v any) error {
	l.compact.Reset()
	if err := l.enc.Encode(v); err != nil {
		return err
	}
	item := l.compact.Bytes()
	l.b = appendIndented(l.start(), item[:len(item)-1], "    ", "  ") // without the encoder's newline
	return l.end()
}

// start is the buffer of the next item, with what comes before it.
func (l *ListJSON) start() []byte {
	l.b = l.b[:0]
	if l.n == 0 {
		l.b = append(l.b, l.open()...)
	} else {
		l.b = append(l.b, ',')
	}
	return append(l.b, "\n    "...)
}

// end writes the item in l.b.
func (l *ListJSON) end() error {
	l.n++
	l.write(l.b)
	return l.err
}

// End closes the list and writes the rest: head is the struct with the
// list nil (rendered whole).
func (l *ListJSON) End(head any) error {
	rest, err := IndentedJSON(head)
	if err != nil {
		return err
	}
	null := "{\n  " + strconv.Quote(l.key) + ": null"
	if !bytes.HasPrefix(rest, []byte(null)) {
		return fmt.Errorf("writing JSON: %q is not the first field", l.key)
	}
	if l.n == 0 {
		l.write([]byte(l.open()))
	} else {
		l.write([]byte("\n  "))
	}
	l.write([]byte("]"))
	l.write(rest[len(null):])
	return l.err
}

// ReportJSON writes the JSON report of a run a case at a time: the same
// bytes as Report.JSON.
type ReportJSON struct {
	l *ListJSON
	c *caseJSON
}

// NewReportJSON writes to w.
func NewReportJSON(w io.Writer) *ReportJSON {
	return &ReportJSON{NewListJSON(w, "cases"), newCaseJSON()}
}

// Case writes the report's next case.
func (j *ReportJSON) Case(c *Case) error {
	b, err := j.c.appendCase(j.l.start(), c)
	if err != nil {
		// What only encoding/json writes right, or fails on.
		return j.l.Item(c)
	}
	j.l.b = b
	return j.l.end()
}

// End writes the summary and shard of r (its cases are not written).
func (j *ReportJSON) End(r *Report) error {
	head := *r
	head.Cases = nil
	return j.l.End(&head)
}

// Body is where a JUnit report's cases are kept until its totals are
// known: a temporary file, or memory (MemBody).
type Body interface {
	io.Writer
	io.ReaderAt
}

// MemBody is a Body in memory.
type MemBody struct{ bytes.Buffer }

// ReadAt implements io.ReaderAt.
func (m *MemBody) ReadAt(p []byte, off int64) (int, error) {
	return bytes.NewReader(m.Bytes()).ReadAt(p, off)
}

// ReportJUnit writes a JUnit report a case at a time: each case's
// element goes to a body as it comes, and End writes the report (its
// totals first) with the bodies' parts in place. The same bytes as
// Report.JUnit.
type ReportJUnit struct {
	body  Body
	off   int64
	root  junitSuites
	index map[string]int
	ms    []float64 // each suite's time
	total float64
	parts [][][2]int64 // each suite's spans of the body
	b     []byte       // a case's element
	err   error
}

// NewReportJUnit keeps the cases' elements in body until End.
func NewReportJUnit(body Body) *ReportJUnit {
	return &ReportJUnit{body: body, root: junitSuites{Name: "dryfire"}, index: map[string]int{}}
}

// Case adds the report's next case.
func (j *ReportJUnit) Case(c *Case) error {
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
		b = append(b, xmlText(ansi().ReplaceAllString(strings.Join(Details(c), "\n"), ""))...)
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
func (j *ReportJUnit) End(w io.Writer) error {
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
