// Package check evaluates a case's expectations against what happened.
// Every result says what was expected and what happened, so that a failure
// reads without opening the transcript.
package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Result is the verdict of one check.
type Result struct {
	Check   string // the check as written
	At      string // FILE:LINE of the check
	Passed  bool
	Message string
	// Invariant: the check is one of the suite's invariants.
	Invariant bool
	// Verdict is a judge check's verdict, when it gave one.
	Verdict *Verdict
}

// Facts is what a case produced.
type Facts struct {
	Calls  []tool.Record
	Output string
	Turns  int
	// World is the drill's world at the end (world suites only).
	World *WorldFacts
	// Workspace is the case's workspace directory after the run ("" when
	// it has none): what file checks read.
	Workspace string
	// Replies are the agent's replies of a conversation (a case with
	// user:), one per user message; nil for a case of one reply (Output).
	Replies []string
	// Verdicts are the answers of the case's judge checks, by their
	// spec.Judge.Index.
	Verdicts map[int]*Verdict
	// MCP are the agent's resource reads, prompt gets and completions.
	MCP []tool.MCPUse
	// Commands are how the command checks' commands ran, by check.
	Commands map[*spec.Check]*CommandRun
}

// Evaluate runs every check in order.
func Evaluate(checks []*spec.Check, f *Facts) []Result {
	out := make([]Result, 0, len(checks))
	for _, c := range checks {
		r := Result{Check: c.Source, At: c.Pos.FileLine(), Invariant: c.Invariant}
		r.Passed, r.Message = one(c, f)
		if c.Kind == spec.CheckJudge && c.Judge != nil {
			if v := f.Verdicts[c.Judge.Index]; v != nil && v.Problem == "" {
				r.Verdict = v
			}
		}
		out = append(out, r)
	}
	return out
}

func one(c *spec.Check, f *Facts) (bool, string) {
	if c.Where != "" {
		own := c.Where == spec.WhereOwn
		f = keepCalls(f, func(r tool.Record) bool { return r.Own == own })
	}
	switch {
	case c.Kind == spec.CheckState, c.Kind == spec.CheckEvent, c.Operation != "":
		return worldCheck(c, f)
	}
	f = keepCalls(f, func(r tool.Record) bool { return r.Actor == c.Actor })
	switch c.Kind {
	case spec.CheckCalled:
		return called(c, f)
	case spec.CheckNotCalled:
		return notCalled(c, f)
	case spec.CheckOrder:
		return order(c, f)
	case spec.CheckTrajectory:
		return trajectory(c, f)
	case spec.CheckPolicy:
		return policy(c, f)
	case spec.CheckNotLeaked:
		return notLeaked(c, f)
	case spec.CheckJudge:
		return judge(c, f)
	case spec.CheckOutput:
		return output(c, f)
	case spec.CheckMaxTurns:
		want := "at most " + termtext.Count(c.MaxTurns, "model turn")
		if f.Turns <= c.MaxTurns {
			return true, fmt.Sprintf("took %s (expected %s)", termtext.Count(f.Turns, "model turn"), want)
		}
		return false, fmt.Sprintf("expected %s; took %d", want, f.Turns)
	case spec.CheckNoErrors:
		return noErrors(f)
	case spec.CheckFile:
		return fileCheck(c, f)
	case spec.CheckCommand:
		return commandCheck(c, f)
	case spec.CheckRead, spec.CheckNotRead, spec.CheckPrompted:
		return mcpCheck(c, f)
	case spec.CheckElicited, spec.CheckSampled:
		return askCheck(c, f)
	}
	return false, fmt.Sprintf("unknown check %q", c.Kind)
}

// keepCalls is f with only the calls keep says yes to: those the agent
// ran itself (where: own) or dryfire served, or those of one actor ("" the
// agent's, else a simulated user's made as that world actor: dual control).
func keepCalls(f *Facts, keep func(tool.Record) bool) *Facts {
	drop := func(r tool.Record) bool { return !keep(r) }
	if !slices.ContainsFunc(f.Calls, drop) {
		return f
	}
	g := *f
	g.Calls = slices.DeleteFunc(slices.Clone(f.Calls), drop)
	return &g
}

func appendPlural(b []byte, n int, one, many string) []byte {
	b = append(strconv.AppendInt(b, int64(n), 10), ' ')
	if n == 1 {
		return append(b, one...)
	}
	return append(b, many...)
}

// matching splits the calls to c.Tool into those whose arguments match
// c.With and the rest.
func matching(c *spec.Check, f *Facts) (match, other []tool.Record) {
	for _, r := range f.Calls {
		if r.Name != c.Tool {
			continue
		}
		if callMatches(c, &r) {
			match = append(match, r)
		} else {
			other = append(other, r)
		}
	}
	return
}

