package modelserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// refundScript is helpers_test.go's fake script as a case's script.
func refundScript() []*spec.Turn {
	return []*spec.Turn{
		{Text: "Let me look.", ToolCalls: []*spec.ScriptCall{{ID: "call_1_1", Name: "lookup_order", ArgsJSON: `{"order_id":"A-991"}`}}},
		{ToolCalls: []*spec.ScriptCall{{ID: "call_2_1", Name: "issue_refund", ArgsJSON: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "Your refund R-1 for order A-991 is done — 120.50 €."},
	}
}

// skeleton is a JSON text's shape: every key path in order with the kind
// of its value, and the values themselves but for what differs between
// two servers answering the same turn (ids, token counts, arguments'
// key order).
func skeleton(t *testing.T, data []byte) []string {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, data)
	}
	var out []string
	ordered := orderedKeys(data)
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			keys := ordered[path]
			if strings.HasSuffix(path, ".input") { // a tool call's arguments: any order
				keys = slices.Sorted(slices.Values(keys))
			}
			for _, k := range keys {
				walk(path+"."+k, x[k])
			}
		case []any:
			out = append(out, fmt.Sprintf("%s: list of %d", path, len(x)))
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			last := path[strings.LastIndex(path, ".")+1:]
			switch {
			case slices.Contains([]string{"id", "item_id", "call_id", "created", "created_at", "system_fingerprint", "arguments", "partial_json", "sequence_number"}, last),
				strings.HasSuffix(last, "tokens"), strings.Contains(path, ".input."):
				out = append(out, fmt.Sprintf("%s: %T", path, v))
			default:
				out = append(out, fmt.Sprintf("%s = %v", path, v))
			}
		}
	}
	walk("", v)
	return out
}

// orderedKeys are the keys of every object of data, in their order, by path.
func orderedKeys(data []byte) map[string][]string {
	out := map[string][]string{}
	d := json.NewDecoder(bytes.NewReader(data))
	var walk func(path string)
	walk = func(path string) {
		tok, err := d.Token()
		if err != nil {
			return
		}
		switch tok {
		case json.Delim('{'):
			for d.More() {
				k, _ := d.Token()
				key := k.(string)
				out[path] = append(out[path], key)
				walk(path + "." + key)
			}
			d.Token()
		case json.Delim('['):
			for i := 0; d.More(); i++ {
				walk(fmt.Sprintf("%s[%d]", path, i))
			}
			d.Token()
		}
	}
	walk("")
	return out
}

