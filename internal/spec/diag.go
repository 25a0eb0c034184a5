package spec

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Pos is a position in a suite file; Line and Col are 1-based.
type Pos struct {
	File      string
	Line, Col int
}

// String renders FILE:LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// FileLine renders FILE:LINE, the form reports use for rules.
func (p Pos) FileLine() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// Severity says whether a diagnostic stops a run.
type Severity int

const (
	Error Severity = iota
	Warning
)

// A Diagnostic is one problem found in a suite file.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Message  string
}

func (d Diagnostic) String() string {
	if d.Severity == Warning {
		return d.Pos.String() + ": warning: " + d.Message
	}
	return d.Pos.String() + ": " + d.Message
}

// Diagnostics is every problem of a load, in file, line, column order.
type Diagnostics []Diagnostic

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	for _, d := range ds {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Count returns the number of errors and warnings.
func (ds Diagnostics) Count() (errors, warnings int) {
	for _, d := range ds {
		if d.Severity == Error {
			errors++
		} else {
			warnings++
		}
	}
	return
}

// Error makes Diagnostics usable as an error: one diagnostic a line.
func (ds Diagnostics) Error() string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
	}
	return b.String()
}

// sortWithin orders the diagnostics of one file by position, then message;
// those in the file itself come first, then each data file's (cases from
// data), in the order the suite names them.
func sortWithin(ds []Diagnostic, files ...string) {
	rank := func(f string) int { return slices.Index(files, f) }
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i], ds[j]
		if a.Pos.File != b.Pos.File {
			return rank(a.Pos.File) < rank(b.Pos.File)
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		if a.Pos.Col != b.Pos.Col {
			return a.Pos.Col < b.Pos.Col
		}
		return a.Message < b.Message
	})
}

// diags collects the diagnostics of one file.
type diags struct {
	file string
	// kind names the format in messages ("" is a suite); empty is what an
	// empty file of it is told.
	kind, empty string
	list        []Diagnostic
	seen        map[string]bool
	// sources are the data files whose rows made cases (virtualLine).
	sources []string
}

func (d *diags) add(sev Severity, line, col int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	msg := fmt.Sprintf(format, args...)
	file, line := d.realPos(line)
	key := fmt.Sprintf("%d:%s:%d:%d:%s", sev, file, line, col, msg)
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	d.list = append(d.list, Diagnostic{Pos: Pos{File: file, Line: line, Col: col}, Severity: sev, Message: msg})
}

func (d *diags) kindName() string {
	if d.kind == "" {
		return "suite"
	}
	return d.kind
}

func (d *diags) emptyMessage() string {
	if d.empty != "" {
		return d.empty
	}
	return "empty suite file: expected a mapping with version, agent and cases"
}
