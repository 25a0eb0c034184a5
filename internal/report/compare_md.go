package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

// Bounds of the Markdown, which GitHub shows at most 1 MiB of a step's
// summary: rows a kind of change, check lines a cell, characters of a
// name or a text.
const (
	mdRows   = 50
	mdChecks = 10
	mdChars  = 200
)

// WriteMarkdown writes the comparison as GitHub-flavoured Markdown, for a
// pull-request comment or the job summary: a heading with the counts, a
// table of the two runs, then a table a kind of change (at most 50 rows
// each). Every name and text from the reports is escaped
// (termtext.Markdown): it renders as the text it is, and tables stay
// tables.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("### dryfire compare: %s\n\n", c.countsLine())
	p("| run | report | cases | passed | failed | error | skipped | flaky | duration |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range []struct {
		name, file string
		t          RunTally
	}{{"BASE", c.BaseName, c.Base}, {"NEW", c.NewName, c.New}} {
		p("| %s | %s | %d | %d | %d | %d | %d | %d | %s |\n", r.name, md(r.file), r.t.Cases, r.t.Passed, r.t.Failed, r.t.Error, r.t.Skipped, r.t.Flaky, ms(r.t.DurationMS))
	}
	if c.Common == 0 && c.Base.Cases > 0 && c.New.Cases > 0 {
		p("\nNo case is in both: were the two runs made from the same directory, of the same suites?\n")
	}
	if t := c.Trials; t.Cases > 0 {
		p("\nTrials: %s in both; mean pass^1 %s → %s", termtext.Count(t.Cases, "case"), num(t.Base1, 3), num(t.New1, 3))
		if t.K > 1 {
			p(", pass^%d %s → %s", t.K, num(t.BaseK, 3), num(t.NewK, 3))
		}
		p(".\n")
	}
	for ki, k := range ChangeKinds {
		if c.Counts[ki] == 0 {
			continue
		}
		p("\n#### %s (%d)\n\n", k, c.Counts[ki])
		if k == report.ChangeSlower || k == report.ChangeFaster {
			p("Rule: %s.\n\n", c.Durations.says(k))
		}
		p("| suite | case | status | details |\n|---|---|---|---|\n")
		rows := 0
		for i := range c.Changes {
			ch := &c.Changes[i]
			if !ch.Has(k) {
				continue
			}
			if rows == mdRows {
				p("\n%d more; the text output and the JSON (--json) list them all.\n", c.Counts[ki]-rows)
				break
			}
			rows++
			p("| %s | %s | %s | %s |\n", md(ch.Suite), md(ch.Name), ch.status(k), ch.mdDetails(k))
		}
	}
	return bw.Flush()
}

// mdDetails is a row's last cell: the checks of kind k, the reason, the
// trials, one a line.
func (ch *CaseChange) mdDetails(k ChangeKind) string {
	var lines []string
	checks := ch.checks(k)
	for i, cc := range checks {
		if i == mdChecks {
			lines = append(lines, fmt.Sprintf("and %d more checks", len(checks)-i))
			break
		}
		lines = append(lines, fmt.Sprintf("check %s at %s: %s", checkWord(cc.Kind), md(cc.At), md(cc.Check)))
	}
	if r := ch.reason(k); r != "" && len(checks) == 0 {
		lines = append(lines, md(r))
	}
	if t := ch.trialsLine(); t != "" && k != report.ChangeSlower && k != report.ChangeFaster {
		lines = append(lines, t)
	}
	return strings.Join(lines, "<br>")
}

// md is outside text as literal Markdown on one line, bounded.
func md(s string) string {
	if r := []rune(s); len(r) > mdChars {
		s = string(r[:mdChars]) + "…"
	}
	return termtext.Markdown(s)
}
