package model_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The built-in loop's script honours guards as the wire's does: a turn
// waits for the request its when: holds for, and the guards decoded from
// the suite (tools, tool_result, user, matches) read the request.
func TestScriptGuardsInTheLoop(t *testing.T) {
	s := model.NewScript(script(t, `      - when: {tool_result: lookup_order, matches: "gold"}
        text: Gold tier.
      - when: {user: refund, tools: [lookup_order]}
        tool_calls: [{name: lookup_order, args: {}}]
`))
	tools := []model.ToolDef{{Name: "lookup_order"}, {Name: "issue_refund"}}
	req := &model.Request{Tools: tools, Messages: []model.Message{{Role: model.User, Text: "please refund A-1"}}}
	r, err := s.Generate(context.Background(), req)
	if err != nil || len(r.ToolCalls) != 1 || r.ToolCalls[0].Name != "lookup_order" {
		t.Fatalf("first: %+v %v", r, err)
	}
	req.Messages = append(req.Messages,
		model.Message{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "call_2_1", Name: "lookup_order"}}},
		model.Message{Role: model.ToolRole, CallID: "call_2_1", Text: `{"tier":"gold"}`})
	r, err = s.Generate(context.Background(), req)
	if err != nil || r.Text != "Gold tier." {
		t.Fatalf("second: %+v %v", r, err)
	}
	if got := s.Served(); len(got) != 2 || got[0] != (model.Served{Request: 1, Turn: 2}) || got[1] != (model.Served{Request: 2, Turn: 1}) {
		t.Errorf("served %+v", got)
	}
	_, err = s.Generate(context.Background(), req)
	want := `model request 3 matches no turn of the script: all 2 turns are served (turn 2 (request 1), turn 1 (request 2)); the request's last message: tool "lookup_order": "{\"tier\":\"gold\"}"; add a turn for it (a guarded one, with when:, for a call the agent makes besides its conversation)`
	if err == nil || err.Error() != want {
		t.Errorf("past the script: %v\nwant %s", err, want)
	}
}

// A request's last message is quoted cut short: a tool result of
// megabytes makes a line of the report, not a copy of itself.
func TestScriptQuotesBounded(t *testing.T) {
	s := model.NewScript(script(t, "      - text: ok\n"))
	big := strings.Repeat("é", 1<<20)
	p, err := s.Pick(&model.Request{Messages: []model.Message{{Role: model.User, Text: big}}})
	if err != nil || len(p.Last) > 200 || !strings.HasSuffix(p.Last, `…"`) {
		t.Errorf("last message %d bytes: %.80q (%v)", len(p.Last), p.Last, err)
	}
	_, err = s.Pick(&model.Request{Messages: []model.Message{{Role: model.ToolRole, CallID: "x", Text: big}}})
	if err == nil || len(err.Error()) > 600 {
		t.Errorf("error %d bytes", len(err.Error()))
	}
}

// The issue 36 round: 20,000 when.matches guards against a 100 KB message
// took 41.6 s for one request. The work of a request's guards is bounded
// (model.MaxGuardSteps: each matches costs the last message's length
// times its pattern's size), and past it the request is an error naming
// the bound, at the turn whose guard was not tried. A script of ordinary
// size is served as before.
func TestScriptGuardWorkIsBounded(t *testing.T) {
	var b strings.Builder
	for i := range 2000 {
		fmt.Fprintf(&b, "      - {when: {matches: '(?i)needle-%d'}, text: t%d}\n", i, i)
	}
	b.WriteString("      - {text: done}\n")
	s := model.NewScript(script(t, b.String()))
	big := strings.Repeat("hay ", 25_000)
	_, err := s.Pick(&model.Request{Messages: []model.Message{{Role: model.User, Text: big}}})
	var over *model.GuardWorkError
	if !errors.As(err, &over) || !strings.Contains(err.Error(), "(model.MaxGuardSteps:") || over.Turn < 2 || over.Turn > 200 {
		t.Fatalf("2,000 guards on 100 KB: %v", err)
	}
	if s.Served() != nil {
		t.Errorf("served %v", s.Served())
	}
	// 50 guards on 10 KB: served.
	b.Reset()
	for i := range 50 {
		fmt.Fprintf(&b, "      - {when: {matches: '(?i)needle-%d\\b'}, text: t%d}\n", i, i)
	}
	b.WriteString("      - {when: {matches: '(?i)needle-49'}, text: found}\n")
	s = model.NewScript(script(t, b.String()))
	p, err := s.Pick(&model.Request{Messages: []model.Message{{Role: model.User, Text: strings.Repeat("hay ", 2_500) + "NEEDLE-49"}}})
	if err != nil || p.Turn != 50 || p.T.Text != "t49" {
		t.Errorf("50 guards on 10 KB: turn %d, %v", p.Turn, err)
	}
}

// Claude Code sends a user's words with a tool result after a long call
// ("The user hasn't heard from you in a while…", in the same user message
// as the tool_result block): the request still answers the call, and a
// when: {tool_result: NAME} guard holds for it. A user's message after the
// assistant's answer (no tool result since) does not.
func TestScriptToolResultWithAUsersWords(t *testing.T) {
	s := model.NewScript(script(t, `      - when: {tool_result: Bash}
        text: Tests pass.
      - when: {tool_result: false}
        text: Nothing ran.
`))
	req := &model.Request{Messages: []model.Message{
		{Role: model.User, Text: "fix it"},
		{Role: model.Assistant, ToolCalls: []tool.Call{{ID: "toolu_1", Name: "Bash"}}},
		{Role: model.ToolRole, CallID: "toolu_1", Text: "OK"},
		{Role: model.User, Text: "The user hasn't heard from you in a while. Give a brief update."},
	}}
	p, err := s.Pick(req)
	if err != nil || p.T.Text != "Tests pass." {
		t.Fatalf("a tool result with a user's words: %+v %v", p, err)
	}
	req.Messages = append(req.Messages, model.Message{Role: model.Assistant, Text: "Tests pass."}, model.Message{Role: model.User, Text: "thanks"})
	if p, err = s.Pick(req); err != nil || p.T.Text != "Nothing ran." {
		t.Errorf("a user's message after the answer: %+v %v", p, err)
	}
}
