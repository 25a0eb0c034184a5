// Package runner runs the cases of loaded suites: each case in isolation
// (its own mock state and model), several at a time, with results in
// suite and case order whatever the scheduling.
package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// NoteNeverRecorded is the note of a case that runs passthrough code.
const NoteNeverRecorded = "this case runs passthrough code (impl), so it is never recorded into a cassette"

// DefaultConcurrency is how many cases run at once unless told otherwise.
const DefaultConcurrency = 8

// Options control a run.
type Options struct {
	Concurrency int            // cases at once; <1 means DefaultConcurrency
	Filter      *regexp.Regexp // run only cases whose name matches
	Impl        mock.Impl      // passthrough code; nil: impl unavailable
	// Progress, when set, hears about each case as it starts and ends.
	// Calls are serialised; index is the case's place in the report.
	Progress Progress
}

// Progress receives run events.
type Progress interface {
	Start(total int)
	CaseStarted(index int, suite, name string)
	CaseDone(index int, c *report.Case)
}

// UnsupportedError is a suite the runner cannot run at all.
type UnsupportedError struct {
	Pos spec.Pos
	Msg string
}

func (e *UnsupportedError) Error() string { return e.Pos.String() + ": " + e.Msg }

type job struct {
	suite *spec.Suite
	set   *mock.Set
	tools []model.ToolDef // what the model is shown, shared by the suite's cases
	c     *spec.Case
}

// interruptedReason is the reason of a case the run never started.
const interruptedReason = "interrupted before it started"

// Run runs every selected case and returns the report. It returns an
// error, and runs nothing, when a suite cannot be run by this build.
//
// Cases start in report order; once ctx is done, the cases not yet
// started are reported as skipped.
func Run(ctx context.Context, suites []*spec.Suite, opts Options) (*report.Report, error) {
	var jobs []job
	for _, s := range suites {
		if err := supported(s); err != nil {
			return nil, err
		}
		set := mock.Compile(s)
		tools := suiteToolDefs(s)
		for _, c := range s.Cases {
			if opts.Filter != nil && !opts.Filter.MatchString(c.Name) {
				continue
			}
			jobs = append(jobs, job{suite: s, set: set, tools: tools, c: c})
		}
	}
	n := opts.Concurrency
	if n < 1 {
		n = DefaultConcurrency
	}
	rep := &report.Report{Cases: make([]report.Case, len(jobs))}
	var mu sync.Mutex // serialises Progress calls
	progress := func(f func()) {
		if opts.Progress != nil {
			mu.Lock()
			f()
			mu.Unlock()
		}
	}
	progress(func() { opts.Progress.Start(len(jobs)) })
	// Workers take the next case by index: no dispatcher goroutine, no
	// hand-off per case.
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(jobs) {
					return
				}
				j := jobs[i]
				if ctx.Err() != nil {
					c := base(j)
					c.Status, c.Reason = report.Skipped, interruptedReason
					rep.Cases[i] = c
				} else {
					progress(func() { opts.Progress.CaseStarted(i, j.suite.File, j.c.Name) })
					rep.Cases[i] = runCase(ctx, j, opts)
				}
				progress(func() { opts.Progress.CaseDone(i, &rep.Cases[i]) })
			}
		}()
	}
	wg.Wait()
	rep.Tally()
	return rep, nil
}

func supported(s *spec.Suite) error {
	switch s.Agent.Provider {
	case spec.ProviderScript:
		return nil
	}
	return &UnsupportedError{Pos: s.Agent.ProviderPos, Msg: fmt.Sprintf("provider %q is not available in this version of dryfire; only provider: script runs", s.Agent.Provider)}
}

func base(j job) report.Case {
	return report.Case{
		Suite:     j.suite.File,
		Name:      j.c.Name,
		Checks:    []report.Check{},
		ToolCalls: []report.ToolCall{},
		Notes:     []string{},
	}
}

