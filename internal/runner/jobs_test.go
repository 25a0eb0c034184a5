package runner

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// jobsSuites are a suite of 2,100 cases kept as stubs (some skipped, some
// with trials of their own) and a small one kept whole, with a real
// provider (cassettes) and trials of the suite's.
func jobsSuites(t *testing.T) []*spec.Suite {
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script, command: [agent]}\nmocks:\n  lookup: [{return: {ok: true}}]\ncases:\n")
	for i := range 2100 {
		fmt.Fprintf(&b, "  - name: big %d\n    input: go\n    script: [{text: done}]\n", i)
		switch {
		case i%7 == 3:
			b.WriteString("    skip: true\n")
		case i%11 == 5:
			fmt.Fprintf(&b, "    trials: %d\n", 2+i%3)
		}
	}
	big, ds := spec.Parse("big.dryfire.yaml", []byte(b.String()), &spec.Options{Lazy: true})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if !big.Stubbed(0) || big.Cases != nil {
		t.Fatal("the big suite keeps no stubs")
	}
	small, ds := spec.Parse("small.dryfire.yaml", []byte(`version: 1
agent: {provider: openai, command: [agent]}
trials: 2
cases:
  - {name: one, input: a}
  - {name: two, input: b, trials: 3}
  - {name: big 4, input: c, skip: true}
`), &spec.Options{Lazy: true})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return []*spec.Suite{big, small}
}

// wantJob is what a job is made of: its case, trial and scope.
type wantJob struct {
	suite, name, id, cassette string
	skip                      bool
	trial, trials             int
}

// eagerJobs is the jobs of a run made the way they always were, one per
// case then one per trial, up front: what the jobs by index must match.
func eagerJobs(suites []*spec.Suite, opts Options) ([]wantJob, []int) {
	type one struct {
		s *spec.Suite
		c *spec.Case
	}
	var cases []one
	for _, s := range suites {
		for i := range s.Len() {
			c := s.CaseAt(i)
			if opts.Filter != nil && !opts.Filter.MatchString(c.Name) || opts.Only != nil && !opts.Only(s.File, c.Name) {
				continue
			}
			cases = append(cases, one{s, c})
		}
	}
	var positions []int
	if sh := opts.Shard; sh != nil {
		var keep []one
		for i, o := range cases {
			h := keyHash(o.s.File, o.c.Name)
			if int(h%uint64(sh.Count)) == sh.Index-1 {
				keep = append(keep, o)
				positions = append(positions, i)
			}
		}
		cases = keep
	}
	var out []wantJob
	for _, o := range cases {
		n := trialsOf(opts.Trials, o.s, o.c.Trials)
		file := ""
		if o.s.Agent.Provider != provider.Script {
			file = plan.New(o.s, nil, nil).Case(o.c).Cassette()
		}
		for k := 1; k <= n; k++ {
			j := wantJob{suite: o.s.File, name: o.c.Name, skip: o.c.Skip, id: spec.CaseID(o.s.SuitePath(), o.c.Name), cassette: TrialCassette(file, k)}
			if n > 1 {
				j.trial, j.trials = k, n
				j.id += "." + strconv.Itoa(k)
			}
			out = append(out, j)
		}
	}
	return out, positions
}

// Jobs made by their index are the jobs made up front: the same cases in
// the same order, the same trials, scopes and cassettes, whatever the
// filter, the shard and the trials.
func TestJobsByIndexAreTheEagerJobs(t *testing.T) {
	suites := jobsSuites(t)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"all", Options{}},
		{"filter", Options{Filter: regexp.MustCompile(`^big 1|^two$`)}},
		{"filter of none", Options{Filter: regexp.MustCompile(`^nothing$`)}},
		{"only", Options{Only: func(suite, name string) bool { return suite == "small.dryfire.yaml" || strings.HasSuffix(name, "7") }}},
		{"trials", Options{Trials: 3}},
		{"shard 1/3", Options{Shard: &Shard{Index: 1, Count: 3}}},
		{"shard 3/3 filtered", Options{Shard: &Shard{Index: 3, Count: 3}, Filter: regexp.MustCompile(`4`)}},
		{"shard 2/2 trials", Options{Shard: &Shard{Index: 2, Count: 2}, Trials: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, positions := eagerJobs(suites, tc.opts)
			l, err := newJobList(suites, &tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if sh := tc.opts.Shard; sh != nil {
				sh := &Shard{Index: sh.Index, Count: sh.Count}
				owner := assign(l, sh)
				var got []int
				for i, o := range owner {
					if int(o) == sh.Index-1 {
						got = append(got, i)
					}
				}
				if !slices.Equal(got, positions) {
					t.Fatalf("shard positions %v, want %v", got, positions)
				}
				l.keep(got)
			}
			if l.jobs != len(want) {
				t.Fatalf("%d jobs, want %d", l.jobs, len(want))
			}
			cases := 0
			for i := range l.jobs {
				j := l.job(i)
				got := wantJob{suite: j.suite.File, name: j.c.Name, skip: j.c.Skip, id: j.id, cassette: j.cassette, trial: j.trial, trials: j.trials}
				if got != want[i] {
					t.Fatalf("job %d: %+v, want %+v", i, got, want[i])
				}
				ci, r := l.caseOf(i)
				if i < r.first || i >= r.first+r.n {
					t.Fatalf("job %d: case %d, trials %+v", i, ci, r)
				}
				if i == r.first {
					if ci != cases {
						t.Fatalf("job %d starts case %d, want %d", i, ci, cases)
					}
					cases++
				}
				if l.skipped(ci) != j.c.Skip {
					t.Fatalf("job %d: skipped %v", i, l.skipped(ci))
				}
			}
			if cases != l.n {
				t.Errorf("%d cases started, want %d", cases, l.n)
			}
		})
	}
}
