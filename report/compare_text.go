package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// WriteText writes the comparison for a terminal or a log: the two runs,
// then each kind of change with its cases (suite, then name), their
// checks and numbers, and last a line of the counts. Every name and text
// from the reports is made Printable.
func (c *Comparison) WriteText(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("BASE %s: %s\n", termtext.Printable(c.baseName), c.base.line())
	p("NEW  %s: %s\n", termtext.Printable(c.newName), c.new.line())
	if c.common == 0 && c.base.Cases > 0 && c.new.Cases > 0 {
		p("no case is in both: were the two runs made from the same directory, of the same suites?\n")
	}
	if t := c.trials; t.Cases > 0 {
		p("trials: %s in both; mean pass^1 %s → %s", termtext.Count(t.Cases, "case"), num(t.Base1, 3), num(t.New1, 3))
		if t.K > 1 {
			p(", pass^%d %s → %s", t.K, num(t.BaseK, 3), num(t.NewK, 3))
		}
		p("\n")
	}
	for ki, k := range changeKinds {
		if c.counts[ki] == 0 {
			continue
		}
		p("\n%s (%d)", k, c.counts[ki])
		if k == ChangeSlower || k == ChangeFaster {
			p(": %s", c.durations.says(k))
		}
		p("\n")
		for i := range c.changes {
			ch := &c.changes[i]
			if ch.Has(k) {
				ch.writeText(bw, k)
			}
		}
	}
	p("\n%s\n", c.countsLine())
	return bw.Flush()
}

func (t runTally) line() string {
	parts := []string{fmt.Sprintf("%d passed", t.Passed), fmt.Sprintf("%d failed", t.Failed)}
	if t.Error > 0 {
		parts = append(parts, termtext.Count(t.Error, "error"))
	}
	if t.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", t.Skipped))
	}
	if t.Flaky > 0 {
		parts = append(parts, fmt.Sprintf("%d flaky", t.Flaky))
	}
	// No duration: the text of two comparisons of the same runs is the
	// same (the Markdown and the JSON have it).
	return fmt.Sprintf("%s, %s", termtext.Count(t.Cases, "case"), strings.Join(parts, ", "))
}

// countsLine is the last line: each kind's count, then the cases that
// did not change.
func (c *Comparison) countsLine() string {
	var parts []string
	for ki, k := range changeKinds {
		if c.counts[ki] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", c.counts[ki], k))
		}
	}
	if len(parts) == 0 {
		return fmt.Sprintf("no change: %s as before", termtext.Count(c.unchanged, "case"))
	}
	return fmt.Sprintf("%s; %d unchanged", strings.Join(parts, ", "), c.unchanged)
}

// says is the duration rule of kind k, in words.
func (r durationRule) says(k ChangeKind) string {
	expected := fmt.Sprintf("expected = BASE's time a trial × the run's median change (×%s, over %s)", num(r.Median, 3), termtext.Count(r.Compared, "case"))
	if k == ChangeFaster {
		return fmt.Sprintf("under expected / %s and at least %s under it; %s", num(r.Factor, 2), ms(r.MinMS), expected)
	}
	return fmt.Sprintf("over %s × expected and at least %s over it; %s", num(r.Factor, 2), ms(r.MinMS), expected)
}

func (ch *caseChange) writeText(w io.Writer, k ChangeKind) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	p("  %s: %s", termtext.Printable(ch.Suite), termtext.Printable(ch.Name))
	if s := ch.status(k); s != "" {
		p(": %s", s)
	}
	p("\n")
	checks := ch.checks(k)
	for _, cc := range checks {
		p("    check %s at %s: %s\n", checkWord(cc.Kind), termtext.Printable(cc.At), termtext.Printable(cc.Check))
	}
	if r := ch.reason(k); r != "" && len(checks) == 0 {
		p("    %s\n", termtext.Printable(r))
	}
	if t := ch.trialsLine(); t != "" && k != ChangeSlower && k != ChangeFaster {
		p("    %s\n", t)
	}
}

// checks are the case's checks a section of kind k lists: those of
// that kind, and for a new case that did not pass its failed ones (kind
// ChangeStatus, said "failed").
func (ch *caseChange) checks(k ChangeKind) []checkChange {
	var out []checkChange
	for _, cc := range ch.Checks {
		if cc.Kind == k {
			out = append(out, cc)
		}
	}
	if k == ChangeNew && ch.Base == nil {
		for _, c := range ch.New.Checks {
			if !c.Passed {
				out = append(out, checkChange{Kind: ChangeStatus, Check: c.Check, At: c.At})
			}
		}
	}
	return out
}

// status says how the case's status went, for a section of kind k.
func (ch *caseChange) status(k ChangeKind) string {
	switch {
	case ch.Base == nil:
		return string(ch.New.Status)
	case ch.New == nil:
		return "was " + string(ch.Base.Status)
	case k == ChangeSlower || k == ChangeFaster:
		return fmt.Sprintf("%s → %s a trial (%s)", ms(ch.BaseMS), ms(ch.NewMS), ratio(ch.BaseMS, ch.NewMS))
	case ch.Base.Status != ch.New.Status:
		return fmt.Sprintf("%s → %s", ch.Base.Status, ch.New.Status)
	}
	return "still " + string(ch.New.Status)
}

// reason is why the case did not pass in NEW, when it newly did not.
func (ch *caseChange) reason(k ChangeKind) string {
	switch k {
	case ChangeRegressed, ChangeSkipped, ChangeStatus, ChangeNew:
		if ch.New != nil && ch.New.Reason != "" && (ch.Base == nil || ch.Base.Status != ch.New.Status) {
			return ch.New.Reason
		}
	}
	return ""
}

// trialsLine is how the case's trials went in each run, with pass^1 and
// pass^k (k the fewer trials of the two runs).
func (ch *caseChange) trialsLine() string {
	var b, n *trialCount
	if ch.Base != nil {
		b = ch.Base.Trials
	}
	if ch.New != nil {
		n = ch.New.Trials
	}
	switch {
	case b == nil && n == nil:
		return ""
	case b == nil:
		return fmt.Sprintf("%d/%d trials passed", n.Passed, n.N)
	case n == nil:
		return fmt.Sprintf("was %d/%d trials passed", b.Passed, b.N)
	}
	s := fmt.Sprintf("%d/%d trials passed (was %d/%d); pass^1 %s → %s", n.Passed, n.N, b.Passed, b.N, num(passRate(b), 3), num(passRate(n), 3))
	if k := min(b.N, n.N); k > 1 {
		s += fmt.Sprintf(", pass^%d %s → %s", k, num(passHatK(b.N, b.Passed, k), 3), num(passHatK(n.N, n.Passed, k), 3))
	}
	return s
}

func checkWord(k ChangeKind) string {
	switch k {
	case ChangeRegressed:
		return "passed → failed"
	case ChangeFixed:
		return "failed → passed"
	case ChangeStatus:
		return "failed"
	}
	return string(k)
}

// ms renders a duration in milliseconds.
func ms(x float64) string {
	if x < 1000 {
		return num(x, 1) + " ms"
	}
	return num(x/1000, 2) + " s"
}
