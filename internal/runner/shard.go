package runner

import (
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/dryfire-dev/dryfire/report"
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

// shardJobs keeps the cases of shard sh of all the run's selected cases,
// and says which part of the run they are.
func shardJobs(l *jobList, sh *Shard, opts Options) (*report.Shard, error) {
	info := &report.Shard{Index: sh.Index, Count: sh.Count, Cases: l.n, Positions: []int{}, Infra: []int{}, Build: sh.Build, Balanced: len(sh.Durations) > 0}
	suites, err := suitesHash(l, opts)
	if err != nil {
		return nil, err
	}
	info.Suites = suites
	owner := assign(l, sh)
	for i, o := range owner {
		if int(o) == sh.Index-1 {
			info.Positions = append(info.Positions, i)
		}
	}
	l.keep(info.Positions)
	return info, nil
}

// keyHash is the FNV-1a hash of CaseKey(suite, name).
func keyHash(suite, name string) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := range len(suite) {
		h = (h ^ uint64(suite[i])) * prime
	}
	h = (h ^ 0) * prime
	for i := range len(name) {
		h = (h ^ uint64(name[i])) * prime
	}
	return h
}

// assign gives each selected case a shard (0-based). By name, a case's
// shard is a hash of its key: stable across runs and machines whatever
// else the suites hold. By durations, the longest cases go first, each to
// the shard with the least time so far (cases the previous run did not
// have count as its mean); every shard computes the same spread from the
// same report.
func assign(l *jobList, sh *Shard) []int32 {
	owner := make([]int32, l.n)
	for i := range l.n {
		owner[i] = int32(keyHash(l.name(i)) % uint64(sh.Count))
	}
	if len(sh.Durations) == 0 {
		return owner
	}
	hashes := make([]uint64, l.n)
	dur := make([]float64, l.n)
	known, total := 0, 0.0
	for i := range l.n {
		suite, name := l.name(i)
		hashes[i] = keyHash(suite, name)
		if d, ok := sh.Durations[CaseKey(suite, name)]; ok {
			dur[i], known, total = d, known+1, total+d
		} else {
			dur[i] = -1
		}
	}
	mean := 1.0
	if known > 0 && total > 0 {
		mean = total / float64(known)
	}
	order := make([]int, l.n)
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
		owner[i] = int32(best)
		load[best] += dur[i]
	}
	return owner
}

// suitesHash identifies what a run runs: the contents of its suite files,
// its cases in order, and the options that change their results.
func suitesHash(l *jobList, opts Options) (string, error) {
	h := sha256.New()
	field := func(s string) {
		binary.Write(h, binary.BigEndian, uint64(len(s)))
		h.Write([]byte(s))
	}
	read := map[string]bool{}
	for ci := range l.n {
		rs, k := l.at(ci)
		if !read[rs.s.File] {
			read[rs.s.File] = true
			data, err := os.ReadFile(rs.s.File)
			if err != nil {
				return "", fmt.Errorf("reading the suite to shard its cases: %w", err)
			}
			field(rs.s.File)
			field(string(data))
		}
		field(CaseKey(rs.s.File, rs.s.CaseName(k)))
		field(strconv.Itoa(l.trialsOf(ci)))
	}
	field(strconv.FormatFloat(opts.PassThreshold, 'g', -1, 64))
	if opts.Seed != nil {
		field(strconv.FormatInt(*opts.Seed, 10))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}
