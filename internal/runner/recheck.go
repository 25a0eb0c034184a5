package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/workspace"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// Recheck applies the current checks (expect:) of suites to the cases of
// a stored report: its tool calls, output, turns, conversation and a
// drill's final state, evidence and events, as the run left them. No
// agent, tool or model runs. A judge check unchanged since the run keeps
// its stored result; an edited or new one is asked through its cassette
// in opts.Record (none when empty: replayed only). A file check reads
// the workspace the run kept (--keep-workspaces), else keeps its stored
// result when unchanged, else errs the case, saying so. The report's
// cases keep their order; opts.Record, Env, Live and Worlds are read.
func Recheck(ctx context.Context, suites []*spec.Suite, stored *report.Report, name string, opts Options) (*report.Report, error) {
	opts.Record = cmp.Or(opts.Record, cassette.None)
	lv, err := newLive(opts)
	if err != nil {
		return nil, err
	}
	lv.connect(opts, false)
	type loaded struct {
		s     *spec.Suite
		plan  *plan.Suite
		cases map[string]int
	}
	bySuite := map[string]*loaded{}
	for _, s := range suites {
		l := &loaded{s: s, plan: plan.New(s, opts.Worlds[s], nil), cases: make(map[string]int, s.Len())}
		for k := range s.Len() {
			l.cases[s.CaseName(k)] = k
		}
		bySuite[s.File] = l
	}
	out := &report.Report{Cases: make([]report.Case, len(stored.Cases)), Shard: stored.Shard}
	rc := &report.Recheck{Report: name}
	g := &grader{ctx: ctx, lv: lv}
	for i := range stored.Cases {
		if err := ctx.Err(); err != nil {
			return nil, errors.New("interrupted")
		}
		c := stored.Cases[i]
		report.CompactArgs(&c)
		c.Mutation = nil // the run's mutants judged the checks as they were
		l := bySuite[c.Suite]
		k, ok := 0, false
		if l != nil {
			k, ok = l.cases[c.Name]
		}
		if !ok {
			if c.Status != report.Skipped {
				c.Status, c.Reason = report.Errored, "not re-checked: "+c.Suite+" has no case of this name now"
				c.Verdict = verdictOf(c)
			}
			out.Cases[i] = c
			continue
		}
		sc := l.s.CaseAt(k)
		j := job{suite: l.s, c: sc, plan: l.plan.Case(sc)}
		if t := c.Trials; t != nil && len(t.Runs) > 0 {
			runs := slices.Clone(t.Runs)
			for n := range runs {
				jt := j
				jt.trial, jt.trials = n+1, len(runs)
				recheckOne(jt, &runs[n], g, rc)
				lv.red.Walk(&runs[n])
			}
			c = report.FoldTrials(runs, t.Threshold)
		} else {
			recheckOne(j, &c, g, rc)
			lv.red.Walk(&c)
		}
		out.Cases[i] = c
	}
	out.Tally()
	out.Recheck = rc
	return out, nil
}

// verdictOf is a drill's verdict: its status; "" for a case of no drill.
func verdictOf(c report.Case) report.Status {
	if c.Verdict == "" {
		return ""
	}
	return c.Status
}

// cannotRecheck says why a file check cannot be judged from a report.
const cannotRecheck = "a file check reads the case's workspace as the run left it, which the report does not hold (only its list of changes): run the case again, or run it with --keep-workspaces and re-check that report"

// recheckOne applies j's checks to the stored case c, in place.
func recheckOne(j job, c *report.Case, g *grader, rc *report.Recheck) {
	if c.Checks == nil || c.Status == report.Skipped {
		// The run ended before its checks (skipped, its infrastructure
		// broke, its requests strayed from the recording).
		if c.Status != report.Skipped {
			c.Notes = append(c.Notes, "not re-checked: the run ended before its checks ("+c.Reason+")")
		}
		return
	}
	rc.Cases++
	old := c.Checks
	facts, err := storedFacts(c)
	if err != nil {
		c.Status, c.Reason = report.Errored, "not re-checked: "+err.Error()
		c.Verdict = verdictOf(*c)
		return
	}
	keep, ask, missing := sortChecks(j, old, facts)
	missing = append(missing, askJudges(j, c, g, ask, facts)...)
	c.Checks = recheckResults(j, check.Evaluate(j.suite.Checks(j.c), facts), keep, facts, rc)
	changes := changedChecks(old, c.Checks)
	rc.Changed += len(changes)
	for _, ch := range changes {
		c.Notes = append(c.Notes, "re-checked: "+ch)
	}
	restatus(c, old, len(failing(c.Checks)), missing)
	c.Verdict = verdictOf(*c)
}

