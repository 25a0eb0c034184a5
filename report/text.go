package report

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// TextOptions shape the human-readable output.
type TextOptions struct {
	// Terminal: keep a status line redrawn in place and print only cases
	// that did not pass; otherwise print one line per case, in order.
	Terminal bool
	Color    bool
	// Verbose prints details for passing cases too.
	Verbose bool
	// Width is the terminal's width in columns; the status line is cut to
	// fit so that it never wraps (a wrapped line cannot be cleared). Zero
	// means 80.
	Width int
}

// statusEvery bounds how often the status line is redrawn: a run of
// thousands of quick cases would otherwise spend its time painting.
const statusEvery = 50 * time.Millisecond

// Text prints progress and results for people. In a log (not a terminal)
// the output is deterministic: one line per case in report order, whatever
// order the cases finish in. Output is written a case at a time, and
// written out at once: a log line is never held back.
type Text struct {
	w    io.Writer
	opts TextOptions

	mu       sync.Mutex
	total    int
	done     []*Case
	next     int    // next index to print (log mode)
	counts   Totals // of the cases done
	running  map[int]string
	status   bool      // a status line is on screen
	drawn    time.Time // when the status line was last drawn
	redraw   *time.Timer
	finished bool
	buf      strings.Builder
}

// NewText writes to w.
func NewText(w io.Writer, opts TextOptions) *Text {
	return &Text{w: w, opts: opts, running: map[int]string{}}
}

// Start implements dryfire.Progress.
func (t *Text) Start(total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total = total
	t.done = make([]*Case, total)
	t.drawStatus()
	t.flush()
}

// CaseStarted implements dryfire.Progress.
func (t *Text) CaseStarted(i int, suite, name string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.running[i] = name
	t.requestStatus()
	t.flush()
}

// CaseDone implements dryfire.Progress.
func (t *Text) CaseDone(i int, c *Case) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, i)
	t.counts.Add(c)
	if i >= 0 && i < len(t.done) && !t.opts.Terminal {
		t.done[i] = c
	}
	if t.opts.Terminal {
		if c.Status != Passed || t.opts.Verbose || len(c.Notes) > 0 {
			t.clearStatus()
			t.printCase(c)
			t.drawStatus()
		} else {
			t.requestStatus()
		}
		t.flush()
		return
	}
	for t.next < len(t.done) && t.done[t.next] != nil {
		t.printCase(t.done[t.next])
		t.done[t.next] = nil // printed: the printer keeps no result
		t.next++
	}
	t.flush()
}

// Finish prints the summary line, always last: from the run's totals
// (Report.Totals), else counted from its cases.
func (t *Text) Finish(r *Report) {
	tot := r.Totals
	if tot == nil {
		tot = TotalsOf(r)
		tot.Summary = r.Summary // as the report says
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finished = true
	if t.redraw != nil {
		t.redraw.Stop()
		t.redraw = nil
	}
	t.clearStatus()
	if line := usageLine(tot); line != "" {
		t.buf.WriteString(line)
		t.buf.WriteByte('\n')
	}
	if line := trialsLine(tot); line != "" {
		t.buf.WriteString(line)
		t.buf.WriteByte('\n')
	}
	if tot.Coverage != nil {
		t.buf.WriteString(coverageText(tot.Coverage, t.opts.Verbose))
	}
	t.buf.WriteString(tot.MutationText())
	t.buf.WriteString(summaryLine(tot.Summary))
	t.buf.WriteByte('\n')
	t.flush()
}

// flush writes out what is buffered: one write per event, not per line.
func (t *Text) flush() {
	if t.buf.Len() == 0 {
		return
	}
	io.WriteString(t.w, t.buf.String())
	t.buf.Reset()
}

// summaryLine is the last line of a run: "N passed, N failed", then
// errors and skipped cases when there are any.
func summaryLine(s Summary) string {
	line := fmt.Sprintf("%d passed, %d failed", s.Passed, s.Failed)
	if s.Error > 0 {
		line += ", " + termtext.Count(s.Error, "error")
	}
	if s.Skipped > 0 {
		line += fmt.Sprintf(", %d skipped", s.Skipped)
	}
	return line
}

// usageLine totals the tokens of a run, "usage: N input tokens, N output
// tokens", saying when they were all replayed; empty when there are none.
func usageLine(t *Totals) string {
	u := t.Summary.Usage
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return ""
	}
	line := fmt.Sprintf("usage: %d input tokens, %d output tokens", u.InputTokens, u.OutputTokens)
	if ro := t.Summary.UsageByRole; ro != nil {
		var parts []string
		for _, p := range []struct {
			who string
			u   Usage
		}{{"agent", ro.Agent}, {"judges", ro.Judge}, {"simulated users", ro.User}} {
			if p.u.InputTokens != 0 || p.u.OutputTokens != 0 {
				parts = append(parts, fmt.Sprintf("%s %d in, %d out", p.who, p.u.InputTokens, p.u.OutputTokens))
			}
		}
		line += " (" + strings.Join(parts, "; ") + ")"
	}
	if t.Live == 0 {
		line += " (as recorded: every model call was replayed, nothing was spent)"
	}
	return line
}

