package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
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

	roles RoleUsage // the usage by role; Summary.UsageByRole once a case splits it
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
	t := &Totals{}
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
	l.b = l.b[:0]
	if l.n == 0 {
		l.b = append(l.b, l.open()...)
	} else {
		l.b = append(l.b, ',')
	}
	l.b = append(l.b, "\n    "...)
	item := l.compact.Bytes()
	l.b = appendIndented(l.b, item[:len(item)-1], "    ", "  ") // without the encoder's newline
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
type ReportJSON struct{ l *ListJSON }

// NewReportJSON writes to w.
func NewReportJSON(w io.Writer) *ReportJSON { return &ReportJSON{NewListJSON(w, "cases")} }

// Case writes the report's next case.
func (j *ReportJSON) Case(c *Case) error { return j.l.Item(c) }

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
	b     bytes.Buffer
	enc   *xml.Encoder
	err   error
}

// NewReportJUnit keeps the cases' elements in body until End.
func NewReportJUnit(body Body) *ReportJUnit {
	j := &ReportJUnit{body: body, root: junitSuites{Name: "dryfire"}, index: map[string]int{}}
	j.enc = xml.NewEncoder(&j.b)
	j.enc.Indent("    ", "  ")
	return j
}

var testcase = xml.StartElement{Name: xml.Name{Local: "testcase"}}

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
	jc, err := j.element(c, s)
	if err != nil {
		return err
	}
	s.Tests++
	j.total += c.DurationMS
	j.ms[si] += c.DurationMS
	j.b.Reset()
	if j.off == 0 {
		// The encoder starts every element after its first on a new
		// line, indented: the first one too.
		j.b.WriteString("\n")
	}
	if err := j.enc.EncodeElement(jc, testcase); err != nil {
		return err
	}
	if err := j.enc.Flush(); err != nil {
		return err
	}
	start := j.off
	n, err := j.body.Write(j.b.Bytes())
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

// element is a case's testcase element; s counts its status.
func (j *ReportJUnit) element(c *Case, s *junitSuite) (junitCase, error) {
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
		details = xmlText(ansi.ReplaceAllString(strings.Join(Details(c), "\n"), ""))
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
	return jc, nil
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
