package runner

import (
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/report"
)

// ModelFaults are a case's declared model faults (model_faults), as the
// model endpoint and the built-in loop's transport serve them; nil when
// it declares none.
func ModelFaults(c *spec.Case) []model.Fault {
	if len(c.ModelFaults) == 0 {
		return nil
	}
	out := make([]model.Fault, len(c.ModelFaults))
	for i, f := range c.ModelFaults {
		out[i] = model.Fault{Request: f.Request, Status: f.Status, RetryAfter: f.RetryAfter, Drop: f.Drop, CutAfter: f.CutAfter, Delay: f.Delay}
	}
	return out
}

// reportFaults puts the faults served into the case's report, with a note
// for each, and one for the declared faults whose request never came.
func reportFaults(c *report.Case, declared []spec.ModelFault, served []model.Injected) {
	seen := map[int]bool{}
	for _, s := range served {
		f := report.ModelFault{Request: s.Fault.Request, API: string(s.API), Fault: s.Fault.String(), Retried: s.Retried}
		switch {
		case s.Whole:
			f.Fault += fmt.Sprintf(" (the answer had no more than %d events: it went out whole)", s.Fault.CutAfter)
		case s.Body:
			f.Fault = "answer cut half-way through its body (no stream), connection closed"
			if s.Fault.Delay > 0 {
				f.Fault = fmt.Sprintf("delayed %d ms, then %s", s.Fault.Delay.Milliseconds(), f.Fault)
			}
		}
		c.ModelFaults = append(c.ModelFaults, f)
		seen[f.Request] = true
		then := "the client did not send it again"
		if f.Retried {
			then = "the client sent it again"
		}
		c.Notes = append(c.Notes, fmt.Sprintf("model request %d (%s): %s, a declared fault; %s", f.Request, wire.API(s.API).Name(), f.Fault, then))
	}
	for _, d := range declared {
		if !seen[d.Request] {
			c.Notes = append(c.Notes, fmt.Sprintf("model_faults: model request %d never came: the agent made fewer model requests", d.Request))
		}
	}
}
