package runner

import (
	"fmt"
	"github.com/dryfire-dev/dryfire/report"
	"math"
	"sort"
	"strconv"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// A run of a million cases keeps nothing per case before they run: the
// selected cases are an index list only when a filter or a shard leaves
// some out, their trials a list of offsets only when cases differ in
// trials, and each job (a trial of a case: its suite, case, plan,
// cassette and scope) is made by its index when a worker takes it.

// runSuite is one suite of a run, with its plan and where its cases start
// among the run's (counting every case of the suites before it).
type runSuite struct {
	s     *spec.Suite
	plan  *plan.Suite
	first int
	index int // among the run's suites
}

// jobList is the jobs of a run by index.
type jobList struct {
	suites []runSuite
	// ids are every case's id, of all the suites (selected or not),
	// worked out when a job first needs one (an agent.command case's URLs).
	idsOnce sync.Once
	ids     *spec.CaseIDs
	total   int     // cases of all the suites
	sel     []int32 // the selected cases (by their place in all the suites); nil: all
	n       int     // selected cases
	// trials is how often every selected case runs when they all run as
	// often; 0 when they differ: the jobs of case ci are then
	// firsts[ci] to firsts[ci+1].
	trials int
	firsts []int32
	jobs   int // trials of all the selected cases
	opts   *Options
}

// newJobList selects the run's cases (Filter, Only) of suites, with
// the trials opts give them.
func newJobList(suites []*spec.Suite, opts *Options) (*jobList, error) {
	l := &jobList{opts: opts}
	for _, s := range suites {
		sw := opts.Worlds[s]
		if len(opts.Command) > 0 {
			s = withCommand(s, opts.Command)
		}
		if err := supported(s); err != nil {
			return nil, err
		}
		l.suites = append(l.suites, runSuite{s: s, plan: plan.New(s, sw, nil), first: l.total, index: len(l.suites)})
		l.total += s.Len()
	}
	if l.total > math.MaxInt32 {
		return nil, fmt.Errorf("a run has at most %d cases, not %d", math.MaxInt32, l.total)
	}
	if opts.Filter != nil || opts.Only != nil {
		l.sel = []int32{}
		for _, rs := range l.suites {
			for k := range rs.s.Len() {
				name := rs.s.CaseName(k)
				if opts.Filter != nil && !opts.Filter.MatchString(name) || opts.Only != nil && !opts.Only(rs.s.File, name) {
					continue
				}
				l.sel = append(l.sel, int32(rs.first+k))
			}
		}
		if len(l.sel) == l.total {
			l.sel = nil
		}
	}
	l.n = l.total
	if l.sel != nil {
		l.n = len(l.sel)
	}
	return l, l.layTrials()
}

// selects says whether a case of suite k is selected.
func (l *jobList) selects(k int) bool {
	first, end := l.suites[k].first, l.suites[k].first+l.suites[k].s.Len()
	if l.sel == nil {
		return first < end
	}
	i := sort.Search(len(l.sel), func(i int) bool { return int(l.sel[i]) >= first })
	return i < len(l.sel) && int(l.sel[i]) < end
}

// keep selects the cases at the given places (ascending) of the selected
// ones: a shard's.
func (l *jobList) keep(places []int) {
	sel := make([]int32, len(places))
	for i, p := range places {
		sel[i] = int32(l.global(p))
	}
	l.sel, l.n = sel, len(sel)
	l.layTrials()
}

// layTrials finds how often each selected case runs.
func (l *jobList) layTrials() error {
	l.trials, l.firsts = 0, nil
	same := 1
	for ci := range l.n {
		if n := l.trialsOf(ci); ci == 0 {
			same = n
		} else if n != same {
			same = 0
			break
		}
	}
	l.trials, l.jobs = same, l.n*same
	if same == 0 {
		l.firsts = make([]int32, l.n+1)
		l.jobs = 0
		for ci := range l.n {
			l.firsts[ci] = int32(l.jobs)
			if l.jobs += l.trialsOf(ci); l.jobs > math.MaxInt32 {
				break
			}
		}
		l.firsts[l.n] = int32(l.jobs)
	}
	if l.jobs > math.MaxInt32 {
		return fmt.Errorf("a run has at most %d trials, not %d", math.MaxInt32, l.jobs)
	}
	return nil
}

// global is the place among all the suites' cases of selected case ci.
func (l *jobList) global(ci int) int {
	if l.sel != nil {
		return int(l.sel[ci])
	}
	return ci
}

// at is the suite and the case in it of selected case ci.
func (l *jobList) at(ci int) (*runSuite, int) {
	g := l.global(ci)
	k := sort.Search(len(l.suites), func(i int) bool { return l.suites[i].first > g }) - 1
	return &l.suites[k], g - l.suites[k].first
}

// name is the suite file and name of selected case ci.
func (l *jobList) name(ci int) (suite, name string) {
	rs, k := l.at(ci)
	return rs.s.File, rs.s.CaseName(k)
}

// trialsOf is how often selected case ci runs.
func (l *jobList) trialsOf(ci int) int {
	rs, k := l.at(ci)
	_, trials := rs.s.SkipOf(k)
	return trialsOf(l.opts.Trials, rs.s, trials)
}

// skipped says whether selected case ci is skipped (skip:).
func (l *jobList) skipped(ci int) bool {
	rs, k := l.at(ci)
	skip, _ := rs.s.SkipOf(k)
	return skip
}

// trialRange is where the trials of one case are among the run's jobs.
type trialRange struct{ first, n int }

// caseOf is the selected case job i is a trial of, and where that case's
// trials are.
func (l *jobList) caseOf(i int) (int, trialRange) {
	if l.trials > 0 {
		ci := i / l.trials
		return ci, trialRange{first: ci * l.trials, n: l.trials}
	}
	ci := sort.Search(l.n, func(c int) bool { return int(l.firsts[c+1]) > i })
	return ci, trialRange{first: int(l.firsts[ci]), n: int(l.firsts[ci+1] - l.firsts[ci])}
}

// idOf is the id of case k of rs (spec.CaseID).
func (l *jobList) idOf(rs *runSuite, k int) string {
	l.idsOnce.Do(func() {
		ss := make([]*spec.Suite, len(l.suites))
		for i := range l.suites {
			ss[i] = l.suites[i].s
		}
		l.ids = spec.NewCaseIDs(ss)
	})
	return l.ids.ID(rs.index, k, rs.s.CaseName(k))
}

// job is job i: its own cassette (TrialCassette) and agent.command scope
// (the case's id, spec.CaseID; with several trials, ".N" after it for
// trial N), in case order then trial order.
// The case is a stub when its suite keeps it so (runDecoded decodes it).
func (l *jobList) job(i int) job {
	ci, r := l.caseOf(i)
	rs, k := l.at(ci)
	c := rs.s.CaseAt(k)
	j := job{suite: rs.s, c: c}
	if len(rs.s.Agent.Command) > 0 {
		j.id = l.idOf(rs, k) // only an agent.command case has URLs
	}
	j.plan = rs.plan.Case(c)
	if l.opts.Upstream != nil {
		j.plan = j.plan.WithTools(l.opts.Upstream.Tools())
	}
	if pr := l.opts.point; pr != nil && pr.plant != nil {
		pl := pr.plant
		j.plant = pl
		if pl.place == report.PlaceToolDescription {
			j.plan = j.plan.WithTools(poisoned(j.plan.Tools, pl.payload.Text))
		}
	}
	if rs.s.Agent.Provider != provider.Script {
		j.cassette = TrialCassette(j.plan.Cassette(), i-r.first+1)
		if l.opts.point != nil {
			j.cassette = SweepCassette(j.cassette, l.opts.point.p)
		}
	}
	if r.n > 1 {
		j.trial, j.trials = i-r.first+1, r.n
		if j.id != "" {
			j.id += "." + strconv.Itoa(j.trial)
		}
	}
	return j
}
