package verify

import (
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	v, err := value.ParseString(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Shapes compare by type, not value: a field added, removed or retyped
// is a difference (an array's items merged: a field of one item counts);
// other words, numbers, the order and number of items (an empty array
// included) are not.
func TestShapeDiff(t *testing.T) {
	was := parse(t, `{"id":"a","content":[{"type":"text","text":"hi"},{"type":"tool_use","input":{}}],"usage":{"in":1},"tags":[]}`)
	for _, tt := range []struct {
		now  string
		want string
	}{
		{`{"id":"b","content":[{"type":"tool_use","input":{}},{"type":"text","text":"other words"}],"usage":{"in":99},"tags":["x"]}`, ""},
		{`{"id":"b","content":[{"type":"text","text":"x","input":{}}],"usage":{"in":1,"out":2},"tags":[]}`, "$.usage.out: added (number)"},
		{`{"id":1,"content":[],"tags":[]}`, "$.id: string → number; $.usage: removed (object)"},
		{`{"id":"a","content":[{"kind":"text","input":{}}],"usage":{"in":1},"tags":[]}`, "$.content[].kind: added (string); $.content[].text: removed (string); $.content[].type: removed (string)"},
	} {
		if got := strings.Join(ShapeDiff("$", Shape(was), Shape(parse(t, tt.now))), "; "); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.now, got, tt.want)
		}
	}
}

// An answer's status, body or stream, stop reasons and tool calls.
func TestCompare(t *testing.T) {
	body := func(s string) *model.Answer { return &model.Answer{Status: 200, Body: []byte(s)} }
	was := body(`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"lookup","arguments":"{\"id\":\"A\"}"}}]}}]}`)
	same := Compare(wire.OpenAIChat, was, body(`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"lookup","arguments":"{\"id\":\"B\"}"}}]}}]}`))
	if len(same) > 0 {
		t.Errorf("other values: %q", same)
	}
	got := Compare(wire.OpenAIChat, was, body(`{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"done"}}]}`))
	want := []string{"shape: $.choices[].message.content: null → string", "shape: $.choices[].message.tool_calls: removed (array)", "stop reason: -[tool_calls] +[stop]", "tool calls: -[lookup(id)] +[]"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = Compare(wire.OpenAIChat, was, &model.Answer{Status: 429, Streamed: true, Events: [][]byte{[]byte("data: {}\n\n")}})
	if strings.Join(got, "; ") != "status: -200 +429; stream: -a body +an event stream" {
		t.Errorf("status and stream: %q", got)
	}
}

// A tool's result: an error or not, text or blocks, a JSON text's shape.
func TestResultDiff(t *testing.T) {
	for _, tt := range []struct {
		was, now tool.Result
		want     string
	}{
		{tool.Result{Content: `{"sum":5}`}, tool.Result{Content: `{"sum":7}`}, ""},
		{tool.Result{Content: "Echo: hi"}, tool.Result{Content: "Echo: other"}, ""},
		{tool.Result{Content: `{"sum":5}`}, tool.Result{Content: `{"total":5}`}, "$.sum: removed (number); $.total: added (number)"},
		{tool.Result{Content: "5"}, tool.Result{Content: "five", IsError: true}, "is_error: -false +true; $: number → text"},
		{tool.Result{Content: "x"}, tool.Result{Content: "x", Blocks: []byte(`[{"type":"image"}]`)}, "content: -one text block +content blocks"},
	} {
		if got := strings.Join(resultDiff(tt.was, tt.now), "; "); got != tt.want {
			t.Errorf("%+v → %+v:\n got %s\nwant %s", tt.was, tt.now, got, tt.want)
		}
	}
}
