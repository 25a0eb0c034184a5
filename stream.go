package dryfire

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/dryfire-dev/dryfire/internal/report"
)

// ReportStream writes the JSON and JUnit reports of a run while it runs,
// a case at a time (RunOptions.Stream), and keeps no case's result: the
// memory of a run does not grow with its cases. The reports are the same
// bytes as Report.JSON and Report.JUnit write. A ReportStream serves one
// run.
type ReportStream struct {
	// Keep is how many of the cases that did not pass the run's Report
	// keeps whole, the first ones in report order (for annotations, say);
	// the rest are only counted in its summary.
	Keep int

	json   *report.ReportJSON
	junit  *report.ReportJUnit
	junitW io.Writer
	body   *os.File // the JUnit report's cases, until Close (through buf)
	kept   []*report.Case
	closed bool
}

// NewReportStream writes the JSON report to json and the JUnit report to
// junit; either may be nil. The JSON report is written as the cases are
// done (buffer w), the JUnit one whole at Close: its totals come first,
// so its cases wait in a temporary file until then.
func NewReportStream(json, junit io.Writer) (*ReportStream, error) {
	s := &ReportStream{}
	if json != nil {
		s.json = report.NewReportJSON(json)
	}
	if junit != nil {
		f, err := os.CreateTemp("", "dryfire-junit-*.xml")
		if err != nil {
			return nil, fmt.Errorf("making room for the JUnit report: %w", err)
		}
		s.body, s.junitW, s.junit = f, junit, report.NewReportJUnit(&bufferedBody{bufio.NewWriterSize(f, 64<<10), f})
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

// add is the runner's Sink: each case, in report order.
func (s *ReportStream) add(_ int, c *report.Case) {
	// A write that fails is kept by the writer and returned by Close; the
	// run goes on.
	if s.json != nil {
		s.json.Case(c)
	}
	if s.junit != nil {
		s.junit.Case(c)
	}
	if (c.Status == report.Failed || c.Status == report.Errored) && len(s.kept) < s.Keep {
		s.kept = append(s.kept, c)
	}
}

// Close writes the ends of the reports (r's summary and shard: the
// Report the run returned) and removes the temporary file. The error
// says which report could not be written.
func (s *ReportStream) Close(r *Report) error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.json != nil {
		head := *r
		head.Cases = nil
		if err := s.json.End(internalReport(&head)); err != nil {
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
func (s *ReportStream) Discard() {
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
// some.
func (r *Report) Outcome() (failing, infra bool) {
	if r.totals != nil {
		return r.totals.Failing, r.totals.Infra
	}
	for _, c := range r.Cases {
		switch {
		case c.Status == Failed, c.Status == Errored && !c.Infra:
			failing = true
		case c.Status == Errored:
			infra = true
		}
	}
	return failing, infra
}
