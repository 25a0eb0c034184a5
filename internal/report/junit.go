package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Skipped  int         `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	// Properties carry a drill's verdict, seed and build hash.
	Properties *junitProperties `xml:"properties,omitempty"`
	SystemOut  string           `xml:"system-out,omitempty"`
}

type junitProperties struct {
	Property []junitProperty `xml:"property"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	// Text is escaped by xmlText: encoding/xml would write every newline
	// and quote as a character reference, leaving one unreadable line.
	Text string `xml:",innerxml"`
}

type junitSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

var ansi = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// xmlText escapes s as XML character data that stays readable: only &, <
// and > are escaped, and characters XML 1.0 cannot hold at all (control
// characters, invalid UTF-8) become U+FFFD.
func xmlText(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '\r':
			b.WriteString("&#xD;")
		case r == '\t', r == '\n',
			r >= 0x20 && r <= 0xD7FF && r != utf8.RuneError,
			r >= 0xE000 && r <= 0xFFFD && r != utf8.RuneError,
			r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		default:
			b.WriteRune('\uFFFD')
		}
	}
	return b.String()
}

func seconds(ms float64) string { return fmt.Sprintf("%.3f", ms/1000) }

// JUnit renders the report as JUnit XML: a testsuite per suite file, a
// testcase per case, and failure text holding the check messages and near
// misses.
func (r *Report) JUnit() ([]byte, error) {
	root := junitSuites{Name: "dryfire"}
	index := map[string]int{}
	var total float64
	var suiteMS []float64
	for i := range r.Cases {
		c := &r.Cases[i]
		si, ok := index[c.Suite]
		if !ok {
			si = len(root.Suites)
			index[c.Suite] = si
			root.Suites = append(root.Suites, junitSuite{Name: c.Suite})
			suiteMS = append(suiteMS, 0)
		}
		s := &root.Suites[si]
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
		s.Tests++
		total += c.DurationMS
		suiteMS[si] += c.DurationMS
		s.Cases = append(s.Cases, jc)
	}
	for i := range root.Suites {
		s := &root.Suites[i]
		s.Time = seconds(suiteMS[i])
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
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}
