package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
	"github.com/dryfire-dev/dryfire/report"
)

// Where a command's reports go: their destinations checked before
// anything runs, written whole or streamed while a run goes on, standard
// output or a file replaced atomically.

// checkReportFlags checks --json and --junit before anything runs.
func checkReportFlags(e *env, o runOptions) error {
	if w := stdWriter(e, o.jsonOut); w != nil && w == stdWriter(e, o.junitOut) {
		return usageErr("--json and --junit cannot both write to standard %s", map[bool]string{true: "output", false: "error"}[w == e.stdout])
	}
	if o.jsonOut != "" && o.jsonOut == o.junitOut {
		return usageErr("--json and --junit both write to %s; give each its own file", o.jsonOut)
	}
	// Check the report destinations now: finding out after the run that
	// a report cannot be written wastes the run.
	if o.htmlOut != "" && (o.htmlOut == o.jsonOut || o.htmlOut == o.junitOut) {
		return usageErr("--html writes to %s, as another report does; give each its own file", o.htmlOut)
	}
	for _, d := range []struct{ flag, dest string }{{"json", o.jsonOut}, {"junit", o.junitOut}, {"html", o.htmlOut}} {
		if err := checkDest(d.dest); err != nil {
			return usageErr("--%s %s: %v; nothing ran", d.flag, d.dest, err)
		}
	}
	return nil
}

// textWriter is where the text goes: standard output, unless a report
// goes there (then standard error).
func textWriter(e *env, o runOptions) io.Writer {
	for _, dest := range []string{o.jsonOut, o.junitOut, o.htmlOut} {
		if stdWriter(e, dest) == e.stdout {
			return e.stderr
		}
	}
	return e.stdout
}

// checkDest reports why a report could not be written to dest: its
// directory is missing or not writable, or dest is a directory.
func checkDest(dest string) error {
	if dest == "" || dest == "-" {
		return nil
	}
	if st, err := os.Stat(dest); err == nil {
		if st.IsDir() {
			return errors.New("that is a directory, not a file")
		}
		if !st.Mode().IsRegular() {
			return nil // a device or a pipe, such as /dev/stdout
		}
	}
	dir := filepath.Dir(dest)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	// The report is written to a temporary file beside dest, then renamed:
	// try that now.
	f, err := os.CreateTemp(dir, ".dryfire-check-*")
	if err != nil {
		return fmt.Errorf("cannot create files in %s: %w", dir, errors.Unwrap(err))
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

func writeReports(e *env, rep *report.Report, o runOptions) error {
	for _, r := range []struct {
		name, dest string
		write      func(io.Writer) error
	}{{"JSON", o.jsonOut, rep.WriteJSON}, {"JUnit", o.junitOut, rendered(rep.JUnit)}, {"HTML", o.htmlOut, rendered(rep.HTML)}} {
		if r.dest == "" {
			continue
		}
		if err := writeReportWith(e, r.dest, r.write); err != nil {
			return fmt.Errorf("writing the %s report: %w", r.name, err)
		}
	}
	return nil
}

// streamOuts are the reports of a run written while it runs, and where
// they go.
type streamOuts struct {
	stream *report.Stream
	json   *reportOut
	junit  *reportOut
	done   bool
}

// reportOut is a report's destination while a run streams it: committed
// once the run is done, dropped when it did not run.
type reportOut struct {
	w      io.Writer
	commit func() error
	abort  func()
}

// openStream readies the JSON and JUnit reports of o to be streamed.
func openStream(e *env, o runOptions) (*streamOuts, error) {
	s := &streamOuts{}
	var err error
	if s.json, err = openReport(e, o.jsonOut); err != nil {
		return nil, fmt.Errorf("writing the JSON report: %w", err)
	}
	if s.junit, err = openReport(e, o.junitOut); err != nil {
		s.json.drop()
		return nil, fmt.Errorf("writing the JUnit report: %w", err)
	}
	if s.stream, err = report.NewStream(s.json.writer(), s.junit.writer()); err != nil {
		s.json.drop()
		s.junit.drop()
		return nil, err
	}
	s.stream.Keep = maxSummaryRows + 1 // what annotations and the job summary show
	return s, nil
}

// finish writes the ends of the reports and commits them.
func (s *streamOuts) finish(rep *report.Report) []error {
	s.done = true
	var errs []error
	if err := s.stream.Close(rep); err != nil {
		errs = append(errs, err)
	}
	for _, r := range []struct {
		name string
		out  *reportOut
	}{{"JSON", s.json}, {"JUnit", s.junit}} {
		if r.out == nil {
			continue
		}
		if err := r.out.commit(); err != nil {
			errs = append(errs, fmt.Errorf("writing the %s report: %w", r.name, err))
		}
	}
	return errs
}

// abort drops the reports of a run that did not finish (nothing ran).
func (s *streamOuts) abort() {
	if s.done {
		return
	}
	s.stream.Discard()
	s.json.drop()
	s.junit.drop()
}

func (r *reportOut) writer() io.Writer {
	if r == nil {
		return nil
	}
	return r.w
}

func (r *reportOut) drop() {
	if r != nil {
		r.abort()
	}
}

// openReport is dest ready to be written: standard output or error for
// "-" or a name of them, a file written through when dest is not a plain
// file (a device, a pipe), else a file replaced atomically when
// committed; nil for no dest.
func openReport(e *env, dest string) (*reportOut, error) {
	if dest == "" {
		return nil, nil
	}
	if w := stdWriter(e, dest); w != nil {
		bw := bufio.NewWriterSize(w, 256<<10)
		return &reportOut{w: bw, commit: bw.Flush, abort: func() {}}, nil
	}
	if fi, err := os.Lstat(dest); err == nil && !fi.Mode().IsRegular() {
		f, err := os.OpenFile(dest, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if err != nil {
			return nil, err
		}
		bw := bufio.NewWriterSize(f, 256<<10)
		return &reportOut{w: bw, commit: func() error {
			err := bw.Flush()
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}, abort: func() { f.Close() }}, nil
	}
	f, err := atomicfile.Create(dest, 0o644)
	if err != nil {
		return nil, err
	}
	return &reportOut{w: f, commit: f.Commit, abort: f.Abort}, nil
}

// rendered writes what render renders.
func rendered(render func() ([]byte, error)) func(io.Writer) error {
	return func(w io.Writer) error {
		data, err := render()
		if err == nil {
			_, err = w.Write(data)
		}
		return err
	}
}

// writeReportWith writes a report to dest as openReport opens it (a
// dest that is not a plain file, a symlink, a device, a pipe, is written
// through, never replaced: --json /dev/stdout must not swap the
// /dev/stdout link for a file), buffered: never whole in memory.
func writeReportWith(e *env, dest string, write func(io.Writer) error) error {
	r, err := openReport(e, dest)
	if err != nil {
		return err
	}
	if err := write(r.w); err != nil {
		r.abort()
		return err
	}
	return r.commit()
}

// stdWriter returns our standard output or error when dest is "-" or names
// the same file (/dev/stdout, /dev/fd/2, the file stdout is redirected
// to): writing there through a new descriptor would overwrite what was
// written before.
func stdWriter(e *env, dest string) io.Writer {
	if dest == "" {
		return nil
	}
	if dest == "-" {
		return e.stdout
	}
	st, err := os.Stat(dest)
	if err != nil {
		return nil
	}
	for _, w := range []io.Writer{e.stdout, e.stderr} {
		if f, ok := w.(*os.File); ok {
			if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
				return w
			}
		}
	}
	return nil
}
