package model_test

import (
	"context"
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
