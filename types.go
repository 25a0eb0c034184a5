package dryfire

import "fmt"

// Pos is a FILE:LINE:COL position in a suite or world file; Line and Col
// are 1-based.
type Pos struct {
	File      string
	Line, Col int
}

// String renders FILE:LINE:COL.
func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// Severity says whether a Diagnostic stops a run.
type Severity int

// Severities of a Diagnostic.
const (
	SeverityError Severity = iota
	SeverityWarning
)

// Diagnostic is one problem in a suite file, with its position.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Message  string
}

// String renders FILE:LINE:COL: message (with "warning: " before the
// message of a warning).
func (d Diagnostic) String() string { return specDiagnostic(d).String() }

// Diagnostics is every problem of a load, in file, line, column order; it
// is the error Load returns when a suite has errors.
type Diagnostics []Diagnostic

// Error is one diagnostic a line.
func (ds Diagnostics) Error() string { return specDiagnostics(ds).Error() }

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool { return specDiagnostics(ds).HasErrors() }

// Count returns the number of errors and warnings.
func (ds Diagnostics) Count() (errors, warnings int) { return specDiagnostics(ds).Count() }
