package dryfire

import (
	"cmp"
	"context"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxPoints bounds a sweep's points unless SweepOptions.MaxPoints
// says otherwise.
const DefaultMaxPoints = 200

// SweepOptions control Project.Sweep; nil means the defaults. The run's
// options are RunOptions' (Trials, Shard, FailFast and Stream are not
// used); Record defaults to RecordNone: a point with a real model
// replays its own cassette, recorded once under RecordOnce.
type SweepOptions struct {
	RunOptions
	// MaxPoints bounds the points run, in report order; 0 means
	// DefaultMaxPoints. report.SweepReport says how many there were.
	MaxPoints int
	// Point, when set, runs only the points of this ID (report.SweepPoint.ID:
	// CALL:TOOL:KIND[:CODE]) of the cases selected.
	Point string
	// Faults are the kinds of failure given (FaultKinds); nil: all.
	Faults []string
}

// Sweep runs the selected cases once, then each passing case again for
// each of its points: every tool call dryfire served, failed in turn with
// each declared error of its operation (or the tool's error rule), a tool
// error and a timeout, then its answer corrupted (FaultKinds). It says for
// each point whether the case survives, fails, or is unsafe: it broke an
// invariant (see docs/running.md, "A fault sweep", and docs/safety.md).
func (p *Project) Sweep(ctx context.Context, opts *SweepOptions) (*report.SweepReport, error) {
	opts = cmp.Or(opts, &SweepOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.drillOptions(opts.RunOptions)
	if err != nil {
		return nil, err
	}
	return runner.Sweep(ctx, p.suites, ro, runner.SweepOptions{MaxPoints: opts.MaxPoints, Point: opts.Point, Faults: opts.Faults})
}

// drillOptions are the runner's options of a sweep or an injection drill:
// a run's, with Record RecordNone by default and no trials, shard,
// batch, journal, coverage, mutation or fail-fast.
func (p *Project) drillOptions(o RunOptions) (runner.Options, error) {
	o.Record = cmp.Or(o.Record, RecordNone)
	o.Trials, o.PassThreshold, o.Shard, o.Batch, o.Journal, o.Coverage, o.Mutate, o.FailFast = 0, 0, nil, nil, nil, false, false, false
	return p.runnerOptions(&o, nil)
}
