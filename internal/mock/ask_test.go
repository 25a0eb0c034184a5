package mock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// fakeAsker answers every ask with answer (or err), keeping what it was
// asked.
type fakeAsker struct {
	answer string
	err    error
	asked  []string
}

func (f *fakeAsker) Ask(_ context.Context, a *tool.Ask) ([]byte, error) {
	f.asked = append(f.asked, a.Method+" "+string(a.Params))
	return []byte(f.answer), f.err
}

const asksSuite = header + `mocks:
  book:
    - elicit:
        message: Which seat?
        schema: {type: object, properties: {seat: {type: string, enum: [aisle, window]}, n: {type: integer}}, required: [seat]}
        declined: {error: "no booking ({{elicit.action}})"}
      sequence:
        - return: {seat: "{{elicit.content.seat}}", n: "{{elicit.content.n}}", all: "{{elicit.content}}", text: "seat {{elicit.content.seat}}, {{elicit.content.n}} of {{elicit.content}}"}
        - content: [{type: text, text: "{{elicit.content.seat}}: {{elicit.content.n}}"}]
  sum:
    - sample: {messages: [hi, {role: assistant, text: ho}], system_prompt: Be brief., max_tokens: 9}
      error: "{{sample.model}} said {{sample.text}} ({{sample.stopReason}}), {{other}}"
` + oneCase

// TestAskFillsTheOutcome: a rule's elicit or sample goes through the
// context's asker with its params as MCP writes them; the answer fills
// the outcome's placeholders (a string that is one placeholder takes the
// value's type; text elsewhere; null and nothing for a field not given),
// declined answers the rule's declined, and each exchange is on the
// result.
func TestAskFillsTheOutcome(t *testing.T) {
	rec := session(t, asksSuite, 0)
	accept := &fakeAsker{answer: `{"action":"accept","content":{"seat":"aisle","n":2},"_meta":{"x":1}}`}
	call := func(a tool.Asker, name string) tool.Result {
		ctx := context.Background()
		if a != nil {
			ctx = tool.WithAsker(ctx, a)
		}
		return rec.Call(ctx, tool.Call{Name: name, Args: "{}"})
	}
	type got struct {
		Outcome       tool.Outcome
		Content       string
		IsError       bool
		Answer, Error string
	}
	view := func(r tool.Result) got {
		g := got{Outcome: r.Outcome, Content: r.Content, IsError: r.IsError}
		if r.Asked != nil {
			g.Answer, g.Error = string(r.Asked.Answer), r.Asked.Error
		}
		return g
	}
	results := []got{
		view(call(accept, "book")),
		view(call(&fakeAsker{answer: `{"action":"accept","content":{"seat":"window"}}`}, "book")),
		view(call(&fakeAsker{answer: `{"action":"cancel"}`}, "book")),
		view(call(&fakeAsker{answer: `{"action":"accept","content":{"seat":"middle"}}`}, "book")),
		view(call(&fakeAsker{answer: `{"action":"maybe"}`}, "book")),
		view(call(&fakeAsker{err: errors.New("the client does not declare the elicitation capability")}, "book")),
		view(call(nil, "book")),
		view(call(&fakeAsker{answer: `{"role":"assistant","model":"m","content":{"type":"text","text":"hey"},"stopReason":"endTurn"}`}, "sum")),
	}
	const rule = "dryfire: the rule at suite.dryfire.yaml:5 asks the MCP client (elicitation/create) and got no answer: "
	want := []got{
		{tool.Return, `{"all":{"n":2,"seat":"aisle"},"n":2,"seat":"aisle","text":"seat aisle, 2 of {\"n\":2,\"seat\":\"aisle\"}"}`, false, `{"action":"accept","content":{"n":2,"seat":"aisle"}}`, ""},
		{tool.Content, "window: ", false, `{"action":"accept","content":{"seat":"window"}}`, ""},
		{tool.Error, "no booking (cancel)", true, `{"action":"cancel"}`, ""},
		{tool.Error, rule + `the accepted content {"seat":"middle"} does not match the elicit schema: /seat: value must be one of 'aisle', 'window'`, true, "",
			`the accepted content {"seat":"middle"} does not match the elicit schema: /seat: value must be one of 'aisle', 'window'`},
		{tool.Error, rule + `the answer's action is "maybe", not accept, decline or cancel`, true, "", `the answer's action is "maybe", not accept, decline or cancel`},
		{tool.Error, rule + "the client does not declare the elicitation capability", true, "", "the client does not declare the elicitation capability"},
		{tool.Error, rule + "this call did not come over MCP (the built-in loop, POST /tools/NAME), so there is no client to ask", true, "",
			"this call did not come over MCP (the built-in loop, POST /tools/NAME), so there is no client to ask"},
		{tool.Error, "m said hey (endTurn), {{other}}", true, `{"content":{"text":"hey","type":"text"},"model":"m","role":"assistant","stopReason":"endTurn"}`, ""},
	}
	if diff := cmp.Diff(want, results); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	wantAsked := []string{
		`elicitation/create {"message":"Which seat?","mode":"form","requestedSchema":{"properties":{"n":{"type":"integer"},"seat":{"enum":["aisle","window"],"type":"string"}},"required":["seat"],"type":"object"}}`,
	}
	if diff := cmp.Diff(wantAsked, accept.asked); diff != "" {
		t.Errorf("asked (-want +got):\n%s", diff)
	}
	set := mock.Compile(load(t, asksSuite, nil))
	if set.Pure("book") || !set.Asks("book") || !set.Asks("sum") || cmp.Diff([]string{"book", "sum"}, set.AskingTools()) != "" {
		t.Errorf("Pure, Asks, AskingTools: %v %v %v %v", set.Pure("book"), set.Asks("book"), set.Asks("sum"), set.AskingTools())
	}
}