// events are a stream's events: each event: name (or "") and its data's
// skeleton.
func events(t *testing.T, body []byte) []string {
	var out []string
	for _, ev := range cassette.SplitEvents(body) {
		name, data := "", ""
		for _, line := range strings.Split(strings.TrimSpace(string(ev)), "\n") {
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
		if data == "[DONE]" {
			out = append(out, name+" [DONE]")
			continue
		}
		out = append(out, name+" "+strings.Join(skeleton(t, []byte(data)), "; "))
	}
	return out
}

// A scripted answer has the shape of the strict fake's answer to the same
// request with the same turn, in every API, streamed or not: the same
// keys in the same order, the same values but for ids and counts, the
// same events in the same order.
func TestScriptedAnswersAreTheFakesShapes(t *testing.T) {
	for _, f := range flavours {
		t.Run(f.String(), func(t *testing.T) {
			fake := newFake(f.api)
			defer fake.Close()
			e := mustNew(t, Options{Scripted: true, Script: refundScript()})
			root := serve(t, e, "/cases/1")
			for i, body := range conversation(f.api, f.stream) {
				want := post(t, http.DefaultClient, fake.URL, f.api, body)
				got := post(t, http.DefaultClient, root, f.api, body)
				if got.status != 200 || want.status != 200 {
					t.Fatalf("request %d: status %d (fake %d): %s", i+1, got.status, want.status, got.body)
				}
				if g, w := got.header.Get("Content-Type"), want.header.Get("Content-Type"); !strings.HasPrefix(g, strings.Split(w, ";")[0]) {
					t.Errorf("request %d: Content-Type %q, the fake's %q", i+1, g, w)
				}
				var gs, ws []string
				if f.stream {
					gs, ws = events(t, got.body), events(t, want.body)
				} else {
					gs, ws = skeleton(t, got.body), skeleton(t, want.body)
				}
				if d := diffLines(ws, gs); d != "" {
					t.Errorf("request %d: the scripted answer differs from the fake's (-fake +scripted):\n%s", i+1, d)
				}
			}
			if n := len(e.ScriptAnswers()); n != 3 || e.ScriptError() != nil {
				t.Errorf("answers %v, error %v", e.ScriptAnswers(), e.ScriptError())
			}
			if e.Turns() != 3 || e.Usage() != (model.Usage{}) {
				t.Errorf("turns %d, usage %+v", e.Turns(), e.Usage())
			}
		})
	}
}

func diffLines(want, got []string) string {
	var b strings.Builder
	for i := 0; i < max(len(want), len(got)); i++ {
		var w, g string
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if w != g {
			fmt.Fprintf(&b, "  %d:\n  - %s\n  + %s\n", i, w, g)
		}
	}
	return b.String()
}

// Guards pick the turn: a title call (no tools offered) takes the guarded
// turn wherever it comes, the others are served in order; a request no
// turn answers, and a turn that calls a tool the request does not offer,
// are refused in the API's shape with a message that says why.
func TestScriptGuards(t *testing.T) {
	yes := true
	title := &spec.Turn{Text: "Refund A-991", When: &spec.Guard{NoTools: true}}
	turns := append([]*spec.Turn{title}, refundScript()...)
	turns[3].When = &spec.Guard{Result: &yes, ResultOf: "issue_refund"}
	e := mustNew(t, Options{Scripted: true, Script: turns})
	root := serve(t, e, "")
	reqs := conversation(wire.OpenAIChat, false)
	titleReq := `{"model":"gpt-test","messages":[{"role":"user","content":"Title for: Please refund order A-991."}]}`
	var texts []string
	for _, body := range []string{reqs[0], titleReq, reqs[1], reqs[2]} {
		r := post(t, http.DefaultClient, root, wire.OpenAIChat, body)
		if r.status != 200 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		var c struct {
			Choices []struct {
				Message struct {
					Content   *string
					ToolCalls []struct{ Function struct{ Name string } } `json:"tool_calls"`
				}
			}
		}
		json.Unmarshal(r.body, &c)
		m := c.Choices[0].Message
		s := ""
		if m.Content != nil {
			s = *m.Content
		}
		for _, tc := range m.ToolCalls {
			s += " →" + tc.Function.Name
		}
		texts = append(texts, s)
	}
	want := []string{"Let me look. →lookup_order", "Refund A-991", " →issue_refund", "Your refund R-1 for order A-991 is done — 120.50 €."}
	if !slices.Equal(texts, want) {
		t.Errorf("answers %q, want %q", texts, want)
	}
	var served []string
	for _, a := range e.ScriptAnswers() {
		served = append(served, fmt.Sprintf("%d→%d %s", a.Request, a.Turn, a.LastMessage))
	}
	wantServed := []string{`1→2 user: "Please refund order A-991."`, `2→1 user: "Title for: Please refund order A-991."`, `3→3 tool "lookup_order": "{\"tier\":\"gold\"}"`, `4→4 tool "issue_refund": "R-1"`}
	if !slices.Equal(served, wantServed) {
		t.Errorf("served %q, want %q", served, wantServed)
	}
	// One more request: every turn is served.
	r := post(t, http.DefaultClient, root, wire.Anthropic, conversation(wire.Anthropic, true)[0])
	wantErr := `{"type":"error","error":{"type":"invalid_request_error","message":"dryfire: model request 5 matches no turn of the script: all 4 turns are served (turn 2 (request 1), turn 1 (request 2), turn 3 (request 3), turn 4 (request 4)); the request's last message: user: \"Please refund order A-991.\"; add a turn for it (a guarded one, with when:, for a call the agent makes besides its conversation)"}}`
	if r.status != 400 || string(r.body) != wantErr {
		t.Errorf("beyond the script: %d %s\nwant %s", r.status, r.body, wantErr)
	}
	var nt *model.NoTurnError
	if err := e.ScriptError(); !errors.As(err, &nt) {
		t.Errorf("ScriptError %v", err)
	}

	// The closest guard, and a tool the request does not offer.
	e = mustNew(t, Options{Scripted: true, Script: []*spec.Turn{
		{Text: "refunds", When: &spec.Guard{User: "refund", Tools: []string{"issue_refund"}}},
		{Text: "x", When: &spec.Guard{Result: &yes}},
	}})
	root = serve(t, e, "")
	r = post(t, http.DefaultClient, root, wire.OpenAIResponses, `{"model":"m","input":"Where is my order?","tools":[{"type":"function","name":"lookup_order"}]}`)
	wantErr = `{"error":{"message":"dryfire: model request 1 matches no turn of the script: no turn is served yet; the request's last message: user: \"Where is my order?\"; closest guard: turn 2: when.tool_result wants the request to end with a tool result; it ends with none","type":"invalid_request_error","param":null,"code":"dryfire_script_no_turn"}}`
	if r.status != 400 || string(r.body) != wantErr {
		t.Errorf("no turn: %d %s\nwant %s", r.status, r.body, wantErr)
	}
	e = mustNew(t, Options{Scripted: true, Script: refundScript()})
	root = serve(t, e, "")
	r = post(t, http.DefaultClient, root, wire.OpenAIChat, `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"search"}}]}`)
	wantErr = `{"error":{"message":"dryfire: script turn 1 calls tool \"lookup_order\", which model request 1 does not offer (it offers \"search\")","type":"invalid_request_error","param":null,"code":"dryfire_script_tool_not_offered"}}`
	if r.status != 400 || string(r.body) != wantErr {
		t.Errorf("not offered: %d %s\nwant %s", r.status, r.body, wantErr)
	}
}

// A Responses namespace's tool (Codex's MCP server dryfire is the
// namespace mcp__dryfire) is scripted as NAMESPACE__NAME; its call goes
// out as the name within the namespace, and comes back so too.
func TestScriptResponsesNamespace(t *testing.T) {
	yes := true
	e := mustNew(t, Options{Scripted: true, Script: []*spec.Turn{
		{ToolCalls: []*spec.ScriptCall{{ID: "call_1", Name: "mcp__dryfire__run_check", ArgsJSON: `{"target":"all"}`}}},
		{Text: "done", When: &spec.Guard{Result: &yes, ResultOf: "mcp__dryfire__run_check"}},
	}})
	root := serve(t, e, "")
	tools := `"tools":[{"type":"function","name":"exec_command"},{"type":"namespace","name":"mcp__dryfire","description":"Tools in the mcp__dryfire namespace.","tools":[{"type":"function","name":"run_check","parameters":{"type":"object"}}]}]`
	r := post(t, http.DefaultClient, root, wire.OpenAIResponses, `{"model":"m","input":"Check it.",`+tools+`}`)
	var out struct {
		Output []struct{ Type, Name, Namespace, Arguments string }
	}
	if err := json.Unmarshal(r.body, &out); r.status != 200 || err != nil || len(out.Output) != 1 {
		t.Fatalf("%d %s", r.status, r.body)
	}
	if o := out.Output[0]; o.Type != "function_call" || o.Name != "run_check" || o.Namespace != "mcp__dryfire" || o.Arguments != `{"target":"all"}` {
		t.Errorf("the call: %+v", o)
	}
	r = post(t, http.DefaultClient, root, wire.OpenAIResponses, `{"model":"m","input":[{"role":"user","content":"Check it."},`+
		`{"type":"function_call","call_id":"call_1","name":"run_check","namespace":"mcp__dryfire","arguments":"{}"},`+
		`{"type":"function_call_output","call_id":"call_1","output":"ok"}],`+tools+`}`)
	if r.status != 200 || !strings.Contains(string(r.body), `"text":"done"`) {
		t.Errorf("the result of the namespaced call: %d %s", r.status, r.body)
	}
}

// Ollama's own API on the script model: a tool call without an id, its
// result named by tool_name and matched to it, streamed as a JSON object
// a line (Ollama's default), or whole with "stream": false.
func TestScriptOllama(t *testing.T) {
	yes := true
	e := mustNew(t, Options{Scripted: true, Script: []*spec.Turn{
		{ToolCalls: []*spec.ScriptCall{{ID: "call_1", Name: "lookup_order", ArgsJSON: `{"order_id":"A-991"}`}}},
		{Text: "It is a gold order.", When: &spec.Guard{Result: &yes, ResultOf: "lookup_order"}},
	}})
	root := serve(t, e, "")
	tools := `"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object"}}}]`
	r := post(t, http.DefaultClient, root, wire.Ollama, `{"model":"qwen3","stream":false,"messages":[{"role":"user","content":"Refund A-991."}],`+tools+`}`)
	var first struct {
		Message struct {
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string         `json:"name"`
					Arguments map[string]any `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Done bool `json:"done"`
	}
	if err := json.Unmarshal(r.body, &first); r.status != 200 || err != nil || !first.Done || len(first.Message.ToolCalls) != 1 ||
		first.Message.ToolCalls[0].ID != "" || first.Message.ToolCalls[0].Function.Arguments["order_id"] != "A-991" {
		t.Fatalf("%d %s", r.status, r.body)
	}
	r = post(t, http.DefaultClient, root, wire.Ollama, `{"model":"qwen3","messages":[{"role":"user","content":"Refund A-991."},`+
		`{"role":"assistant","content":"","tool_calls":[{"function":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}]},`+
		`{"role":"tool","tool_name":"lookup_order","content":"{\"tier\":\"gold\"}"}],`+tools+`}`)
	lines := strings.Split(strings.TrimSuffix(string(r.body), "\n"), "\n")
	var text strings.Builder
	for i, l := range lines {
		var chunk struct {
			Message   struct{ Content string } `json:"message"`
			Done      bool                     `json:"done"`
			EvalCount int                      `json:"eval_count"`
		}
		if err := json.Unmarshal([]byte(l), &chunk); err != nil || chunk.Done != (i == len(lines)-1) {
			t.Fatalf("line %d: %s (%v)", i, l, err)
		}
		text.WriteString(chunk.Message.Content)
	}
	if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" || len(lines) < 3 || text.String() != "It is a gold order." {
		t.Errorf("%d %s %q", r.status, r.header.Get("Content-Type"), r.body)
	}
}

// Bedrock's Converse on the script model: JSON at /model/ID/converse (an
// ARN's / escaped), the AWS event stream at /converse-stream, its
// messages' checksums whole, a tool use's id the script's.
func TestScriptBedrock(t *testing.T) {
	e := mustNew(t, Options{Scripted: true, Script: []*spec.Turn{
		{ToolCalls: []*spec.ScriptCall{{ID: "tooluse_1", Name: "lookup_order", ArgsJSON: `{"order_id":"A-991"}`}}},
		{Text: "It is a gold order."},
	}})
	root := serve(t, e, "")
	body := `{"messages":[{"role":"user","content":[{"text":"Refund A-991."}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"lookup_order","inputSchema":{"json":{"type":"object"}}}}]}}`
	resp, err := http.Post(root+"/model/"+url.PathEscape("arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-v1")+"/converse", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(data), `"toolUse":{"input":{"order_id":"A-991"},"name":"lookup_order","toolUseId":"tooluse_1"}`) || !strings.Contains(string(data), `"stopReason":"tool_use"`) {
		t.Fatalf("%d %s", resp.StatusCode, data)
	}
	resp, err = http.Post(root+"/model/m/converse-stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	data, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	got, err := wire.Bedrock.Response(&model.Answer{Body: data})
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != wire.EventStreamType || err != nil || got.Text != "It is a gold order." {
		t.Errorf("%d %s: %+v, %v", resp.StatusCode, resp.Header.Get("Content-Type"), got, err)
	}
}

// TestScriptVertex: Vertex AI's paths, Gemini's and Anthropic's, answered
// by the script as the two APIs are (the model and the stream the
// path's), and the token of dryfire's service account.
func TestScriptVertex(t *testing.T) {
	e := mustNew(t, Options{Scripted: true, Script: []*spec.Turn{
		{ToolCalls: []*spec.ScriptCall{{ID: "toolu_1", Name: "lookup_order", ArgsJSON: `{"order_id":"A-991"}`}}},
		{Text: "It is a gold order."},
	}})
	root := serve(t, e, "")
	post := func(path, body string) (int, string) {
		t.Helper()
		resp, err := http.Post(root+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(data)
	}
	if code, data := post(TokenPath, "grant_type=x"); code != 200 || !strings.Contains(data, `"access_token":"`+DummyKey+`"`) {
		t.Fatalf("token: %d %s", code, data)
	}
	tools := `"tools":[{"name":"lookup_order","input_schema":{"type":"object"}}]`
	code, data := post("/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:rawPredict",
		`{"anthropic_version":"vertex-2023-10-16","max_tokens":100,"messages":[{"role":"user","content":"Refund A-991."}],`+tools+`}`)
	if code != 200 || !strings.Contains(data, `"type":"tool_use"`) || !strings.Contains(data, `"model":"claude-sonnet-4-5"`) {
		t.Fatalf("rawPredict: %d %s", code, data)
	}
	code, data = post("/v1beta1/projects/p/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
		`{"contents":[{"role":"user","parts":[{"text":"Refund A-991."}]}]}`)
	if got, err := wire.Gemini.Response(&model.Answer{Body: []byte(data), Streamed: true}); code != 200 || !strings.HasPrefix(data, "data: ") || err != nil || got.Text != "It is a gold order." {
		t.Fatalf("streamGenerateContent: %d %s", code, data)
	}
}
