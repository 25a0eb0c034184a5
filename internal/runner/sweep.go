package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxPoints bounds the points of a sweep unless told otherwise.
const DefaultMaxPoints = 200

// Point is one failure of one call of a case: the case run again with
// its call Call (1-based, in the order calls started) to Tool failing as
// Kind says.
type Point struct {
	Suite, Case string
	Call        int
	Tool        string
	Kind        string
	Code        string // FaultDeclared of a world operation: the error's code
	Message     string // FaultDeclared of a mock: the error rule's message
	Rule        string // FaultDeclared of a mock: the rule's FILE:LINE
}

// ID names the point within its case: CALL:TOOL:KIND, and :CODE for a
// declared error of a world operation.
func (p Point) ID() string {
	if p.Kind == kindInject {
		return "inject:" + p.Code + ":" + p.Tool
	}
	id := strconv.Itoa(p.Call) + ":" + p.Tool + ":" + p.Kind
	if p.Code != "" {
		id += ":" + p.Code
	}
	return id
}

// public is the point as a report has it.
func (p Point) public() report.SweepPoint {
	return report.SweepPoint{ID: p.ID(), Call: p.Call, Tool: p.Tool, Kind: p.Kind, Code: p.Code, Message: p.Message, Rule: p.Rule, Failure: p.Failure()}
}

// Failure says what the call answers, for people.
func (p Point) Failure() string {
	switch {
	case p.Code != "":
		return "error " + p.Code
	case p.Kind == report.FaultDeclared:
		return "error rule " + p.Rule
	}
	if f, ok := failures[p.Kind]; ok {
		return f
	}
	return p.Kind
}

// failures say what each corrupting kind does to the call's answer.
var failures = map[string]string{
	report.FaultTruncated:  "its answer cut in half",
	report.FaultStale:      "the tool's previous answer again",
	report.FaultMalformed:  "its JSON answer with single quotes",
	report.FaultOversized:  "its answer padded to 256 KiB",
	report.FaultDuplicated: "delivered twice: the operation runs twice",
	report.FaultInjected:   "an instruction planted in its answer",
	report.FaultLost:       "its answer lost after the operation committed: a timeout",
}

// SweepCassette is the cassette of a sweep point of a case whose
// cassette is file: its own, beside the case's.
func SweepCassette(file string, p Point) string {
	if file == "" {
		return ""
	}
	slug := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' || r == '-' {
			return r
		}
		return '-'
	}, strings.ReplaceAll(p.ID(), ":", "-"))
	return strings.TrimSuffix(file, ".json") + ".sweep-" + slug + ".json"
}

// SweepOptions shape a sweep.
type SweepOptions struct {
	// MaxPoints bounds the points run, in report order; 0 means
	// DefaultMaxPoints.
	MaxPoints int
	// Point, when set, runs only the points of this ID (Point.ID) of the
	// cases selected.
	Point string
	// Faults are the kinds of failure given (FaultKinds); nil: all.
	Faults []string
}

