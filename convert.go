package dryfire

// The one place where the public types meet the internal ones: every
// conversion between them, both ways, is here.

import (
	"github.com/dryfire-dev/dryfire/drill"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/workspace"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

func specDiagnostic(d Diagnostic) yamlpos.Diagnostic {
	return yamlpos.Diagnostic{Pos: yamlpos.Pos(d.Pos), Severity: yamlpos.Severity(d.Severity), Message: d.Message}
}

func specDiagnostics(ds Diagnostics) yamlpos.Diagnostics {
	out := make(yamlpos.Diagnostics, len(ds))
	for i, d := range ds {
		out[i] = specDiagnostic(d)
	}
	return out
}

func diagnosticsOf(ds yamlpos.Diagnostics) Diagnostics {
	if ds == nil {
		return nil
	}
	out := make(Diagnostics, len(ds))
	for i, d := range ds {
		out[i] = Diagnostic{Pos: Pos(d.Pos), Severity: Severity(d.Severity), Message: d.Message}
	}
	return out
}

// publicError is err with the internal Diagnostics it may be replaced by
// the public ones.
func publicError(err error) error {
	if ds, ok := err.(yamlpos.Diagnostics); ok {
		return diagnosticsOf(ds)
	}
	return err
}

func reportOf(r *report.Report) *Report {
	out := &Report{Cases: make([]CaseResult, len(r.Cases)), Summary: summaryOf(r.Summary), Coverage: coverageOf(r.Coverage)}
	if s := r.Shard; s != nil {
		out.Shard = &ShardInfo{Batch: s.Batch, Index: s.Index, Count: s.Count, Cases: s.Cases, Positions: s.Positions, Suites: s.Suites, Build: s.Build,
			Balanced: s.Balanced, Infra: s.Infra, Live: s.Live}
	}
	for i := range r.Cases {
		out.Cases[i] = caseOf(&r.Cases[i])
	}
	if rc := r.Recheck; rc != nil {
		out.Recheck = &RecheckInfo{Report: rc.Report, Cases: rc.Cases, Changed: rc.Changed, Kept: rc.Kept}
	}
	for _, m := range r.Mutation {
		out.Mutation = append(out.Mutation, MutationScore(m))
	}
	return out
}

func summaryOf(s report.Summary) Summary {
	return Summary{Passed: s.Passed, Failed: s.Failed, Error: s.Error, Skipped: s.Skipped, Flaky: s.Flaky, Usage: Usage(s.Usage), UsageByRole: roleUsageOf(s.UsageByRole)}
}

func caseOf(c *report.Case) CaseResult {
	out := CaseResult{
		Suite: c.Suite, Name: c.Name, Input: c.Input, Status: Status(c.Status), Reason: c.Reason, Output: c.Output, Turns: c.Turns,
		Usage: Usage(c.Usage), UsageByRole: roleUsageOf(c.UsageByRole), Notes: c.Notes, Cassette: c.Cassette, Replay: c.Replay, Stderr: c.Stderr,
		Verdict: Status(c.Verdict), Seed: c.Seed, BuildHash: c.BuildHash, Build: c.Build, InitialState: c.InitialState, State: c.State,
		DurationMS: c.DurationMS, Infra: c.Infra, Live: c.Live,
	}
	if c.Checks != nil {
		out.Checks = make([]CheckResult, len(c.Checks))
		for i, ch := range c.Checks {
			out.Checks[i] = CheckResult{Check: ch.Check, At: ch.At, Passed: ch.Passed, Message: ch.Message, Invariant: ch.Invariant, Judge: (*Judged)(ch.Judge)}
		}
	}
	if c.ToolCalls != nil {
		out.ToolCalls = make([]ToolCall, len(c.ToolCalls))
		for i, tc := range c.ToolCalls {
			out.ToolCalls[i] = ToolCall{Turn: tc.Turn, ID: tc.ID, Tool: tc.Tool, Args: tc.Args, Outcome: Outcome(tc.Outcome), Where: tc.Where,
				Rule: tc.Rule, IsError: tc.IsError, Result: tc.Result, NearMiss: (*NearMiss)(tc.NearMiss), Asked: (*Asked)(tc.Asked)}
		}
	}
	if c.Evidence != nil {
		out.Evidence = make([]Evidence, len(c.Evidence))
		for i, e := range c.Evidence {
			out.Evidence[i] = Evidence{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Operation: e.Operation, Arguments: e.Arguments,
				IdempotencyKey: e.IdempotencyKey, Fault: e.Fault, Outcome: e.Outcome, IsError: e.IsError, Result: e.Result,
				StateVersion: e.StateVersion, HTTP: (*drill.HTTPEvidence)(e.HTTP), LatencyMS: e.LatencyMS}
			if o := e.Override; o != nil {
				out.Evidence[i].Override = &drill.OverrideEvidence{ID: o.ID, Scope: o.Scope.String(), Outcome: o.Outcome, MatchCount: o.MatchCount, Remaining: o.Remaining}
			}
		}
	}
	if c.Events != nil {
		out.Events = make([]Event, len(c.Events))
		for i, e := range c.Events {
			out.Events[i] = Event(e)
		}
	}
	for _, f := range c.ModelFaults {
		out.ModelFaults = append(out.ModelFaults, ModelFault(f))
	}
	for _, s := range c.Script {
		out.Script = append(out.Script, ScriptTurn(s))
	}
	for _, u := range c.MCP {
		out.MCP = append(out.MCP, MCPUse(u))
	}
	if n := c.Network; n != nil {
		out.Network = &Network{Mode: n.Mode, Attempts: make([]NetworkAttempt, len(n.Attempts))}
		for i, a := range n.Attempts {
			out.Network.Attempts[i] = NetworkAttempt(a)
		}
	}
	if w := c.Workspace; w != nil {
		out.Workspace = &Workspace{Template: w.Template, More: w.More, Kept: w.Kept, Changes: make([]WorkspaceChange, len(w.Changes))}
		for i, ch := range w.Changes {
			out.Workspace.Changes[i] = WorkspaceChange(ch)
		}
	}
	for _, m := range c.Conversation {
		out.Conversation = append(out.Conversation, Message(m))
	}
	out.Mutation = (*CaseMutation)(c.Mutation)
	if t := c.Trials; t != nil {
		out.Trials = &Trials{N: t.N, Passed: t.Passed, Threshold: t.Threshold, Flaky: t.Flaky, PassAtK: t.PassAtK, PassHatK: t.PassHatK, Shown: t.Shown,
			Runs: make([]CaseResult, len(t.Runs))}
		for i := range t.Runs {
			out.Trials.Runs[i] = caseOf(&t.Runs[i])
		}
	}
	return out
}

func internalReport(r *Report) *report.Report {
	out := &report.Report{Cases: make([]report.Case, len(r.Cases)), Summary: report.Summary{
		Passed: r.Summary.Passed, Failed: r.Summary.Failed, Error: r.Summary.Error, Skipped: r.Summary.Skipped, Flaky: r.Summary.Flaky,
		Usage: model.Usage(r.Summary.Usage), UsageByRole: internalRoleUsage(r.Summary.UsageByRole)}, Coverage: internalCoverage(r.Coverage)}
	if s := r.Shard; s != nil {
		out.Shard = &report.Shard{Batch: s.Batch, Index: s.Index, Count: s.Count, Cases: s.Cases, Positions: s.Positions, Suites: s.Suites, Build: s.Build,
			Balanced: s.Balanced, Infra: s.Infra, Live: s.Live}
	}
	for i := range r.Cases {
		out.Cases[i] = *internalCase(&r.Cases[i])
	}
	if rc := r.Recheck; rc != nil {
		out.Recheck = &report.Recheck{Report: rc.Report, Cases: rc.Cases, Changed: rc.Changed, Kept: rc.Kept}
	}
	for _, m := range r.Mutation {
		out.Mutation = append(out.Mutation, report.MutationScore(m))
	}
	return out
}

func internalCase(c *CaseResult) *report.Case {
	out := &report.Case{
		Suite: c.Suite, Name: c.Name, Input: c.Input, Status: report.Status(c.Status), Reason: c.Reason, Output: c.Output, Turns: c.Turns,
		Usage: model.Usage(c.Usage), UsageByRole: internalRoleUsage(c.UsageByRole), Notes: c.Notes, Cassette: c.Cassette, Replay: c.Replay, Stderr: c.Stderr,
		Verdict: report.Status(c.Verdict), Seed: c.Seed, BuildHash: c.BuildHash, Build: c.Build, InitialState: c.InitialState, State: c.State,
		DurationMS: c.DurationMS, Infra: c.Infra, Live: c.Live,
	}
	if c.Checks != nil {
		out.Checks = make([]report.Check, len(c.Checks))
		for i, ch := range c.Checks {
			out.Checks[i] = report.Check{Check: ch.Check, At: ch.At, Passed: ch.Passed, Message: ch.Message, Invariant: ch.Invariant, Judge: (*report.Judged)(ch.Judge)}
		}
	}
	if c.ToolCalls != nil {
		out.ToolCalls = make([]report.ToolCall, len(c.ToolCalls))
		for i, tc := range c.ToolCalls {
			out.ToolCalls[i] = report.ToolCall{Turn: tc.Turn, ID: tc.ID, Tool: tc.Tool, Args: tc.Args, Outcome: tool.Outcome(tc.Outcome), Where: tc.Where,
				Rule: tc.Rule, IsError: tc.IsError, Result: tc.Result, NearMiss: (*tool.NearMiss)(tc.NearMiss), Asked: (*tool.Asked)(tc.Asked)}
		}
	}
	if c.Evidence != nil {
		out.Evidence = make([]world.Evidence, len(c.Evidence))
		for i, e := range c.Evidence {
			out.Evidence[i] = world.Evidence{Seq: e.Seq, Time: e.Time, Actor: e.Actor, Operation: e.Operation, Arguments: e.Arguments,
				IdempotencyKey: e.IdempotencyKey, Fault: e.Fault, Outcome: e.Outcome, IsError: e.IsError, Result: e.Result,
				StateVersion: e.StateVersion, HTTP: (*world.HTTPEvidence)(e.HTTP), LatencyMS: e.LatencyMS}
			if o := e.Override; o != nil {
				ov := &world.OverrideEvidence{ID: o.ID, Outcome: o.Outcome, MatchCount: o.MatchCount, Remaining: o.Remaining}
				ov.Scope.UnmarshalText([]byte(o.Scope)) // an unknown name is the lowest scope
				out.Evidence[i].Override = ov
			}
		}
	}
	if c.Events != nil {
		out.Events = make([]world.Emitted, len(c.Events))
		for i, e := range c.Events {
			out.Events[i] = world.Emitted(e)
		}
	}
	for _, f := range c.ModelFaults {
		out.ModelFaults = append(out.ModelFaults, report.ModelFault(f))
	}
	for _, s := range c.Script {
		out.Script = append(out.Script, report.ScriptTurn(s))
	}
	for _, u := range c.MCP {
		out.MCP = append(out.MCP, tool.MCPUse(u))
	}
	if n := c.Network; n != nil {
		out.Network = &report.Network{Mode: n.Mode, Attempts: make([]netjail.Attempt, len(n.Attempts))}
		for i, a := range n.Attempts {
			out.Network.Attempts[i] = netjail.Attempt(a)
		}
	}
	if w := c.Workspace; w != nil {
		out.Workspace = &report.Workspace{Template: w.Template, More: w.More, Kept: w.Kept, Changes: make([]workspace.Change, len(w.Changes))}
		for i, ch := range w.Changes {
			out.Workspace.Changes[i] = workspace.Change(ch)
		}
	}
	for _, m := range c.Conversation {
		out.Conversation = append(out.Conversation, report.Message(m))
	}
	out.Mutation = (*report.CaseMutation)(c.Mutation)
	if t := c.Trials; t != nil {
		out.Trials = &report.Trials{N: t.N, Passed: t.Passed, Threshold: t.Threshold, Flaky: t.Flaky, PassAtK: t.PassAtK, PassHatK: t.PassHatK, Shown: t.Shown,
			Runs: make([]report.Case, len(t.Runs))}
		for i := range t.Runs {
			out.Trials.Runs[i] = *internalCase(&t.Runs[i])
		}
	}
	return out
}

func roleUsageOf(u *report.RoleUsage) *RoleUsage {
	if u == nil {
		return nil
	}
	return &RoleUsage{Agent: Usage(u.Agent), Judge: Usage(u.Judge), User: Usage(u.User)}
}

func internalRoleUsage(u *RoleUsage) *report.RoleUsage {
	if u == nil {
		return nil
	}
	return &report.RoleUsage{Agent: model.Usage(u.Agent), Judge: model.Usage(u.Judge), User: model.Usage(u.User)}
}
