package check

import (
	"encoding/json"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// TestAskChecks: elicited and sampled count the calls of the tool whose
// request the client answered as the check says; a request not answered
// never counts; a failure lists what the client answered.
func TestAskChecks(t *testing.T) {
	asked := func(method, answer, err string) *tool.Asked {
		a := &tool.Asked{Method: method, Request: json.RawMessage(`{}`), Error: err}
		if answer != "" {
			a.Answer = json.RawMessage(answer)
		}
		return a
	}
	call := func(name string, args map[string]any, a *tool.Asked) tool.Record {
		return tool.Record{Call: tool.Call{Name: name}, Args: args, Result: tool.Result{Asked: a}}
	}
	paris := map[string]any{"to": "Paris"}
	f := &Facts{Calls: []tool.Record{
		call("book", paris, asked("elicitation/create", `{"action":"accept","content":{"confirm":true,"seat":"aisle"}}`, "")),
		call("book", map[string]any{"to": "Oslo"}, asked("elicitation/create", `{"action":"decline"}`, "")),
		call("book", paris, asked("elicitation/create", "", "the client does not declare the elicitation capability")),
		call("sum", nil, asked("sampling/createMessage", `{"content":{"text":"Fire in the printer.","type":"text"},"model":"m1","role":"assistant"}`, "")),
		call("look", nil, nil),
	}}
	two, once, zero := 2, 1, 0
	with := func(m map[string]any) *value.Pattern { return value.Compile(m) }
	text := func(s string) *string { return &s }
	tests := []struct {
		c    spec.Check
		pass bool
		msg  string
	}{
		{spec.Check{Kind: spec.CheckElicited, Tool: "book"}, true, "an elicitation during a call of book answered: 2 times"},
		{spec.Check{Kind: spec.CheckElicited, Tool: "book", Action: "accept", AnswerContent: with(map[string]any{"seat": "aisle"})}, true,
			`an elicitation during a call of book answered accept with {"seat":"aisle"}: 1 time`},
		{spec.Check{Kind: spec.CheckElicited, Tool: "book", Action: "accept", AnswerContent: with(map[string]any{"seat": "window"})}, false,
			`expected an elicitation during a call of book answered accept with {"seat":"window"}; the client answered: accept {"confirm":true,"seat":"aisle"}; decline; no answer (the client does not declare the elicitation capability)`},
		{spec.Check{Kind: spec.CheckElicited, Tool: "book", With: with(map[string]any{"to": "Oslo"}), Action: "accept"}, false,
			`expected an elicitation during a call of book with {"to":"Oslo"} answered accept; the client answered: decline`},
		{spec.Check{Kind: spec.CheckElicited, Tool: "book", Action: "decline", Times: &two}, false,
			`expected an elicitation during a call of book answered decline 2 times; 1 time (the client answered: accept {"confirm":true,"seat":"aisle"}; decline; no answer (the client does not declare the elicitation capability))`},
		{spec.Check{Kind: spec.CheckElicited, Tool: "book", Action: "cancel", Times: &zero}, true, "an elicitation during a call of book answered cancel: 0 times"},
		{spec.Check{Kind: spec.CheckElicited, Tool: "look"}, false, "expected an elicitation during a call of look answered; no call of look asked the client (1 call)"},
		{spec.Check{Kind: spec.CheckElicited, Tool: "nope"}, false, "expected an elicitation during a call of nope answered; nope was never called"},
		{spec.Check{Kind: spec.CheckElicited, Tool: "sum"}, false, "expected an elicitation during a call of sum answered; no call of sum asked the client (1 call)"},
		{spec.Check{Kind: spec.CheckSampled, Tool: "sum", Contains: text("printer"), Model: "m1", Times: &once}, true,
			`a sampling request during a call of sum answered by model m1 with text containing "printer": 1 time`},
		{spec.Check{Kind: spec.CheckSampled, Tool: "sum", Contains: text("toner")}, false,
			`expected a sampling request during a call of sum answered with text containing "toner"; the client answered: m1: "Fire in the printer."`},
		{spec.Check{Kind: spec.CheckSampled, Tool: "sum", Model: "m2"}, false,
			`expected a sampling request during a call of sum answered by model m2; the client answered: m1: "Fire in the printer."`},
	}
	for _, tt := range tests {
		pass, msg := one(&tt.c, f)
		if pass != tt.pass || msg != tt.msg {
			t.Errorf("%s %s:\n got %v %q\nwant %v %q", tt.c.Kind, tt.c.Tool, pass, msg, tt.pass, tt.msg)
		}
	}
}