// Sweep runs the selected cases once, then each passing case again for
// every point: each tool call it made, failed in turn in each way it can
// fail (a declared error, a tool error, a timeout). Points run
// opts.Concurrency at once; the report is in a fixed order.
func Sweep(ctx context.Context, suites []*spec.Suite, opts Options, so SweepOptions) (*report.SweepReport, error) {
	if so.Point != "" {
		if err := report.ParsePointID(so.Point); err != nil {
			return nil, err
		}
	}
	if so.MaxPoints <= 0 {
		so.MaxPoints = DefaultMaxPoints
	}
	base, bySuite, err := baseRun(ctx, suites, &opts)
	if err != nil {
		return nil, err
	}
	out := &report.SweepReport{MaxPoints: so.MaxPoints}
	var runs []todo
	for _, c := range base.Cases {
		sc := report.SweepCase{Suite: c.Suite, Name: c.Name, Status: c.Status, Calls: len(c.ToolCalls), Infra: c.Infra, Seed: c.Seed}
		s := bySuite[c.Suite]
		if c.Status != report.Passed {
			sc.Reason = c.Reason
		} else if s != nil {
			for _, p := range points(s, s.CaseNamed(c.Name), opts.Worlds[s], c) {
				if so.Point != "" && p.ID() != so.Point || so.Faults != nil && !slices.Contains(so.Faults, p.Kind) {
					continue
				}
				out.Points++
				if out.Ran < so.MaxPoints {
					out.Ran++
					runs = append(runs, todo{ci: len(out.Cases), pi: len(sc.Points), p: p})
				}
				sc.Points = append(sc.Points, report.PointResult{Point: p.public()})
			}
		}
		out.Cases = append(out.Cases, sc)
	}
	each(ctx, opts, suites, len(runs), func(k int) {
		t := runs[k]
		out.Cases[t.ci].Points[t.pi], _ = runPoint(ctx, bySuite[t.p.Suite], opts, t.p, &pointRun{p: t.p})
	})
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, nil
}

// todo is a point to run: out.Cases[ci].Points[pi] (or Results[pi], an
// injection drill's under payload pay).
type todo struct {
	ci, pi int
	p      Point
	pay    *spec.Payload
}

// each calls do(0) ... do(n-1), opts.Concurrency at once (one at a time
// when the programs' endpoints have a fixed port), none once ctx is done.
func each(ctx context.Context, opts Options, suites []*spec.Suite, n int, do func(int)) {
	workers := opts.workers()
	if opts.Port > 0 || slices.ContainsFunc(suites, func(s *spec.Suite) bool { return s.Agent.Port > 0 }) {
		workers = 1
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for k := range next {
				do(k)
			}
		})
	}
	for k := range n {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	wg.Wait()
}

// points are a passing case's points, in order: by call (those dryfire
// served, numbered as they started), then declared errors (by code), the
// tool error, the timeout and the corrupting kinds (FaultKinds).
func points(s *spec.Suite, c *spec.Case, sw *world.SuiteWorld, rc report.Case) []Point {
	var out []Point
	var committed []bool
	if sw != nil {
		committed = committedWrites(rc.ToolCalls, rc.Evidence, sw.World)
	}
	n := 0
	for i, tc := range rc.ToolCalls {
		if tc.Where != "" {
			continue // the agent's own: dryfire does not answer it
		}
		n++
		if tc.Actor != "" {
			continue // the simulated user's: the agent does not read its answer
		}
		p := Point{Suite: rc.Suite, Case: rc.Name, Call: n, Tool: tc.Tool}
		var op *world.Operation
		if sw != nil {
			if op = sw.World.Tools[tc.Tool]; op != nil {
				for _, code := range slices.Sorted(maps.Keys(op.Errors)) {
					d := p
					d.Kind, d.Code = report.FaultDeclared, code
					out = append(out, d)
				}
			}
		} else if r, msg := errorRule(s, c, tc.Tool); r != nil {
			d := p
			d.Kind, d.Message, d.Rule = report.FaultDeclared, msg, r.Pos.String()
			out = append(out, d)
		}
		for _, k := range []string{report.FaultToolError, report.FaultTimeout} {
			d := p
			d.Kind = k
			out = append(out, d)
		}
		out = append(out, semanticPoints(p, rc.ToolCalls, i, op, committed != nil && committed[i])...)
	}
	return out
}

// errorRule is the tool's first rule (the case's, else the suite's) with
// an error outcome, in a sequence too, and its message.
func errorRule(s *spec.Suite, c *spec.Case, name string) (*spec.Rule, string) {
	rules, ok := []*spec.Rule(nil), false
	if c != nil {
		rules, ok = c.Mocks[name]
	}
	if !ok {
		rules = s.Mocks[name]
	}
	for _, r := range rules {
		if r.Outcome.Kind == spec.Fail {
			return r, r.Outcome.Message
		}
		for _, e := range r.Outcome.Sequence {
			if e.Kind == spec.Fail {
				return r, e.Message
			}
		}
	}
	return nil, ""
}

