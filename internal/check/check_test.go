package check_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

var update = flag.Bool("update", false, "rewrite testdata/messages.txtar from the current messages")

const golden = "testdata/messages.txtar"

const file = "suite.dryfire.yaml"

// parseCheck loads one expect entry, written in YAML flow style, through
// the suite loader.
func parseCheck(t *testing.T, src string) *spec.Check {
	t.Helper()
	suite := "version: 1\nagent: {provider: script}\ncases:\n  - name: c\n    input: hi\n    script: [{text: done}]\n    expect:\n      - " + src + "\n"
	if strings.HasPrefix(src, "file:") { // a program's case with a workspace; the check on line 8 too
		suite = "version: 1\nworkspace: ws\nagent: {command: [agent]}\ncases:\n  - name: c\n    input: hi\n    expect:\n      - " + src + "\n"
	}
	s, ds := spec.Parse(file, []byte(suite), nil)
	if ds.HasErrors() {
		t.Fatalf("check %s does not load:\n%v", src, ds)
	}
	if len(s.Cases) != 1 || len(s.Cases[0].Expect) != 1 {
		t.Fatalf("check %s: loaded %d checks, want 1", src, len(s.Cases[0].Expect))
	}
	return s.Cases[0].Expect[0]
}

// rec is a call record as a mock session makes it: the arguments parsed,
// or the raw text when they are not JSON.
func rec(turn int, name, args, content string, isError bool) tool.Record {
	var parsed any = args
	if v, err := value.Parse([]byte(args)); err == nil {
		parsed = v
	}
	outcome := tool.Return
	if isError {
		outcome = tool.Error
	}
	return tool.Record{
		Call:   tool.Call{ID: fmt.Sprintf("call_%d_%s", turn, name), Name: name, Args: args, Turn: turn},
		Args:   parsed,
		Result: tool.Result{Content: content, IsError: isError, Outcome: outcome, Entry: -1},
	}
}

// The cases the checks are judged against.
var (
	// A refund: lookup, a refund that times out and is retried, a search.
	refund = &check.Facts{
		Calls: []tool.Record{
			rec(1, "lookup_order", `{"order_id":"A-991"}`, `{"tier":"gold"}`, false),
			rec(2, "issue_refund", `{"order_id":"A-991","amount":20}`, "timeout", true),
			rec(3, "issue_refund", `{"amount":20,"order_id":"A-991"}`, `{"ok":true}`, false),
			rec(3, "search", `{"q":"refund policy","tags":["refunds"]}`, `[]`, false),
		},
		Output: "Your refund of €20 for order A-991 is on its way.",
		Turns:  4,
	}
	// Nothing happened: the model answered at once with no text.
	nothing = &check.Facts{Turns: 1}
	// The model answered in JSON.
	jsonOut = &check.Facts{
		Calls:  []tool.Record{rec(1, "lookup_order", `{"order_id":"A-991"}`, `{"tier":"gold"}`, false)},
		Output: `{"tier":"platinum","refund":"20"}`,
		Turns:  2,
	}
	// The model sent arguments that are not JSON, and one call went
	// unmatched.
	badArgs = &check.Facts{
		Calls: []tool.Record{
			rec(1, "lookup_order", `{"order_id": "A-99`, "", false),
			{
				Call: tool.Call{ID: "call_2", Name: "lookup_order", Args: `{"order_id":"B-1"}`, Turn: 2},
				Args: map[string]any{"order_id": "B-1"},
				Result: tool.Result{
					Content: `dryfire: no mock rule matched this call to "lookup_order"; closest rule suite.dryfire.yaml:6 differs at $.order_id: expected "A-991", got "B-1"`,
					IsError: true, Outcome: tool.Unmatched, Entry: -1,
				},
			},
		},
		Output: "I could not find your order.",
		Turns:  3,
	}
	onlyBadArgs = &check.Facts{
		Calls: []tool.Record{rec(1, "lookup_order", `{"order_id": "A-99`, "", false)},
		Turns: 2,
	}
	// Refunds of several amounts.
	mixed = &check.Facts{
		Calls: []tool.Record{
			rec(1, "issue_refund", `{"amount":20}`, "ok", false),
			rec(1, "issue_refund", `{"amount":25}`, "ok", false),
			rec(2, "issue_refund", `{"amount":20}`, "ok", false),
			rec(2, "issue_refund", `{"amount":"20"}`, "ok", false),
		},
		Turns: 3,
	}
	// shell is a coding agent's shell tool run three times: the file
	// read, a wrong edit, the tests.
	shell = &check.Facts{
		Calls: []tool.Record{
			rec(1, "exec_command", `{"cmd":"cat calc.py"}`, "def add(a, b):", false),
			rec(2, "exec_command", `{"cmd":"sed -i 's/a - b/a * b/' calc.py"}`, "", false),
			rec(3, "exec_command", `{"cmd":"python3 -m unittest -q"}`, "FAILED", false),
		},
		Turns: 4,
	}
)

