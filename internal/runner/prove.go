package runner

import (
	"context"
	"encoding/json"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/report"
)

// Drills proven (validate --prove): every case run three times on the
// built-in loop with the script model standing in for its agent (its
// world or mocks, its checks as they are): its reference solution must
// pass, an agent that answers at once and calls nothing must fail, and
// so must one that calls tools at random (seeded).

// noReference is the reason of a case that declares no reference.
const noReference = "no reference solution (a script, or a trajectory check)"

// Prove runs the cases of suites as Proof says (opts' selection,
// concurrency, environment; judge checks replayed only), with seed for
// the random agent.
func Prove(ctx context.Context, suites []*spec.Suite, opts Options, seed uint64) ([]report.Proof, error) {
	opts.Record, opts.Sink, opts.Lean, opts.Progress = cassette.None, nil, false, nil
	var mu sync.Mutex
	refs := map[string][2]string{} // by case: the reference's name, or why there is none
	var runs [3]*report.Report
	for k, stand := range []func(j job) []*spec.Turn{
		func(j job) []*spec.Turn {
			t, name, why := reference(j)
			mu.Lock()
			refs[CaseKey(j.suite.File, j.c.Name)] = [2]string{name, why}
			mu.Unlock()
			return t
		},
		func(job) []*spec.Turn { return []*spec.Turn{{}} },
		func(j job) []*spec.Turn { return randomAgent(j, seed) },
	} {
		o := opts
		o.standIn = stand
		rep, err := Run(ctx, suites, o)
		if err != nil {
			return nil, err
		}
		runs[k] = rep
	}
	var out []report.Proof
	for i := range runs[0].Cases {
		ref := &runs[0].Cases[i]
		if ref.Status == report.Skipped && ref.Reason != noReference {
			continue // skip: true, or interrupted
		}
		r := refs[CaseKey(ref.Suite, ref.Name)]
		p := report.Proof{Suite: ref.Suite, Case: ref.Name, Reference: r[0], NoReference: r[1]}
		if p.Reference != "" {
			p.Ran = ref
		}
		p.Nothing, p.Random = letThrough(&runs[1].Cases[i]), letThrough(&runs[2].Cases[i])
		out = append(out, p)
	}
	return out, nil
}

// letThrough are the checks of a stand-in's case that passed, when the
// case passed; nil when it did not.
func letThrough(c *report.Case) []string {
	if c.Status != report.Passed {
		return nil
	}
	out := []string{}
	for _, ch := range c.Checks {
		out = append(out, ch.Check+" ("+ch.At+")")
	}
	return out
}

// reference is case j's reference solution as a script, its name, or
// why it has none: its script (a scripted case), else its first
// trajectory check's calls, a turn each, then the answer its output
// checks ask for (equals, else every contains). A script that calls a
// tool the suite does not serve (the agent's own) is none: only the
// agent runs those.
func reference(j job) (turns []*spec.Turn, name, why string) {
	s, c := j.suite, j.c
	if t := s.Target; t != nil && t.Kind == "external" {
		return nil, "", "its agent is the test's own code (target: external), whose answer its script does not make"
	}
	if t := s.ScriptOf(c); s.Scripted(c) && len(t) > 0 {
		for _, turn := range t {
			for _, call := range turn.ToolCalls {
				if !slices.ContainsFunc(j.plan.Tools, func(pt plan.Tool) bool { return pt.Name == call.Name }) {
					return nil, "", "its script calls " + strconv.Quote(call.Name) + ", a tool of the agent's own, which only the agent runs"
				}
			}
		}
		return t, "its script", ""
	}
	at, equals := "", (*string)(nil)
	var contains []string
	for _, ch := range c.Expect {
		switch {
		case ch.Kind == spec.CheckTrajectory && at == "":
			at = ch.Pos.FileLine()
			for _, tc := range ch.Trajectory {
				args := map[string]any{}
				if tc.With != nil {
					args, _ = tc.With.Source().(map[string]any)
				}
				turns = append(turns, &spec.Turn{ToolCalls: []*spec.ScriptCall{scriptCall(len(turns)+1, tc.Tool, args)}})
			}
		case ch.Kind == spec.CheckOutput && ch.Equals != nil:
			equals = ch.Equals
		case ch.Kind == spec.CheckOutput && ch.Contains != nil:
			contains = append(contains, *ch.Contains)
		}
	}
	if at == "" {
		return nil, "", noReference
	}
	text := strings.Join(contains, " ")
	if equals != nil {
		text = *equals
	}
	return append(turns, &spec.Turn{Text: text}), "its trajectory at " + at, ""
}

func scriptCall(turn int, name string, args map[string]any) *spec.ScriptCall {
	if args == nil {
		args = map[string]any{}
	}
	return &spec.ScriptCall{ID: "call_" + strconv.Itoa(turn) + "_1", Name: name, Args: args, ArgsJSON: value.Canonical(args)}
}

// randomAgent calls one to three of the case's tools, one a turn, each
// with arguments of its schema's properties' types, then answers "done":
// the same calls for the same seed and case, however its file was named
// (relative or absolute: its base name is hashed, not its path).
func randomAgent(j job, seed uint64) []*spec.Turn {
	h := fnv.New64a()
	h.Write([]byte(filepath.Base(j.suite.File) + "\x00" + j.c.Name))
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	var turns []*spec.Turn
	if tools := j.plan.Tools; len(tools) > 0 {
		for n := 1 + r.IntN(3); len(turns) < n; {
			t := tools[r.IntN(len(tools))]
			args := map[string]any{}
			schema, _ := t.Input.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			for _, k := range slices.Sorted(maps.Keys(props)) {
				p, _ := props[k].(map[string]any)
				switch p["type"] {
				case "integer", "number":
					args[k] = json.Number(strconv.Itoa(r.IntN(1000)))
				case "boolean":
					args[k] = r.IntN(2) == 0
				case "array":
					args[k] = []any{}
				case "object":
					args[k] = map[string]any{}
				default:
					args[k] = "r" + strconv.Itoa(r.IntN(1000))
				}
			}
			turns = append(turns, &spec.Turn{ToolCalls: []*spec.ScriptCall{scriptCall(len(turns)+1, t.Name, args)}})
		}
	}
	return append(turns, &spec.Turn{Text: "done"})
}