func runCase(ctx context.Context, j job, opts Options) report.Case {
	start := time.Now()
	c := base(j)
	if j.c.Skip {
		c.Status = report.Skipped
		c.Reason = j.c.SkipReason
		if c.Reason == "" {
			c.Reason = "skip: true"
		}
		return c
	}
	set := j.set.ForCase(j.c)
	if set.UsesImpl() {
		c.Notes = append(c.Notes, NoteNeverRecorded)
	}
	sess := mock.NewSession(set, opts.Impl)
	sess.Label = j.c.Name
	m := model.NewScript(j.c.Script)
	tr, err := agent.Run(ctx, m, sess, agent.Config{
		Model:    j.suite.Agent.Model,
		System:   j.suite.Agent.System,
		Input:    j.c.Input,
		Tools:    caseToolDefs(j.tools, j.c),
		Params:   j.suite.Agent.Params,
		MaxTurns: j.c.EffectiveMaxTurns(&j.suite.Agent),
	})
	recs := sess.Records()
	c.Output, c.Turns, c.Usage = tr.Output, tr.Turns, tr.Usage
	c.ToolCalls = make([]report.ToolCall, len(recs))
	unmatched := 0
	for i, r := range recs {
		c.ToolCalls[i] = toolCall(r)
		if r.Result.Outcome == tool.Unmatched {
			unmatched++
		}
		c.Notes = append(c.Notes, r.Result.Notes...)
	}
	results := check.Evaluate(j.c.Expect, &check.Facts{Calls: recs, Output: tr.Output, Turns: tr.Turns})
	failed := 0
	c.Checks = make([]report.Check, len(results))
	for i, r := range results {
		c.Checks[i] = report.Check{Check: r.Check, At: r.At, Passed: r.Passed, Message: r.Message}
		if !r.Passed {
			failed++
		}
	}
	switch {
	case err != nil:
		c.Status = report.Errored
		c.Reason = err.Error()
		var mt *agent.MaxTurnsError
		var se *model.ErrScriptExhausted
		c.Infra = !errors.As(err, &mt) && !errors.As(err, &se)
		if errors.Is(err, context.Canceled) {
			c.Reason = "interrupted"
		}
	case failed > 0 || unmatched > 0:
		c.Status = report.Failed
		var parts []string
		if failed > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d checks failed", failed, len(results)))
		}
		if unmatched > 0 {
			parts = append(parts, fmt.Sprintf("%d unmatched tool call(s)", unmatched))
		}
		c.Reason = strings.Join(parts, "; ")
	default:
		c.Status = report.Passed
	}
	c.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return c
}

func toolCall(r tool.Record) report.ToolCall {
	return report.ToolCall{
		Turn:     r.Turn,
		ID:       r.ID,
		Tool:     r.Name,
		Args:     []byte(value.Canonical(r.Args)),
		Outcome:  r.Result.Outcome,
		Rule:     r.Result.Rule,
		IsError:  r.Result.IsError,
		Result:   r.Result.Content,
		NearMiss: r.Result.NearMiss,
	}
}

var openObject = map[string]any{"type": "object"}

// suiteToolDefs is what the model is shown: the declared tools, then tools
// that are only mocked, with an open object schema.
func suiteToolDefs(s *spec.Suite) []model.ToolDef {
	var defs []model.ToolDef
	seen := map[string]bool{}
	for _, t := range s.Tools {
		schema := t.InputSchema
		if schema == nil {
			schema = openObject
		}
		defs = append(defs, model.ToolDef{Name: t.Name, Description: t.Description, InputSchema: schema})
		seen[t.Name] = true
	}
	for _, n := range s.MockOrder {
		if !seen[n] {
			seen[n] = true
			defs = append(defs, model.ToolDef{Name: n, InputSchema: openObject})
		}
	}
	return defs
}

// caseToolDefs adds the tools only the case mocks to the suite's.
func caseToolDefs(suite []model.ToolDef, c *spec.Case) []model.ToolDef {
	defs := suite
	for _, n := range c.MockOrder {
		if !slices.ContainsFunc(defs, func(d model.ToolDef) bool { return d.Name == n }) {
			defs = append(slices.Clip(defs), model.ToolDef{Name: n, InputSchema: openObject})
		}
	}
	return defs
}
