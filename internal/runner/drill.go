package runner

import (
	"encoding/json"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// newDrill starts a case's world. The seed is the run's when given, else
// the case's, else the world's.
func newDrill(sw *world.SuiteWorld, suite string, c *spec.Case, opts Options) (*world.Instance, error) {
	if opts.Builds != nil {
		if b, seed, ok := opts.Builds(suite, c.Name); ok {
			return world.FromBuild(b, seed)
		}
	}
	seed := opts.Seed
	d := *sw.Drills[c]
	d.Seed = sw.World.Seed
	if c.Seed != nil {
		d.Seed = *c.Seed
	}
	if seed != nil {
		d.Seed = *seed
	}
	return sw.World.New(d)
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
	c.State = in.State()
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

// worldToolDefs: each operation is a tool, in operation order.
func worldToolDefs(w *world.World) []model.ToolDef {
	defs := make([]model.ToolDef, 0, len(w.OpList))
	for _, key := range w.OpList {
		op := w.Operations[key]
		schema := op.Input
		if schema == nil {
			schema = openObject
		}
		defs = append(defs, model.ToolDef{Name: op.Tool, Description: op.Description, InputSchema: schema})
	}
	return defs
}
