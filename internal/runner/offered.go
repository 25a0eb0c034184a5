package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The tools an agent.command program offers its model, read off the
// model wire (model.Outcome.Offered), compared with those the suite
// serves (agent.offered_tools).

// errOffered fails a case under agent.offered_tools: strict.
var errOffered = errors.New("the agent's model requests do not offer the suite's tools as declared (agent.offered_tools: strict; the notes say how)")

// offeredNotes compares the tools the case's model requests offered
// (named as names maps them) with the suite's: a tool never offered, or offered with another description
// or input schema than the suite declares, is a note with the
// differences. It says whether any differed; nothing is compared when no
// request offered anything it could read, or under offered_tools: off.
func offeredNotes(j job, o *model.Outcome, names *tool.Names) (notes []string, differs bool) {
	if j.suite.Agent.OfferedTools == "off" || o.Turns == 0 {
		return nil, false
	}
	offered := map[string]model.ToolDef{}
	for _, d := range o.Offered {
		if name, ok := names.Suite(d.Name); ok {
			if _, dup := offered[name]; !dup {
				offered[name] = d
			}
		}
	}
	for _, t := range j.plan.Tools {
		d, ok := offered[t.Name]
		switch {
		case !ok && o.OfferedOver:
			notes = append(notes, fmt.Sprintf("offered tools: %q was not among the first %d tools the model requests offered (model.MaxOffered); it is not compared", t.Name, model.MaxOffered))
			continue
		case !ok && t.Pos.Line > 0:
			notes = append(notes, fmt.Sprintf("offered tools: %q, declared at %s, was never offered to the model (%s)", t.Name, t.Pos.FileLine(), plural(o.Turns, "request", "requests")))
		case !ok:
			notes = append(notes, fmt.Sprintf("offered tools: %q is mocked but was never offered to the model (%s)", t.Name, plural(o.Turns, "request", "requests")))
		default:
			diffs := t.Diff(offeredAsDeclared(j.suite.Agent.CLI, t, d), true)
			if len(diffs) == 0 {
				continue
			}
			notes = append(notes, fmt.Sprintf("offered tools: %q is offered otherwise than declared at %s: %s", d.Name, t.Pos.FileLine(), strings.Join(diffs, "; ")))
		}
		differs = true
	}
	return notes, differs
}
