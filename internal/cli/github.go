package cli

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

// On GitHub Actions (GITHUB_ACTIONS=true) a run speaks the runner's own
// language: each spec error or warning and each case that did not pass is
// also a workflow command (::error file=…,line=…::…), which GitHub shows as
// an annotation on that line of the file, and a Markdown summary of the
// run is appended to the file GITHUB_STEP_SUMMARY names.

// maxAnnotations bounds the annotations one run prints: GitHub shows ten
// per step, and a big failing suite would flood the log.
const maxAnnotations = 50

// maxSummaryRows bounds the failed cases listed in the job summary.
const maxSummaryRows = 100

func onGitHub(e *env) bool { return e.getenv("GITHUB_ACTIONS") == "true" }

// ghDiagnostics writes spec diagnostics as workflow commands.
func ghDiagnostics(w io.Writer, ds dryfire.Diagnostics) {
	for i, d := range ds {
		if i == maxAnnotations {
			fmt.Fprintf(w, "::warning::%d more diagnostics are not annotated; the log lists them all\n", len(ds)-i)
			return
		}
		kind := "error"
		if d.Severity == dryfire.SeverityWarning {
			kind = "warning"
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d::%s\n", kind, termtext.WorkflowProperty(d.Pos.File), d.Pos.Line, d.Pos.Col, termtext.WorkflowData(d.Message))
	}
}

// ghCases writes the cases of rep that did not pass as error annotations,
// at the first failed check when there is one, else at the case.
func ghCases(w io.Writer, p *dryfire.Project, rep *report.Report) {
	n := 0
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if c.Status != report.Failed && c.Status != report.Errored {
			continue
		}
		if n == maxAnnotations {
			fmt.Fprintf(w, "::warning::more cases did not pass than are annotated (%d); the log lists them all\n", maxAnnotations)
			return
		}
		n++
		file, line := ghWhere(p, c)
		title := c.Suite + ": " + c.Name
		msg := ghMessage(c)
		if file == "" {
			fmt.Fprintf(w, "::error title=%s::%s\n", termtext.WorkflowProperty(title), termtext.WorkflowData(msg))
			continue
		}
		fmt.Fprintf(w, "::error file=%s,line=%d,title=%s::%s\n", termtext.WorkflowProperty(file), line, termtext.WorkflowProperty(title), termtext.WorkflowData(msg))
	}
}

// ghWhere is the file and line a case's annotation points at.
func ghWhere(p *dryfire.Project, c *report.Case) (string, int) {
	for _, ch := range c.Checks {
		if ch.Passed {
			continue
		}
		if i := strings.LastIndexByte(ch.At, ':'); i > 0 {
			if line, err := strconv.Atoi(ch.At[i+1:]); err == nil {
				return ch.At[:i], line
			}
		}
	}
	if pos := p.CasePos(c.Suite, c.Name); pos.File != "" {
		return pos.File, pos.Line
	}
	return "", 0
}

// ghMessage says why a case did not pass, in a few lines.
func ghMessage(c *report.Case) string {
	var lines []string
	if c.Status == report.Errored {
		lines = append(lines, "error: "+c.Reason)
	}
	for _, ch := range c.Checks {
		if !ch.Passed {
			lines = append(lines, "check failed at "+ch.At+": "+ch.Check, "  "+ch.Message)
		}
	}
	if len(lines) == 0 {
		lines = append(lines, string(c.Status)+": "+c.Reason)
	}
	if len(lines) > 12 {
		lines = append(lines[:12], "…")
	}
	return strings.Join(lines, "\n")
}

// ghSummary appends the run's Markdown summary to GITHUB_STEP_SUMMARY.
func ghSummary(e *env, rep *report.Report) error {
	var b strings.Builder
	s := rep.Summary
	fmt.Fprintf(&b, "### dryfire: %d passed, %d failed", s.Passed, s.Failed)
	if s.Error > 0 {
		fmt.Fprintf(&b, ", %s", termtext.Count(s.Error, "error"))
	}
	if s.Skipped > 0 {
		fmt.Fprintf(&b, ", %d skipped", s.Skipped)
	}
	b.WriteString("\n\n")
	rows := 0
	for i := range rep.Cases {
		c := &rep.Cases[i]
		if c.Status != report.Failed && c.Status != report.Errored {
			continue
		}
		if rows == 0 {
			b.WriteString("| status | suite | case | why |\n|---|---|---|---|\n")
		}
		if rows == maxSummaryRows {
			fmt.Fprintf(&b, "\n%d more cases did not pass; the log lists them all.\n", s.Failed+s.Error-rows)
			break
		}
		rows++
		why := strings.SplitN(ghMessage(c), "\n", 2)[0]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", c.Status, mdCell(c.Suite), mdCell(c.Name), mdCell(why))
	}
	if rows == 0 {
		b.WriteString("Every case passed.\n")
	}
	return ghAppendSummary(e, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// mdCell is s fit for a Markdown table cell: one line, bounded, and
// escaped (termtext.Markdown) so that a name's Markdown or HTML renders
// as its text.
func mdCell(s string) string {
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return termtext.Markdown(s)
}
