package dryfire

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Reproduction compares a stored drill with its re-run.
type Reproduction struct {
	Suite, Name string
	BuildHash   string
	Seed        int64
	Identical   bool
	// Differences says where the evidence (or verdict) differs, first
	// difference first.
	Differences []string
	Rerun       *CaseResult
}

// Reproduce re-runs every drill of a stored JSON report from exactly the
// build and seed it recorded (not from the world file as it is now) and
// compares the evidence and the verdict. The suites named by the report
// are loaded for the agent side (the script, the checks).
func Reproduce(ctx context.Context, reportJSON []byte, opts Options) ([]Reproduction, error) {
	var stored report.Report
	if err := json.Unmarshal(reportJSON, &stored); err != nil {
		return nil, fmt.Errorf("reading the report: %w", err)
	}
	type key struct{ suite, name string }
	drills := map[key]*report.Case{}
	var order []key
	var suites []string
	seenSuite := map[string]bool{}
	for i := range stored.Cases {
		c := &stored.Cases[i]
		if c.BuildHash == "" || c.Seed == nil || len(c.Build) == 0 {
			continue
		}
		k := key{c.Suite, c.Name}
		drills[k] = c
		order = append(order, k)
		if !seenSuite[c.Suite] {
			seenSuite[c.Suite] = true
			suites = append(suites, c.Suite)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("the report has no drills (cases of world suites with build_hash and seed)")
	}
	p, err := LoadWith(opts, suites...)
	if err != nil {
		return nil, err
	}
	defer p.Close(ctx, nil)
	names := make([]string, 0, len(order))
	for _, k := range order {
		names = append(names, regexp.QuoteMeta(k.name))
	}
	ro := runner.Options{
		Impl:   p.impl,
		Filter: regexp.MustCompile("^(" + strings.Join(names, "|") + ")$"),
		Builds: func(suite, name string) (string, int64, bool) {
			c, ok := drills[key{suite, name}]
			if !ok {
				return "", 0, false
			}
			return string(c.Build), *c.Seed, true
		},
	}
	rep, err := runner.Run(ctx, p.suites, ro)
	if err != nil {
		return nil, err
	}
	var out []Reproduction
	for i := range rep.Cases {
		c := &rep.Cases[i]
		old, ok := drills[key{c.Suite, c.Name}]
		if !ok {
			continue
		}
		r := Reproduction{Suite: c.Suite, Name: c.Name, BuildHash: old.BuildHash, Seed: *old.Seed, Rerun: c}
		r.Differences = compareDrills(old, c)
		r.Identical = len(r.Differences) == 0
		out = append(out, r)
		delete(drills, key{c.Suite, c.Name})
	}
	for _, k := range order {
		if _, missing := drills[k]; missing {
			out = append(out, Reproduction{Suite: k.suite, Name: k.name, BuildHash: drills[k].BuildHash, Differences: []string{"the suite no longer has this case"}})
		}
	}
	return out, nil
}

// compareDrills lists where a re-run differs from the stored drill.
func compareDrills(old, now *report.Case) []string {
	var diffs []string
	if old.BuildHash != now.BuildHash {
		diffs = append(diffs, fmt.Sprintf("build_hash: stored %s, re-run %s", old.BuildHash, now.BuildHash))
	}
	oldEv := evidenceValues(old)
	newEv := evidenceValues(now)
	n := max(len(oldEv), len(newEv))
	for i := 0; i < n; i++ {
		switch {
		case i >= len(oldEv):
			diffs = append(diffs, fmt.Sprintf("evidence[%d]: not in the stored drill; the re-run made %s", i, value.Truncate(value.Canonical(newEv[i]), 200)))
		case i >= len(newEv):
			diffs = append(diffs, fmt.Sprintf("evidence[%d]: the re-run stopped before %s", i, value.Truncate(value.Canonical(oldEv[i]), 200)))
		default:
			if d := firstDiff(oldEv[i], newEv[i], fmt.Sprintf("evidence[%d]", i)); d != "" {
				diffs = append(diffs, d)
			}
		}
		if len(diffs) >= 10 {
			break
		}
	}
	if old.Verdict != now.Verdict {
		diffs = append(diffs, fmt.Sprintf("verdict: stored %s, re-run %s", old.Verdict, now.Verdict))
	}
	return diffs
}

func evidenceValues(c *report.Case) []any {
	b, _ := json.Marshal(c.Evidence)
	v, _ := value.Parse(b)
	a, _ := v.([]any)
	return a
}

// firstDiff is the first path where two JSON values differ, or "".
func firstDiff(a, b any, path string) string {
	if value.Equal(a, b) {
		return ""
	}
	am, ok1 := a.(map[string]any)
	bm, ok2 := b.(map[string]any)
	if ok1 && ok2 {
		keys := map[string]bool{}
		for k := range am {
			keys[k] = true
		}
		for k := range bm {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			if d := firstDiff(am[k], bm[k], path+value.PathKey(k)); d != "" {
				return d
			}
		}
	}
	return fmt.Sprintf("%s: stored %s, re-run %s", path, value.Truncate(value.Canonical(a), 120), value.Truncate(value.Canonical(b), 120))
}
