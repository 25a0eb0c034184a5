package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"os"
	"slices"
	"strconv"

	"github.com/dryfire-dev/dryfire/internal/report"
)

// Shard selects one part of a run's cases, so that Count processes (CI
// machines) share a run with no case twice and none left out.
type Shard struct {
	Index, Count int // Index is 1-based
	// Durations, when set, are the wall times (ms) of a previous run's
	// cases by CaseKey: the cases are then spread so that the shards take
	// about as long, instead of by a hash of their names.
	Durations map[string]float64
	// Build identifies the dryfire that runs it, in the report: shards of
	// different builds do not merge.
	Build string
}

// CaseKey is how a case is known across runs: its suite file and name.
func CaseKey(suite, name string) string { return suite + "\x00" + name }

// shardJobs keeps the jobs of shard sh of all the run's jobs (one per
// case, before trials), and says which part of the run they are.
func shardJobs(jobs []job, sh *Shard, opts Options) ([]job, *report.Shard, error) {
	info := &report.Shard{Index: sh.Index, Count: sh.Count, Cases: len(jobs), Positions: []int{}, Infra: []int{}, Build: sh.Build, Balanced: len(sh.Durations) > 0}
	suites, err := suitesHash(jobs, opts)
	if err != nil {
		return nil, nil, err
	}
	info.Suites = suites
	owner := assign(jobs, sh)
	var out []job
	for i, j := range jobs {
		if owner[i] == sh.Index-1 {
			out = append(out, j)
			info.Positions = append(info.Positions, i)
		}
	}
	return out, info, nil
}

// assign gives each job a shard (0-based). By name, a case's shard is a
// hash of its key: stable across runs and machines whatever else the
// suites hold. By durations, the longest cases go first, each to the shard
// with the least time so far (cases the previous run did not have count
// as its mean); every shard computes the same spread from the same report.
func assign(jobs []job, sh *Shard) []int {
	owner := make([]int, len(jobs))
	hashes := make([]uint64, len(jobs))
	for i, j := range jobs {
		h := fnv.New64a()
		h.Write([]byte(CaseKey(j.suite.File, j.c.Name)))
		hashes[i] = h.Sum64()
		owner[i] = int(hashes[i] % uint64(sh.Count))
	}
	if len(sh.Durations) == 0 {
		return owner
	}
	dur := make([]float64, len(jobs))
	known, total := 0, 0.0
	for i, j := range jobs {
		if d, ok := sh.Durations[CaseKey(j.suite.File, j.c.Name)]; ok {
			dur[i], known, total = d, known+1, total+d
		} else {
			dur[i] = -1
		}
	}
	mean := 1.0
	if known > 0 && total > 0 {
		mean = total / float64(known)
	}
	order := make([]int, len(jobs))
	for i := range order {
		order[i] = i
		if dur[i] < 0 {
			dur[i] = mean
		}
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(dur[b], dur[a]); c != 0 {
			return c
		}
		return cmp.Compare(hashes[a], hashes[b])
	})
	load := make([]float64, sh.Count)
	for _, i := range order {
		best := 0
		for s := 1; s < sh.Count; s++ {
			if load[s] < load[best] {
				best = s
			}
		}
		owner[i] = best
		load[best] += dur[i]
	}
	return owner
}

// suitesHash identifies what a run runs: the contents of its suite files,
// its cases in order, and the options that change their results.
func suitesHash(jobs []job, opts Options) (string, error) {
	h := sha256.New()
	field := func(s string) {
		binary.Write(h, binary.BigEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	read := map[string]bool{}
	for _, j := range jobs {
		if !read[j.suite.File] {
			read[j.suite.File] = true
			data, err := os.ReadFile(j.suite.File)
			if err != nil {
				return "", fmt.Errorf("reading the suite to shard its cases: %w", err)
			}
			field(j.suite.File)
			field(string(data))
		}
		field(CaseKey(j.suite.File, j.c.Name))
		field(strconv.Itoa(trialsOf(opts, j.suite, j.c)))
	}
	field(strconv.FormatFloat(opts.PassThreshold, 'g', -1, 64))
	if opts.Seed != nil {
		field(strconv.FormatInt(*opts.Seed, 10))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
