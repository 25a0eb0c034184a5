package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// Batches (run --cases) are parts of a run that no count numbers: a
// scheduler runs any sets of cases it likes and merges them. They merge
// when, together, they hold every case of the run once; each shard's
// report is such a part too, so shards and batches of one run merge
// together.

// maxNamed bounds the cases a merge error names.
const maxNamed = 20

// isBatchMerge says whether reps hold a batch's report: they then merge
// as batches (mergeBatches), shards among them included.
func isBatchMerge(reps []*Report) bool {
	return slices.ContainsFunc(reps, func(r *Report) bool { return r.Shard != nil && r.Shard.Batch })
}

// mergeBatches is Merge of the batches and shards of one run, in any
// number and order; the run's case list (opts.List), when given, names
// the cases no part has by their id.
func mergeBatches(reps []*Report, names []string, opts *MergeOptions) (*Report, error) {
	var list *CaseList
	if opts != nil {
		list = opts.List
	}
	given := 0
	for i, r := range reps {
		s := r.Shard
		if s == nil {
			return nil, fmt.Errorf("%s is not the report of a part of a run (dryfire run --cases FILE or --shard I/N writes those); only the parts of one run merge", names[i])
		}
		first := reps[0].Shard
		switch {
		case s.Suites != first.Suites || s.Cases != first.Cases:
			return nil, fmt.Errorf("%s and %s are parts of different runs: their suites differ (or cases, trials, pass threshold or seed: suites %.19s vs %.19s, %d vs %d cases); merge the parts of one run", names[0], names[i], first.Suites, s.Suites, first.Cases, s.Cases)
		case s.Build != first.Build:
			return nil, fmt.Errorf("%s and %s were written by different builds of dryfire (%q vs %q); run every part with the same build", names[0], names[i], first.Build, s.Build)
		case len(s.Positions) != len(r.Cases):
			return nil, fmt.Errorf("%s has %d cases but places for %d: the report was changed after the run", names[i], len(r.Cases), len(s.Positions))
		case s.Cases < 0:
			return nil, fmt.Errorf("%s says the run has %d cases", names[i], s.Cases)
		}
		given += len(s.Positions)
	}
	total := reps[0].Shard.Cases
	if list != nil && (list.Suites != reps[0].Shard.Suites || len(list.Cases) != total) {
		return nil, fmt.Errorf("the case list is of another run than %s: its suites %.19s and %d cases, the run's %.19s and %d", names[0], list.Suites, len(list.Cases), reps[0].Shard.Suites, total)
	}
	// Every case of the run is in some part: more than the parts hold
	// leaves a gap, and is not allocated for.
	if total > given {
		return nil, missingError(reps, names, list, total)
	}
	var twice []string
	nTwice := 0
	out, from, err := placed(reps, names, total, func(prev, i, j, pos int) error {
		if nTwice++; len(twice) < maxNamed {
			twice = append(twice, fmt.Sprintf("%s (in %s and %s)", caseName(&reps[i].Cases[j], pos, list), names[prev], names[i]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if nTwice > 0 {
		return nil, fmt.Errorf("%s run twice: %s; give each case to one part only", termtext.Count(nTwice, "case"), namedList(twice, nTwice))
	}
	if slices.Contains(from, 0) {
		return nil, missingError(reps, names, list, total)
	}
	return tallied(out, reps, names)
}

// missingError names the cases of the run no part has: by id with the
// case list, else by place and the cases around them.
func missingError(reps []*Report, names []string, list *CaseList, total int) error {
	// The cases the parts have, by place (a map: total may be large and
	// most of it missing).
	have := map[int]*Case{}
	for _, r := range reps {
		for j, pos := range r.Shard.Positions {
			if pos >= 0 && pos < total {
				have[pos] = &r.Cases[j]
			}
		}
	}
	var missing []string
	n := total - len(have)
	for pos := 0; pos < total && len(missing) < maxNamed; pos++ {
		if have[pos] != nil {
			continue
		}
		if list != nil {
			missing = append(missing, caseName(nil, pos, list))
			continue
		}
		where := fmt.Sprintf("case %d of %d", pos+1, total)
		var around []string
		if c := have[pos-1]; c != nil {
			around = append(around, "after "+strconv.Quote(c.Suite+": "+c.Name))
		}
		if c := have[pos+1]; c != nil {
			around = append(around, "before "+strconv.Quote(c.Suite+": "+c.Name))
		}
		if len(around) > 0 {
			where += " (" + strings.Join(around, ", ") + ")"
		}
		missing = append(missing, where)
	}
	hint := "; give the reports of every part"
	if list == nil {
		hint += " (merge --list LIST.json, the run's dryfire run --list --json, names the cases missing by id)"
	}
	verb := "are"
	if n == 1 {
		verb = "is"
	}
	return fmt.Errorf("%d of the run's %d cases %s in no part: %s%s", n, total, verb, namedList(missing, n), hint)
}

// caseName names case c at pos of a run: by id, suite and name from the
// list when there is one, else by its suite and name.
func caseName(c *Case, pos int, list *CaseList) string {
	if list != nil && pos < len(list.Cases) {
		l := list.Cases[pos]
		return fmt.Sprintf("%s (%s)", l.ID, strconv.Quote(l.Suite+": "+l.Name))
	}
	return strconv.Quote(c.Suite + ": " + c.Name)
}

// namedList joins the items named of n, the count of those left unnamed
// after them.
func namedList(items []string, n int) string {
	s := strings.Join(items, ", ")
	if left := n - len(items); left > 0 {
		s += fmt.Sprintf(", and %d more", left)
	}
	return s
}
