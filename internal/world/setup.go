package world

import (
	"errors"
	"maps"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// SetupError is a per-test setup given as JSON values that does not fit
// the world: every problem, each naming its key path under "setup".
type SetupError struct{ Problems []string }

func (e *SetupError) Error() string { return strings.Join(e.Problems, "\n") }

// ApplySetup applies a per-test setup given as JSON values (a test's own
// setup, as the SDKs send it) to d, with exactly the meaning of a case's
// setup: key in a suite file: scenario is a complete inline starting
// setup whose toolOverrides rank as per-test rules (it replaces the
// case's own), and tools.behaviorOverrides pick other behavior functions
// (over the case's). The error is a *SetupError.
func (w *World) ApplySetup(d *Drill, setup any) error {
	if setup == nil {
		return nil
	}
	m, ok := setup.(map[string]any)
	if !ok {
		return &SetupError{[]string{"setup: must be an object, not " + value.TypeName(setup)}}
	}
	doc := yamlpos.ParseDocument("setup", []byte(value.Canonical(m)), "setup", "")
	r := &yamlpos.Collector{File: "setup"}
	for _, p := range yamlpos.Pairs(doc.Root, doc.Value) {
		switch p.Key() {
		case "scenario":
			if _, ok := p.Val.(map[string]any); !ok {
				r.Errorf(p.V, "must be an object (a complete starting setup: state, budgets, faults, events, toolOverrides), not %s", value.TypeName(p.Val))
			}
		case "tools":
			tm, ok := p.Val.(map[string]any)
			if !ok {
				r.Errorf(p.V, "must be an object, not %s", value.TypeName(p.Val))
				break
			}
			for _, q := range yamlpos.Pairs(p.V, tm) {
				if q.Key() != "behaviorOverrides" {
					r.Errorf(q.K, "unknown key %q in setup.tools%s; expected behaviorOverrides", q.Key(), suggest.DidYouMean(q.Key(), []string{"behaviorOverrides"}))
					continue
				}
				bo, ok := q.Val.(map[string]any)
				if !ok {
					r.Errorf(q.V, "must be an object of package/operation → behavior function, not %s", value.TypeName(q.Val))
					continue
				}
				for _, b := range yamlpos.Pairs(q.V, bo) {
					if _, ok := b.Val.(string); !ok {
						r.Errorf(b.V, "must be the name of a behavior function, not %s", value.TypeName(b.Val))
					}
				}
			}
		default:
			r.Errorf(p.K, "unknown key %q in setup%s; expected scenario or tools", p.Key(), suggest.DidYouMean(p.Key(), []string{"scenario", "tools"}))
		}
	}
	if len(r.List) == 0 {
		d.BehaviorOverrides = maps.Clone(d.BehaviorOverrides)
		attachSetup(r, w, &spec.Case{Setup: m, SetupNode: doc.Root}, d)
	}
	var problems []string
	for _, dg := range r.List {
		if dg.Severity != yamlpos.Error {
			continue
		}
		_, path, _ := yamlpos.PathAt(doc.Root, dg.Pos.Line, dg.Pos.Col)
		problems = append(problems, "setup"+path+": "+dg.Message)
	}
	if len(problems) > 0 {
		return &SetupError{problems}
	}
	return nil
}

// reportSetup reports the problems ParseSetup found in an inline scenario
// (rest, the scenario without its toolOverrides) at their nodes under sn.
func reportSetup(r *yamlpos.Collector, sn *yaml.Node, rest map[string]any, err error) {
	var ds yamlpos.Diagnostics
	if !errors.As(err, &ds) {
		r.Errorf(sn, "%v", err)
		return
	}
	doc := yamlpos.ParseDocument("scenario", []byte(value.Canonical(rest)), "scenario", "")
	for _, dg := range ds {
		at := sn
		if steps, _, ok := yamlpos.PathAt(doc.Root, dg.Pos.Line, dg.Pos.Col); ok {
			v, k := yamlpos.At(sn, steps...)
			if k != nil && len(steps) > 0 && isKeyMessage(dg.Message) {
				v = k
			}
			at = v
		}
		r.Errorf(at, "%s", dg.Message)
	}
}

// isKeyMessage: messages about a key itself point at the key.
func isKeyMessage(msg string) bool {
	return strings.HasPrefix(msg, "unknown key") || strings.HasPrefix(msg, "unknown package")
}
