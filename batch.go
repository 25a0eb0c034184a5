package dryfire

import (
	"cmp"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// Batch is a set of a run's cases, by id, run by one process of many
// that a scheduler of its own (a Ray driver, a work queue) gives them
// to: RunOptions.Batch. Its report says where its cases are in the whole
// run (Report.Shard, with Batch), and report.Merge joins any batches (and
// shards) of one run.
type Batch struct {
	// IDs are the cases' ids (report.CaseList, docs/agents.md#case-ids), in any
	// order; an id given twice runs once. One that is no case of the run
	// (after Filter and Only) is an error naming it, with the closest.
	IDs []string
	// Build identifies the dryfire that runs the batch; batches of
	// different builds do not merge.
	Build string
}

// List says what Run would run with opts (its Filter, Only, Trials,
// PassThreshold, Seed, Shard or Batch), each case with its id, running
// nothing. durations, when given, is a previous run's report: each case
// it has gets its duration as ExpectedMS.
func (p *Project) List(opts *RunOptions, durations *report.Report) (*report.CaseList, error) {
	opts = cmp.Or(opts, &RunOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.runnerOptions(opts, nil)
	if err != nil {
		return nil, err
	}
	var ds map[string]float64
	if durations != nil {
		ds = make(map[string]float64, len(durations.Cases))
		for _, c := range durations.Cases {
			ds[runner.CaseKey(c.Suite, c.Name)] = c.DurationMS
		}
	}
	return runner.List(p.suites, ro, ds)
}

// Journal keeps a run's cases as they finish, crash-safe, so that a run
// cut off resumes where it was (RunOptions.Journal; the format is
// internal/runner/journal.go's, docs/running.md#resuming-a-run-cut-off).
type Journal struct{ j *runner.Journal }

// OpenJournal opens the journal at path: a new one (resume false: the
// file must not exist or be empty), or one to resume (it must be a
// journal, whole but for a last record a crash cut short, which is
// dropped). build identifies the dryfire that runs, as Shard.Build: a
// journal of another build is not resumed. A corrupt journal, or one of
// another run, is an error and is left as it is.
func OpenJournal(path string, resume bool, build string) (*Journal, error) {
	j, err := runner.OpenJournal(path, resume, build)
	if err != nil {
		return nil, err
	}
	return &Journal{j: j}, nil
}

// OnResume has f hear, when the run resuming the journal has found it to
// be its own, how many cases it holds finished and whether a crash cut
// its last record short.
func (j *Journal) OnResume(f func(finished int, torn bool)) { j.j.Resumed = f }

// Finished is how many cases the journal holds finished (an
// infrastructure error is not: it runs again), and whether a crash cut
// its last record short.
func (j *Journal) Finished() (n int, torn bool) { return j.j.Finished() }

// Close writes and syncs what is left, and closes the file; full says
// the journal reached its bound (1 GiB) and the cases after it were not
// kept.
func (j *Journal) Close() (full bool, err error) { return j.j.Close() }
