package world

import (
	"encoding/json"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

func (l *loader) override(it yamlpos.Item, scope Scope) *Override {
	return parseOverride(l.doc.Collector, l.w, it.N, it.Val, scope)
}

// parseOverride decodes one toolOverrides rule (already checked against
// the world schema's shape) and checks it against the world: the
// operation exists, a return value matches the output schema, an error
// code is declared, an actorId is an actor. r is the world file's, or
// the suite's whose drill it is.
func parseOverride(r *yamlpos.Collector, w *World, n *yaml.Node, val any, scope Scope) *Override {
	m, ok := val.(map[string]any)
	if !ok {
		return nil
	}
	o := &Override{Scope: scope, Pos: r.Pos(n), Source: m, ID: str(m["id"])}
	_, on := yamlpos.Lookup(n, "operation")
	switch v := m["operation"].(type) {
	case string:
		o.Operation = v
	case map[string]any:
		o.Operation = str(v["packageId"]) + "/" + str(v["operationId"])
		if pn, _ := yamlpos.Lookup(on, "packageId"); pn == nil {
			return nil // reported by the schema
		}
		if _, vn := yamlpos.Lookup(on, "operationId"); vn != nil {
			if w.Packages[str(v["packageId"])] != nil {
				on = vn
			} else {
				_, on = yamlpos.Lookup(on, "packageId")
			}
		}
	default:
		return nil
	}
	op := w.Operations[o.Operation]
	if op == nil {
		pkg, _, _ := strings.Cut(o.Operation, "/")
		if w.Packages[pkg] == nil {
			r.Errorf(on, "tool override: unknown package %q%s", pkg, suggest.DidYouMean(pkg, w.PackageList))
		} else {
			r.Errorf(on, "tool override: unknown operation %q%s", o.Operation, suggest.DidYouMean(o.Operation, w.OpList))
		}
	}
	times, _ := m["times"].(json.Number)
	o.Times, _ = strconv.Atoi(string(times))
	if when, ok := m["when"].(map[string]any); ok {
		_, wn := yamlpos.Lookup(n, "when")
		o.Actor = str(when["actorId"])
		if o.Actor != "" && w.Actors[o.Actor] == nil {
			_, an := yamlpos.Lookup(wn, "actorId")
			r.Errorf(an, "tool override: unknown actor %q%s", o.Actor, suggest.DidYouMean(o.Actor, w.ActorList))
		}
		o.Arguments, _ = when["arguments"].(map[string]any)
		if op != nil && o.Arguments != nil {
			if props := properties(op.Input); props != nil {
				_, argn := yamlpos.Lookup(wn, "arguments")
				for _, k := range sortedKeys(o.Arguments) {
					if _, ok := props[k]; !ok {
						kn, _ := yamlpos.Lookup(argn, k)
						r.Warnf(kn, "when.arguments key %q is not a property of the input of %s%s", k, op.Key, suggest.DidYouMean(k, sortedKeys(props)))
					}
				}
			}
		}
	}
	out, _ := m["outcome"].(map[string]any)
	_, outn := yamlpos.Lookup(n, "outcome")
	o.Kind = OutcomeKind(str(out["kind"]))
	for _, k := range []string{"value", "code", "message", "retryable"} {
		if _, has := out[k]; !has {
			continue
		}
		allowed := map[OutcomeKind]string{OutReturn: "value", OutError: "code message retryable"}[o.Kind]
		if o.Kind != "" && !strings.Contains(allowed, k) {
			kn, _ := yamlpos.Lookup(outn, k)
			r.Errorf(kn, "outcome %s takes no %s%s", o.Kind, k, map[OutcomeKind]string{OutReturn: " (only value)", OutError: " (code, message, retryable)", OutOriginal: " (it runs the normal behavior)"}[o.Kind])
		}
	}
	switch o.Kind {
	case OutReturn:
		o.Value = out["value"]
		if op != nil && op.OutputSchema != nil {
			vn := outn
			if _, v := yamlpos.Lookup(outn, "value"); v != nil {
				vn = v
			}
			for _, lf := range op.OutputSchema.Validate(o.Value) {
				at, _ := yamlpos.At(vn, lf.Path...)
				r.Errorf(at, "return value does not match the output schema of %s: at %s: %s", op.Key, jschema.Pointer(lf.Path), lf.Message)
			}
		}
	case OutError:
		o.Code, o.Message = str(out["code"]), str(out["message"])
		if rt, ok := out["retryable"].(bool); ok {
			o.Retryable = &rt
		}
		if o.Code == "" {
			if outn != nil {
				r.Errorf(outn, "an error outcome needs code: a declared error of the operation")
			}
			break
		}
		if op != nil {
			if _, ok := op.Errors[o.Code]; !ok {
				_, cn := yamlpos.Lookup(outn, "code")
				codes := sortedKeys(op.Errors)
				if len(codes) == 0 {
					r.Errorf(cn, "error %q is not declared by %s, which declares no errors (add it under errors:)", o.Code, op.Key)
				} else {
					r.Errorf(cn, "error %q is not declared by %s%s; declared: %s", o.Code, op.Key, suggest.DidYouMean(o.Code, codes), strings.Join(codes, ", "))
				}
			}
		}
	}
	return o
}
