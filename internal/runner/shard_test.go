package runner

import (
	"fmt"
	"hash/fnv"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// shardJobsOf is the jobs of a suite of cases "case FROM" to "case TO-1".
func shardJobsOf(t *testing.T, from, to int) *jobList {
	s := &spec.Suite{File: "s.dryfire.yaml", Agent: spec.Agent{Provider: provider.Script}}
	for i := from; i < to; i++ {
		s.Cases = append(s.Cases, &spec.Case{Name: fmt.Sprintf("case %d", i)})
	}
	l, err := newJobList([]*spec.Suite{s}, &Options{})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// Every case is in exactly one shard, by hash or by durations, and the
// same inputs give the same spread.
func TestAssignPartitions(t *testing.T) {
	jobs := shardJobsOf(t, 0, 100)
	durations := map[string]float64{}
	for i := range 90 { // ten cases the previous run lacks
		durations[CaseKey(jobs.name(i))] = float64(1 + i%13*i%7)
	}
	for count := 1; count <= 7; count++ {
		for _, d := range []map[string]float64{nil, durations} {
			sh := &Shard{Count: count, Durations: d}
			owner := assign(jobs, sh)
			if again := assign(jobs, sh); !slices.Equal(owner, again) {
				t.Fatalf("%d shards: two spreads differ", count)
			}
			per := make([]int, count)
			for _, o := range owner {
				if o < 0 || int(o) >= count {
					t.Fatalf("%d shards: owner %d", count, o)
				}
				per[o]++
			}
			if count > 1 && slices.Contains(per, 0) {
				t.Errorf("%d shards (durations %v): an empty shard %v", count, d != nil, per)
			}
		}
	}
}

// By durations, the shards' totals are within the longest case of each
// other (the greedy spread's bound); by hash a case's shard does not
// depend on the other cases, and is FNV-1a of its key.
func TestAssignBalancesAndIsStable(t *testing.T) {
	jobs := shardJobsOf(t, 0, 60)
	durations := map[string]float64{}
	longest := 0.0
	for i := range jobs.n {
		d := float64(1 + (i*37)%50)
		if i == 0 {
			d = 400
		}
		durations[CaseKey(jobs.name(i))] = d
		longest = max(longest, d)
	}
	owner := assign(jobs, &Shard{Count: 4, Durations: durations})
	load := make([]float64, 4)
	for i, o := range owner {
		load[o] += durations[CaseKey(jobs.name(i))]
	}
	if spread := slices.Max(load) - slices.Min(load); spread > longest {
		t.Errorf("loads %v differ by %v, more than the longest case %v", load, spread, longest)
	}
	byHash := assign(jobs, &Shard{Count: 4})
	fewer := assign(shardJobsOf(t, 10, 60), &Shard{Count: 4})
	if !slices.Equal(byHash[10:], fewer) {
		t.Error("by hash, removing cases moved others")
	}
	for i, o := range byHash {
		h := fnv.New64a()
		h.Write([]byte(CaseKey(jobs.name(i))))
		if want := int32(h.Sum64() % 4); o != want {
			t.Errorf("case %d: shard %d, want %d (FNV-1a of its key)", i, o, want)
		}
	}
}
