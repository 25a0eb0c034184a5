package report

import (
	"bytes"
	"encoding/json"

	"github.com/dryfire-dev/dryfire/report"
)

// The report's types are the public package report's: a run, a merge, a
// comparison and the text, JSON, JUnit and HTML reports share them, with
// nothing to convert.
type (
	Report         = report.Report
	Summary        = report.Summary
	Usage          = report.Usage
	RoleUsage      = report.RoleUsage
	Status         = report.Status
	Case           = report.Case
	Check          = report.Check
	Judged         = report.Judged
	ToolCall       = report.ToolCall
	Message        = report.Message
	ScriptTurn     = report.ScriptTurn
	ModelFault     = report.ModelFault
	Network        = report.Network
	NetworkAttempt = report.NetworkAttempt
	Workspace      = report.Workspace
	Trials         = report.Trials
	Shard          = report.Shard
	Recheck        = report.Recheck
	Coverage       = report.Coverage
	CoverageSuite  = report.CoverageSuite
	CoverageItem   = report.CoverageItem
	Totals         = report.Totals
	CaseMutation   = report.CaseMutation
	MutationScore  = report.MutationScore
	SweepReport    = report.SweepReport
	SweepCase      = report.SweepCase
	SweepPoint     = report.SweepPoint
	PointResult    = report.PointResult
	InjectReport   = report.InjectReport
	InjectCase     = report.InjectCase
	InjectResult   = report.InjectResult
	Proof          = report.Proof
	CaseList       = report.CaseList
	ChangeKind     = report.ChangeKind
	ListedCase     = report.ListedCase
)

// Case statuses.
const (
	Passed  = report.Passed
	Failed  = report.Failed
	Errored = report.Errored
	Skipped = report.Skipped
)

// AddUsage counts tokens a case's judge ("judge") or simulated user
// ("user") spent: into the case's Usage and, split from the agent's
// (Usage so far), into UsageByRole. Nothing spent changes nothing.
func AddUsage(c *Case, role string, u Usage) {
	if u.InputTokens == 0 && u.OutputTokens == 0 {
		return
	}
	if c.UsageByRole == nil {
		c.UsageByRole = &RoleUsage{Agent: c.Usage}
	}
	to := &c.UsageByRole.Agent
	switch role {
	case "judge":
		to = &c.UsageByRole.Judge
	case "user":
		to = &c.UsageByRole.User
	}
	for _, t := range []*Usage{to, &c.Usage} {
		t.InputTokens += u.InputTokens
		t.OutputTokens += u.OutputTokens
	}
}

// CompactArgs puts a stored case's call arguments (and its trials') on
// one line again, as its run kept them: the JSON report has them
// indented, and a merge's or a re-check's text would show them so.
func CompactArgs(c *Case) {
	for i := range c.ToolCalls {
		var b bytes.Buffer
		if a := c.ToolCalls[i].Args; json.Compact(&b, a) == nil && b.Len() != len(a) {
			c.ToolCalls[i].Args = b.Bytes()
		}
	}
	if c.Trials != nil {
		for i := range c.Trials.Runs {
			CompactArgs(&c.Trials.Runs[i])
		}
	}
}
