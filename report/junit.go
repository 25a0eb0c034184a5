package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"regexp"
	"strings"
	"sync"
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

var ansi = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`) })

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
	var body memBody
	j := newReportJUnit(&body)
	if r.Recheck != nil {
		// Its checks are applied again to a stored run: the tab says so.
		j.root.Name = "dryfire recheck of " + r.Recheck.Report
	}
	for i := range r.Cases {
		if err := j.Case(&r.Cases[i]); err != nil {
			return nil, err
		}
	}
	var b bytes.Buffer
	if err := j.End(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