// guarded is an agent that checks identity with a tool of its own
// (verify_identity, seen on the model wire) before its refunds: the
// second refund's identity check was for another order, and it retried
// with the same request_id after a close_account of another order.
var guarded = &check.Facts{
	Calls: []tool.Record{
		own(rec(1, "verify_identity", `{"order":"A-1"}`, `ok`, false)),
		rec(2, "issue_refund", `{"order_id":"A-1","request_id":"r-1"}`, `{"refund_id":"R-1"}`, false),
		rec(2, "close_account", `{"order_id":"B-2"}`, `ok`, false),
		own(rec(3, "verify_identity", `{"order":"B-2"}`, `ok`, false)),
		rec(4, "issue_refund", `{"order_id":"C-3","request_id":"r-1"}`, `{"refund_id":"R-1"}`, false),
	},
	Output: "Done.",
	Turns:  5,
}

// guardedOK is guarded with each refund checked first, and a failed
// refund read again before the next.
var guardedOK = &check.Facts{
	Calls: []tool.Record{
		own(rec(1, "verify_identity", `{"order":"A-1"}`, `ok`, false)),
		rec(2, "issue_refund", `{"order_id":"A-1","request_id":"r-1"}`, `timeout`, true),
		rec(3, "lookup_order", `{"order_id":"A-1"}`, `{}`, false),
		own(rec(4, "verify_identity", `{"order":"C-3"}`, `ok`, false)),
		rec(5, "issue_refund", `{"order_id":"C-3","request_id":"r-2"}`, `{"refund_id":"R-2"}`, false),
	},
	Output: "Done.",
	Turns:  6,
}

func own(r tool.Record) tool.Record {
	r.Own, r.Result.Outcome = true, ""
	return r
}

