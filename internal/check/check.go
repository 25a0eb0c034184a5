// Package check evaluates a case's expectations against what happened.
// Every result says what was expected and what happened, so that a failure
// reads without opening the transcript.
package check

import (
	"fmt"
	"sort"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Result is the verdict of one check.
type Result struct {
	Check   string // the check as written
	At      string // FILE:LINE of the check
	Passed  bool
	Message string
}

// Facts is what a case produced.
type Facts struct {
	Calls  []tool.Record
	Output string
	Turns  int
}

// Evaluate runs every check in order.
func Evaluate(checks []*spec.Check, f *Facts) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		r := Result{Check: c.Source, At: c.Pos.FileLine()}
		r.Passed, r.Message = one(c, f)
		out = append(out, r)
	}
	return out
}

func one(c *spec.Check, f *Facts) (bool, string) {
	switch c.Kind {
	case spec.CheckCalled:
		return called(c, f)
	case spec.CheckNotCalled:
		return notCalled(c, f)
	case spec.CheckOrder:
		return order(c, f)
	case spec.CheckOutput:
		return output(c, f)
	case spec.CheckMaxTurns:
		if f.Turns <= c.MaxTurns {
			return true, fmt.Sprintf("took %d model turn(s), at most %d allowed", f.Turns, c.MaxTurns)
		}
		return false, fmt.Sprintf("expected at most %d model turn(s); took %d", c.MaxTurns, f.Turns)
	case spec.CheckNoErrors:
		return noErrors(f)
	}
	return false, fmt.Sprintf("unknown check %q", c.Kind)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// matching splits the calls to c.Tool into those whose arguments match
// c.With and the rest.
func matching(c *spec.Check, f *Facts) (match, other []tool.Record) {
	for _, r := range f.Calls {
		if r.Name != c.Tool {
			continue
		}
		if c.With == nil || c.With.Match(r.Args) {
			match = append(match, r)
		} else {
			other = append(other, r)
		}
	}
	return
}

func subject(c *spec.Check) string {
	if c.With == nil {
		return c.Tool
	}
	return fmt.Sprintf("%s with %s", c.Tool, value.Canonical(c.With.Source()))
}

func called(c *spec.Check, f *Facts) (bool, string) {
	match, other := matching(c, f)
	n := len(match)
	var want string
	var ok bool
	switch {
	case c.Times != nil:
		want, ok = "exactly "+plural(*c.Times, "time", "times"), n == *c.Times
	case c.Min != nil && c.Max != nil:
		want, ok = fmt.Sprintf("between %d and %d times", *c.Min, *c.Max), n >= *c.Min && n <= *c.Max
	case c.Min != nil:
		want, ok = "at least "+plural(*c.Min, "time", "times"), n >= *c.Min
	case c.Max != nil:
		want, ok = "at most "+plural(*c.Max, "time", "times"), n <= *c.Max
	default:
		want, ok = "at least once", n >= 1
	}
	got := fmt.Sprintf("called %s", plural(n, "time", "times"))
	if ok {
		return true, fmt.Sprintf("%s %s", subject(c), got)
	}
	msg := fmt.Sprintf("expected %s to be called %s; %s", subject(c), want, got)
	if n == 0 && len(other) == 0 {
		msg += callsSummary(f)
	}
	if len(other) > 0 {
		msg += fmt.Sprintf(" (%s to %s with other arguments", plural(len(other), "call", "calls"), c.Tool)
		best, mm := closestCall(c, other)
		msg += fmt.Sprintf("; closest, turn %d, differs at %s: expected %s, got %s)", best.Turn, mm.Path, mm.Expected, mm.Got)
	}
	return false, msg
}

func closestCall(c *spec.Check, calls []tool.Record) (tool.Record, value.Mismatch) {
	bestN := -1
	var best tool.Record
	var bestM value.Mismatch
	for _, r := range calls {
		n, mm := c.With.Diff(r.Args)
		if bestN < 0 || n < bestN {
			bestN, best, bestM = n, r, mm
		}
	}
	return best, bestM
}

// callsSummary lists the tools that were called, for a check that found none.
func callsSummary(f *Facts) string {
	if len(f.Calls) == 0 {
		return "; no tools were called"
	}
	counts := map[string]int{}
	var names []string
	for _, r := range f.Calls {
		if counts[r.Name] == 0 {
			names = append(names, r.Name)
		}
		counts[r.Name]++
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s ×%d", n, counts[n])
	}
	return "; calls made: " + strings.Join(parts, ", ")
}

func notCalled(c *spec.Check, f *Facts) (bool, string) {
	match, _ := matching(c, f)
	if len(match) == 0 {
		return true, fmt.Sprintf("%s was not called", subject(c))
	}
	first := match[0]
	return false, fmt.Sprintf("expected %s not to be called; called %s, first in turn %d with %s",
		subject(c), plural(len(match), "time", "times"), first.Turn, value.Truncate(argsText(first), 200))
}

func argsText(r tool.Record) string {
	if s, ok := r.Args.(string); ok && r.Args == any(r.Call.Args) {
		return s
	}
	return value.Canonical(r.Args)
}

func order(c *spec.Check, f *Facts) (bool, string) {
	seq := make([]string, len(f.Calls))
	for i, r := range f.Calls {
		seq[i] = r.Name
	}
	i := 0
	for _, name := range seq {
		if i < len(c.Order) && name == c.Order[i] {
			i++
		}
	}
	want := strings.Join(c.Order, " → ")
	if i == len(c.Order) {
		return true, fmt.Sprintf("called in order %s", want)
	}
	got := strings.Join(seq, " → ")
	if got == "" {
		got = "no calls"
	}
	var why string
	if i == 0 {
		why = fmt.Sprintf("%s was never called", c.Order[0])
	} else {
		why = fmt.Sprintf("no call to %s after %s", c.Order[i], c.Order[i-1])
	}
	return false, fmt.Sprintf("expected calls in order %s; %s (calls: %s)", want, why, got)
}

func quoteOut(s string) string {
	return value.Truncate(value.Canonical(s), 300)
}

func output(c *spec.Check, f *Facts) (bool, string) {
	var passed []string
	out := f.Output
	if c.Contains != nil {
		if !strings.Contains(out, *c.Contains) {
			return false, fmt.Sprintf("expected output to contain %s; output was %s", value.Canonical(*c.Contains), quoteOut(out))
		}
		passed = append(passed, "contains "+value.Canonical(*c.Contains))
	}
	if c.Regex != nil {
		if !c.Regex.MatchString(out) {
			return false, fmt.Sprintf("expected output to match /%s/; output was %s", c.Regex, quoteOut(out))
		}
		passed = append(passed, fmt.Sprintf("matches /%s/", c.Regex))
	}
	if c.Equals != nil {
		if out != *c.Equals {
			return false, fmt.Sprintf("expected output to equal %s; output was %s%s", quoteOut(*c.Equals), quoteOut(out), firstDifference(*c.Equals, out))
		}
		passed = append(passed, "equals the expected text")
	}
	if c.JSONSchema != nil {
		v, err := value.Parse([]byte(out))
		if err != nil {
			return false, fmt.Sprintf("expected output to be JSON matching json_schema; it is not JSON (%v); output was %s", err, quoteOut(out))
		}
		if leaves := c.JSONSchema.Validate(v); len(leaves) > 0 {
			msgs := make([]string, 0, len(leaves))
			for _, l := range leaves {
				msgs = append(msgs, fmt.Sprintf("%s: %s", jsonPath(l.Path), l.Message))
			}
			sort.Strings(msgs)
			return false, fmt.Sprintf("expected output to match json_schema; %s; output was %s", strings.Join(msgs, "; "), quoteOut(out))
		}
		passed = append(passed, "matches json_schema")
	}
	return true, "output " + strings.Join(passed, ", ")
}

func jsonPath(path []string) string {
	s := "$"
	for _, p := range path {
		if p != "" && strings.Trim(p, "0123456789") == "" {
			s += "[" + p + "]"
		} else {
			s += value.PathKey(p)
		}
	}
	return s
}

// firstDifference points at where two texts part, for equals failures.
func firstDifference(want, got string) string {
	w, g := []rune(want), []rune(got)
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	return fmt.Sprintf(" (they differ from character %d)", i+1)
}

func noErrors(f *Facts) (bool, string) {
	var errs []string
	for _, r := range f.Calls {
		if r.Result.IsError {
			errs = append(errs, fmt.Sprintf("%s in turn %d: %s", r.Name, r.Turn, value.Truncate(r.Result.Content, 120)))
		}
	}
	if len(errs) == 0 {
		return true, fmt.Sprintf("no tool errors in %s", plural(len(f.Calls), "call", "calls"))
	}
	return false, fmt.Sprintf("expected no tool errors; %s returned errors: %s", plural(len(errs), "call", "calls"), strings.Join(errs, "; "))
}
