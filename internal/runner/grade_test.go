package runner

import (
	"strconv"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/report"
)

// A judge's answer is read for the first JSON object with a verdict,
// wherever it is; anything else is no verdict, quoted.
func TestParseVerdict(t *testing.T) {
	for _, tt := range []struct {
		answer  string
		pass    bool
		score   string // "" when none
		reason  string
		problem string // a substring of the problem; "" when a verdict
	}{
		{`{"pass": true, "score": 0.9, "reasoning": "ok"}`, true, "0.9", "ok", ""},
		{"```json\n{\"pass\": false, \"score\": 0.2, \"reasoning\": \" no \"}\n```", false, "0.2", "no", ""},
		{`The verdict: {"note": {"x": 1}} then {"pass": true, "reasoning": "fine"}`, true, "", "fine", ""},
		{`{"score": 0.6}`, true, "0.6", "", ""},
		{`{"score": 0.4}`, false, "0.4", "", ""},
		{`{"pass": true, "score": 7}`, false, "", "", "its score 7 is not between 0 and 1"},
		{`I think it is fine.`, false, "", "", `its answer is not a verdict (a JSON object {"pass": true or false, "score": 0 to 1, "reasoning": "..."}): "I think it is fine."`},
		{`{"reasoning": "no pass, no score"}`, false, "", "", "its answer is not a verdict"},
		{strings.Repeat("x", 400), false, "", "", "… (100 more bytes)"},
	} {
		v := parseVerdict(tt.answer)
		if tt.problem != "" {
			if !strings.Contains(v.Problem, tt.problem) {
				t.Errorf("%.40q: problem %q, want it to hold %q", tt.answer, v.Problem, tt.problem)
			}
			continue
		}
		score := ""
		if v.Score != nil {
			score = strconv.FormatFloat(*v.Score, 'g', -1, 64)
		}
		if v.Problem != "" || v.Pass != tt.pass || score != tt.score || v.Reasoning != tt.reason {
			t.Errorf("%.40q: %+v (score %s), want pass %v score %q reasoning %q", tt.answer, v, score, tt.pass, tt.score, tt.reason)
		}
	}
}

// The judge reads a conversation in order: each user message (after the
// calls the user made on its side), then the tool calls made for the
// reply, then the reply.
func TestJudgeConversation(t *testing.T) {
	c := &report.Case{
		Output: "Bye.",
		ToolCalls: []report.ToolCall{
			{Turn: 1, Tool: "change_address", Actor: "customer", Args: []byte(`{"order_id":"A-1"}`), Result: `{}`},
			{Turn: 2, Tool: "issue_refund", Args: []byte(`{"order_id":"A-1"}`), Result: `{"refund_id":"R-7"}`},
			{Turn: 3, Tool: "notify", Args: []byte(`{}`), Result: "down", IsError: true},
		},
		Conversation: []report.Message{
			{Role: "user", Turn: 1, Text: "I want a refund."},
			{Role: "agent", Turn: 1, Text: "Your order number?", ModelTurn: 1},
			{Role: "user", Turn: 2, Text: "A-1."},
			{Role: "agent", Turn: 2, Text: "Done: R-7.", ModelTurn: 4},
			{Role: "user", Turn: 3, Text: "Thanks."},
			{Role: "agent", Turn: 3, Text: "Bye.", ModelTurn: 5},
		},
	}
	want := `[user] I want a refund.
[agent] Your order number?
[user, as customer] called change_address {"order_id":"A-1"}; it returned: {}
[user] A-1.
[agent, turn 2] called issue_refund {"order_id":"A-1"}; it returned: {"refund_id":"R-7"}
[agent, turn 3] called notify {}; it returned an error: down
[agent] Done: R-7.
[user] Thanks.
[agent] Bye.
`
	if got := judgeConversation("I want a refund.", c); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	c.Conversation, c.ToolCalls = nil, c.ToolCalls[1:] // one turn: no user to act
	if got := judgeConversation("Hi.", c); !strings.HasPrefix(got, "[user] Hi.\n[agent, turn 2] called issue_refund") || !strings.HasSuffix(got, "[agent] Bye.\n") {
		t.Errorf("one turn:\n%s", got)
	}
}