// sortChecks finds the checks the report does not hold enough for: an
// unchanged one (the same check, as written) keeps its stored result
// (keep, by place); an edited or new judge is asked (ask); an edited or
// new file check without the workspace cannot be judged (missing).
func sortChecks(j job, old []report.Check, facts *check.Facts) (keep map[int]report.Check, ask []*spec.Check, missing []string) {
	used := make([]bool, len(old))
	keep = map[int]report.Check{}
	for i, ch := range j.suite.Checks(j.c) {
		if ch.Kind != spec.CheckJudge && ch.Kind != spec.CheckCommand && (ch.Kind != spec.CheckFile || facts.Workspace != "") {
			continue
		}
		if o := unused(old, used, ch.Source); o >= 0 && sameJudge(old[o].Judge, ch.Judge) {
			keep[i] = old[o]
			continue
		}
		switch {
		case ch.Kind == spec.CheckJudge && ch.Judge != nil:
			ask = append(ask, ch)
		case ch.Kind == spec.CheckFile:
			missing = append(missing, "the file check at "+ch.Pos.FileLine()+" is new or edited, and "+cannotRecheck)
		case ch.Kind == spec.CheckCommand:
			missing = append(missing, "the command check at "+ch.Pos.FileLine()+" is new or edited, and recheck runs nothing: run the case again")
		}
	}
	return keep, ask, missing
}

// askJudges asks the judges of ask for their verdicts, into facts,
// through their cassettes; it says which could not be had.
func askJudges(j job, c *report.Case, g *grader, ask []*spec.Check, facts *check.Facts) (missing []string) {
	if len(ask) == 0 {
		return nil
	}
	facts.Verdicts = map[int]*check.Verdict{}
	input := cmp.Or(c.Input, j.c.Input)
	prompt := judgeConversation(input, c)
	for _, ch := range ask {
		v, err := g.ask(j, c, ch.Judge, prompt)
		if err != nil {
			// Its cassette is missing (--record none), or its model
			// could not be reached.
			why := err.Error()
			if me := (*cassette.MissingError)(nil); errors.As(err, &me) {
				why = "the report holds no verdict for it, and its cassette " + me.File + " does not exist; --record once asks its model"
			}
			v = &check.Verdict{Problem: why}
			missing = append(missing, fmt.Sprintf("the judge check at %s is new or edited: %s", ch.Pos.FileLine(), why))
		}
		facts.Verdicts[ch.Judge.Index] = v
	}
	return missing
}

// recheckResults are the report's checks from the evaluated results, the
// kept ones in their places.
func recheckResults(j job, results []check.Result, keep map[int]report.Check, facts *check.Facts, rc *report.Recheck) []report.Check {
	out := make([]report.Check, len(results))
	checks := j.suite.Checks(j.c)
	for i, res := range results {
		if k, ok := keep[i]; ok {
			k.At = res.At
			out[i] = k
			rc.Kept++
		} else {
			ch := checks[i]
			out[i] = reportCheck(j, ch, res)
			if ch.Kind == spec.CheckFile && facts.Workspace == "" {
				out[i].Message = "not re-checked: " + cannotRecheck
			}
			if ch.Kind == spec.CheckCommand {
				out[i].Message = "not re-checked: recheck runs nothing; run the case again"
			}
		}
	}
	return out
}

// sameJudge says whether a stored judge's result is a judge's now: the
// same model (a check that names none takes the agent's, which may have
// changed). A result without a verdict names no model.
func sameJudge(was *report.Judged, now *spec.Judge) bool {
	return was == nil || now == nil || was.Provider == now.Provider && was.Model == now.Model
}

// unused finds the first stored check written as src not yet taken.
func unused(old []report.Check, used []bool, src string) int {
	for i := range old {
		if !used[i] && old[i].Check == src {
			used[i] = true
			return i
		}
	}
	return -1
}