// runPoint runs the point's case with the point's call failing (pr
// carries it: pr.p is p), and returns how it did and the case's run.
func runPoint(ctx context.Context, s *spec.Suite, opts Options, p Point, pr *pointRun) (report.PointResult, report.Case) {
	opts.point = pr
	opts.Only = func(suite, name string) bool { return suite == p.Suite && name == p.Case }
	opts.Filter, opts.Progress = nil, nil
	res := report.PointResult{Point: p.public(), Ran: true}
	rep, err := Run(ctx, []*spec.Suite{s}, opts)
	if err != nil {
		res.Verdict, res.Reason = report.PointError, err.Error()
		return res, report.Case{}
	}
	if len(rep.Cases) != 1 {
		res.Verdict, res.Reason = report.PointError, "the case did not run"
		return res, report.Case{}
	}
	c := rep.Cases[0]
	// A cassette refused where it leads (cassette.CheckPath) is not
	// looked at, and recording it would not help: the point erred.
	outside := c.Cassette != "" && cassette.CheckPath(s.ProjectRoot(), c.Cassette) != nil
	if _, err := os.Stat(c.Cassette); err == nil && c.Cassette != "" && !outside {
		res.Cassette = c.Cassette
	}
	var w *world.World
	if sw := opts.Worlds[s]; sw != nil {
		w = sw.World
	}
	broken := unsafeChecks(&c, w)
	pr.mu.Lock()
	defer pr.mu.Unlock()
	refused := slices.ContainsFunc(c.Script, func(t report.ScriptTurn) bool { return t.Refused })
	switch {
	case pr.noAnswer != "":
		res.Verdict, res.Reason = report.PointNoAnswer, pr.noAnswer
	case refused:
		res.Verdict, res.Reason = report.PointNoAnswer, c.Reason
	case outside && c.Status == report.Errored:
		res.Verdict, res.Reason = report.PointError, c.Reason
	case c.Status == report.Errored && c.Replay != "":
		res.Verdict, res.Reason, res.Cassette, res.Record = report.PointNoAnswer, c.Reason, c.Cassette, "all"
	case c.Status == report.Errored && c.Infra && c.Cassette != "":
		res.Verdict, res.Reason, res.Cassette, res.Record = report.PointNoAnswer, c.Reason, c.Cassette, "once"
	case pr.plant != nil && c.Status == report.Errored:
		res.Verdict, res.Reason = report.PointError, c.Reason
	case pr.plant != nil && c.Status != report.Passed:
		res.Verdict, res.Reason, res.Failing = report.PointFailed, c.Reason, failing(c.Checks)
	case pr.plant != nil:
		res.Verdict = report.PointSurvived
	case !pr.reached && pr.at == "":
		res.Verdict, res.Reason = report.PointNotReached, fmt.Sprintf("the case made %d tool calls this time", len(c.ToolCalls))
	case !pr.reached:
		res.Verdict, res.Reason = report.PointNotReached, fmt.Sprintf("call %d was %s this time", p.Call, pr.at)
	case len(broken) > 0:
		res.Verdict, res.Failing = report.PointUnsafe, broken
	case c.Status == report.Passed:
		res.Verdict = report.PointSurvived
	case c.Status == report.Failed:
		res.Verdict, res.Failing = report.PointFailed, failing(c.Checks)
		if len(res.Failing) == 0 {
			res.Reason = c.Reason
		}
	default:
		res.Verdict, res.Reason = report.PointError, c.Reason
	}
	return res, c
}

// failing are the checks that did not pass.
func failing(checks []report.Check) []report.Check {
	return slices.DeleteFunc(slices.Clone(checks), func(ch report.Check) bool { return ch.Passed })
}