func subject(c *spec.Check) string { return string(appendSubject(nil, c)) }

func appendSubject(b []byte, c *spec.Check) []byte {
	b = append(b, c.Tool...)
	if c.With != nil {
		b = canonical.Append(append(b, " with "...), c.With.Source())
	}
	for i, m := range c.Matching {
		switch {
		case i == 0 && c.With != nil:
			b = append(b, " and "...)
		case i == 0:
			b = append(b, " with "...)
		default:
			b = append(b, ", "...)
		}
		b = append(append(append(append(b, m.Arg...), " matching /"...), m.Src...), '/')
	}
	if c.Actor != "" {
		b = append(append(b, " by the user as "...), c.Actor...)
	}
	return b
}

// callMatches says whether call r's arguments match check c's with and
// matching.
func callMatches(c *spec.Check, r *tool.Record) bool {
	if c.With != nil && !c.With.Match(r.Args) {
		return false
	}
	for _, m := range c.Matching {
		if _, ok := argMismatch(m, r); ok {
			return false
		}
	}
	return true
}

// argMismatch says how argument m.Arg of call r fails to match m.Re (ok),
// as a value mismatch.
func argMismatch(m spec.ArgMatch, r *tool.Record) (value.Mismatch, bool) {
	args, _ := r.Args.(map[string]any)
	v, present := args[m.Arg]
	s, isString := v.(string)
	if present && !isString {
		s = value.Canonical(v)
	}
	if present && m.Re.MatchString(s) {
		return value.Mismatch{}, false
	}
	got := "(absent)"
	if present {
		got = value.Truncate(value.Canonical(v), 200)
	}
	return value.Mismatch{Path: "$." + m.Arg, Expected: "a match of /" + m.Src + "/", Got: got}, true
}

// canonical is value.Canonical's form, appended.
var canonical value.Form

// bytesString is b as a string, without a copy: b is not used again.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// appendWant appends how often a called check wants its tool called.
func appendWant(b []byte, c *spec.Check) []byte {
	switch {
	case c.Times != nil:
		return appendPlural(append(b, "exactly "...), *c.Times, "time", "times")
	case c.Min != nil && c.Max != nil:
		b = strconv.AppendInt(append(b, "between "...), int64(*c.Min), 10)
		return append(strconv.AppendInt(append(b, " and "...), int64(*c.Max), 10), " times"...)
	case c.Min != nil:
		return appendPlural(append(b, "at least "...), *c.Min, "time", "times")
	case c.Max != nil:
		return appendPlural(append(b, "at most "...), *c.Max, "time", "times")
	}
	return append(b, "at least once"...)
}

// countRange is the range of call counts a called check (of a tool or
// an operation) allows, as appendWant words it; hi < 0: no upper bound.
func countRange(c *spec.Check) (lo, hi int) {
	switch {
	case c.Times != nil:
		return *c.Times, *c.Times
	case c.Min != nil && c.Max != nil:
		return *c.Min, *c.Max
	case c.Min != nil:
		return *c.Min, -1
	case c.Max != nil:
		return 0, *c.Max
	}
	return 1, -1
}

// matches counts the calls to c.Tool whose arguments match c.With: the
// length of matching's first list, without the lists (a check that
// passes needs only the count).
func matches(c *spec.Check, f *Facts) int {
	n := 0
	for i := range f.Calls {
		if r := &f.Calls[i]; r.Name == c.Tool && callMatches(c, r) {
			n++
		}
	}
	return n
}

func called(c *spec.Check, f *Facts) (bool, string) {
	n := matches(c, f)
	lo, hi := countRange(c)
	if n >= lo && (hi < 0 || n <= hi) {
		// The message of every passing check: one allocation.
		b := appendSubject(make([]byte, 0, 160), c)
		b = append(b, " was called "...)
		b = appendPlural(b, n, "time", "times")
		b = append(b, " (expected "...)
		b = appendWant(b, c)
		return true, bytesString(append(b, ')'))
	}
	want := string(appendWant(nil, c))
	match, other := matching(c, f)
	msg := fmt.Sprintf("expected %s to be called %s; ", subject(c), want)
	switch {
	case hi >= 0 && n > hi:
		// Too often.
		msg += fmt.Sprintf("it was called %s%s", termtext.Count(n, "time"), turns(match))
	case len(other) > 0:
		// Too rarely, but the tool was called with other arguments: show
		// the call that came closest.
		best, mm := closestCall(c, other)
		if n == 0 {
			msg += fmt.Sprintf("it was never called with matching arguments (%s to %s had other arguments); ", termtext.Count(len(other), "call"), c.Tool)
		} else {
			msg += fmt.Sprintf("it was called %s with matching arguments%s, and %s to %s had other arguments; ",
				termtext.Count(n, "time"), turns(match), termtext.Count(len(other), "call"), c.Tool)
		}
		if !parsed(best) {
			msg += fmt.Sprintf("the closest, in turn %d, has arguments that are not JSON: %s", best.Turn, value.Truncate(best.Call.Args, 200))
			break
		}
		msg += fmt.Sprintf("the closest, in turn %d, differs at %s: expected %s, got %s", best.Turn, mm.Path, mm.Expected, mm.Got)
		if mm.Reason != "" {
			msg += " (" + mm.Reason + ")"
		}
	case len(f.Calls) == 0:
		msg += "no tool was called at all"
	case n == 0:
		msg += "it was never called; the calls made were " + callsSummary(f)
	default:
		msg += fmt.Sprintf("it was called %s%s", termtext.Count(n, "time"), turns(match))
	}
	return false, msg
}

