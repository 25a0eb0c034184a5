package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
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
// each). Every name and text from the reports is escaped: it renders
// as the text it is, and tables stay tables.
func (c *Comparison) WriteMarkdown(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	p("### dryfire compare: %s\n\n", c.countsLine())
	p("| run | report | cases | passed | failed | error | skipped | flaky | duration |\n")
	p("|---|---|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range []struct {
		name, file string
		t          runTally
	}{{"BASE", c.baseName, c.base}, {"NEW", c.newName, c.new}} {
		p("| %s | %s | %d | %d | %d | %d | %d | %d | %s |\n", r.name, md(r.file), r.t.Cases, r.t.Passed, r.t.Failed, r.t.Error, r.t.Skipped, r.t.Flaky, ms(r.t.DurationMS))
	}
	if c.common == 0 && c.base.Cases > 0 && c.new.Cases > 0 {
		p("\nNo case is in both: were the two runs made from the same directory, of the same suites?\n")
	}
	if t := c.trials; t.Cases > 0 {
		p("\nTrials: %s in both; mean pass^1 %s → %s", termtext.Count(t.Cases, "case"), num(t.Base1, 3), num(t.New1, 3))
		if t.K > 1 {
			p(", pass^%d %s → %s", t.K, num(t.BaseK, 3), num(t.NewK, 3))
		}
		p(".\n")
	}
	for ki, k := range changeKinds {
		if c.counts[ki] == 0 {
			continue
		}
		p("\n#### %s (%d)\n\n", k, c.counts[ki])
		if k == ChangeSlower || k == ChangeFaster {
			p("Rule: %s.\n\n", c.durations.says(k))
		}
		p("| suite | case | status | details |\n|---|---|---|---|\n")
		rows := 0
		for i := range c.changes {
			ch := &c.changes[i]
			if !ch.Has(k) {
				continue
			}
			if rows == mdRows {
				p("\n%d more; the text output and the JSON (--json) list them all.\n", c.counts[ki]-rows)
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
func (ch *caseChange) mdDetails(k ChangeKind) string {
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
	if t := ch.trialsLine(); t != "" && k != ChangeSlower && k != ChangeFaster {
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
