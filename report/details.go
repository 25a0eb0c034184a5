package report

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Details are the lines that explain a case's result: its error, failed
// checks, unmatched calls and output, as the text report shows them under
// the case and the JUnit report as its failure's text.
func (c *Case) Details() []string {
	var out []string
	if tr := c.Trials; tr != nil && c.Status != Passed && c.Status != Skipped {
		out = append(out, fmt.Sprintf("%d of %d trials passed, %d needed; what follows is trial %d's (the JSON report has every trial)", tr.Passed, tr.N, tr.Needed(), tr.Shown))
	}
	if c.Status == Errored {
		out = append(out, "error: "+c.Reason)
	}
	if c.Status == Failed && c.Reason != "" && !explained(c) {
		out = append(out, "failed: "+c.Reason)
	}
	if c.Replay != "" {
		out = append(out, strings.Split(c.Replay, "\n")...)
	}
	for _, ch := range c.Checks {
		if ch.Passed && c.Status != Passed {
			continue
		}
		mark := "ok"
		if !ch.Passed {
			mark = "check failed"
		}
		out = append(out, fmt.Sprintf("%s at %s: %s", mark, ch.At, ch.Check))
		out = append(out, "  "+ch.Message)
	}
	for _, tc := range c.ToolCalls {
		if tc.Outcome != OutcomeUnmatched {
			continue
		}
		out = append(out, fmt.Sprintf("unmatched call in turn %d: %s %s", tc.Turn, tc.Tool, string(tc.Args)))
		out = append(out, "  "+strings.TrimPrefix(tc.Result, "dryfire: "))
	}
	if c.Status != Passed && c.Conversation != nil {
		out = append(out, "conversation:")
		for _, m := range c.Conversation {
			out = append(out, fmt.Sprintf("  %s %d: %s", m.Role, m.Turn, quote(m.Text)))
		}
	}
	if len(c.Script) > 0 {
		out = append(out, "script:")
		for _, s := range c.Script {
			out = append(out, "  "+turnLine(&s))
		}
	}
	if c.Status != Passed {
		out = append(out, fmt.Sprintf("output after %d turn(s): %s", c.Turns, quote(c.Output)))
	}
	if c.Stderr != "" {
		out = append(out, "stderr of the agent (its last lines):")
		for _, l := range strings.Split(c.Stderr, "\n") {
			out = append(out, "  | "+l)
		}
	}
	if c.Verdict != "" && c.Status != Passed {
		out = append(out, drillLines(c)...)
	}
	out = append(out, workspaceLines(c.Workspace)...)
	for _, n := range c.Notes {
		out = append(out, "note: "+n)
	}
	return out
}

// line is a served turn as the text report shows it.
func turnLine(s *ScriptTurn) string {
	turn := "no turn"
	if s.Turn > 0 {
		turn = fmt.Sprintf("turn %d", s.Turn)
	}
	if s.Refused {
		turn += ", refused"
	}
	how := s.API
	if s.Streamed {
		how += ", streamed"
	}
	return fmt.Sprintf("request %d → %s (%s): %s", s.Request, turn, how, s.LastMessage)
}

// explained says whether a failed case's other lines say why it failed:
// a failed check, an unmatched call or the cassette's replay. A case
// failed by what else it did (an isolated network refused, the SDK's
// agent threw) has only its reason to say so.
func explained(c *Case) bool {
	return c.Replay != "" || slices.ContainsFunc(c.Checks, func(ch Check) bool { return !ch.Passed }) ||
		slices.ContainsFunc(c.ToolCalls, func(tc ToolCall) bool { return tc.Outcome == OutcomeUnmatched })
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	r := []rune(s)
	if len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// drillLines sum up a drill that did not pass: its seed and build, then
// what each operation did.
func drillLines(c *Case) []string {
	seed := "?"
	if c.Seed != nil {
		seed = fmt.Sprint(*c.Seed)
	}
	hash := c.BuildHash
	if len(hash) > 19 {
		hash = hash[:19]
	}
	out := []string{fmt.Sprintf("drill: verdict %s, seed %s, build %s (dryfire reproduce re-runs it from the JSON report)", c.Verdict, seed, hash)}
	const most = 20
	for i, e := range c.Evidence {
		if i == most {
			out = append(out, fmt.Sprintf("  … and %d more operations", len(c.Evidence)-most))
			break
		}
		line := fmt.Sprintf("  %d %s %s %s → %s", e.Seq, e.Time, e.Actor, e.Operation, e.Outcome)
		if e.IsError {
			if m, ok := e.Result.(map[string]any); ok {
				line += fmt.Sprintf(" %v", m["code"])
			}
		}
		if e.Override != nil {
			line += fmt.Sprintf(" (override %q, %s scope, match %d)", e.Override.ID, e.Override.Scope, e.Override.MatchCount)
		}
		if e.Fault != nil {
			line += fmt.Sprintf(" (fault %q)", *e.Fault)
		}
		out = append(out, line)
	}
	return out
}

// workspaceLines list a case's workspace changes, each modified or added
// text file with its short diff, and where the workspace was kept.
func workspaceLines(w *Workspace) []string {
	if w == nil {
		return nil
	}
	var out []string
	switch n := len(w.Changes) + w.More; n {
	case 0:
		out = append(out, "workspace: no changes against "+w.Template)
	default:
		out = append(out, fmt.Sprintf("workspace: %d change(s) against %s:", n, w.Template))
	}
	for _, ch := range w.Changes {
		out = append(out, fmt.Sprintf("  %-8s %s", ch.Change, ch.Path))
		if ch.Diff != "" {
			for _, l := range strings.Split(ch.Diff, "\n") {
				out = append(out, "    | "+l)
			}
		}
	}
	if w.More > 0 {
		out = append(out, fmt.Sprintf("  … and %d more", w.More))
	}
	if w.Kept != "" {
		out = append(out, "workspace kept at "+w.Kept)
	}
	return out
}

// Needed is how many of the trials must pass for the case to pass.
func (t *Trials) Needed() int {
	return max(1, int(math.Ceil(t.Threshold*float64(t.N)-1e-9)))
}