// turns says in which turns the calls were made: " (turns 1, 2, 2)".
func turns(calls []tool.Record) string {
	if len(calls) == 0 {
		return ""
	}
	const most = 10
	parts := make([]string, 0, min(len(calls), most))
	for _, r := range calls[:min(len(calls), most)] {
		parts = append(parts, strconv.Itoa(r.Turn))
	}
	list := strings.Join(parts, ", ")
	if len(calls) > most {
		list += ", …"
	}
	if len(calls) == 1 {
		return " (turn " + list + ")"
	}
	return " (turns " + list + ")"
}

// closestCall is the call whose arguments differ from c.With in the fewest
// leaves, the earliest of equals. Calls whose arguments are JSON come
// before those whose are not: their difference says more.
func closestCall(c *spec.Check, calls []tool.Record) (tool.Record, value.Mismatch) {
	bestN, bestParsed, bestNear := -1, false, 0
	var best tool.Record
	var bestM value.Mismatch
	for _, r := range calls {
		var n, near int
		var mm value.Mismatch
		if c.With != nil {
			n, mm = c.With.Diff(r.Args)
			near = nearness(mm.Expected, mm.Got)
		}
		for _, m := range c.Matching {
			if m2, ok := argMismatch(m, &r); ok {
				if n == 0 {
					lit, _ := m.Re.LiteralPrefix()
					mm, near = m2, nearness(lit, m2.Got)
				}
				n++
			}
		}
		p := parsed(r)
		if bestN < 0 || (p && !bestParsed) || (p == bestParsed && (n < bestN || n == bestN && near > bestNear)) {
			bestN, bestParsed, bestNear, best, bestM = n, p, near, r, mm
		}
	}
	return best, bestM
}

// nearness says how much of want a mismatched value got holds: the
// longest start of want found in it plus the longest end, so that among
// calls that differ in as many places, the closest is the one whose
// differing value is most like the one wanted (sed's edit with the wrong
// operator, not the cat before it).
func nearness(want, got string) int {
	if want == "" || got == "" {
		return 0
	}
	// A part of want found in got: every shorter one from the same end is.
	longest := func(part func(k int) string) int {
		lo, hi := 0, len(want)
		for lo < hi {
			mid := (lo + hi + 1) / 2
			if strings.Contains(got, part(mid)) {
				lo = mid
			} else {
				hi = mid - 1
			}
		}
		return lo
	}
	return longest(func(k int) string { return want[:k] }) + longest(func(k int) string { return want[len(want)-k:] })
}

// callsSummary lists the tools that were called, for a check that found none.
func callsSummary(f *Facts) string {
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
	return strings.Join(parts, ", ")
}

func notCalled(c *spec.Check, f *Facts) (bool, string) {
	match, _ := matching(c, f)
	if len(match) == 0 {
		return true, fmt.Sprintf("%s was not called (expected never)", subject(c))
	}
	first := match[0]
	return false, fmt.Sprintf("expected %s never to be called; it was called %s%s, first with %s",
		subject(c), termtext.Count(len(match), "time"), turns(match), value.Truncate(argsText(first), 200))
}

// parsed reports whether a call's arguments were JSON. When they were
// not, Record.Args holds the text as sent; a JSON string argument never
// equals its own text, which has quotes.
func parsed(r tool.Record) bool {
	s, ok := r.Args.(string)
	return !ok || s != r.Call.Args
}

