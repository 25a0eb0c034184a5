package mock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/passthrough"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

const file = "suite.dryfire.yaml"

const header = "version: 1\nagent: {provider: script}\n"

// oneCase is a cases section with one case that uses the suite's mocks.
const oneCase = `cases:
  - name: c
    input: hi
    script: [{text: done}]
`

// load parses a suite the way the CLI does and fails the test on any
// spec error (warnings are fine).
func load(t testing.TB, src string, opts *spec.Options) *spec.Suite {
	t.Helper()
	s, ds := spec.Parse(file, []byte(src), opts)
	if ds.HasErrors() || s == nil {
		t.Fatalf("suite does not load:\n%v\n--- suite ---\n%s", ds, src)
	}
	return s
}

// session starts case i of the suite: its mock state, behind the
// recorder every caller uses.
func session(t testing.TB, src string, i int) *tool.Recorder {
	t.Helper()
	s := load(t, src, nil)
	return recorded(mock.NewSession(mock.Compile(s).ForCase(s.Cases[i]), nil))
}

// ruleAt names the rule on the line of src that contains marker, as
// FILE:LINE.
func ruleAt(t testing.TB, src, marker string) string {
	t.Helper()
	for i, line := range strings.Split(src, "\n") {
		if strings.Contains(line, marker) {
			return fmt.Sprintf("%s:%d", file, i+1)
		}
	}
	t.Fatalf("marker %q not in the suite", marker)
	return ""
}

func recorded(s *mock.Session) *tool.Recorder { return tool.NewRecorder(s, tool.RecorderOptions{}) }

func call(s tool.Session, name, args string) tool.Result {
	return s.Call(context.Background(), tool.Call{Name: name, Args: args})
}

// brief is the part of a result most tests compare.
type brief struct {
	Content string
	IsError bool
	Outcome tool.Outcome
	Rule    string
	Entry   int
}

func short(r tool.Result) brief {
	return brief{r.Content, r.IsError, r.Outcome, r.Rule, r.Entry}
}

func TestRulesTriedInFileOrder(t *testing.T) {
	src := header + `mocks:
  lookup_order:
    - when: {order_id: A-991}                  # r1
      return: first
    - when: {order_id: A-991, region: eu}      # r2: more specific, but later
      return: second
    - return: catch-all                         # r3
    - when: {order_id: B-1}                    # r4: after the catch-all, never reached
      return: never
` + oneCase
	r1, r3 := ruleAt(t, src, "# r1"), ruleAt(t, src, "# r3")
	tests := []struct {
		args string
		want brief
	}{
		{`{"order_id":"A-991","region":"eu"}`, brief{"first", false, tool.Return, r1, -1}},
		{`{"order_id":"A-991"}`, brief{"first", false, tool.Return, r1, -1}},
		{`{"order_id":"B-1"}`, brief{"catch-all", false, tool.Return, r3, -1}},
		{`{}`, brief{"catch-all", false, tool.Return, r3, -1}},
	}
	s := session(t, src, 0)
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, short(call(s, "lookup_order", tt.args))); diff != "" {
			t.Errorf("call with %s (-want +got):\n%s", tt.args, diff)
		}
	}
}

