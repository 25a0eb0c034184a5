package runner

import (
	"encoding/json"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// newDrill starts a case's world: from the build Options.Builds gives,
// else the case's drill with the run's seed over the case's and the
// world's.
func newDrill(j job, opts Options) (*world.Instance, error) {
	if opts.Builds != nil {
		if b, seed, ok := opts.Builds(j.suite.File, j.c.Name); ok {
			return world.FromBuild(b, seed)
		}
	}
	in, err := j.plan.Suite.World.World.New(j.plan.Drill(opts.Seed))
	if err == nil {
		err = j.plant.plantRecord(in)
	}
	return in, err
}

// endDrill ends a case's drill, when it has one (a bound function or a
// late call then fails with DRILL_ENDED), fills the drill fields of its
// report and returns what the checks read; nil without a drill.
func endDrill(c *report.Case, in *world.Instance) *check.WorldFacts {
	if in == nil {
		return nil
	}
	in.End()
	return drillFacts(in, c)
}

// drillFacts fills the drill fields of a case's report and returns what
// the checks read.
func drillFacts(in *world.Instance, c *report.Case) *check.WorldFacts {
	b := in.Build()
	seed := in.Seed()
	c.Seed, c.BuildHash, c.Build = &seed, b.Hash, json.RawMessage(b.JSON)
	c.InitialState, c.State = in.InitialState(), in.State()
	c.Evidence = in.Evidence()
	c.Events = in.Emitted()
	if c.Evidence == nil {
		c.Evidence = []world.Evidence{}
	}
	if c.Events == nil {
		c.Events = []world.Emitted{}
	}
	return &check.WorldFacts{State: c.State, Evidence: c.Evidence, Emitted: c.Events, Ordered: in.Ordered}
}
