package runner

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/dryfire-dev/dryfire/report"
)

// pool runs a run's jobs on its workers and hands the cases on in report
// order as they are done.
type pool struct {
	opts  Options
	jobs  *jobList
	lv    *live
	rep   *report.Report
	shard *report.Shard

	next   atomic.Int64 // the next job a worker takes: no dispatcher, no hand-off per case
	failed atomic.Bool  // FailFast: a case did not pass

	mu   sync.Mutex // serialises Progress and Sink calls, the trial counts and the results in order
	more *sync.Cond // a case was handed on
	// Each case's trials are jobs of their own; a case is started with
	// its first trial and done with its last, as one result. The results
	// of a case's trials are kept until its last is done.
	inTrials map[int]*trialRuns
	// Done cases are handed on in report order: to the totals, the
	// shard's infra list, the Sink. A case done before those ahead of it
	// waits in pending; a case more than window places ahead of the first
	// not done does not start (with a Sink), so that pending stays small.
	tot     *report.Totals
	pending map[int]*report.Case
	emitted int
}

// window is how far ahead of the first case not done a case may start
// when results are streamed (Options.Sink, Lean).
const window = 1024

// runPool runs the jobs and returns the report.
func runPool(ctx context.Context, jobs *jobList, opts Options, lv *live, shard *report.Shard) *report.Report {
	p := &pool{opts: opts, jobs: jobs, lv: lv, rep: &report.Report{}, shard: shard,
		inTrials: map[int]*trialRuns{}, tot: &report.Totals{}, pending: map[int]*report.Case{}}
	p.more = sync.NewCond(&p.mu)
	if !opts.Lean {
		p.rep.Cases = make([]report.Case, jobs.n)
	}
	if opts.Progress != nil {
		opts.Progress.Start(jobs.n)
	}
	var wg sync.WaitGroup
	for range min(opts.workers(), jobs.jobs) {
		wg.Go(func() { p.work(ctx) })
	}
	wg.Wait()
	rep, tot := p.rep, p.tot
	rep.Summary, rep.Totals, rep.Shard = tot.Summary, tot, shard
	if lv.cov != nil {
		rep.Coverage = lv.cov.report()
		tot.Coverage = rep.Coverage
	}
	rep.Mutation = tot.Mutation()
	return rep
}

// work runs jobs until none is left.
func (p *pool) work(ctx context.Context) {
	res := new(report.Case) // each result, until it is folded (one allocation a worker)
	for {
		i := int(p.next.Add(1)) - 1
		if i >= p.jobs.jobs {
			return
		}
		ci, r := p.jobs.caseOf(i)
		if p.opts.Sink != nil || p.opts.Lean {
			p.mu.Lock()
			for ci >= p.emitted+window {
				p.more.Wait()
			}
			p.mu.Unlock()
		}
		if p.fromJournal(i, ci, r) {
			continue
		}
		ran := p.run(ctx, i, ci, r, res)
		p.lv.red.Walk(res)
		p.done(i, ci, r, res, ran)
	}
}

// fromJournal hands on case ci as the journal has it, when it finished
// before: its first trial does, the others are nothing.
func (p *pool) fromJournal(i, ci int, r trialRange) bool {
	if p.opts.Journal == nil {
		return false
	}
	stored, ok, err := p.opts.Journal.finished(ci)
	if err != nil {
		stored, ok = report.Case{Status: report.Errored, Reason: "reading it from the journal: " + err.Error(), Infra: true}, true
	}
	if !ok {
		return false
	}
	if st := stored.Status; st == report.Failed || st == report.Errored {
		p.failed.Store(true)
	}
	if i == r.first {
		p.mu.Lock()
		p.started(ci, stored.Suite, stored.Name)
		c := &stored
		if !p.opts.Lean {
			p.rep.Cases[ci] = stored
			c = &p.rep.Cases[ci]
		}
		p.handOn(ci, c)
		p.mu.Unlock()
	}
	return true
}

// run runs job i (trial i-r.first of case ci) into res, or skips it; ran
// says it ran whole.
func (p *pool) run(ctx context.Context, i, ci int, r trialRange, res *report.Case) (ran bool) {
	j := p.jobs.job(i)
	switch {
	case ctx.Err() != nil:
		*res = base(j)
		res.Status, res.Reason = report.Skipped, interruptedReason
		return false
	case p.opts.FailFast && p.failed.Load():
		*res = base(j)
		res.Status, res.Reason = report.Skipped, failFastReason
		return false
	}
	p.mu.Lock()
	first := true
	if r.n > 1 {
		t := p.runsOf(ci, r.n)
		first, t.started = !t.started, true
	}
	if first {
		p.started(ci, j.suite.File, j.c.Name)
	}
	p.mu.Unlock()
	*res = runDecoded(ctx, j, p.opts, p.lv)
	if st := res.Status; st == report.Failed || st == report.Errored {
		p.failed.Store(true)
	}
	return ctx.Err() == nil
}

// done folds job i's result into its case, and hands the case on once
// its last trial is done (and journals it, when it ran whole).
func (p *pool) done(i, ci int, r trialRange, res *report.Case, ran bool) {
	p.mu.Lock()
	var folded report.Case
	last := r.n == 1
	journal := ran && p.opts.Journal != nil
	if last {
		folded = *res
	} else {
		t := p.runsOf(ci, r.n)
		t.runs[i-r.first] = *res
		t.unran = t.unran || !ran
		if t.left--; t.left == 0 {
			last = true
			folded = foldCase(t.runs, p.opts.PassThreshold)
			journal = journal && !t.unran
			delete(p.inTrials, ci)
		}
	}
	if last {
		var c *report.Case
		if p.opts.Lean {
			c = new(report.Case)
			*c = folded
		} else {
			p.rep.Cases[ci] = folded
			c = &p.rep.Cases[ci]
		}
		p.handOn(ci, c)
	}
	p.mu.Unlock()
	if last && journal {
		// Only a case that ran whole: not one the run was interrupted
		// in, skipped for it or by --fail-fast.
		p.opts.Journal.add(ci, &folded)
	}
}

// runsOf are the trials of case ci, of n (p.mu held).
func (p *pool) runsOf(ci, n int) *trialRuns {
	t := p.inTrials[ci]
	if t == nil {
		t = &trialRuns{runs: make([]report.Case, n), left: n}
		p.inTrials[ci] = t
	}
	return t
}

// started tells Progress case ci started (p.mu held).
func (p *pool) started(ci int, suite, name string) {
	if p.opts.Progress != nil {
		p.opts.Progress.CaseStarted(ci, suite, name)
	}
}

// handOn tells Progress case ci is done and hands it, and every case
// after it done before it, on in report order (p.mu held).
func (p *pool) handOn(ci int, c *report.Case) {
	if p.opts.Progress != nil {
		p.opts.Progress.CaseDone(ci, c)
	}
	p.pending[ci] = c
	for {
		c, ok := p.pending[p.emitted]
		if !ok {
			break
		}
		delete(p.pending, p.emitted)
		p.tot.Add(c)
		if sh := p.shard; sh != nil {
			if c.Status == report.Errored && c.Infra {
				sh.Infra = append(sh.Infra, sh.Positions[p.emitted])
			}
			sh.Live += c.Live
		}
		if p.opts.Sink != nil {
			p.opts.Sink(p.emitted, c)
		}
		p.emitted++
	}
	p.more.Broadcast()
}
