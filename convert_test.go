package dryfire

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/report"
)

// richCase is a report case with every field set, a tool call with every
// field set among its calls.
const richCase = `{"suite":"s.dryfire.yaml","name":"n","input":"hi","status":"failed","reason":"r",
"checks":[{"check":"read: x","at":"s.dryfire.yaml:9","passed":false,"message":"m","judge":{"provider":"anthropic","model":"m","pass":true,"score":0.5,"reasoning":"ok","cassette":"c.json"}}],
"tool_calls":[{"turn":1,"id":"call_1","tool":"book","args":{"to":"Paris"},"outcome":"error","where":"own","rule":"s.dryfire.yaml:4","is_error":true,"result":"no",
  "near_miss":{"tool":"book","rule":"s.dryfire.yaml:4","path":"$.to","expected":"\"Oslo\"","got":"\"Paris\"","reason":"r","note":"n"},
  "asked":{"method":"elicitation/create","request":{"message":"ok?"},"answer":{"action":"decline"},"error":"e"}}],
"output":"out","turns":2,"usage":{"input_tokens":3,"output_tokens":4},"usage_by_role":{"agent":{"input_tokens":1},"judge":{"output_tokens":2},"user":{"input_tokens":5}},
"notes":["note"],"cassette":"c.json","replay":"diff","stderr":"err",
"model_faults":[{"request":1,"api":"messages","fault":"status 500","retried":true}],
"script":[{"request":1,"turn":1,"api":"openai-chat","streamed":true,"last_message":"hi","refused":true}],
"mcp":[{"method":"prompts/get","name":"p","arguments":{"a":"1"}},{"method":"resources/read","uri":"docs://x","error":"Resource not found"}],
"network":{"mode":"isolated","attempts":[{"kind":"tcp","address":"1.2.3.4","port":443,"count":1}]},
"workspace":{"template":"ws","changes":[{"path":"a.txt","change":"modified","diff":"-a\n+b"}],"more":1},
"verdict":"failed","seed":7,"build_hash":"sha256:1","build":{"tools":["a"]},
"initial_state":{"orders":{}},"state":{"orders":{"A":1}},
"evidence":[{"seq":1,"time":"2026-01-01T00:00:00Z","actor":"agent","operation":"o/p","arguments":{"a":1},"outcome":"ok","is_error":false,"result":{"r":1},"state_version":1}],
"events":[{"seq":1,"operation":"o/p","type":"t","data":{"d":1}}],
"conversation":[{"role":"user","turn":1,"text":"hi"},{"role":"agent","turn":1,"text":"yo","model_turn":1}],
"trials":{"n":2,"passed":1,"threshold":1,"flaky":true,"pass_at_k":[0.5,1],"pass_hat_k":[0.5,0],"shown":1,"runs":[]},
"mutation":{"mutants":3,"caught":1,"survived":["call 1 (book) dropped"],"unfailed":["read: x (s.dryfire.yaml:9)"],"untried":1},
"duration_ms":12.5}`

// TestPublicReportKeepsEveryField: a report case, with every field set,
// goes through the public API's Report (ParseReport, HTML, merge and
// recheck read reports through it) and back unchanged: a field the
// public types leave out would be lost there (the report's mcp was, in
// the HTML report and recheck).
func TestPublicReportKeepsEveryField(t *testing.T) {
	var c report.Case
	if err := json.Unmarshal([]byte(richCase), &c); err != nil {
		t.Fatal(err)
	}
	c.Infra, c.Live = true, 1
	v := reflect.ValueOf(c)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Errorf("richCase leaves %s unset: set it, and keep it in the public Case", v.Type().Field(i).Name)
		}
	}
	tc := reflect.ValueOf(c.ToolCalls[0])
	for i := range tc.NumField() {
		if tc.Field(i).IsZero() {
			t.Errorf("richCase's tool call leaves %s unset", tc.Type().Field(i).Name)
		}
	}
	in := &report.Report{Cases: []report.Case{c}}
	out := internalReport(reportOf(in))
	if diff := cmp.Diff(in.Cases, out.Cases); diff != "" {
		t.Errorf("through the public Report (-before +after):\n%s", diff)
	}
}
