package runner

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// How a case ends: its run judged (checks, cassette, replay problems) into its report case.

// ran is how the agent's run in a case ended, for judge: what the built-in
// loop and a program (agent.command) have in common.
type ran struct {
	recs  []tool.Record   // the tool calls, in the order they started
	drill *world.Instance // the case's world; nil outside world suites
	// broken is what failed around the agent (its model endpoint could
	// not be made, and it called the model): the case errs there,
	// unjudged, as an infrastructure error.
	broken error
	// replay is a model request that strayed from the recording: the case
	// fails there, unjudged (its checks would judge half a run).
	replay *cassette.ReplayError
	// unplayed are recorded model calls the run left unplayed.
	unplayed *cassette.ReplayError
	live     error // the live API failed
	err      error // the agent's run failed (the case errs)
	infra    bool  // err is the surroundings', not the agent's or the suite's
	failed   bool  // err fails the case (a test's own agent threw) instead
	// workspace is the case's workspace directory, which file checks
	// read ("" when it has none).
	workspace string
	// commands are how the command checks' commands ran.
	commands map[*spec.Check]*check.CommandRun

	// model is the case's model endpoint once the run is over (the
	// built-in loop's transport or an agent.command case's endpoint; nil:
	// none), out what it says of the run (model.Recorder.End).
	model *modelserver.Endpoint
	out   *model.Outcome
	// user is the case's simulated user (nil: none), conv its
	// conversation (each reply's ModelTurn already a turn).
	user *simUser
	conv []agent.Exchange
	// program says the agent was a program (agent.command): its run is
	// worth a cassette only when the case did not err and the program
	// did not fail (a non-zero exit, a timeout, a call past max_turns, a
	// test's agent that threw: its recording may be cut short), and,
	// unless keepEmpty, when it recorded a model call (a test's drill
	// that recorded nothing leaves no cassette behind: most make none).
	// The built-in loop's is worth one unless the infrastructure failed.
	program, keepEmpty bool
}

// conclude is how every case ends, whoever its agent was: what the
// cassette says of the run, the simulated user's conversation, the
// verdict (judge), then the cassette written when the run finished: not
// one that was interrupted, strayed from its recording, or is not worth
// one (ran.program).
func conclude(ctx context.Context, j job, c *report.Case, r ran, g *grader) {
	if r.out != nil {
		r.readCassette(r.out, c)
	}
	if r.user != nil {
		save := ctx.Err() == nil && r.replay == nil && !(r.err != nil && r.infra)
		r.user.finish(c, r.conv, &r, save)
	}
	judge(j, c, r, g)
	if g != nil && g.lv != nil && g.lv.cov != nil {
		g.lv.cov.count(j, &r)
	}
	if g != nil && g.lv != nil && g.lv.mutate && c.Status == report.Passed && j.trials <= 1 {
		c.Mutation = mutateCase(j, c)
	}
	if r.model != nil && r.replay == nil && ctx.Err() == nil && r.worthACassette(c) {
		writeCassette(r.model, r.out, c)
	}
}

// worthACassette says whether a finished run is written (see ran.program).
func (r *ran) worthACassette(c *report.Case) bool {
	if !r.program {
		return !(c.Status == report.Errored && c.Infra)
	}
	return c.Status != report.Errored && !r.failed && (r.keepEmpty || r.out.Recorded > 0)
}

