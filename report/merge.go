package report

import (
	"fmt"
	"slices"
	"strings"
)

// MergeOptions control Merge; nil means the defaults.
type MergeOptions struct {
	// List, when set, is the run's CaseList: a case no part has is named
	// by its id, suite and name (else by its place and its neighbours).
	List *CaseList
}

// Merge joins the reports of the parts of one run — its shards
// (dryfire.RunOptions.Shard), its batches (RunOptions.Batch), or both —
// in any order into the report the whole run would have written,
// durations aside. names name the reports in its errors (file names;
// "report N" when they are not one a report). It refuses reports that
// are no part of a run, parts of other suites or builds, a case in two
// parts and a case in none, naming them.
func Merge(reps []*Report, names []string, opts *MergeOptions) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no reports to merge")
	}
	if len(names) != len(reps) {
		names = make([]string, len(reps))
		for i := range names {
			names[i] = fmt.Sprintf("report %d", i+1)
		}
	}
	if opts != nil && opts.List != nil || isBatchMerge(reps) {
		return mergeBatches(reps, names, opts)
	}
	for i, r := range reps {
		if r.Shard == nil {
			return nil, fmt.Errorf("%s is not the report of a shard (dryfire run --shard I/N writes those); only shards of one run merge", names[i])
		}
	}
	first := reps[0].Shard
	if first.Count > MaxShards {
		return nil, fmt.Errorf("%s says it is shard %d of %d: a run has at most %d shards (report.MaxShards)", names[0], first.Index, first.Count, MaxShards)
	}
	seen := make(map[int]string, len(reps))
	total := 0 // the cases the reports hold
	for i, r := range reps {
		s := r.Shard
		switch {
		case s.Count != first.Count:
			return nil, fmt.Errorf("%s is shard %d/%d, but %s is shard %d/%d: the shards of one run all have the same count", names[i], s.Index, s.Count, names[0], first.Index, first.Count)
		case s.Suites != first.Suites || s.Cases != first.Cases:
			return nil, fmt.Errorf("%s and %s are of different suites (or cases, trials, pass threshold or seed: suites %.19s vs %.19s); merge the shards of one run", names[0], names[i], first.Suites, s.Suites)
		case s.Build != first.Build:
			return nil, fmt.Errorf("%s and %s were written by different builds of dryfire (%q vs %q); run every shard with the same build", names[0], names[i], first.Build, s.Build)
		case s.Index < 1 || s.Index > s.Count:
			return nil, fmt.Errorf("%s says it is shard %d of %d", names[i], s.Index, s.Count)
		case seen[s.Index] != "":
			return nil, fmt.Errorf("%s and %s are both shard %d/%d", seen[s.Index], names[i], s.Index, s.Count)
		case len(s.Positions) != len(r.Cases):
			return nil, fmt.Errorf("%s has %d cases but places for %d: the report was changed after the run", names[i], len(r.Cases), len(s.Positions))
		}
		seen[s.Index] = names[i]
		total += len(r.Cases)
	}
	if len(seen) < first.Count {
		// The first few missing are among the first len(seen)+10.
		var missing []string
		for k := 1; k <= first.Count && len(missing) < 10; k++ {
			if seen[k] == "" {
				missing = append(missing, fmt.Sprintf("%d/%d", k, first.Count))
			}
		}
		more := ""
		if n := first.Count - len(seen) - len(missing); n > 0 {
			more = fmt.Sprintf(" and %d more", n)
		}
		return nil, fmt.Errorf("shard %s%s missing: give the reports of all %d shards", strings.Join(missing, ", "), more, first.Count)
	}
	if first.Cases < 0 {
		return nil, fmt.Errorf("%s says the run has %d cases", names[0], first.Cases)
	}
	if first.Cases > total {
		// Fewer cases than the run's: a gap, found without a place for
		// each of the cases the reports say the run has.
		return nil, fmt.Errorf("no shard has case %d of %d: the shards leave a gap", firstGap(reps)+1, first.Cases)
	}
	out, from, err := placed(reps, names, first.Cases, func(prev, i, j, pos int) error {
		c := &reps[i].Cases[j]
		return fmt.Errorf("%s and %s both have case %d (%s: %s): the shards overlap", names[prev], names[i], pos+1, c.Suite, c.Name)
	})
	if err != nil {
		return nil, err
	}
	if gap := slices.Index(from, 0); gap >= 0 {
		return nil, fmt.Errorf("no shard has case %d of %d: the shards leave a gap", gap+1, first.Cases)
	}
	return tallied(out, reps, names)
}

// tallied is a merge of the parts reps (named names) with its totals
// and the parts' merged coverage.
func tallied(out *Report, reps []*Report, names []string) (*Report, error) {
	out.Tally()
	cov, err := mergeShardCoverage(reps, names)
	if err != nil {
		return nil, err
	}
	out.Coverage = cov
	return out, nil
}

// placed puts each part's cases at their places in a report of total
// cases, from saying which part (1-based) put each (0: none), and marks
// the infrastructure errors and what went live. A place a second part has
// too is told to overlap, which may stop it with an error.
func placed(reps []*Report, names []string, total int, overlap func(prev, i, j, pos int) error) (out *Report, from []int32, err error) {
	out, from = &Report{Cases: make([]Case, total)}, make([]int32, total)
	for i, r := range reps {
		s := r.Shard
		for j, pos := range s.Positions {
			switch {
			case pos < 0 || pos >= total:
				return nil, nil, fmt.Errorf("%s places a case at %d, outside the run's %d cases", names[i], pos, total)
			case from[pos] != 0:
				if err := overlap(int(from[pos])-1, i, j, pos); err != nil {
					return nil, nil, err
				}
				continue
			}
			from[pos] = int32(i + 1)
			out.Cases[pos] = r.Cases[j]
		}
		for _, pos := range s.Infra {
			if pos >= 0 && pos < total && from[pos] == int32(i+1) {
				out.Cases[pos].Infra = true
			}
		}
		// What went live counts for the run, not for a case: the first
		// case of the part carries it.
		if len(s.Positions) > 0 {
			out.Cases[s.Positions[0]].Live += s.Live
		}
	}
	return out, from, nil
}

// MaxShards bounds the shards of a run: --shard I/N, the CI's variables
// and the reports merge reads.
const MaxShards = 1_000_000

// firstGap is the first place no shard's positions hold.
func firstGap(reps []*Report) int {
	var all []int
	for _, r := range reps {
		all = append(all, r.Shard.Positions...)
	}
	slices.Sort(all)
	gap := 0
	for _, p := range all {
		if p == gap {
			gap++
		} else if p > gap {
			break
		}
	}
	return gap
}