// pointRun is a sweep point as one run carries it (Options.point): the
// failure the recorder gives the call, and what the run saw of it.
type pointRun struct {
	p Point

	mu       sync.Mutex
	at       string // the tool of the point's call, once made
	reached  bool   // the call was made, to the point's tool
	noAnswer string // the built-in loop's script had no turn for a request
	prev     string // the last answer of the point's tool before its call (stale)
	// plant is an injection drill's payload (inject.go); nil for a
	// sweep's point.
	plant *planting
}

func (pr *pointRun) fault() tool.Fault {
	if pr == nil {
		return nil
	}
	return pr
}

// modelError keeps why the built-in loop ended, when its script had no
// answer.
func (pr *pointRun) modelError(err error) {
	if pr == nil || err == nil {
		return
	}
	var none *model.NoTurnError
	var out *model.ErrScriptExhausted
	if errors.As(err, &none) || errors.As(err, &out) {
		pr.mu.Lock()
		pr.noAnswer = err.Error()
		pr.mu.Unlock()
	}
}

// Answerer fails the point's call: through the world, whose evidence
// then has it, or with an error result of its own.
func (pr *pointRun) Answerer(i int, c tool.Call, a tool.Answerer) tool.Answerer {
	if pr.plant != nil {
		if pr.plant.place == report.PlaceToolResult {
			return planted{a, pr.plant.payload.Text}
		}
		return a
	}
	if pr.p.Kind == report.FaultStale && i < pr.p.Call-1 && c.Name == pr.p.Tool {
		return keep{pr, a}
	}
	if i != pr.p.Call-1 {
		return a
	}
	pr.mu.Lock()
	defer pr.mu.Unlock()
	pr.at = c.Name
	if c.Name != pr.p.Tool {
		return a
	}
	pr.reached = true
	note := fmt.Sprintf("dryfire sweep: call %d (%s) fails on purpose: %s (point %s)", pr.p.Call, pr.p.Tool, pr.p.Failure(), pr.p.ID())
	switch pr.p.Kind {
	case report.FaultDeclared, report.FaultToolError, report.FaultTimeout:
	default:
		return noted{semantic{pr, a}, note}
	}
	switch x := a.(type) {
	case *world.Instance:
		return noted{world.Forced{In: x, Rule: pr.p.override()}, note}
	case *world.Op:
		x.Req.Force = pr.p.override()
		return noted{x, note}
	}
	return noted{failed{pr.p}, note}
}

// override is the point's failure as a world answers it.
func (p Point) override() *world.Override {
	o := &world.Override{ID: "dryfire-sweep", Kind: world.OutError, Scope: world.ScopeTest, Times: 1}
	no := false
	switch p.Kind {
	case report.FaultDeclared:
		o.Code = p.Code
	case report.FaultToolError:
		o.Code, o.Message, o.Retryable = world.CodeToolError, "the tool failed", &no
	default:
		o.Code, o.Message, o.Retryable = world.CodeTimeout, "the call timed out", &no
	}
	return o
}

// failed answers a mock's call with the point's failure.
type failed struct{ p Point }

func (f failed) Answer(context.Context, tool.Call, any, error) tool.Result {
	r := tool.Result{IsError: true, Outcome: tool.Error, Entry: -1}
	switch f.p.Kind {
	case report.FaultDeclared:
		r.Content, r.Rule = f.p.Message, f.p.Rule
	case report.FaultToolError:
		r.Content = "tool error: " + f.p.Tool + " failed"
	default:
		r.Content = "timeout: " + f.p.Tool + " did not answer in time"
	}
	return r
}

// noted adds a note to the answer of a.
type noted struct {
	a    tool.Answerer
	note string
}

func (n noted) Answer(ctx context.Context, c tool.Call, args any, perr error) tool.Result {
	r := n.a.Answer(ctx, c, args, perr)
	r.Notes = append(r.Notes, n.note)
	return r
}
