package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Parse reads a JSON report (dryfire run --json), its calls' arguments
// on one line again (CompactArgs).
func Parse(data []byte) (*Report, error) {
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("not a dryfire JSON report: %w", err)
	}
	if r.Cases == nil {
		return nil, errors.New("not a dryfire JSON report: it has no cases")
	}
	for i := range r.Cases {
		CompactArgs(&r.Cases[i])
	}
	return &r, nil
}

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
