package runner

import (
	"encoding/json"
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/report"
)

// CompareDrills lists where a re-run differs from the stored drill: the
// build hash, the evidence (the first differing field of each entry, then
// entries one has beyond the other) and the verdict, first difference
// first, at most about 10.
func CompareDrills(old, now *report.Case) []string {
	var diffs []string
	if old.BuildHash != now.BuildHash {
		diffs = append(diffs, fmt.Sprintf("build_hash: stored %s, re-run %s", old.BuildHash, now.BuildHash))
	}
	oldEv := evidenceValues(old)
	newEv := evidenceValues(now)
	common := min(len(oldEv), len(newEv))
	for i := 0; i < common && len(diffs) < 10; i++ {
		if d := firstDiff(oldEv[i], newEv[i], fmt.Sprintf("evidence[%d]", i)); d != "" {
			diffs = append(diffs, d)
		}
	}
	switch {
	case len(newEv) < len(oldEv):
		diffs = append(diffs, fmt.Sprintf("evidence[%d]: the re-run stopped there, %s short of the stored drill, which went on with %s", common, plural(len(oldEv)-common, "entry", "entries"), value.Truncate(value.Canonical(oldEv[common]), 200)))
	case len(newEv) > len(oldEv):
		diffs = append(diffs, fmt.Sprintf("evidence[%d]: the stored drill stopped there; the re-run made %s more, first %s", common, plural(len(newEv)-common, "entry", "entries"), value.Truncate(value.Canonical(newEv[common]), 200)))
	}
	if old.Verdict != now.Verdict {
		d := fmt.Sprintf("verdict: stored %s, re-run %s", old.Verdict, now.Verdict)
		if now.Reason != "" {
			d += " (" + value.Truncate(now.Reason, 200) + ")"
		}
		diffs = append(diffs, d)
	}
	return diffs
}

func evidenceValues(c *report.Case) []any {
	b, _ := json.Marshal(c.Evidence)
	v, _ := value.Parse(b)
	a, _ := v.([]any)
	return a
}

// evidenceDiff compares two drills' evidence: objects key by key (a key
// one lacks is null), anything else whole.
var evidenceDiff = value.Differ{MissingIsNull: true}

// firstDiff is the first path where two JSON values differ, or "".
func firstDiff(a, b any, path string) string {
	out := ""
	evidenceDiff.Diffs(path, a, b, func(d value.Diff) bool {
		out = fmt.Sprintf("%s: stored %s, re-run %s", d.Path, value.Truncate(value.Canonical(d.A), 120), value.Truncate(value.Canonical(d.B), 120))
		return false
	})
	return out
}