// Each check kind, passing and failing. The messages are in the golden
// file; the table says whether each check passes, so a golden can never
// turn a failure into a pass.
var checkTests = []struct {
	name  string
	check string
	facts *check.Facts
	pass  bool
}{
	{"called/by-name", `called: lookup_order`, refund, true},
	{"called/by-name-never", `called: send_email`, refund, false},
	{"called/no-calls-at-all", `called: lookup_order`, nothing, false},
	{"called/with", `called: {tool: issue_refund, with: {amount: 20}}`, refund, true},
	{"called/with-number-forms", `called: {tool: issue_refund, with: {amount: 20.0}}`, refund, true},
	{"called/with-other-arguments", `called: {tool: issue_refund, with: {order_id: A-991, amount: 25}}`, refund, false},
	{"called/with-absent-key", `called: {tool: lookup_order, with: {customer_id: C-1}}`, refund, false},
	{"called/with-array-length", `called: {tool: search, with: {tags: [refunds, policy]}}`, refund, false},
	{"called/with-prefers-json-arguments", `called: {tool: lookup_order, with: {order_id: A-99}}`, badArgs, false},
	{"called/with-arguments-not-json", `called: {tool: lookup_order, with: {order_id: A-99}}`, onlyBadArgs, false},
	{"called/with-closest-string", `called: {tool: exec_command, with: {cmd: "sed -i 's/a - b/a + b/' calc.py"}}`, shell, false},
	{"called/matching-closest-string", `called: {tool: exec_command, matching: {cmd: "^python3 -m pytest"}}`, shell, false},
	{"called/with-some-matching", `called: {tool: issue_refund, with: {amount: 20}, min: 3}`, mixed, false},
	{"called/matching", `called: {tool: search, matching: {q: "^refund "}}`, refund, true},
	{"called/matching-a-number", `called: {tool: issue_refund, matching: {amount: "^2[0-9]$"}, times: 2}`, refund, true},
	{"called/matching-with", `called: {tool: issue_refund, with: {order_id: A-991}, matching: {amount: "^20$"}, times: 2}`, refund, true},
	{"called/matching-none", `called: {tool: search, matching: {q: "^go test", tags: refunds}}`, refund, false},
	{"called/matching-absent", `called: {tool: lookup_order, matching: {customer_id: "."}}`, refund, false},
	{"called/times", `called: {tool: issue_refund, times: 2}`, refund, true},
	{"called/times-too-many", `called: {tool: issue_refund, times: 1}`, refund, false},
	{"called/times-too-few", `called: {tool: issue_refund, with: {amount: 20}, times: 3}`, refund, false},
	{"called/times-zero", `called: {tool: send_email, times: 0}`, refund, true},
	{"called/times-zero-but-called", `called: {tool: search, times: 0}`, refund, false},
	{"called/min", `called: {tool: issue_refund, min: 2}`, refund, true},
	{"called/min-too-few", `called: {tool: lookup_order, min: 2}`, refund, false},
	{"called/max", `called: {tool: lookup_order, max: 1}`, refund, true},
	{"called/max-too-many", `called: {tool: issue_refund, max: 1}`, refund, false},
	{"called/min-max", `called: {tool: issue_refund, min: 1, max: 3}`, refund, true},
	{"called/min-max-too-few", `called: {tool: search, min: 2, max: 3}`, refund, false},

	{"not_called/by-name", `not_called: delete_account`, refund, true},
	{"not_called/by-name-called", `not_called: issue_refund`, refund, false},
	{"not_called/with", `not_called: {tool: issue_refund, with: {amount: 500}}`, refund, true},
	{"not_called/matching", `not_called: {tool: search, matching: {q: "delete"}}`, refund, true},
	{"not_called/matching-called", `not_called: {tool: search, matching: {q: "policy$"}}`, refund, false},
	{"not_called/with-called", `not_called: {tool: issue_refund, with: {amount: 20}}`, refund, false},
	{"not_called/arguments-not-json", `not_called: lookup_order`, badArgs, false},

	// trajectory: every match mode with every argument mode, passing and
	// failing, against the refund's four calls.
	{"trajectory/strict-subset", `trajectory: {calls: [lookup_order, {tool: issue_refund, with: {amount: 20}}, issue_refund, search]}`, refund, true},
	{"trajectory/strict-subset-order", `trajectory: {calls: [issue_refund, lookup_order, issue_refund, search]}`, refund, false},
	{"trajectory/strict-subset-args", `trajectory: {calls: [lookup_order, {tool: issue_refund, with: {amount: 25}}, issue_refund, search]}`, refund, false},
	{"trajectory/strict-one-fewer", `trajectory: {calls: [lookup_order, issue_refund, issue_refund]}`, refund, false},
	{"trajectory/strict-one-more", `trajectory: {calls: [lookup_order, issue_refund, issue_refund, search, send_email]}`, refund, false},
	{"trajectory/strict-nothing", `trajectory: {calls: [lookup_order]}`, nothing, false},
	{"trajectory/strict-exact", `trajectory: {calls: [{tool: lookup_order, with: {order_id: A-991}}, {tool: issue_refund, with: {order_id: A-991, amount: 20.0}}, issue_refund, search], args: exact}`, refund, true},
	{"trajectory/strict-exact-extra-key", `trajectory: {calls: [lookup_order, {tool: issue_refund, with: {amount: 20}}, issue_refund, search], args: exact}`, refund, false},
	{"trajectory/strict-ignore", `trajectory: {calls: [lookup_order, issue_refund, issue_refund, search], args: ignore}`, refund, true},
	{"trajectory/strict-ignore-names", `trajectory: {calls: [lookup_order, issue_refund, search, search], args: ignore}`, refund, false},
	{"trajectory/unordered-subset", `trajectory: {calls: [search, issue_refund, {tool: lookup_order, with: {order_id: A-991}}, issue_refund], match: unordered}`, refund, true},
	{"trajectory/unordered-subset-missing", `trajectory: {calls: [search, issue_refund, lookup_order], match: unordered}`, refund, false},
	{"trajectory/unordered-exact", `trajectory: {calls: [search, {tool: issue_refund, with: {amount: 20, order_id: A-991}}, {tool: issue_refund, with: {order_id: A-991, amount: 20}}, lookup_order], match: unordered, args: exact}`, refund, true},
	{"trajectory/unordered-exact-fails", `trajectory: {calls: [search, {tool: issue_refund, with: {amount: 20}}, issue_refund, lookup_order], match: unordered, args: exact}`, refund, false},
	{"trajectory/unordered-ignore", `trajectory: {calls: [search, issue_refund, issue_refund, lookup_order], match: unordered, args: ignore}`, refund, true},
	{"trajectory/unordered-ignore-fails", `trajectory: {calls: [search, issue_refund, lookup_order, lookup_order], match: unordered, args: ignore}`, refund, false},
	{"trajectory/subset-subset", `trajectory: {calls: [lookup_order, issue_refund, issue_refund, search, send_email], match: subset}`, refund, true},
	{"trajectory/subset-subset-fails", `trajectory: {calls: [lookup_order, issue_refund, search], match: subset}`, refund, false},
	{"trajectory/subset-exact", `trajectory: {calls: [{tool: lookup_order, with: {order_id: A-991}}, {tool: issue_refund, with: {order_id: A-991, amount: 20}}, {tool: issue_refund, with: {order_id: A-991, amount: 20}}, search, send_email], match: subset, args: exact}`, refund, true},
	{"trajectory/subset-exact-fails", `trajectory: {calls: [{tool: lookup_order, with: {order_id: A-991}}, {tool: issue_refund, with: {order_id: A-991}}, issue_refund, search], match: subset, args: exact}`, refund, false},
	{"trajectory/subset-ignore", `trajectory: {calls: [search, issue_refund, issue_refund, lookup_order], match: subset, args: ignore}`, refund, true},
	{"trajectory/subset-ignore-fails", `trajectory: {calls: [issue_refund, issue_refund, lookup_order], match: subset, args: ignore}`, refund, false},
	{"trajectory/subset-of-nothing", `trajectory: {calls: [], match: subset}`, nothing, true},
	{"trajectory/superset-subset", `trajectory: {calls: [{tool: issue_refund, with: {order_id: A-991}}, lookup_order], match: superset}`, refund, true},
	{"trajectory/superset-subset-fails", `trajectory: {calls: [{tool: issue_refund, with: {amount: 25}}, send_email], match: superset}`, refund, false},
	{"trajectory/superset-exact", `trajectory: {calls: [{tool: lookup_order, with: {order_id: A-991}}], match: superset, args: exact}`, refund, true},
	{"trajectory/superset-exact-fails", `trajectory: {calls: [{tool: search, with: {q: refund policy}}], match: superset, args: exact}`, refund, false},
	{"trajectory/superset-ignore", `trajectory: {calls: [issue_refund, issue_refund], match: superset, args: ignore}`, refund, true},
	{"trajectory/superset-ignore-fails", `trajectory: {calls: [issue_refund, issue_refund, issue_refund], match: superset, args: ignore}`, refund, false},
	// policy: each rule passing and broken; the refund's second issue_refund
	// is the agent's own in guarded (verify_identity is its own tool).
	{"policy/preceded_by", `policy: {calls: issue_refund, preceded_by: lookup_order, same: [order_id]}`, refund, true},
	{"policy/preceded_by-broken", `policy: {name: identity first, calls: issue_refund, preceded_by: verify_identity, same: [order_id]}`, refund, false},
	{"policy/preceded_by-other-values", `policy: {calls: issue_refund, preceded_by: {tool: verify_identity, where: own}, same: {order_id: order}}`, guarded, false},
	{"policy/preceded_by-own", `policy: {calls: issue_refund, preceded_by: {tool: verify_identity, where: own}, same: {order_id: order}}`, guardedOK, true},
	{"policy/preceded_by-none-made", `policy: {calls: send_email, preceded_by: lookup_order}`, refund, true},
	{"policy/not_after", `policy: {calls: {tool: [issue_refund, open_ticket]}, not_after: {error: true}, until: lookup_order}`, guardedOK, true},
	{"policy/not_after-broken", `policy: {name: no write after an error until a read, calls: {tool: [issue_refund, open_ticket]}, not_after: {error: true}, until: lookup_order}`, refund, false},
	{"policy/not_after-same", `policy: {calls: issue_refund, not_after: {tool: close_account}, same: [order_id]}`, guarded, true},
	{"policy/not_after-same-broken", `policy: {calls: issue_refund, not_after: {tool: close_account}}`, guarded, false},
	{"policy/at_most-per", `policy: {calls: issue_refund, at_most: 1, per: [request_id]}`, guardedOK, true},
	{"policy/at_most-per-broken", `policy: {name: one write per idempotency key, calls: issue_refund, at_most: 1, per: [request_id]}`, guarded, false},
	{"policy/at_most", `policy: {calls: issue_refund, at_most: 1}`, refund, false},
	{"policy/if-holds", `policy: {calls: issue_refund, at_most: 1, if: {called: search}}`, refund, false},
	{"policy/if-does-not-hold", `policy: {calls: issue_refund, at_most: 1, if: {called: send_email}}`, refund, true},
	{"policy/where-own", `policy: {calls: {}, at_most: 2, where: own}`, guarded, true},
	{"policy/where-served", `policy: {calls: issue_refund, at_most: 1, where: served}`, guarded, false},

	{"not_leaked/kept", `not_leaked: [sk-canary-1, "4111 1111"]`, refund, true},
	{"not_leaked/in-arguments", `not_leaked: A-991`, refund, false},
	{"not_leaked/in-own-arguments", `not_leaked: A-1`, guarded, false},
	{"not_leaked/in-output", `not_leaked: [sk-canary-1, €20]`, refund, false},
	{"not_leaked/in-a-reply", `not_leaked: order number`, conversation, false},

	{"order/in-order", `order: [lookup_order, issue_refund]`, refund, true},
	{"order/subsequence", `order: [lookup_order, search]`, refund, true},
	{"order/repeated-names", `order: [issue_refund, issue_refund]`, refund, true},
	{"order/repeated-names-too-few", `order: [lookup_order, lookup_order]`, refund, false},
	{"order/wrong-order", `order: [issue_refund, lookup_order]`, refund, false},
	{"order/first-never-called", `order: [send_email, issue_refund]`, refund, false},
	{"order/no-calls-at-all", `order: [lookup_order]`, nothing, false},

	{"output/contains", `output: {contains: on its way}`, refund, true},
	{"output/contains-missing", `output: {contains: declined}`, refund, false},
	{"output/contains-other-case", `output: {contains: Refund}`, refund, false},
	{"output/regex", `output: {regex: '€\d+'}`, refund, true},
	{"output/regex-no-match", `output: {regex: '^Sorry'}`, refund, false},
	{"output/equals", `output: {equals: "Your refund of €20 for order A-991 is on its way."}`, refund, true},
	{"output/equals-differs", `output: {equals: "Your refund of €25 for order A-991 is on its way."}`, refund, false},
	{"output/equals-output-shorter", `output: {equals: "Your refund of €20 for order A-991 is on its way. Anything else?"}`, refund, false},
	{"output/equals-output-longer", `output: {equals: "Your refund of €20"}`, refund, false},
	{"output/equals-white-space", `output: {equals: "Your refund of €20 for order A-991 is on its way.\n"}`, refund, false},
	{"output/json_schema", `output: {json_schema: {type: object, required: [tier]}}`, jsonOut, true},
	{"output/json_schema-invalid", `output: {json_schema: {type: object, required: [tier, reason], properties: {tier: {enum: [gold, silver]}, refund: {type: number}}}}`, jsonOut, false},
	{"output/json_schema-not-json", `output: {json_schema: {type: object}}`, refund, false},
	{"output/json_schema-empty-output", `output: {json_schema: {type: object}}`, nothing, false},
	{"output/several", `output: {contains: refund, regex: 'A-\d+'}`, refund, true},
	{"output/several-one-fails", `output: {contains: refund, regex: 'B-\d+'}`, refund, false},

	{"max_turns/under", `max_turns: 5`, refund, true},
	{"max_turns/equal", `max_turns: 4`, refund, true},
	{"max_turns/over", `max_turns: 3`, refund, false},

	{"no_errors/none", `no_errors: true`, jsonOut, true},
	{"no_errors/no-calls", `no_errors: true`, nothing, true},
	{"no_errors/error-result", `no_errors: true`, refund, false},
	{"no_errors/unmatched-call", `no_errors: true`, badArgs, false},
	{"file/exists", `file: {path: out/report.json, exists: true}`, inWorkspace, true},
	{"file/exists-missing", `file: {path: out/summary.json, exists: true}`, inWorkspace, false},
	{"file/absent", `file: {path: scratch.txt, absent: true}`, inWorkspace, true},
	{"file/absent-present", `file: {path: out, absent: true}`, inWorkspace, false},
	{"file/contains", `file: {path: notes.txt, contains: done}`, inWorkspace, true},
	{"file/contains-not", `file: {path: notes.txt, contains: failed}`, inWorkspace, false},
	{"file/regex", `file: {path: notes.txt, regex: "^all"}`, inWorkspace, true},
	{"file/regex-not", `file: {path: notes.txt, regex: "^none"}`, inWorkspace, false},
	{"file/equals", `file: {path: notes.txt, equals: "all done\n"}`, inWorkspace, true},
	{"file/equals-not", `file: {path: notes.txt, equals: "all done"}`, inWorkspace, false},
	{"file/sha256", `file: {path: notes.txt, sha256: FA5DE19EB8ED60201DDC4E75690EC9E36C2800EE0B380709F287E5EB0BB89CC6}`, inWorkspace, true},
	{"file/sha256-other", `file: {path: notes.txt, sha256: 2f2e4d2b4aebe2b0dc6a4e0fc9ec8e27ce6c0ec6bff46bf2bb4e3f2e6e7c8c9a}`, inWorkspace, false},
	{"file/json-path", `file: {path: out/report.json, json_path: "$.items[1]", equals: 2}`, inWorkspace, true},
	{"file/json-path-other-value", `file: {path: out/report.json, json_path: $.status, equals: failed}`, inWorkspace, false},
	{"file/json-path-missing", `file: {path: out/report.json, json_path: $.result}`, inWorkspace, false},
	{"file/json-path-not-json", `file: {path: out/log.txt, json_path: $.result}`, inWorkspace, false},
	{"file/all-of", `file: {path: notes.txt, contains: all, regex: "done\n$", json_path: $.x}`, inWorkspace, false},
	{"file/no-workspace", `file: {path: notes.txt, exists: true}`, nothing, false},

	// judge: the verdict, with and without a threshold, and no verdict.
	// output of one turn of a conversation, of any, of the last.
	{"output/turn", `output: {contains: order number, turn: 1}`, conversation, true},
	{"output/turn-fails", `output: {contains: refund, turn: 2}`, conversation, false},
	{"output/turn-beyond", `output: {contains: refund, turn: 4}`, conversation, false},
	{"output/turn-any", `output: {regex: 'A-\d', turn: any}`, conversation, true},
	{"output/turn-any-fails", `output: {contains: sorry, turn: any}`, conversation, false},
	{"output/turn-last", `output: {equals: "You're welcome.", turn: last}`, conversation, true},
	{"output/turn-last-fails", `output: {contains: order, turn: last}`, conversation, false},

	{"judge/pass", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5}`, judged(&check.Verdict{Pass: true, Score: score(0.9), Reasoning: "The reply confirms the refund of A-991."}), true},
	{"judge/pass-no-score", `judge: {rubric: "The refund is confirmed.", provider: openai, model: gpt-5-mini}`, judged(&check.Verdict{Pass: true, Reasoning: "Confirmed."}), true},
	{"judge/fail", `judge: {rubric: "The reply apologises for the delay.", provider: anthropic, model: claude-haiku-4-5}`, judged(&check.Verdict{Score: score(0.2), Reasoning: "There is no apology."}), false},
	{"judge/threshold", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5, threshold: 0.8}`, judged(&check.Verdict{Score: score(0.8), Reasoning: "Mostly there."}), true},
	{"judge/threshold-below", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5, threshold: 0.8}`, judged(&check.Verdict{Pass: true, Score: score(0.75), Reasoning: "Mostly there."}), false},
	{"judge/threshold-no-score", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5, threshold: 0.5}`, judged(&check.Verdict{Pass: true}), false},
	{"judge/no-verdict", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5}`, judged(&check.Verdict{Problem: `its answer is not a verdict (a JSON object {"pass": true or false, "score": 0 to 1, "reasoning": "..."}): "I think it is fine."`}), false},
	{"judge/not-asked", `judge: {rubric: "The refund is confirmed.", provider: anthropic, model: claude-haiku-4-5}`, refund, false},
}

// conversation is a case of three turns: the agent asks for the order,
// refunds it, and is thanked.
var conversation = &check.Facts{
	Replies: []string{"What is your order number?", "Refunded A-1.", "You're welcome."},
	Output:  "You're welcome.",
	Turns:   4,
}

// judged is the refund with the verdict of its one judge check.
func judged(v *check.Verdict) *check.Facts {
	f := *refund
	f.Verdicts = map[int]*check.Verdict{1: v}
	return &f
}

func score(f float64) *float64 { return &f }

// inWorkspace is a case that ran with testdata/workspace as its workspace.
var inWorkspace = &check.Facts{Workspace: "testdata/workspace"}

func TestMessages(t *testing.T) {
	ar := &archive{}
	if data, err := os.ReadFile(golden); err == nil {
		ar = parseArchive(data)
	} else if !*update {
		t.Fatalf("reading %s: %v (run with -update to create it)", golden, err)
	}
	want := map[string]string{}
	for _, f := range ar.files {
		want[f.name] = f.data
	}

	out := &archive{comment: "The result of each check in check_test.go: PASS or FAIL, the check as\nwritten, and the message the report prints. Regenerate with\n  go test ./internal/check -run TestMessages -update\nand read every changed message before committing it.\n"}
	seen := map[string]bool{}
	for _, tt := range checkTests {
		if seen[tt.name] {
			t.Fatalf("duplicate test name %q", tt.name)
		}
		seen[tt.name] = true
		c := parseCheck(t, tt.check)
		rs := check.Evaluate([]*spec.Check{c}, tt.facts)
		if len(rs) != 1 {
			t.Fatalf("%s: %d results, want 1", tt.name, len(rs))
		}
		r := rs[0]
		if r.Passed != tt.pass {
			t.Errorf("%s: %s passed = %v, want %v: %s", tt.name, tt.check, r.Passed, tt.pass, r.Message)
		}
		if r.Check != c.Source {
			t.Errorf("%s: Check = %q, want the check's source, %q", tt.name, r.Check, c.Source)
		}
		if r.At != file+":8" {
			t.Errorf("%s: At = %q, want %s:8", tt.name, r.At, file)
		}
		status := "FAIL"
		if r.Passed {
			status = "PASS"
		}
		got := fmt.Sprintf("%s %s\n%s\n", status, r.Check, r.Message)
		out.files = append(out.files, section{tt.name, got})
		if *update {
			continue
		}
		if w, ok := want[tt.name]; !ok {
			t.Errorf("%s: not in %s (run with -update)\ngot:\n%s", tt.name, golden, got)
		} else if w != got {
			t.Errorf("%s: message changed\n got: %s\nwant: %s", tt.name, got, w)
		}
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("%s holds %q, which no test makes (run with -update)", golden, name)
		}
	}
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, out.format(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Messages hold what was expected and what happened: every failure says
// "expected", and every pass names its expectation too.
func TestMessagesSayExpectedAndHappened(t *testing.T) {
	for _, tt := range checkTests {
		r := check.Evaluate([]*spec.Check{parseCheck(t, tt.check)}, tt.facts)[0]
		if !r.Passed && !strings.HasPrefix(r.Message, "expected ") {
			t.Errorf("%s: a failure that does not start with what was expected: %s", tt.name, r.Message)
		}
		if r.Passed && strings.HasPrefix(r.Message, "expected ") {
			t.Errorf("%s: a pass that reads like a failure: %s", tt.name, r.Message)
		}
	}
}

func TestEvaluateKeepsOrder(t *testing.T) {
	src := "version: 1\nagent: {provider: script}\ncases:\n  - name: c\n    input: hi\n    script: [{text: done}]\n    expect:\n" +
		"      - called: lookup_order\n      - not_called: issue_refund\n      - max_turns: 1\n"
	s, ds := spec.Parse(file, []byte(src), nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	rs := check.Evaluate(s.Cases[0].Expect, refund)
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s %s %v", r.At, r.Check, r.Passed))
	}
	want := []string{
		file + ":8 called: lookup_order true",
		file + ":9 not_called: issue_refund false",
		file + ":10 max_turns: 1 false",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if rs := check.Evaluate(nil, refund); len(rs) != 0 {
		t.Errorf("no checks gave %d results", len(rs))
	}
}

// The golden file itself must be well formed: one section per test, no
// stray text between sections.
func TestGoldenIsTidy(t *testing.T) {
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Skip(err)
	}
	if !bytes.Equal(parseArchive(data).format(), data) {
		t.Errorf("%s does not read back as written; regenerate it with -update", golden)
	}
}

// archive is a txtar file (golang.org/x/tools/txtar): a comment, then
// sections that each start with a "-- name --" line.
type archive struct {
	comment string
	files   []section
}

type section struct{ name, data string }

func parseArchive(data []byte) *archive {
	a := &archive{}
	cur := &a.comment
	for _, line := range strings.SplitAfter(string(data), "\n") {
		l := strings.TrimSuffix(line, "\n")
		if strings.HasPrefix(l, "-- ") && strings.HasSuffix(l, " --") && len(l) > 6 {
			a.files = append(a.files, section{name: l[3 : len(l)-3]})
			cur = &a.files[len(a.files)-1].data
			continue
		}
		*cur += line
	}
	return a
}

func (a *archive) format() []byte {
	var b bytes.Buffer
	b.WriteString(a.comment)
	for _, f := range a.files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
	}
	return b.Bytes()
}
