// Package yamlpos reads YAML files with their positions for the formats
// dryfire users write (suites, worlds): parsing with positioned syntax
// errors, the conversion to JSON values with its checks (duplicate keys,
// merge keys, values JSON cannot hold, size bounds), a format's JSON Schema
// applied with messages at the offending key or value, walking nodes
// (pairs, items, paths), and the positioned diagnostics all of it reports.
// It knows no format: each format's package (internal/spec, internal/world)
// decodes its own from what this reads.
package yamlpos

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"
)

// Pos is a position in a file; Line and Col are 1-based.
type Pos struct {
	File      string
	Line, Col int
}

// String renders FILE:LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// FileLine renders FILE:LINE, the form reports use for rules.
func (p Pos) FileLine() string {
	var n [20]byte
	return p.File + ":" + string(strconv.AppendInt(n[:0], int64(p.Line), 10)) // one allocation: a run makes one per check
}

// Severity says whether a diagnostic stops a run.
type Severity int

const (
	Error Severity = iota
	Warning
)

// A Diagnostic is one problem found in a file.
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
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == Error })
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

// Sort orders the diagnostics of one file by position, then message;
// those in the first of files come first, then each other's (the data
// files a suite's cases come from), in the order given.
func Sort(ds []Diagnostic, files ...string) {
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

// A Collector collects the diagnostics of one file, once each.
type Collector struct {
	File string
	// Kind names the format in messages ("world"); Empty is what an empty
	// file of it is told.
	Kind, Empty string
	// List is what was added, in the order it was.
	List []Diagnostic
	seen map[string]bool
	// Sources are the other files a virtual line can name (VirtualLine).
	Sources []string
}

// Add adds a diagnostic at line:col (either below 1 is 1), once: the same
// one again is dropped.
func (d *Collector) Add(sev Severity, line, col int, format string, args ...any) {
	if line < 1 {
		line = 1
	}
	if col < 1 {
		col = 1
	}
	file, line := d.RealPos(line)
	d.keep(Diagnostic{Pos: Pos{File: file, Line: line, Col: col}, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

// AddAt adds a diagnostic at p, a position already made (not virtual),
// once as Add does.
func (d *Collector) AddAt(sev Severity, p Pos, format string, args ...any) {
	p.Line, p.Col = max(p.Line, 1), max(p.Col, 1)
	p.File = cmp.Or(p.File, d.File)
	d.keep(Diagnostic{Pos: p, Severity: sev, Message: fmt.Sprintf(format, args...)})
}

// Pos is n's position (nil: line 1, column 1).
func (d *Collector) Pos(n *yaml.Node) Pos {
	line, col := 1, 1
	if n != nil {
		line, col = max(n.Line, 1), max(n.Column, 1)
	}
	file, line := d.RealPos(line)
	return Pos{File: file, Line: line, Col: col}
}

// Errorf adds an error at n, once as Add does.
func (d *Collector) Errorf(n *yaml.Node, format string, args ...any) {
	d.keep(Diagnostic{Pos: d.Pos(n), Severity: Error, Message: fmt.Sprintf(format, args...)})
}

// Warnf adds a warning at n, once as Add does.
func (d *Collector) Warnf(n *yaml.Node, format string, args ...any) {
	d.keep(Diagnostic{Pos: d.Pos(n), Severity: Warning, Message: fmt.Sprintf(format, args...)})
}

// Merge adds what another collector of the same file collected, each
// diagnostic once as Add does.
func (d *Collector) Merge(ds []Diagnostic) {
	for _, dg := range ds {
		d.keep(dg)
	}
}

func (d *Collector) keep(dg Diagnostic) {
	key := fmt.Sprintf("%d:%s:%d:%d:%s", dg.Severity, dg.Pos.File, dg.Pos.Line, dg.Pos.Col, dg.Message)
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	d.List = append(d.List, dg)
}

func (d *Collector) kindName() string {
	if d.Kind == "" {
		return "YAML"
	}
	return d.Kind
}

func (d *Collector) emptyMessage() string {
	if d.Empty != "" {
		return d.Empty
	}
	return "empty " + d.kindName() + " file"
}

// A virtual line is (source+1)<<lineBits | line: it names line of
// Sources[source] in a node of another file's tree (a suite's case made
// from a data file's row).
const lineBits = 32

// VirtualLine is the virtual line of line in Sources[source].
func VirtualLine(source, line int) int { return (source+1)<<lineBits | line }

// RealPos maps a line that may be virtual to its file and line.
func (d *Collector) RealPos(line int) (string, int) {
	if line>>lineBits == 0 || line>>lineBits > len(d.Sources) {
		return d.File, line
	}
	return d.Sources[line>>lineBits-1], line & (1<<lineBits - 1)
}
