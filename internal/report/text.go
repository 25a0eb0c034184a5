package report

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// TextOptions shape the human-readable output.
type TextOptions struct {
	// Terminal: keep a status line redrawn in place and print only cases
	// that did not pass; otherwise print one line per case, in order.
	Terminal bool
	Color    bool
	// Verbose prints details for passing cases too.
	Verbose bool
}

// Text prints progress and results for people. In a log (not a terminal)
// the output is deterministic: one line per case in report order, whatever
// order the cases finish in.
type Text struct {
	w    io.Writer
	opts TextOptions

	mu      sync.Mutex
	total   int
	done    []*Case
	next    int // next index to print (log mode)
	counts  Summary
	running map[int]string
	status  bool // a status line is on screen
}

// NewText writes to w.
func NewText(w io.Writer, opts TextOptions) *Text {
	return &Text{w: w, opts: opts, running: map[int]string{}}
}

// Start implements runner.Progress.
func (t *Text) Start(total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total = total
	t.done = make([]*Case, total)
	t.drawStatus()
}

// CaseStarted implements runner.Progress.
func (t *Text) CaseStarted(i int, suite, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[i] = name
	t.drawStatus()
}

// CaseDone implements runner.Progress.
func (t *Text) CaseDone(i int, c *Case) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, i)
	switch c.Status {
	case Passed:
		t.counts.Passed++
	case Failed:
		t.counts.Failed++
	case Errored:
		t.counts.Error++
	case Skipped:
		t.counts.Skipped++
	}
	if i >= 0 && i < len(t.done) {
		t.done[i] = c
	}
	if t.opts.Terminal {
		if c.Status != Passed || t.opts.Verbose {
			t.clearStatus()
			t.printCase(c)
		}
		t.drawStatus()
		return
	}
	for t.next < len(t.done) && t.done[t.next] != nil {
		t.printCase(t.done[t.next])
		t.next++
	}
}

// Finish prints the summary line, always last.
func (t *Text) Finish(r *Report) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.clearStatus()
	fmt.Fprintln(t.w, SummaryLine(r.Summary))
}

// SummaryLine is the last line of a run: "N passed, N failed", then
// errors and skipped cases when there are any.
func SummaryLine(s Summary) string {
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Error > 0 {
		line += fmt.Sprintf(", %d error", s.Error)
		if s.Error > 1 {
			line += "s"
		}
	}
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return line
}

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	dim    = "\x1b[2m"
	bold   = "\x1b[1m"
	reset  = "\x1b[0m"
)

func (t *Text) paint(color, s string) string {
	if !t.opts.Color {
		return s
	}
	return color + s + reset
}

func (t *Text) label(s Status) string {
	switch s {
	case Passed:
		return t.paint(green, "PASS ")
	case Failed:
		return t.paint(red, "FAIL ")
	case Errored:
		return t.paint(yellow, "ERROR")
	}
	return t.paint(dim, "SKIP ")
}

func (t *Text) printCase(c *Case) {
	line := fmt.Sprintf("%s %s: %s", t.label(c.Status), c.Suite, c.Name)
	if c.Status == Skipped && c.Reason != "" {
		line += t.paint(dim, " ("+c.Reason+")")
	}
	fmt.Fprintln(t.w, line)
	if c.Status == Passed && !t.opts.Verbose || c.Status == Skipped {
		return
	}
	for _, l := range Details(c) {
		fmt.Fprintln(t.w, "      "+l)
	}
}

// Details are the lines that explain a case's result: its error, failed
// checks, unmatched calls and output. JUnit failure text uses them too.
func Details(c *Case) []string {
	var out []string
	if c.Status == Errored {
		out = append(out, "error: "+c.Reason)
	}
	for _, ch := range c.Checks {
		if ch.Passed && c.Status != Passed {
			continue
		}
		mark := "ok"
		if !ch.Passed {
			mark = "check failed"
		}
		out = append(out, fmt.Sprintf("%s at %s: %s", mark, ch.At, ch.Check))
		out = append(out, "  "+ch.Message)
	}
	for _, tc := range c.ToolCalls {
		if tc.Outcome != tool.Unmatched {
			continue
		}
		out = append(out, fmt.Sprintf("unmatched call in turn %d: %s %s", tc.Turn, tc.Tool, string(tc.Args)))
		out = append(out, "  "+strings.TrimPrefix(tc.Result, "dryfire: "))
	}
	if c.Status != Passed {
		out = append(out, fmt.Sprintf("output after %d turn(s): %s", c.Turns, quote(c.Output)))
	}
	for _, n := range c.Notes {
		out = append(out, "note: "+n)
	}
	return out
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	r := []rune(s)
	if len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func (t *Text) clearStatus() {
	if t.status {
		fmt.Fprint(t.w, "\r\x1b[2K")
		t.status = false
	}
}

func (t *Text) drawStatus() {
	if !t.opts.Terminal {
		return
	}
	t.clearStatus()
	finished := t.counts.Passed + t.counts.Failed + t.counts.Error + t.counts.Skipped
	s := fmt.Sprintf("%d/%d  %s", finished, t.total, t.paint(green, fmt.Sprintf("%d passed", t.counts.Passed)))
	if t.counts.Failed > 0 {
		s += ", " + t.paint(red, fmt.Sprintf("%d failed", t.counts.Failed))
	}
	if t.counts.Error > 0 {
		s += ", " + t.paint(yellow, fmt.Sprintf("%d error", t.counts.Error))
	}
	// Name the earliest running case, so the line does not flicker.
	first := -1
	for i := range t.running {
		if first < 0 || i < first {
			first = i
		}
	}
	if first >= 0 {
		name := t.running[first]
		if r := []rune(name); len(r) > 50 {
			name = string(r[:50]) + "…"
		}
		s += t.paint(dim, "  running: "+name)
	}
	fmt.Fprint(t.w, s)
	t.status = true
}
