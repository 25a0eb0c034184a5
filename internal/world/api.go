package world

import (
	"fmt"
	"slices"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// ParseOverrides decodes toolOverrides rules given as JSON values (from a
// build, the Go binding or a suite) in a scope. Every problem is in the
// error, one a line.
func (w *World) ParseOverrides(v any, scope Scope) ([]*Override, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("toolOverrides must be a list, not %s", value.TypeName(v))
	}
	doc := yamlpos.ParseDocument("toolOverrides", []byte(value.Canonical(list)), "toolOverrides", "")
	var out []*Override
	for _, it := range yamlpos.Items(doc.Root, doc.Value) {
		m, ok := it.Val.(map[string]any)
		if !ok {
			doc.Errorf(it.N, "a tool override must be a mapping, not %s", yamlpos.Describe(it.Val))
			continue
		}
		if o := parseOverride(doc.Collector, w, it.N, m, scope); o != nil {
			switch o.Kind {
			case OutReturn, OutError, OutOriginal:
			default:
				doc.Errorf(it.N, "outcome kind %q: want return, error or original", o.Kind)
			}
			out = append(out, o)
		} else {
			doc.Errorf(it.N, "a tool override needs operation ({packageId, operationId} or package/operation) and outcome")
		}
	}
	if ds := doc.Diagnostics(); ds.HasErrors() {
		return nil, onlyErrors(ds)
	}
	return out, nil
}

// ParseSetup decodes an inline scenario (a complete starting setup:
// state, budgets, faults, events; its toolOverrides rank as per-test
// rules) given as JSON values.
func (w *World) ParseSetup(m map[string]any) (*Setup, error) {
	doc := yamlpos.ParseDocument("scenario", []byte(value.Canonical(m)), "scenario", "")
	l := &loader{doc: doc, w: w, opts: &LoadOptions{}}
	s := &Setup{Name: "(inline)", Source: m}
	for _, q := range yamlpos.Pairs(doc.Root, doc.Value) {
		switch q.Key() {
		case "state":
			s.State = map[string]map[string]any{}
			for _, pk := range yamlpos.Pairs(q.V, q.Val) {
				if w.Packages[pk.Key()] == nil {
					doc.Errorf(pk.K, "unknown package %q", pk.Key())
					continue
				}
				st, _ := pk.Val.(map[string]any)
				s.State[pk.Key()] = st
			}
		case "budgets":
			s.Budgets = []Budget{}
		case "faults":
			s.Faults = []Fault{}
		case "events":
			s.Events = []Event{}
		case "toolOverrides":
		default:
			doc.Errorf(q.K, "unknown key %q in a scenario; expected state, budgets, faults, events or toolOverrides", q.Key())
		}
	}
	l.setupLists(s, doc.Root, doc.Value, ScopeTest)
	if ds := doc.Diagnostics(); ds.HasErrors() {
		return nil, onlyErrors(ds)
	}
	if s.State == nil && (s.Budgets != nil || s.Faults != nil || s.Events != nil) {
		s.State = map[string]map[string]any{}
	}
	return s, nil
}

func onlyErrors(ds yamlpos.Diagnostics) error {
	return slices.DeleteFunc(slices.Clone(ds), func(d yamlpos.Diagnostic) bool { return d.Severity != yamlpos.Error })
}
