package plan_test

import (
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// The model APIs an agent program's request can come in, at their paths.
var offeredAPIs = []struct {
	api  wire.API
	path string
}{
	{wire.OpenAIChat, "/v1/chat/completions"},
	{wire.OpenAIResponses, "/v1/responses"},
	{wire.Anthropic, "/v1/messages"},
	{wire.Gemini, "/v1beta/models/m:generateContent"},
	{wire.Ollama, "/api/chat"},
	{wire.Bedrock, "/model/m/converse"},
}

// The tools an agent program offers come from its requests' bytes, and a
// suite declares any schema: reading them (agent.offered_tools) does not
// panic and reads the same twice; a tool offered as declared has no
// difference; the differences of one tool stay within their bound
// (plan.maxDeclDiffs, then "and N more") and come in the same order.
func FuzzOfferedTools(f *testing.F) {
	f.Add(uint8(0), []byte(`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"lookup","description":"d","parameters":{"type":"object","properties":{"id":{"type":"integer"}},"additionalProperties":false}}}]}`), []byte(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`))
	f.Add(uint8(1), []byte(`{"model":"m","input":"hi","tools":[{"type":"function","name":"f","parameters":{"type":"object","properties":{}}}]}`), []byte(`{"$schema":"x","type":"OBJECT","required":[]}`))
	f.Add(uint8(2), []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"name":"f","input_schema":{"type":"object","properties":{"a":{"type":"array","items":[1,2,3,4,5,6,7,8,9,10]}}}}]}`), []byte(`{"type":"object","properties":{"a":{"type":"array","items":[0,0,0,0,0,0,0,0,0,0,0]}}}`))
	f.Add(uint8(3), []byte(`{"contents":[],"tools":[{"functionDeclarations":[{"name":"f","parameters":{"type":"OBJECT"}}]}]}`), []byte(`{"type":"object"}`))
	f.Add(uint8(4), []byte(`{"model":"m","messages":[],"tools":[{"type":"function","function":{"name":"f"}}]}`), []byte(`null`))
	f.Add(uint8(5), []byte(`{"messages":[],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{"type":"object"}}}}]}}`), []byte(`{"type":"object","properties":{"b":true}}`))
	// Entries of every JSON type where a tool or a message is due.
	for i := range offeredAPIs {
		f.Add(uint8(i), []byte(`{"model":"m","messages":[1,"x",null,{"role":1}],"input":[1],"contents":[null],"tools":[1,"x",null,[],{"function":1,"functionDeclarations":[1]}],"toolConfig":{"tools":[1,{"toolSpec":1}]}}`), []byte(`{}`))
	}
	f.Fuzz(func(t *testing.T, which uint8, body, declared []byte) {
		a := offeredAPIs[int(which)%len(offeredAPIs)]
		read := func() *model.Request {
			c := &model.Call{Wire: a.api, HTTP: httptest.NewRequest("POST", a.path, nil), Body: body}
			req, err := c.Request()
			if err != nil {
				return nil
			}
			return req
		}
		req := read()
		if again := read(); !reflect.DeepEqual(req, again) {
			t.Fatalf("%s read twice: %+v, then %+v", a.api, req, again)
		}
		if req == nil {
			return
		}
		decl, err := value.ParseString(string(declared))
		if err != nil {
			decl = nil
		}
		for _, d := range req.Tools {
			same := plan.Tool{Name: d.Name, Description: d.Description, Input: d.InputSchema}
			for _, offered := range []bool{true, false} {
				if diffs := same.Diff(d, offered); len(diffs) > 0 {
					t.Fatalf("%q offered as declared differs: %q", d.Name, diffs)
				}
			}
			other := plan.Tool{Name: d.Name, Description: "a declared description", Input: decl}
			diffs := other.Diff(d, true)
			if len(diffs) > 9 {
				t.Fatalf("%d differences listed, past the bound: %q", len(diffs), diffs)
			}
			if again := other.Diff(d, true); !slices.Equal(diffs, again) {
				t.Fatalf("differences twice:\n%q\n%q", diffs, again)
			}
		}
	})
}