// trialsLine sums up the trials of a run that ran cases more than once:
// "trials: 12 case(s) × 5, 60 runs; 9 passed every trial, 2 flaky"; empty
// when every case ran once.
func trialsLine(t *Totals) string {
	if t.TrialCases == 0 {
		return ""
	}
	per := ""
	if t.SameN > 0 {
		per = fmt.Sprintf(" × %d", t.SameN)
	}
	line := fmt.Sprintf("trials: %d case(s)%s, %d runs; %d passed every trial", t.TrialCases, per, t.TrialRuns, t.AllPassed)
	if t.Summary.Flaky > 0 {
		line += fmt.Sprintf(", %d flaky", t.Summary.Flaky)
	}
	return line
}

const (
	green  = "\x1b[32m"
	red    = "\x1b[31m"
	yellow = "\x1b[33m"
	dim    = "\x1b[2m"
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
	b := &t.buf
	b.WriteString(t.label(c.Status))
	b.WriteByte(' ')
	b.WriteString(termtext.Printable(c.Suite))
	b.WriteString(": ")
	b.WriteString(termtext.Printable(c.Name))
	if c.Status == Skipped && c.Reason != "" {
		b.WriteString(t.paint(dim, " ("+termtext.Printable(c.Reason)+")"))
	}
	if tr := c.Trials; tr != nil && c.Status != Skipped {
		flaky := ""
		if tr.Flaky {
			flaky = ", " + t.paint(yellow, "flaky")
		}
		b.WriteString(fmt.Sprintf(" (%d/%d trials passed%s)", tr.Passed, tr.N, flaky))
	}
	b.WriteByte('\n')
	if c.Status == Skipped {
		return
	}
	if c.Status == Passed && !t.opts.Verbose {
		// Notes are shown even for passing cases: they say what a pass
		// does not, such as a case that is never recorded.
		for _, n := range c.Notes {
			b.WriteString("      note: ")
			b.WriteString(termtext.Printable(n))
			b.WriteByte('\n')
		}
		return
	}
	for _, l := range c.Details() {
		b.WriteString("      ")
		b.WriteString(termtext.Printable(l))
		b.WriteByte('\n')
	}
}

func (t *Text) clearStatus() {
	if t.status {
		t.buf.WriteString("\r\x1b[2K")
		t.status = false
	}
}

// requestStatus redraws the status line now, or soon when it was drawn
// moments ago.
func (t *Text) requestStatus() {
	if !t.opts.Terminal || t.finished {
		return
	}
	wait := statusEvery - time.Since(t.drawn)
	if wait <= 0 {
		t.drawStatus()
		return
	}
	if t.redraw == nil {
		t.redraw = time.AfterFunc(wait, func() {
			t.mu.Lock()
			defer t.mu.Unlock()
			t.redraw = nil
			if !t.finished {
				t.drawStatus()
				t.flush()
			}
		})
	}
}

// drawStatus replaces the status line: "3/10  2 passed, 1 failed  running:
// NAME", cut to the terminal's width.
func (t *Text) drawStatus() {
	if !t.opts.Terminal || t.finished {
		return
	}
	t.clearStatus()
	width := t.opts.Width
	if width <= 0 {
		width = 80
	}
	room := width - 1 // never touch the last column: some terminals wrap there
	type part struct{ color, text string }
	n := &t.counts.Summary
	finished := n.Passed + n.Failed + n.Error + n.Skipped
	parts := []part{{"", fmt.Sprintf("%d/%d  ", finished, t.total)}, {green, fmt.Sprintf("%d passed", n.Passed)}}
	if n.Failed > 0 {
		parts = append(parts, part{"", ", "}, part{red, fmt.Sprintf("%d failed", n.Failed)})
	}
	if n.Error > 0 {
		parts = append(parts, part{"", ", "}, part{yellow, termtext.Count(n.Error, "error")})
	}
	if n.Skipped > 0 {
		parts = append(parts, part{"", ", "}, part{dim, fmt.Sprintf("%d skipped", n.Skipped)})
	}
	// Name the earliest running case, so the line does not flicker.
	first := -1
	for i := range t.running {
		if first < 0 || i < first {
			first = i
		}
	}
	if first >= 0 {
		name := termtext.Printable(t.running[first])
		parts = append(parts, part{dim, "  running: " + name})
	}
	for _, p := range parts {
		r := []rune(p.text)
		if len(r) > room {
			if room < 2 {
				break
			}
			r = append(r[:room-1], '…')
		}
		room -= len(r)
		if p.color == "" {
			t.buf.WriteString(string(r))
		} else {
			t.buf.WriteString(t.paint(p.color, string(r)))
		}
		if room <= 0 {
			break
		}
	}
	t.status = true
	t.drawn = time.Now()
}