// argsText is a call's arguments for a message: canonical JSON when they
// parsed, else the text as sent.
func argsText(r tool.Record) string {
	if !parsed(r) {
		return r.Call.Args
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
	got := value.Truncate(strings.Join(seq, " → "), 300)
	if i == len(c.Order) {
		return true, fmt.Sprintf("calls were in order %s (the calls made were %s)", want, got)
	}
	if len(seq) == 0 {
		return false, fmt.Sprintf("expected calls in order %s; no tool was called at all", want)
	}
	var why string
	if i == 0 {
		why = fmt.Sprintf("%s was never called", c.Order[0])
	} else {
		why = fmt.Sprintf("found %s, then no later call to %s", strings.Join(c.Order[:i], " → "), c.Order[i])
	}
	return false, fmt.Sprintf("expected calls in order %s; %s; the calls made were %s", want, why, got)
}

func quoteOut(s string) string {
	return value.Truncate(value.Canonical(s), 300)
}

// output judges an output check: on the last reply, or in a
// conversation on the reply its turn names, or on any of them.
func output(c *spec.Check, f *Facts) (bool, string) {
	if f.Replies == nil || c.Turn == 0 {
		return outputOf(c, f.Output)
	}
	if c.Turn == spec.TurnAny {
		var last string
		for i, r := range f.Replies {
			if ok, msg := outputOf(c, r); ok {
				return true, fmt.Sprintf("the output of turn %d: %s", i+1, msg)
			} else {
				last = msg
			}
		}
		if len(f.Replies) == 0 {
			return false, "expected the output of any turn to pass; the agent never replied"
		}
		return false, fmt.Sprintf("expected the output of any of the %s to pass; none did; the last: %s", termtext.Count(len(f.Replies), "turn"), last)
	}
	if c.Turn > len(f.Replies) {
		return false, fmt.Sprintf("expected the output of turn %d; the conversation had %s", c.Turn, termtext.Count(len(f.Replies), "turn"))
	}
	ok, msg := outputOf(c, f.Replies[c.Turn-1])
	if ok {
		return true, fmt.Sprintf("the output of turn %d: %s", c.Turn, msg)
	}
	return false, strings.Replace(msg, "expected output", fmt.Sprintf("expected the output of turn %d", c.Turn), 1)
}

// outputOf judges an output check on one reply.
func outputOf(c *spec.Check, out string) (bool, string) {
	var passed []string
	if c.Contains != nil {
		if !strings.Contains(out, *c.Contains) {
			msg := fmt.Sprintf("expected output to contain %s; output was %s", value.Canonical(*c.Contains), quoteOut(out))
			if strings.Contains(strings.ToLower(out), strings.ToLower(*c.Contains)) {
				msg += " (it contains the text in other letter case; contains is case-sensitive)"
			}
			return false, msg
		}
		if c.Regex == nil && c.Equals == nil && c.JSONSchema == nil {
			// The common check: one allocation.
			return true, bytesString(canonical.Append(append(make([]byte, 0, 64), "output contains "...), *c.Contains))
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
		passed = append(passed, "equals "+quoteOut(*c.Equals))
	}
	if c.JSONSchema != nil {
		if strings.TrimSpace(out) == "" {
			return false, "expected output to be JSON matching json_schema; the output is empty"
		}
		v, err := value.Parse([]byte(out))
		if err != nil {
			return false, fmt.Sprintf("expected output to be JSON matching json_schema; it is not JSON (%v); output was %s", err, quoteOut(out))
		}
		if leaves := c.JSONSchema.Validate(v); len(leaves) > 0 {
			msgs := make([]string, 0, len(leaves)) // in instance order, the root first
			for _, l := range leaves {
				msgs = append(msgs, fmt.Sprintf("%s: %s", jsonPath(l.Path), l.Message))
			}
			return false, fmt.Sprintf("expected output to match json_schema; %s; output was %s", strings.Join(msgs, "; "), value.Truncate(value.Canonical(v), 300))
		}
		passed = append(passed, "is JSON that matches json_schema")
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

// firstDifference points at where two texts part, for equals failures,
// quoting a little of each from there so that a difference deep in a long
// text, or in white space, is visible.
func firstDifference(want, got string) string {
	w, g := []rune(want), []rune(got)
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	from := func(r []rune) string {
		return value.Canonical(value.Truncate(string(r[i:]), 30))
	}
	switch {
	case i == len(g):
		return fmt.Sprintf(" (the output stops after character %d, where the expected text goes on with %s)", i, from(w))
	case i == len(w):
		return fmt.Sprintf(" (the output goes on after the expected text ends, with %s)", from(g))
	}
	return fmt.Sprintf(" (first difference at character %d: expected %s, got %s)", i+1, from(w), from(g))
}

func noErrors(f *Facts) (bool, string) {
	var errs []string
	for _, r := range f.Calls {
		if r.Result.IsError {
			errs = append(errs, fmt.Sprintf("%s in turn %d: %s", r.Name, r.Turn, value.Truncate(r.Result.Content, 200)))
		}
	}
	if len(errs) == 0 {
		return true, fmt.Sprintf("no tool call returned an error (%s)", termtext.Count(len(f.Calls), "call"))
	}
	return false, fmt.Sprintf("expected no tool errors; %d of %s returned an error: %s", len(errs), termtext.Count(len(f.Calls), "call"), strings.Join(errs, "; "))
}
