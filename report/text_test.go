package report_test

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/report"
)

// syncBuffer is a bytes.Buffer safe to read while the printer's redraw
// timer may write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const clearLine = "\r\x1b[2K"

var ansiColor = regexp.MustCompile(`\x1b\[[0-9;]*m`)

// screen plays terminal output the way a terminal shows it: clearLine
// wipes the current line, a newline ends it. It returns the finished
// lines, the line still being written, and every status line drawn (text
// that was wiped without ever ending in a newline).
func screen(out string) (lines []string, current string, statuses []string) {
	for len(out) > 0 {
		switch {
		case strings.HasPrefix(out, clearLine):
			if current != "" {
				statuses = append(statuses, current)
			}
			current = ""
			out = out[len(clearLine):]
		case out[0] == '\n':
			lines = append(lines, current)
			current = ""
			out = out[1:]
		default:
			i := strings.IndexAny(out, "\r\n")
			if i < 0 {
				i = len(out)
			}
			current += out[:i]
			out = out[i:]
		}
	}
	return lines, current, statuses
}

func terminalRun(t *testing.T, opts report.TextOptions, cases []report.Case) string {
	t.Helper()
	var b syncBuffer
	opts.Terminal = true
	pr := report.NewText(&b, opts)
	pr.Start(len(cases))
	for i := range cases {
		pr.CaseStarted(i, cases[i].Suite, cases[i].Name)
	}
	for i := range cases {
		pr.CaseDone(i, &cases[i])
	}
	rep := &report.Report{Cases: cases}
	rep.Tally()
	pr.Finish(rep)
	return b.String()
}

func sampleCases() []report.Case {
	return []report.Case{
		{Suite: "s.dryfire.yaml", Name: "passes", Status: report.Passed},
		{Suite: "s.dryfire.yaml", Name: "fails", Status: report.Failed, Reason: "1 of 1 checks failed",
			Checks: []report.Check{{Check: "output: {contains: x}", At: "s.dryfire.yaml:9", Message: `expected output to contain "x"; output was "y"`}},
			Output: "y", Turns: 1},
		{Suite: "s.dryfire.yaml", Name: "a case with a very long name that would wrap an eighty column terminal if printed whole", Status: report.Passed},
		{Suite: "s.dryfire.yaml", Name: "skipped", Status: report.Skipped, Reason: "skip: true"},
	}
}

func TestTextTerminal(t *testing.T) {
	out := terminalRun(t, report.TextOptions{Width: 60}, sampleCases())
	if !strings.Contains(out, clearLine) {
		t.Fatalf("no status line was cleared:\n%q", out)
	}
	if ansiColor.MatchString(out) {
		t.Errorf("colours without Color:\n%q", out)
	}
	lines, current, statuses := screen(out)
	// Only the cases that did not pass are printed, then the summary; the
	// status line is gone.
	want := []string{
		"FAIL  s.dryfire.yaml: fails",
		"      check failed at s.dryfire.yaml:9: output: {contains: x}",
		`        expected output to contain "x"; output was "y"`,
		`      output after 1 turn(s): "y"`,
		"SKIP  s.dryfire.yaml: skipped (skip: true)",
		"2 passed, 1 failed, 1 skipped",
	}
	// Passing cases print nothing, but statuses may be on the same
	// physical lines as printed text when a case line follows a status:
	// the clear comes first, so the screen holds exactly want.
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("screen (-want +got):\n%s\nraw: %q", diff, out)
	}
	if current != "" {
		t.Errorf("a status line is left on screen: %q", current)
	}
	if len(statuses) == 0 {
		t.Fatalf("no status line was drawn: %q", out)
	}
	if !strings.HasPrefix(statuses[0], "0/4  0 passed") {
		t.Errorf("first status = %q, want it to start with 0/4  0 passed", statuses[0])
	}
	for _, s := range statuses {
		if n := len([]rune(s)); n > 59 {
			t.Errorf("status line of %d columns on a 60-column terminal: %q", n, s)
		}
	}
	// The last thing written is the summary, on a cleared line.
	if !strings.HasSuffix(out, clearLine+"2 passed, 1 failed, 1 skipped\n") {
		t.Errorf("output does not end with the summary on a cleared line: %q", out[max(0, len(out)-80):])
	}
}

func TestTextTerminalColor(t *testing.T) {
	out := terminalRun(t, report.TextOptions{Color: true}, sampleCases())
	for _, want := range []string{"\x1b[31mFAIL \x1b[0m s.dryfire.yaml: fails\n", "\x1b[2mSKIP \x1b[0m s.dryfire.yaml: skipped"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%q", want, out)
		}
	}
	lines, _, statuses := screen(ansiColor.ReplaceAllString(out, ""))
	if got := lines[len(lines)-1]; got != "2 passed, 1 failed, 1 skipped" {
		t.Errorf("last line = %q", got)
	}
	if !strings.Contains(out, "\x1b[32m0 passed\x1b[0m") {
		t.Errorf("the status line is not coloured: %q", out)
	}
	for _, s := range statuses {
		if n := len([]rune(s)); n > 79 {
			t.Errorf("status line of %d columns on the default 80: %q", n, s)
		}
	}
}

