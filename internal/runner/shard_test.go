package runner

import (
	"fmt"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

func shardJobsOf(n int) []job {
	s := &spec.Suite{File: "s.dryfire.yaml"}
	jobs := make([]job, n)
	for i := range jobs {
		jobs[i] = job{suite: s, c: &spec.Case{Name: fmt.Sprintf("case %d", i)}}
	}
	return jobs
}

// Every case is in exactly one shard, by hash or by durations, and the
// same inputs give the same spread.
func TestAssignPartitions(t *testing.T) {
	jobs := shardJobsOf(100)
	durations := map[string]float64{}
	for i, j := range jobs[:90] { // ten cases the previous run lacks
		durations[CaseKey(j.suite.File, j.c.Name)] = float64(1 + i%13*i%7)
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
				if o < 0 || o >= count {
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
// depend on the other cases.
func TestAssignBalancesAndIsStable(t *testing.T) {
	jobs := shardJobsOf(60)
	durations := map[string]float64{}
	longest := 0.0
	for i, j := range jobs {
		d := float64(1 + (i*37)%50)
		if i == 0 {
			d = 400
		}
		durations[CaseKey(j.suite.File, j.c.Name)] = d
		longest = max(longest, d)
	}
	owner := assign(jobs, &Shard{Count: 4, Durations: durations})
	load := make([]float64, 4)
	for i, o := range owner {
		load[o] += durations[CaseKey(jobs[i].suite.File, jobs[i].c.Name)]
	}
	if spread := slices.Max(load) - slices.Min(load); spread > longest {
		t.Errorf("loads %v differ by %v, more than the longest case %v", load, spread, longest)
	}
	byHash := assign(jobs, &Shard{Count: 4})
	fewer := assign(jobs[10:], &Shard{Count: 4})
	if !slices.Equal(byHash[10:], fewer) {
		t.Error("by hash, removing cases moved others")
	}
}
