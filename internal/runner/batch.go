package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/report"
)

// Batches: a scheduler of its own (a Ray or Celery driver, a work queue)
// lists a run's cases by id (List), runs any set of them as a batch
// (Options.Batch) and merges the batches' reports into the run's
// (report.Merge). A batch's report says where its cases are in the whole
// run, as a shard's does.

// Batch selects the cases of a run by their ids (spec.CaseID), after
// Filter and Only.
type Batch struct {
	IDs []string
	// Build identifies the dryfire that runs it (as Shard.Build).
	Build string
}

// maxUnknownNamed bounds the unknown ids an error names (each with its
// did-you-mean).
const maxUnknownNamed = 10

// batchJobs keeps the cases of batch b among the run's selected cases,
// and says which part of the run they are. An id that is no selected
// case's is an error naming it, with the closest id.
func batchJobs(l *jobList, b *Batch, opts Options) (*report.Shard, error) {
	want := make(map[string]bool, len(b.IDs))
	for _, id := range b.IDs {
		want[id] = true
	}
	found := make(map[string]bool, len(want))
	positions := []int{}
	for ci := range l.n {
		rs, k := l.at(ci)
		id := l.idOf(rs, k)
		if want[id] {
			positions = append(positions, ci)
			found[id] = true
		}
	}
	if len(found) < len(want) {
		return nil, l.unknownIDs(b.IDs, found)
	}
	suites, err := suitesHash(l, opts)
	if err != nil {
		return nil, err
	}
	info := &report.Shard{Batch: true, Cases: l.n, Positions: positions, Infra: []int{}, Build: b.Build, Suites: suites}
	l.keep(positions)
	return info, nil
}

// unknownIDs is the error of ids no selected case has: each named (the
// first few) with the closest id of a selected case, or why it is not
// selected when a case of the suites has it.
func (l *jobList) unknownIDs(ids []string, found map[string]bool) error {
	var unknown []string
	seen := map[string]bool{}
	for _, id := range ids {
		if !found[id] && !seen[id] {
			seen[id] = true
			unknown = append(unknown, id)
		}
	}
	selected := make([]string, 0, l.n)
	for ci := range l.n {
		rs, k := l.at(ci)
		selected = append(selected, l.idOf(rs, k))
	}
	// Ids of the suites that the filter leaves out.
	left := map[string]string{}
	if l.sel != nil {
		for i := range l.suites {
			rs := &l.suites[i]
			for k := range rs.s.Len() {
				if id := l.idOf(rs, k); seen[id] {
					left[id] = rs.s.File + ": " + rs.s.CaseName(k)
				}
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s no selected case of these suites: ", plural(len(unknown), "id matches", "ids match"))
	stale := false
	for i, id := range unknown {
		if i == maxUnknownNamed {
			fmt.Fprintf(&b, ", and %d more", len(unknown)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(id))
		if where, ok := left[id]; ok {
			fmt.Fprintf(&b, " (the case %s, which --filter or --last-failed leaves out)", strconv.Quote(where))
			continue
		}
		stale = true
		if hint := suggest.DidYouMean(id, selected); hint != "" {
			b.WriteString(hint)
		} else if same := sameSlug(id, selected); same != "" {
			fmt.Fprintf(&b, " (%q has its name: was the case renamed, or its suite moved?)", same)
		}
	}
	if stale {
		b.WriteString("; an id changes when its case is renamed or its suite file moves: list the ids with dryfire run PATH... --list")
	}
	return fmt.Errorf("--cases: %s", b.String())
}

// sameSlug is the one id of ids with the name part (the slug) of id, or
// "" when none or several have it.
func sameSlug(id string, ids []string) string {
	cut := func(s string) string {
		if i := strings.LastIndexByte(s, '-'); i > 0 {
			return s[:i]
		}
		return s
	}
	want, found := cut(id), ""
	for _, other := range ids {
		if cut(other) == want {
			if found != "" {
				return ""
			}
			found = other
		}
	}
	return found
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// List is what a run with opts would run (Filter, Only, Shard or
// Batch), each case with its id, without running any, and the hash of
// the suites (report.Shard.Suites) its batches carry. durations are a
// previous run's case durations by CaseKey (nil: none).
func List(suitesIn []*spec.Suite, opts Options, durations map[string]float64) (*report.CaseList, error) {
	l, err := newJobList(suitesIn, &opts)
	if err != nil {
		return nil, err
	}
	hash, err := suitesHash(l, opts)
	if err != nil {
		return nil, err
	}
	if _, err := partOf(l, opts); err != nil {
		return nil, err
	}
	out := &report.CaseList{Version: 1, Suites: hash, Cases: make([]report.ListedCase, 0, l.n)}
	for ci := range l.n {
		rs, k := l.at(ci)
		c := rs.s.CaseAt(k)
		if c.Lazy() {
			if full, err := rs.s.Decode(c); err == nil {
				c = full
			}
		}
		it := report.ListedCase{ID: l.idOf(rs, k), Suite: rs.s.File, Name: c.Name, Tags: append([]string{}, c.Tags...), Trials: l.trialsOf(ci), Skip: l.skipped(ci)}
		if d, ok := durations[CaseKey(rs.s.File, c.Name)]; ok {
			it.ExpectedMS = &d
		}
		out.Cases = append(out.Cases, it)
	}
	return out, nil
}
