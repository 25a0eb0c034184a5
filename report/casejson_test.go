package report

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/jsonout"
)

// reflected is c as the cases list's item that encoding/json writes
// (jsonout.List.Item), and what caseJSON writes of it.
func reflected(t *testing.T, c *Case) (want, got string, err error) {
	t.Helper()
	var w bytes.Buffer
	l := jsonout.New(&w, "cases")
	if err := l.Item(c); err != nil {
		t.Fatalf("encoding/json: %v", err)
	}
	b, err := newCaseJSON().appendCase([]byte("{\n  \"cases\": [\n    "), c)
	return w.String(), string(b), err
}

// pieces are what the strings of the varied cases are made of: what
// JSON escapes (quotes, backslashes, control characters, U+2028/9,
// invalid UTF-8) and what it does not with HTML escaping off (<, >, &).
var pieces = []string{
	"a", "case-1", " ", "é", "日本語", "😀", "<", ">", "&", "</script>", `"`, `\`, "\n", "\r", "\t",
	"\b", "\f", "\x00", "\x1f", "\x7f", "\u2028", "\u2029", "\xff", "\xe2\x82", "\ufffd", "\x1b[31m",
}

func variedString(r *rand.Rand) string {
	var b strings.Builder
	for range r.IntN(6) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// variedCase is a case with random fields: every status, checks and tool
// calls or none (nil or empty), and the fields few cases have.
func variedCase(r *rand.Rand) Case {
	s := func() string { return variedString(r) }
	c := Case{Suite: s(), Name: s(), Input: s(), Status: []Status{Passed, Failed, Errored, Skipped}[r.IntN(4)],
		Reason: s(), Output: s(), Turns: r.IntN(5), Usage: Usage{InputTokens: r.IntN(1000), OutputTokens: r.IntN(9)},
		DurationMS: []float64{0, 0.078, 1e-7, 3e21, 12345.6789, float64(r.IntN(100000)) / 1000}[r.IntN(6)]}
	if r.IntN(4) > 0 {
		c.Checks = []Check{}
		for range r.IntN(4) {
			ch := Check{Check: s(), At: s(), Passed: r.IntN(2) == 0, Message: s()}
			if r.IntN(4) == 0 {
				score := 0.5
				ch.Judge = &Judged{Provider: "anthropic", Model: s(), Pass: true, Score: &score, Reasoning: s(), Cassette: s()}
			}
			c.Checks = append(c.Checks, ch)
		}
	}
	if r.IntN(4) > 0 {
		c.ToolCalls = []ToolCall{}
		args := []string{`{"order_id":"O-1"}`, `{ "a" : [1, 2.50, {"b": null}],  "<": "\u003c&" }`, `[]`, `{}`, `"x"`, ``}
		for range r.IntN(4) {
			tc := ToolCall{Turn: r.IntN(3), ID: s(), Tool: s(), Outcome: OutcomeReturn, Rule: s(), IsError: r.IntN(2) == 0, Result: s()}
			if a := args[r.IntN(len(args))]; a != "" {
				tc.Args = json.RawMessage(a)
			}
			if r.IntN(3) == 0 {
				tc.NearMiss = &NearMiss{Tool: s(), Path: "$.a", Expected: s(), Got: s()}
			}
			if r.IntN(3) == 0 {
				tc.Actor = s()
			}
			if r.IntN(4) == 0 {
				tc.Asked = &Asked{Method: "elicitation/create", Request: json.RawMessage(`{"message":"ok?"}`), Answer: json.RawMessage(`{"action":"accept"}`), Error: s()}
			}
			c.ToolCalls = append(c.ToolCalls, tc)
		}
	}
	if r.IntN(4) > 0 {
		c.Notes = []string{}
		for range r.IntN(3) {
			c.Notes = append(c.Notes, s())
		}
	}
	if r.IntN(3) == 0 {
		c.Cassette, c.Replay, c.Stderr = s(), s(), s()
	}
	if r.IntN(3) == 0 {
		c.UsageByRole = &RoleUsage{Agent: c.Usage, Judge: Usage{InputTokens: 4, OutputTokens: 2}}
		c.Usage.InputTokens, c.Usage.OutputTokens = c.Usage.InputTokens+4, c.Usage.OutputTokens+2
		c.ModelFaults = []ModelFault{{Request: 1, API: "messages", Fault: s(), Retried: true}}
		c.Network = &Network{Mode: "isolated", Attempts: []NetworkAttempt{{Kind: "tcp", Address: s(), Port: 443}}}
		c.Workspace = &Workspace{Template: s(), Changes: []WorkspaceChange{{Path: s(), Change: "modified", Diff: s()}}, More: 1}
		c.Conversation = []Message{{Role: "user", Turn: 1, Text: s()}, {Role: "agent", Turn: 1, Text: s(), ModelTurn: 2}}
	}
	if r.IntN(3) == 0 {
		seed := r.Int64() - math.MaxInt64/2
		key := s()
		c.Verdict, c.Seed, c.BuildHash = c.Status, &seed, s()
		c.Build = json.RawMessage(`{"tools": ["a", "b"], "n": 1e3}`)
		c.InitialState = map[string]any{"orders": []any{}, s(): map[string]any{}}
		c.State = map[string]any{"orders": []any{map[string]any{"id": s(), "n": 1.5}}}
		c.Evidence = []Evidence{{Seq: 1, Time: s(), Actor: "agent", Operation: s(), Arguments: map[string]any{"a": s()}, IdempotencyKey: &key}}
		c.Events = []Event{{Seq: 1, Operation: s(), Type: s(), Data: []any{s(), 2}}}
	}
	if r.IntN(5) == 0 {
		run := Case{Suite: s(), Name: s(), Status: Passed, Checks: []Check{}, ToolCalls: []ToolCall{}, Notes: []string{}}
		c.Trials = &Trials{N: 2, Passed: 1, Threshold: 1, Flaky: true, PassAtK: []float64{0.5, 1}, PassHatK: []float64{0.5, 0}, Shown: 1, Runs: []Case{run, run}}
	}
	if r.IntN(3) == 0 {
		c.Mutation = &CaseMutation{Mutants: 3, Caught: 1, Survived: []string{s(), s()}, Unfailed: []string{s()}}
	}
	return c
}

// TestCaseJSONIsEncodingJSON checks the JSON report's hand-written cases
// against encoding/json's, byte for byte, over varied cases.
func TestCaseJSONIsEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2))
	for i := range 2000 {
		c := variedCase(r)
		want, got, err := reflected(t, &c)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if want != got {
			t.Fatalf("case %d: hand-written JSON differs (-encoding/json +caseJSON):\n%s", i, cmp.Diff(want, got))
		}
	}
}

// A case encoding/json fails on (a drill's build that is not JSON, a
// duration that is no number) is left to it: the same error as before.
func TestCaseJSONLeavesErrorsToEncodingJSON(t *testing.T) {
	for name, c := range map[string]Case{
		"build":    {Name: "x", Build: json.RawMessage(`{"a": `)},
		"args":     {Name: "x", ToolCalls: []ToolCall{{Args: json.RawMessage(`nul`)}}},
		"empty":    {Name: "x", ToolCalls: []ToolCall{{Args: json.RawMessage{}}}},
		"duration": {Name: "x", DurationMS: math.NaN()},
	} {
		if _, err := newCaseJSON().appendCase(nil, &c); err == nil {
			t.Errorf("%s: caseJSON wrote it; want it left to encoding/json", name)
			continue
		}
		err := newReportJSON(&bytes.Buffer{}).Case(&c)
		if err == nil || err == errFallback {
			t.Errorf("%s: Case error = %v, want encoding/json's", name, err)
		}
	}
}

// caseJSON names every field of the report's case types: a new field must
// be written there too (this list, then, changes with it).
func TestCaseJSONKnowsEveryField(t *testing.T) {
	names := func(v any) string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			out = append(out, ty.Field(i).Tag.Get("json"))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		v    any
		want string
	}{
		{Case{}, "suite name input,omitempty status reason checks tool_calls output turns usage usage_by_role,omitempty notes " +
			"cassette,omitempty replay,omitempty stderr,omitempty model_faults,omitempty script,omitempty mcp,omitempty network,omitempty workspace,omitempty " +
			"verdict,omitempty seed,omitempty build_hash,omitempty build,omitempty initial_state,omitempty state,omitempty " +
			"evidence,omitempty events,omitempty conversation,omitempty trials,omitempty mutation,omitempty duration_ms - -"},
		{Check{}, "check at passed message invariant,omitempty judge,omitempty"},
		{ToolCall{}, "turn id tool args outcome where,omitempty actor,omitempty rule is_error result near_miss,omitempty asked,omitempty"},
		{Usage{}, "input_tokens output_tokens"},
	} {
		if got := names(tc.v); got != tc.want {
			t.Errorf("%T's fields changed: caseJSON writes\n%s\nthe type has\n%s", tc.v, tc.want, got)
		}
	}
}

func FuzzCaseJSON(f *testing.F) {
	f.Add("case <1>", "\u2028\xff\"\\", []byte(`{"a": [1, 2]}`), 0.078)
	f.Fuzz(func(t *testing.T, name, text string, args []byte, ms float64) {
		c := Case{Suite: name, Name: name, Status: Failed, Reason: text, Output: text, DurationMS: ms, Notes: []string{text},
			Checks:    []Check{{Check: name, Message: text}},
			ToolCalls: []ToolCall{{Tool: name, Args: args, Result: text}}}
		var w bytes.Buffer
		if err := jsonout.New(&w, "cases").Item(&c); err != nil {
			return // encoding/json's to report
		}
		_, got, err := reflected(t, &c)
		if err != nil || got != w.String() {
			t.Errorf("caseJSON = %q, %v; encoding/json = %q", got, err, w.String())
		}
	})
}

// compactJSON is true exactly for what json.Compact leaves as it is.
func checkCompactJSON(t *testing.T, m []byte) {
	t.Helper()
	var c bytes.Buffer
	want := json.Compact(&c, m) == nil && bytes.Equal(c.Bytes(), m)
	if got := compactJSON(m); got != want {
		t.Errorf("compactJSON(%q) = %v, want %v", m, got, want)
	}
}

func TestCompactJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, `[]`, `{"a":1}`, `{"a":[1,-0.5e+3,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"]}`, `"\xff"`, `0`, `-0`, `1E9`,
		``, ` {}`, `{} `, `{"a": 1}`, `[1,]`, `{"a"}`, `{"a":}`, `{,}`, `[01]`, `1.`, `.5`, `-`, `1e`, `"\x01"`, `"\u00g0"`,
		`"\q"`, `"abc`, `tru`, `nul`, `{"a":1,}`, `[1 2]`, `{"a":1"b":2}`, `[[[[]]]]`, `[[[[]]]`, `{1:2}`, "\"a\tb\"",
	} {
		checkCompactJSON(t, []byte(s))
	}
}

func FuzzCompactJSON(f *testing.F) {
	for _, s := range []string{`{"a":[1,-0.5e+3,true,null,"x\"\\\u00e9"]}`, `[01]`, `{"a": 1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(checkCompactJSON)
}