// TestTextTerminalVerbose prints passing cases on a terminal too.
func TestTextTerminalVerbose(t *testing.T) {
	cases := sampleCases()[:1]
	cases[0].Checks = []report.Check{{Check: "called: t", At: "s.dryfire.yaml:5", Passed: true, Message: "t was called 1 time"}}
	lines, _, _ := screen(terminalRun(t, report.TextOptions{Verbose: true}, cases))
	want := []string{
		"PASS  s.dryfire.yaml: passes",
		"      ok at s.dryfire.yaml:5: called: t",
		"        t was called 1 time",
		"1 passed, 0 failed",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("screen (-want +got):\n%s", diff)
	}
}

// TestTextStatusCatchesUp: redraws are throttled, but the status line
// always catches up with the last event, even when nothing follows it.
func TestTextStatusCatchesUp(t *testing.T) {
	var b syncBuffer
	pr := report.NewText(&b, report.TextOptions{Terminal: true})
	pr.Start(2)
	pr.CaseStarted(0, "s.dryfire.yaml", "first")
	pr.CaseDone(0, &report.Case{Status: report.Passed})
	pr.CaseStarted(1, "s.dryfire.yaml", "second")
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, current, _ := screen(b.String())
		if current == "1/2  1 passed  running: second" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status line = %q, want it to show the second case running", current)
		}
		time.Sleep(5 * time.Millisecond)
	}
	pr.Finish(&report.Report{Summary: report.Summary{Passed: 2}})
	if _, current, _ := screen(b.String()); current != "" {
		t.Errorf("after Finish a status line is left: %q", current)
	}
}

// TestTextLogOrder: in a log, cases print in report order whatever order
// they finish in, and without any terminal control.
func TestTextLogOrder(t *testing.T) {
	var b bytes.Buffer
	pr := report.NewText(&b, report.TextOptions{})
	cases := sampleCases()
	pr.Start(len(cases))
	for _, i := range []int{2, 0, 3, 1} {
		pr.CaseStarted(i, cases[i].Suite, cases[i].Name)
		pr.CaseDone(i, &cases[i])
	}
	rep := &report.Report{Cases: cases}
	rep.Tally()
	pr.Finish(rep)
	want := `PASS  s.dryfire.yaml: passes
FAIL  s.dryfire.yaml: fails
      check failed at s.dryfire.yaml:9: output: {contains: x}
        expected output to contain "x"; output was "y"
      output after 1 turn(s): "y"
PASS  s.dryfire.yaml: a case with a very long name that would wrap an eighty column terminal if printed whole
SKIP  s.dryfire.yaml: skipped (skip: true)
2 passed, 1 failed, 1 skipped
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("log (-want +got):\n%s", diff)
	}
}

func TestDetailsError(t *testing.T) {
	c := &report.Case{
		Status: report.Errored,
		Reason: "the script ran out",
		Checks: []report.Check{
			{Check: "called: a", At: "f:3", Passed: true, Message: "a was called"},
			{Check: "called: b", At: "f:4", Message: "b was never called"},
		},
		ToolCalls: []report.ToolCall{{Turn: 1, Tool: "x", Args: []byte(`{"k":1}`), Outcome: "unmatched", Result: "dryfire: no mock rule matched this call to \"x\""}},
		Notes:     []string{"not recorded"},
	}
	want := []string{
		"error: the script ran out",
		"check failed at f:4: called: b",
		"  b was never called",
		`unmatched call in turn 1: x {"k":1}`,
		`  no mock rule matched this call to "x"`,
		"output after 0 turn(s): (none)",
		"note: not recorded",
	}
	if diff := cmp.Diff(want, c.Details()); diff != "" {
		t.Errorf("Details (-want +got):\n%s", diff)
	}
}

// A case failed by what its program did, with every check passed (an
// isolated network refused a connection), says why: its reason was in the
// JSON report only.
func TestDetailsFailedReason(t *testing.T) {
	c := &report.Case{
		Status: report.Failed,
		Reason: "the agent tried to reach the network past dryfire (refused: agent.network is isolated): tcp 127.0.0.1:9 (1)",
		Checks: []report.Check{{Check: "output: {contains: x}", At: "f:3", Passed: true, Message: "ok"}},
		Output: "x",
		Turns:  1,
	}
	want := []string{
		"failed: the agent tried to reach the network past dryfire (refused: agent.network is isolated): tcp 127.0.0.1:9 (1)",
		`output after 1 turn(s): "x"`,
	}
	if diff := cmp.Diff(want, c.Details()); diff != "" {
		t.Errorf("Details (-want +got):\n%s", diff)
	}
	// A failed check says why itself: the reason (its count) is not repeated.
	c.Checks[0].Passed = false
	c.Reason = "1 of 1 checks failed"
	if got := c.Details(); got[0] != "check failed at f:3: output: {contains: x}" {
		t.Errorf("Details with a failed check: %q", got)
	}
}
