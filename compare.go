package dryfire

import (
	"cmp"
	"io"

	ireport "github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/report"
)

// Outcomes are what Compare needs of a run: each case's status, its
// checks' verdicts, its trials and its duration, in report order.
type Outcomes struct {
	o                      ireport.Outcomes
	shardIndex, shardCount int
}

// ReadOutcomes reads a JSON report (`dryfire run --json`, `dryfire merge
// --json`) a case at a time, keeping only what Compare needs: a report of
// many cases is never in memory whole. Its errors say where (LINE:COL)
// when r can seek (a file).
func ReadOutcomes(r io.Reader) (*Outcomes, error) {
	o, i, n, err := ireport.ReadOutcomes(r)
	if err != nil {
		return nil, err
	}
	return &Outcomes{o: *o, shardIndex: i, shardCount: n}, nil
}

// Len is the number of cases.
func (o *Outcomes) Len() int { return len(o.o.Cases) }

// Shard is, for the report of one shard of a run, which shard it is;
// 0, 0 for a whole run's.
func (o *Outcomes) Shard() (index, count int) { return o.shardIndex, o.shardCount }

// Keep leaves out the cases keep refuses: of a baseline, those a run
// with a filter does not select.
func (o *Outcomes) Keep(keep func(suite, name string) bool) { o.o.Keep(keep) }

// CompareOptions shape Compare; nil or zero fields take the defaults.
type CompareOptions struct {
	// BaseName and NewName name the two runs in what is written (their
	// report files).
	BaseName, NewName string
	// SlowFactor and SlowMS are the duration outlier rule: a case is
	// slower when its time a trial is over SlowFactor times what BASE's
	// time and the run's median change make expected, and at least SlowMS
	// over it (faster likewise). Defaults 2 and 100.
	SlowFactor, SlowMS float64
}

// Comparison is what changed from one run (BASE) to another (NEW), case
// by case and check by check, in a fixed order (suite, case, check).
type Comparison struct{ c *ireport.Comparison }

// Compare compares two runs. It refuses a run that has a case twice.
func Compare(base, new *Outcomes, opts *CompareOptions) (*Comparison, error) {
	opts = cmp.Or(opts, &CompareOptions{})
	c, err := ireport.Compare(&base.o, &new.o, ireport.CompareOptions{BaseName: opts.BaseName, NewName: opts.NewName, SlowFactor: opts.SlowFactor, SlowMS: opts.SlowMS})
	if err != nil {
		return nil, err
	}
	return &Comparison{c: c}, nil
}

// Count is how many cases have change k.
func (c *Comparison) Count(k report.ChangeKind) int { return c.c.Count(k) }

// WriteText writes the comparison for a terminal or a log (names and
// texts from the reports escaped); its last line counts the changes.
func (c *Comparison) WriteText(w io.Writer) error { return c.c.WriteText(w) }

// WriteMarkdown writes the comparison as GitHub-flavoured Markdown, for a
// pull-request comment or the job summary (names and texts from the
// reports escaped, so that they render as text; at most 50 rows a kind).
func (c *Comparison) WriteMarkdown(w io.Writer) error { return c.c.WriteMarkdown(w) }

// WriteJSON writes the comparison as indented JSON (`dryfire compare
// --json`), its changes one at a time.
func (c *Comparison) WriteJSON(w io.Writer) error { return c.c.WriteJSON(w) }

// Print prints s, whole lines, after the cases printed so far and before
// what Finish prints (the status line cleared first): the comparison
// with a baseline comes before a run's last line.
func (p *TextPrinter) Print(s string) { p.t.Aside(s) }