// TestWhenDeepSubset runs each `when` through a real suite: one guarded
// rule and nothing else, so a call either matches it or is unmatched.
func TestWhenDeepSubset(t *testing.T) {
	tests := []struct {
		name string
		when string // YAML flow mapping
		args string // JSON
		want bool
	}{
		{"equal", `{order_id: A-991}`, `{"order_id":"A-991"}`, true},
		{"extra keys in args are fine", `{order_id: A-991}`, `{"order_id":"A-991","reason":"late","n":[1]}`, true},
		{"key missing from args", `{order_id: A-991}`, `{"id":"A-991"}`, false},
		{"every key must match", `{a: x, b: y}`, `{"a":"x","b":"z"}`, false},
		{"empty when matches any object", `{}`, `{"anything":[1,{"x":null}]}`, true},
		{"empty when matches the empty object", `{}`, `{}`, true},
		{"empty when does not match a non-object", `{}`, `[]`, false},

		{"nested maps are subsets", `{customer: {address: {country: NL}}}`, `{"customer":{"name":"Ann","address":{"country":"NL","city":"Delft"}}}`, true},
		{"nested mismatch", `{customer: {address: {country: NL}}}`, `{"customer":{"address":{"country":"BE"}}}`, false},
		{"nested key missing", `{customer: {address: {country: NL}}}`, `{"customer":{"name":"Ann"}}`, false},
		{"nested map vs scalar", `{customer: {id: 1}}`, `{"customer":1}`, false},

		{"arrays element-wise", `{tags: [a, b]}`, `{"tags":["a","b"]}`, true},
		{"shorter array does not match", `{tags: [a, b]}`, `{"tags":["a"]}`, false},
		{"longer array does not match", `{tags: [a, b]}`, `{"tags":["a","b","c"]}`, false},
		{"array order matters", `{tags: [a, b]}`, `{"tags":["b","a"]}`, false},
		{"empty array vs empty array", `{tags: []}`, `{"tags":[]}`, true},
		{"empty array vs non-empty", `{tags: []}`, `{"tags":["a"]}`, false},
		{"maps in arrays are subsets", `{items: [{sku: X}]}`, `{"items":[{"sku":"X","qty":2}]}`, true},
		{"array vs string", `{tags: [a]}`, `{"tags":"a"}`, false},

		{"1 == 1.0", `{n: 1}`, `{"n":1.0}`, true},
		{"1 == 1e0", `{n: 1}`, `{"n":1e0}`, true},
		{"1.0 == 1", `{n: 1.0}`, `{"n":1}`, true},
		{"1e0 == 1", `{n: 1e0}`, `{"n":1}`, true},
		{"100 == 1e2", `{n: 100}`, `{"n":1e2}`, true},
		{"-0 == 0", `{n: -0}`, `{"n":0}`, true},
		{"1 != 2", `{n: 1}`, `{"n":2}`, false},
		{"1 != 1.00000000000000000001", `{n: 1}`, `{"n":1.00000000000000000001}`, false},
		{"big ints keep every digit", `{n: 123456789012345678901234567890}`, `{"n":123456789012345678901234567890}`, true},
		{"big ints differing in the last digit", `{n: 123456789012345678901234567890}`, `{"n":123456789012345678901234567891}`, false},
		{`"1" != 1`, `{n: "1"}`, `{"n":1}`, false},
		{`1 != "1"`, `{n: 1}`, `{"n":"1"}`, false},

		{"strings are case-sensitive", `{tier: Gold}`, `{"tier":"gold"}`, false},
		{"strings exact", `{tier: gold}`, `{"tier":"gold"}`, true},
		{"no trimming", `{tier: gold}`, `{"tier":"gold "}`, false},

		{"true", `{ok: true}`, `{"ok":true}`, true},
		{"true != false", `{ok: true}`, `{"ok":false}`, false},
		{`true != "true"`, `{ok: true}`, `{"ok":"true"}`, false},
		{"false != null", `{ok: false}`, `{"ok":null}`, false},
		{"false != 0", `{ok: false}`, `{"ok":0}`, false},

		{"null matches a present null", `{note: null}`, `{"note":null}`, true},
		{"~ is null too", `{note: ~}`, `{"note":null}`, true},
		{"null does not match an absent key", `{note: null}`, `{}`, false},
		{"null does not match a value", `{note: null}`, `{"note":""}`, false},
		{"a value does not match null", `{note: ""}`, `{"note":null}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := header + "mocks:\n  t:\n    - when: " + tt.when + "\n      return: matched\n" + oneCase
			r := call(session(t, src, 0), "t", tt.args)
			if got := r.Outcome == tool.Return; got != tt.want {
				t.Errorf("when %s, args %s: matched = %v, want %v (result %q)", tt.when, tt.args, got, tt.want, r.Content)
			}
		})
	}
}

func TestReturnDelivery(t *testing.T) {
	tests := []struct {
		name string
		ret  string // YAML, after `return:`
		want string
	}{
		{"null is the text null", `null`, `null`},
		{"~ is null too", `~`, `null`},
		{"string verbatim, no quotes", `order shipped`, `order shipped`},
		{"quoted string verbatim", `"a \"quoted\" word"`, `a "quoted" word`},
		{"string that looks like JSON stays as written", `'{"b": 1,  "a": 2}'`, `{"b": 1,  "a": 2}`},
		{"empty string", `""`, ``},
		{"string keeps HTML", `"<b>&</b>"`, `<b>&</b>`},
		{"block string keeps its newlines", "|\n        line one\n        line two", "line one\nline two\n"},
		{"number keeps its digits", `1.50`, `1.50`},
		{"big int keeps every digit", `123456789012345678901234567890`, `123456789012345678901234567890`},
		{"boolean", `true`, `true`},
		{"mapping: compact, sorted keys", `{tier: gold, amount: 12.50, active: true, note: null}`, `{"active":true,"amount":12.50,"note":null,"tier":"gold"}`},
		{"nested keys sorted at every level", `{z: {b: 1, a: 2}, a: [{d: 1, c: 2}]}`, `{"a":[{"c":2,"d":1}],"z":{"a":2,"b":1}}`},
		{"no HTML escaping", `{html: "<a href='x'>&</a>"}`, `{"html":"<a href='x'>&</a>"}`},
		{"big ints in a mapping", `{id: 123456789012345678901234567890, price: 1.50}`, `{"id":123456789012345678901234567890,"price":1.50}`},
		{"unicode kept", `{name: "Zoë 日本"}`, `{"name":"Zoë 日本"}`},
		{"control chars escaped", `{s: "a\tb\u0001"}`, `{"s":"a\tb\u0001"}`},
		{"list", `[1, two, null]`, `[1,"two",null]`},
		{"empty mapping", `{}`, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := header + "mocks:\n  t:\n    - return: " + tt.ret + "\n" + oneCase
			r := call(session(t, src, 0), "t", `{}`)
			want := brief{tt.want, false, tool.Return, file + ":5", -1}
			if diff := cmp.Diff(want, short(r)); diff != "" {
				t.Errorf("return: %s (-want +got):\n%s", tt.ret, diff)
			}
		})
	}
}

func TestErrorOutcome(t *testing.T) {
	src := header + `mocks:
  issue_refund:
    - error: refund service unavailable   # r1
` + oneCase
	got := short(call(session(t, src, 0), "issue_refund", `{"order_id":"A-991"}`))
	want := brief{"refund service unavailable", true, tool.Error, ruleAt(t, src, "# r1"), -1}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSequence(t *testing.T) {
	src := header + `mocks:
  flaky:
    - sequence:                # r1
        - error: timeout
        - return: {ok: true}
        - return: done
` + oneCase
	r1 := ruleAt(t, src, "# r1")
	want := []brief{
		{"timeout", true, tool.Error, r1, 0},
		{`{"ok":true}`, false, tool.Return, r1, 1},
		{"done", false, tool.Return, r1, 2},
		{"done", false, tool.Return, r1, 2}, // the last entry repeats
		{"done", false, tool.Return, r1, 2},
	}
	s := session(t, src, 0)
	var got []brief
	for range want {
		got = append(got, short(call(s, "flaky", `{}`)))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestSequenceOfOne(t *testing.T) {
	src := header + "mocks:\n  t:\n    - sequence: [{return: only}]\n" + oneCase
	s := session(t, src, 0)
	for i := range 3 {
		if r := call(s, "t", `{}`); r.Content != "only" || r.Entry != 0 {
			t.Errorf("call %d: %q entry %d, want %q entry 0", i+1, r.Content, r.Entry, "only")
		}
	}
}

// Sequence state belongs to a session (a case): two sessions over one Set
// each start at the first entry and advance independently.
func TestSequenceStateIsPerSession(t *testing.T) {
	src := header + `mocks:
  flaky:
    - sequence: [{error: timeout}, {return: ok}]
cases:
  - name: one
    input: hi
    script: [{text: done}]
  - name: two
    input: hi
    script: [{text: done}]
`
	s := load(t, src, nil)
	set := mock.Compile(s)
	a := recorded(mock.NewSession(set.ForCase(s.Cases[0]), nil))
	b := recorded(mock.NewSession(set.ForCase(s.Cases[1]), nil))
	c := recorded(mock.NewSession(set, nil))
	var got []string
	for _, sess := range []*tool.Recorder{a, a, b, a, c, b, c} {
		got = append(got, call(sess, "flaky", `{}`).Content)
	}
	want := []string{"timeout", "ok", "timeout", "ok", "timeout", "ok", "ok"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// A sequence advances only on the calls its rule matches: calls answered
// by other rules, or to other tools, or unmatched, leave it where it is.
func TestSequenceAdvancesOnlyOnMatchingCalls(t *testing.T) {
	src := header + `mocks:
  lookup:
    - when: {id: 1}           # seq1
      sequence: [{return: a}, {return: b}, {return: c}]
    - when: {id: 2}           # seq2
      sequence: [{return: x}, {return: y}]
    - when: {id: 3}
      return: plain
  other:
    - sequence: [{return: o1}, {return: o2}]
` + oneCase
	s := session(t, src, 0)
	calls := []struct{ tool, args, want string }{
		{"lookup", `{"id":3}`, "plain"},
		{"lookup", `{"id":1}`, "a"},
		{"lookup", `{"id":2}`, "x"},
		{"other", `{}`, "o1"},
		{"lookup", `{"id":4}`, ""}, // unmatched
		{"lookup", `{"id":3}`, "plain"},
		{"lookup", `{"id":1}`, "b"},
		{"other", `{}`, "o2"},
		{"lookup", `{"id":2}`, "y"},
		{"lookup", `{"id":1}`, "c"},
		{"lookup", `{"id":1}`, "c"},
	}
	for i, c := range calls {
		r := call(s, c.tool, c.args)
		got := r.Content
		if r.Outcome == tool.Unmatched {
			got = ""
		}
		if got != c.want {
			t.Errorf("call %d (%s %s) = %q, want %q", i+1, c.tool, c.args, got, c.want)
		}
	}
}

// Case-level mocks replace the suite's whole rule list for each tool they
// name; the suite's catch-all for that tool does not apply; other tools
// keep the suite's rules.
func TestCaseMocksReplaceWholeList(t *testing.T) {
	src := header + `mocks:
  lookup_order:
    - when: {order_id: A-991}       # suite-A
      return: suite gold
    - return: suite standard        # suite-catch-all
  issue_refund:
    - return: suite refund          # suite-refund
cases:
  - name: overrides lookup_order
    input: hi
    script: [{text: done}]
    mocks:
      lookup_order:
        - when: {order_id: B-1}     # case-B
          return: case B
      send_email:
        - return: case email        # case-email
  - name: suite rules only
    input: hi
    script: [{text: done}]
  - name: empties lookup_order
    input: hi
    script: [{text: done}]
    mocks:
      lookup_order: []
`
	at := func(m string) string { return ruleAt(t, src, m) }
	tests := []struct {
		caseIndex  int
		tool, args string
		want       brief
	}{
		{0, "lookup_order", `{"order_id":"B-1"}`, brief{"case B", false, tool.Return, at("# case-B"), -1}},
		{0, "issue_refund", `{}`, brief{"suite refund", false, tool.Return, at("# suite-refund"), -1}},
		{0, "send_email", `{}`, brief{"case email", false, tool.Return, at("# case-email"), -1}},
		{1, "lookup_order", `{"order_id":"A-991"}`, brief{"suite gold", false, tool.Return, at("# suite-A"), -1}},
		{1, "lookup_order", `{"order_id":"B-1"}`, brief{"suite standard", false, tool.Return, at("# suite-catch-all"), -1}},
		{1, "issue_refund", `{}`, brief{"suite refund", false, tool.Return, at("# suite-refund"), -1}},
		{2, "issue_refund", `{}`, brief{"suite refund", false, tool.Return, at("# suite-refund"), -1}},
	}
	for _, tt := range tests {
		got := short(call(session(t, src, tt.caseIndex), tt.tool, tt.args))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("case %d, %s %s (-want +got):\n%s", tt.caseIndex, tt.tool, tt.args, diff)
		}
	}

	// In the overriding case, neither the suite's A-991 rule nor its
	// catch-all answers lookup_order any more.
	for _, args := range []string{`{"order_id":"A-991"}`, `{"order_id":"Z"}`} {
		r := call(session(t, src, 0), "lookup_order", args)
		if r.Outcome != tool.Unmatched {
			t.Errorf("case 0, lookup_order %s answered %q by %s; the suite's rules should be replaced", args, r.Content, r.Rule)
		}
		if r.NearMiss == nil || r.NearMiss.Rule != at("# case-B") {
			t.Errorf("case 0 near miss = %+v, want the case's rule", r.NearMiss)
		}
	}
	// send_email exists only in case 0.
	if r := call(session(t, src, 1), "send_email", `{}`); r.Outcome != tool.Unmatched {
		t.Errorf("case 1 send_email = %q, want unmatched", r.Content)
	}
	// An empty case list leaves the tool with no rules at all.
	r := call(session(t, src, 2), "lookup_order", `{"order_id":"A-991"}`)
	if r.Outcome != tool.Unmatched || r.NearMiss == nil || r.NearMiss.Note != "no mock rules for this tool" {
		t.Errorf("case 2 lookup_order = %+v, want unmatched with no rules", r)
	}
}

func TestUnmatched(t *testing.T) {
	src := header + `mocks:
  lookup_order:
    - when: {order_id: A-991, region: eu, tier: gold}   # three
      return: x
    - when: {order_id: A-991, region: us}               # two
      return: x
    - when: {order_id: B-1}                             # tie1
      return: x
    - when: {order_id: B-2}                             # tie2
      return: x
  tag:
    - when: {tags: [a, b, c]}                           # tags
      return: x
    - when: {tags: [z]}                                 # tags-z
      return: x
  nested:
    - when: {customer: {address: {country: NL}}}        # nested
      return: x
  lookup_customer:
    - return: x
  search:
    - return: x
` + oneCase
	at := func(m string) string { return ruleAt(t, src, m) }
	tests := []struct {
		name, tool, args string
		want             tool.NearMiss
		text             string // the result text; checked when set
	}{
		{
			name: "closest by fewest differing leaves, not file order",
			tool: "lookup_order", args: `{"order_id":"A-991","region":"us ","tier":"silver"}`,
			// three: region and tier differ (2); two: region differs (1);
			// tie1/tie2: order_id differs (1). Fewest is 1, and of the rules
			// at 1, "two" comes first.
			want: tool.NearMiss{Tool: "lookup_order", Rule: at("# two"), Path: "$.region", Expected: `"us"`, Got: `"us "`},
			text: `dryfire: no mock rule matched this call to "lookup_order"; closest rule ` + at("# two") + ` differs at $.region: expected "us", got "us "`,
		},
		{
			name: "ties go to the earlier rule",
			tool: "lookup_order", args: `{"order_id":"C-3"}`,
			// three: 3 leaves (two absent); two: 2; tie1, tie2: 1 each.
			want: tool.NearMiss{Tool: "lookup_order", Rule: at("# tie1"), Path: "$.order_id", Expected: `"B-1"`, Got: `"C-3"`},
		},
		{
			name: "absent key",
			tool: "lookup_order", args: `{"id":"B-1"}`,
			want: tool.NearMiss{Tool: "lookup_order", Rule: at("# tie1"), Path: "$.order_id", Expected: `"B-1"`, Got: "(absent)"},
			text: `dryfire: no mock rule matched this call to "lookup_order"; closest rule ` + at("# tie1") + ` differs at $.order_id: expected "B-1", got (absent)`,
		},
		{
			name: "array length",
			tool: "tag", args: `{"tags":["a","b"]}`,
			// [a, b, c] misses one leaf; [z] differs in one and has one
			// element too many: [a, b, c] is closer.
			want: tool.NearMiss{Tool: "tag", Rule: at("# tags"), Path: "$.tags", Expected: `["a","b","c"]`, Got: `["a","b"]`, Reason: "length 2, want 3"},
			text: `dryfire: no mock rule matched this call to "tag"; closest rule ` + at("# tags") + ` differs at $.tags: expected ["a","b","c"], got ["a","b"] (length 2, want 3)`,
		},
		{
			name: "array element",
			tool: "tag", args: `{"tags":["a","x","c"]}`,
			want: tool.NearMiss{Tool: "tag", Rule: at("# tags"), Path: "$.tags[1]", Expected: `"b"`, Got: `"x"`},
		},
		{
			name: "nested path",
			tool: "nested", args: `{"customer":{"address":{"country":"BE"}}}`,
			want: tool.NearMiss{Tool: "nested", Rule: at("# nested"), Path: "$.customer.address.country", Expected: `"NL"`, Got: `"BE"`},
		},
		{
			name: "arguments that are not an object",
			tool: "nested", args: `["NL"]`,
			want: tool.NearMiss{Tool: "nested", Rule: at("# nested"), Path: "$", Expected: `{"customer":{"address":{"country":"NL"}}}`, Got: `["NL"]`, Reason: "not an object"},
		},
		{
			name: "tool with no rules, did you mean",
			tool: "lookup_ordr", args: `{"order_id":"A-991"}`,
			want: tool.NearMiss{Tool: "lookup_ordr", Note: `no mock rules for this tool (did you mean "lookup_order"?)`},
			text: `dryfire: no mock rule matched this call to "lookup_ordr": no mock rules for this tool (did you mean "lookup_order"?)`,
		},
		{
			name: "tool with no rules, nothing close",
			tool: "delete_everything", args: `{}`,
			want: tool.NearMiss{Tool: "delete_everything", Note: "no mock rules for this tool"},
		},
		{
			name: "invalid JSON arguments",
			tool: "lookup_order", args: `{"order_id": "A-991"`,
			want: tool.NearMiss{Tool: "lookup_order", Note: "the arguments are not valid JSON (unexpected EOF)"},
			text: `dryfire: no mock rule matched this call to "lookup_order": the arguments are not valid JSON (unexpected EOF)`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := call(session(t, src, 0), tt.tool, tt.args)
			if r.Outcome != tool.Unmatched || !r.IsError || r.Rule != "" || r.Entry != -1 {
				t.Errorf("outcome %q, is_error %v, rule %q, entry %d; want unmatched, true, none, -1", r.Outcome, r.IsError, r.Rule, r.Entry)
			}
			if r.NearMiss == nil {
				t.Fatalf("no near miss")
			}
			if diff := cmp.Diff(tt.want, *r.NearMiss); diff != "" {
				t.Errorf("near miss (-want +got):\n%s", diff)
			}
			if !strings.Contains(r.Content, `"`+tt.tool+`"`) {
				t.Errorf("result %q does not name the tool", r.Content)
			}
			if r.Content != "dryfire: "+mock.DescribeMiss(r.NearMiss) {
				t.Errorf("result %q is not the near miss described", r.Content)
			}
			if tt.text != "" && r.Content != tt.text {
				t.Errorf("result\n got %s\nwant %s", r.Content, tt.text)
			}
		})
	}
}

func TestRecords(t *testing.T) {
	src := header + `mocks:
  lookup_order:
    - when: {order_id: A-991}   # gold
      return: {tier: gold}
  flaky:
    - sequence: [{error: timeout}, {return: ok}]   # flaky
` + oneCase
	s := session(t, src, 0)
	calls := []tool.Call{
		{ID: "c1", Name: "lookup_order", Args: `{ "order_id" : "A-991", "n": 1.50 }`, Turn: 1},
		{ID: "c2", Name: "flaky", Args: `{}`, Turn: 1},
		{ID: "c3", Name: "flaky", Args: `{}`, Turn: 2},
		{ID: "c4", Name: "lookup_order", Args: `{"order_id":"B"}`, Turn: 3},
		{ID: "c5", Name: "lookup_order", Args: `not json`, Turn: 3},
	}
	var results []tool.Result
	for _, c := range calls {
		results = append(results, s.Call(context.Background(), c))
	}
	recs := s.Records()
	if len(recs) != len(calls) {
		t.Fatalf("%d records, want %d", len(recs), len(calls))
	}
	wantArgs := []any{
		map[string]any{"order_id": "A-991", "n": json.Number("1.50")},
		map[string]any{},
		map[string]any{},
		map[string]any{"order_id": "B"},
		"not json", // the raw text when the arguments are not JSON
	}
	wantRes := []brief{
		{`{"tier":"gold"}`, false, tool.Return, ruleAt(t, src, "# gold"), -1},
		{"timeout", true, tool.Error, ruleAt(t, src, "# flaky"), 0},
		{"ok", false, tool.Return, ruleAt(t, src, "# flaky"), 1},
	}
	for i, r := range recs {
		if diff := cmp.Diff(calls[i], r.Call); diff != "" {
			t.Errorf("record %d call (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(wantArgs[i], r.Args); diff != "" {
			t.Errorf("record %d args (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(results[i], r.Result); diff != "" {
			t.Errorf("record %d result differs from what Call returned (-want +got):\n%s", i, diff)
		}
		if i < len(wantRes) {
			if diff := cmp.Diff(wantRes[i], short(r.Result)); diff != "" {
				t.Errorf("record %d result (-want +got):\n%s", i, diff)
			}
		} else if r.Result.Outcome != tool.Unmatched {
			t.Errorf("record %d outcome %q, want unmatched", i, r.Result.Outcome)
		}
	}

	// Records is a copy: changing it does not change the session.
	recs[0].Name = "changed"
	if got := s.Records()[0].Name; got != "lookup_order" {
		t.Errorf("Records shares its slice with the session: name %q", got)
	}
}

// A rule with no `when` answers every call to its tool, even one whose
// arguments are not JSON: it asks nothing of them.
func TestCatchAllTakesInvalidJSON(t *testing.T) {
	src := header + "mocks:\n  t:\n    - return: ok\n" + oneCase
	if r := call(session(t, src, 0), "t", `{oops`); r.Outcome != tool.Return || r.Content != "ok" {
		t.Errorf("got %+v, want the catch-all", r)
	}
}

type fakeImpl struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeImpl) Call(_ context.Context, req passthrough.Request) passthrough.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf("%s %s %v %s", req.Ref, req.Args, req.Timeout, req.Label))
	if strings.Contains(req.Args, "boom") {
		return passthrough.Result{Content: "boom", IsError: true, Note: "impl raised ValueError: boom"}
	}
	return passthrough.Result{Content: "impl says " + req.Args}
}

func TestImplOutcome(t *testing.T) {
	src := header + `mocks:
  create_ticket:
    - when: {slow: true}
      impl: tools.impls:create_ticket
      timeout_s: 2.5
    - impl: tools.impls:create_ticket     # default
  flaky:
    - sequence: [{error: timeout}, {impl: tools.impls:retry}]   # seq
` + oneCase
	s := load(t, src, &spec.Options{ResolveImpl: func(string) error { return nil }})
	set := mock.Compile(s).ForCase(s.Cases[0])

	fi := &fakeImpl{}
	ms := mock.NewSession(set, fi)
	ms.Label = "c1"
	sess := recorded(ms)
	got := []brief{
		short(call(sess, "create_ticket", `{"title":"x"}`)),
		short(call(sess, "create_ticket", `{"slow":true}`)),
		short(call(sess, "create_ticket", `{"title":"boom"}`)),
		short(call(sess, "flaky", `{}`)),
		short(call(sess, "flaky", `{"n":1}`)),
	}
	def, seq := ruleAt(t, src, "# default"), ruleAt(t, src, "# seq")
	want := []brief{
		{`impl says {"title":"x"}`, false, tool.Impl, def, -1},
		{`impl says {"slow":true}`, false, tool.Impl, file + ":5", -1},
		{"boom", true, tool.Impl, def, -1},
		{"timeout", true, tool.Error, seq, 0},
		{`impl says {"n":1}`, false, tool.Impl, seq, 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	wantCalls := []string{
		`tools.impls:create_ticket {"title":"x"} 30s case "c1", tool create_ticket`,
		`tools.impls:create_ticket {"slow":true} 2.5s case "c1", tool create_ticket`,
		`tools.impls:create_ticket {"title":"boom"} 30s case "c1", tool create_ticket`,
		`tools.impls:retry {"n":1} 30s case "c1", tool flaky`,
	}
	if diff := cmp.Diff(wantCalls, fi.calls); diff != "" {
		t.Errorf("impl calls (-want +got):\n%s", diff)
	}
	// The record carries the impl's answer, not the placeholder.
	recs := sess.Records()
	if diff := cmp.Diff(want[2], short(recs[2].Result)); diff != "" {
		t.Errorf("record of an impl call (-want +got):\n%s", diff)
	}
	// The impl's note (an exception's type) reaches the record.
	if diff := cmp.Diff([]string{"impl raised ValueError: boom"}, recs[2].Result.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if !set.UsesImpl() {
		t.Error("UsesImpl() = false for a set with impl rules")
	}
	plain := load(t, header+"mocks:\n  t:\n    - sequence: [{return: 1}]\n"+oneCase, nil)
	if mock.Compile(plain).UsesImpl() {
		t.Error("UsesImpl() = true for a set without impl rules")
	}

	// Without an Impl, an impl outcome is an error result that says why.
	r := call(recorded(mock.NewSession(set, nil)), "create_ticket", `{}`)
	wantNoImpl := brief{"dryfire: impl tools.impls:create_ticket: passthrough mocks are not available in this version", true, tool.Impl, def, -1}
	if diff := cmp.Diff(wantNoImpl, short(r)); diff != "" {
		t.Errorf("without an Impl (-want +got):\n%s", diff)
	}
}

const seqSuite = header + `mocks:
  t:
    - sequence: [{return: e0}, {return: e1}, {return: e2}, {return: e3}, {error: e4}]
` + oneCase

// Selection, sequence advance and the record happen in one critical
// section: under any concurrency every entry is used exactly as often as
// a sequential run would use it, and no call is lost. Run with -race.
func TestSequenceUnderConcurrency(t *testing.T) {
	// As many calls as one case may make (tool.MaxCalls), spread over
	// 64 goroutines.
	const goroutines, perG = 64, tool.MaxCalls / 64
	const total = goroutines * perG
	s := session(t, seqSuite, 0)

	var wg sync.WaitGroup
	results := make([][]tool.Result, goroutines)
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			for i := range perG {
				results[g] = append(results[g], s.Call(ctx, tool.Call{ID: fmt.Sprintf("g%d-%d", g, i), Name: "t", Args: `{"g":1}`}))
			}
		}()
	}
	wg.Wait()

	counts := map[string]int{}
	for _, rs := range results {
		for _, r := range rs {
			counts[r.Content]++
		}
	}
	want := map[string]int{"e0": 1, "e1": 1, "e2": 1, "e3": 1, "e4": total - 4}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("entries returned (-want +got):\n%s", diff)
	}

	recs := s.Records()
	if len(recs) != total {
		t.Fatalf("%d records, want %d", len(recs), total)
	}
	recCounts := map[string]int{}
	ids := map[string]bool{}
	for _, r := range recs {
		recCounts[r.Result.Content]++
		ids[r.ID] = true
	}
	if diff := cmp.Diff(want, recCounts); diff != "" {
		t.Errorf("entries recorded (-want +got):\n%s", diff)
	}
	if len(ids) != total {
		t.Errorf("%d distinct call IDs recorded, want %d", len(ids), total)
	}
}

// Sessions over one Set share nothing mutable: concurrent cases each see
// their own sequence from the start.
func TestConcurrentSessionsAreIndependent(t *testing.T) {
	s := load(t, seqSuite, nil)
	set := mock.Compile(s)
	const sessions = 32
	var wg sync.WaitGroup
	got := make([][]string, sessions)
	for i := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess := recorded(mock.NewSession(set.ForCase(s.Cases[0]), nil))
			for range 6 {
				got[i] = append(got[i], call(sess, "t", `{}`).Content)
			}
		}()
	}
	wg.Wait()
	want := []string{"e0", "e1", "e2", "e3", "e4", "e4"}
	for i := range sessions {
		if diff := cmp.Diff(want, got[i]); diff != "" {
			t.Errorf("session %d (-want +got):\n%s", i, diff)
		}
	}
}

// NoRecords keeps no record of calls, and the answers do not change:
// sequences still advance.
func TestSessionNoRecords(t *testing.T) {
	s := load(t, header+`mocks:
  t:
    - sequence: [{return: one}, {error: two}, {return: three}]
`+oneCase, nil)
	sess := tool.NewRecorder(mock.NewSession(mock.Compile(s), nil), tool.RecorderOptions{NoRecords: true})
	var got []string
	for range 4 {
		r := sess.Call(context.Background(), tool.Call{Name: "t", Args: "{}"})
		got = append(got, fmt.Sprintf("%s %v", r.Content, r.IsError))
	}
	if want := []string{"one false", "two true", "three false", "three false"}; !cmp.Equal(got, want) {
		t.Errorf("answers %q, want %q", got, want)
	}
	if n := len(sess.Records()); n != 0 {
		t.Errorf("%d records kept", n)
	}
}

func TestDelay(t *testing.T) {
	src := header + `mocks:
  slow:
    - when: {n: 1}          # r1
      return: late
      delay_ms: 150
    - return: at once       # r2
` + oneCase
	s := session(t, src, 0)
	for _, tc := range []struct {
		args     string
		want     brief
		min, max time.Duration
	}{
		{`{"n":1}`, brief{"late", false, tool.Return, ruleAt(t, src, "# r1"), -1}, 150 * time.Millisecond, 10 * time.Second},
		{`{"n":2}`, brief{"at once", false, tool.Return, ruleAt(t, src, "# r2"), -1}, 0, 100 * time.Millisecond},
	} {
		start := time.Now()
		got := short(call(s, "slow", tc.args))
		took := time.Since(start)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.args, diff)
		}
		if took < tc.min || took > tc.max {
			t.Errorf("%s: answered after %v, want between %v and %v", tc.args, took, tc.min, tc.max)
		}
	}

	// A call that ends during the delay ends at once, as an error result
	// that names the rule.
	ctx, cancel := context.WithTimeoutCause(context.Background(), 20*time.Millisecond, errors.New("the case's time is up"))
	defer cancel()
	start := time.Now()
	got := s.Call(ctx, tool.Call{Name: "slow", Args: `{"n":1}`})
	if took := time.Since(start); took > 140*time.Millisecond {
		t.Errorf("a cancelled call waited %v, the whole delay", took)
	}
	want := "dryfire: the call ended during the rule's delay_ms (" + ruleAt(t, src, "# r1") + "): the case's time is up"
	if !got.IsError || got.Content != want {
		t.Errorf("cancelled call = %q (error %v), want the error %q", got.Content, got.IsError, want)
	}
}

func TestPure(t *testing.T) {
	src := `version: 1
agent: {provider: script}
mocks:
  plain:
    - when: {a: 1}
      return: one
    - error: no
  seq:
    - sequence: [{return: a}, {return: b}]
  slow:
    - return: x
      delay_ms: 5
cases:
  - name: c
    input: x
    script: [{text: ok}]
`
	s, ds := spec.Parse("p.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	set := mock.Compile(s)
	for name, want := range map[string]bool{"plain": true, "seq": false, "slow": false, "nope": true} {
		if got := set.Pure(name); got != want {
			t.Errorf("Pure(%q) = %v, want %v", name, got, want)
		}
	}
}