// judge fills a case's transcript, its drill fields (the drill ended
// first: its final state and evidence), its checks and its status from
// what its run left. The case's output and turns are already set.
//
// g asks the judge checks (nil: the case has none to ask, as in tests).
func judge(j job, c *report.Case, r ran, g *grader) {
	c.ToolCalls = make([]report.ToolCall, len(r.recs))
	unmatched := 0
	args := make([]byte, 0, 48*len(r.recs)) // every call's arguments, one after the other
	for i := range r.recs {
		rec := &r.recs[i]
		c.ToolCalls[i], args = toolCall(rec, args)
		if rec.Result.Outcome == tool.Unmatched {
			unmatched++
		}
		c.Notes = append(c.Notes, rec.Result.Notes...)
	}
	facts := &check.Facts{Calls: r.recs, Output: c.Output, Turns: c.Turns, Workspace: r.workspace, Replies: replies(c), MCP: c.MCP, Commands: r.commands}
	facts.World = endDrill(c, r.drill)
	if r.broken != nil {
		c.Status, c.Reason, c.Infra = report.Errored, r.broken.Error(), true
		return
	}
	if r.replay != nil {
		c.Status, c.Reason, c.Replay = report.Failed, r.replay.Summary(), r.replay.Error()
		return
	}
	if r.live == nil && (r.err == nil || r.failed) {
		v, err := g.verdicts(j, c)
		if err != nil {
			c.Status, c.Reason, c.Infra = report.Errored, err.Error(), true
			return
		}
		facts.Verdicts = v
	} else if js := judges(j.c); len(js) > 0 {
		facts.Verdicts = map[int]*check.Verdict{}
		for _, jd := range js {
			facts.Verdicts[jd.Index] = &check.Verdict{Problem: "the agent's run did not finish, so there is nothing to judge"}
		}
	}
	checks := j.suite.Checks(j.c)
	results := check.Evaluate(checks, facts)
	c.Checks = make([]report.Check, len(results))
	for i, res := range results {
		c.Checks[i] = reportCheck(j, checks[i], res)
	}
	failed := len(failing(c.Checks))
	switch {
	case r.live != nil:
		c.Status, c.Reason, c.Infra = report.Errored, r.live.Error(), true
	case r.err != nil && r.failed:
		c.Status, c.Reason = report.Failed, r.err.Error()
		if failed > 0 {
			c.Reason += "; " + checksFailed(failed, len(results))
		}
	case r.err != nil:
		c.Status, c.Reason, c.Infra = report.Errored, r.err.Error(), r.infra
	case failed > 0 || unmatched > 0 || r.unplayed != nil:
		unplayed := ""
		if r.unplayed != nil {
			unplayed, c.Replay = r.unplayed.Summary(), r.unplayed.Error()
		}
		c.Status, c.Reason = report.Failed, failReason(failed, len(results), unmatched, unplayed)
	default:
		c.Status = report.Passed
	}
}

// reportCheck is check ch's result as the report has it.
func reportCheck(j job, ch *spec.Check, res check.Result) report.Check {
	out := report.Check{Check: res.Check, At: res.At, Passed: res.Passed, Message: res.Message, Invariant: ch.Invariant}
	if v := res.Verdict; v != nil {
		out.Judge = &report.Judged{Provider: ch.Judge.Provider, Model: ch.Judge.Model, Pass: v.Pass, Score: v.Score, Reasoning: v.Reasoning, Cassette: j.judgeFile(ch.Judge)}
	}
	return out
}

// failReason is the reason of a case that failed by its checks, its
// unmatched calls or the recorded calls it left unplayed (unplayed, the
// summary); "" when none did. Recheck reads it back.
func failReason(failed, checks, unmatched int, unplayed string) string {
	var parts []string
	if failed > 0 {
		parts = append(parts, checksFailed(failed, checks))
	}
	if unmatched > 0 {
		parts = append(parts, fmt.Sprintf("%d unmatched tool call(s)", unmatched))
	}
	if unplayed != "" {
		parts = append(parts, unplayed)
	}
	return strings.Join(parts, "; ")
}

func checksFailed(failed, checks int) string {
	return fmt.Sprintf("%d of %d checks failed", failed, checks)
}

// done stamps a finished case: a drill's verdict is its status (set last,
// after the cassette is saved), and the duration.
func done(c report.Case, drill *world.Instance, start time.Time) report.Case {
	if drill != nil {
		c.Verdict = c.Status
	}
	c.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return c
}