// restatus sets a re-checked case's status and reason as judge would
// have from its new checks, keeping what did not come from its checks:
// an error of the run, a failure of its agent, unmatched calls,
// recorded calls left unplayed. missing, when not empty, errs the case:
// checks that could not be judged.
func restatus(c *report.Case, old []report.Check, failed int, missing []string) {
	if len(missing) > 0 {
		c.Status, c.Reason = report.Errored, "not re-checked: "+strings.Join(missing, "; ")
		return
	}
	if c.Status == report.Errored || c.Status == report.Skipped {
		return // the run's own error stands
	}
	oldFailed := len(failing(old))
	unmatched := 0
	for _, tc := range c.ToolCalls {
		if tc.Outcome == tool.Unmatched {
			unmatched++
		}
	}
	byChecks := failReason(oldFailed, len(old), unmatched, "")
	unplayed, ok := "", true
	switch {
	case c.Status == report.Passed:
	case c.Replay != "" && byChecks == "":
		unplayed = c.Reason
	case c.Replay != "":
		unplayed, ok = strings.CutPrefix(c.Reason, byChecks+"; ")
	default:
		ok = c.Reason == byChecks
	}
	if !ok {
		// A failure of the run itself (a test's agent that threw), with
		// its checks' count after it.
		base := c.Reason
		if oldFailed > 0 {
			base = strings.TrimSuffix(base, "; "+checksFailed(oldFailed, len(old)))
		}
		c.Reason = base
		if failed > 0 {
			c.Reason += "; " + checksFailed(failed, len(c.Checks))
		}
		return
	}
	if r := failReason(failed, len(c.Checks), unmatched, unplayed); r != "" {
		c.Status, c.Reason = report.Failed, r
	} else {
		c.Status, c.Reason = report.Passed, ""
	}
}

// changedChecks describes the checks whose verdict is not the stored
// one: paired by place when the list kept its length, else by what they
// say; an added or removed check is a change.
func changedChecks(old, now []report.Check) []string {
	verdict, was := map[bool]string{true: "passes", false: "fails"}, map[bool]string{true: "passed", false: "failed"}
	var out []string
	if len(old) == len(now) {
		for i := range now {
			if old[i].Passed != now[i].Passed {
				out = append(out, fmt.Sprintf("%s (%s) %s now; it %s in the stored run", now[i].Check, now[i].At, verdict[now[i].Passed], was[old[i].Passed]))
			}
		}
		return out
	}
	used := make([]bool, len(old))
	for _, n := range now {
		o := unused(old, used, n.Check)
		switch {
		case o < 0:
			out = append(out, fmt.Sprintf("%s (%s) is new: it %s", n.Check, n.At, verdict[n.Passed]))
		case old[o].Passed != n.Passed:
			out = append(out, fmt.Sprintf("%s (%s) %s now; it %s in the stored run", n.Check, n.At, verdict[n.Passed], was[old[o].Passed]))
		}
	}
	for i, o := range old {
		if !used[i] {
			out = append(out, fmt.Sprintf("%s (%s in the stored run) is gone", o.Check, o.At))
		}
	}
	return out
}

// storedFacts is what a stored case's checks read: its calls, output,
// turns, replies, a drill's world, the workspace it kept.
func storedFacts(c *report.Case) (*check.Facts, error) {
	f := &check.Facts{Output: c.Output, Turns: c.Turns, Replies: replies(c), Calls: make([]tool.Record, len(c.ToolCalls)), MCP: c.MCP}
	for i, tc := range c.ToolCalls {
		r := tool.Record{Call: tool.Call{ID: tc.ID, Name: tc.Tool, Turn: tc.Turn, Actor: tc.Actor},
			Result: tool.Result{Content: tc.Result, IsError: tc.IsError, Outcome: tc.Outcome, Rule: tc.Rule, NearMiss: tc.NearMiss, Asked: tc.Asked, Entry: -1},
			Own:    tc.Where == WhereOwn}
		v, err := value.Parse(tc.Args)
		if err != nil {
			return nil, fmt.Errorf("the report's tool call %d (%s) has arguments that are not JSON: %w", i+1, tc.Tool, err)
		}
		if s, ok := v.(string); ok {
			// Arguments that were not JSON are kept as their text (a JSON
			// string argument reads the same).
			r.Call.Args, r.Args = s, s
		} else {
			r.Call.Args, r.Args = string(tc.Args), v
		}
		f.Calls[i] = r
	}
	if c.BuildHash != "" {
		wf := &check.WorldFacts{State: c.State, Evidence: c.Evidence, Emitted: c.Events}
		if len(c.Build) > 0 && c.Seed != nil {
			in, err := world.FromBuild(string(c.Build), *c.Seed)
			if err != nil {
				return nil, fmt.Errorf("the drill's build in the report: %w", err)
			}
			in.End()
			wf.Ordered = in.Ordered
		}
		f.World = wf
	}
	if w := c.Workspace; w != nil && w.Kept != "" {
		if _, err := os.Stat(w.Kept); err == nil {
			if err := workspace.CheckKept(w.Kept); err != nil {
				return nil, err
			}
			f.Workspace = w.Kept
		}
	}
	return f, nil
}
