package world

import (
	"encoding/json"
	"strings"
	"testing"

	"go.starlark.net/starlark"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Tests named after the rules of tool overrides (return a value or fail
// selected calls) and of state, reset and evidence: one rule a test.

func mustLoad(t testing.TB, file string) *World {
	t.Helper()
	w, ds := Load(file, nil)
	if ds.HasErrors() {
		t.Fatalf("load %s:\n%s", file, ds.Error())
	}
	return w
}

func seedWorld(t testing.TB) *World { return mustLoad(t, "testdata/seed.world.yaml") }

func rules(t testing.TB, w *World, scope Scope, yamlJSON string) []*Override {
	t.Helper()
	v, err := value.Parse([]byte(yamlJSON))
	if err != nil {
		t.Fatal(err)
	}
	os, err := w.ParseOverrides(v, scope)
	if err != nil {
		t.Fatal(err)
	}
	return os
}

func newDrill(t testing.TB, w *World, d Drill) *Instance {
	t.Helper()
	in, err := w.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func save(in *Instance, args string) *Response {
	return in.Call(Request{Operation: "record-store/records.save", Arguments: args})
}

func wantCode(t *testing.T, r *Response, code string) {
	t.Helper()
	if r.Error == nil || r.Error.Code != code {
		t.Fatalf("want error %s; got %s %s", code, r.Status, r.Content())
	}
}

func wantOK(t *testing.T, r *Response) {
	t.Helper()
	if r.Status != "ok" {
		t.Fatalf("want ok; got %s", r.Content())
	}
}

func records(in *Instance) map[string]any {
	return in.State()["record-store"].(map[string]any)["records"].(map[string]any)
}

const busyOnce = `[{"id":"busy-once","operation":{"packageId":"record-store","operationId":"records.save"},
  "when":{"arguments":{"id":"record-1"}},"times":1,
  "outcome":{"kind":"error","code":"BUSY","message":"Try again","retryable":true}}]`

func TestRule_ToolOverridesInWorldScenarioOrDrill(t *testing.T) {
	w := seedWorld(t)
	// World scope.
	in := newDrill(t, w, Drill{})
	if r := save(in, `{"id":"stubbed","text":"x"}`); r.Output.(map[string]any)["id"] != "world-stub" {
		t.Errorf("world rule: %s", r.Content())
	}
	// Scenario scope.
	in = newDrill(t, w, Drill{Scenario: "busy-store"})
	if r := save(in, `{"id":"stubbed","text":"x"}`); r.Output.(map[string]any)["id"] != "scenario-stub" {
		t.Errorf("scenario rule: %s", r.Content())
	}
	// Drill scope.
	in = newDrill(t, w, Drill{Overrides: rules(t, w, ScopeDrill, busyOnce)})
	wantCode(t, save(in, `{"id":"record-1","text":"x"}`), "BUSY")
}

func TestRule_PerTestSetupScenarioToolOverrides(t *testing.T) {
	w := seedWorld(t)
	inline, err := w.ParseSetup(map[string]any{"toolOverrides": mustParse(busyOnce)})
	if err != nil {
		t.Fatal(err)
	}
	in := newDrill(t, w, Drill{Inline: inline})
	r := save(in, `{"id":"record-1","text":"x"}`)
	wantCode(t, r, "BUSY")
	if r.Evidence.Override.Scope != ScopeTest.String() {
		t.Errorf("scope %v; want test", r.Evidence.Override.Scope)
	}
	// Only overrides were given: the world's state is still the start.
	if _, ok := records(in)["record-0"]; !ok {
		t.Errorf("an inline scenario with only toolOverrides replaced the state: %v", records(in))
	}
}

func mustParse(s string) any {
	v, err := value.Parse([]byte(s))
	if err != nil {
		panic(err)
	}
	return v
}

func TestRule_BusyOnceFailsFirstMatchingCall(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	r := save(in, `{"id":"record-1","text":"a"}`)
	wantCode(t, r, "BUSY")
	if !r.Error.Retryable || r.Error.Message != "Try again" {
		t.Errorf("envelope %+v", r.Error)
	}
	wantOK(t, save(in, `{"id":"record-1","text":"a"}`))
}

func TestRule_FragmentIsNotACompleteWorldFile(t *testing.T) {
	_, ds := Parse("fragment.world.yaml", []byte(`toolOverrides: []`), nil)
	if !ds.HasErrors() || !strings.Contains(ds.Error(), `missing required key "version"`) {
		t.Errorf("a fragment loaded as a world: %v", ds)
	}
}

func TestRule_ReturnSkipsHandlerAndFaults(t *testing.T) {
	w := seedWorld(t)
	// busy-store has a fault on every 2nd save; return runs neither it nor the handler.
	in := newDrill(t, w, Drill{Scenario: "busy-store", TestOverrides: rules(t, w, ScopeTest,
		`[{"operation":"record-store/records.save","outcome":{"kind":"return","value":{"id":"r","version":9}}}]`)})
	for i := 0; i < 4; i++ {
		r := save(in, `{"id":"a","text":"x"}`)
		wantOK(t, r)
		if r.Evidence.Fault != nil || r.Evidence.Outcome != OutcomeReturn {
			t.Fatalf("call %d: %+v", i, r.Evidence)
		}
	}
	if len(in.Emitted()) != 0 {
		t.Errorf("the handler ran: %v", in.Emitted())
	}
}

func TestRule_ReturnDoesNotPretendAStateChange(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"operation":"record-store/records.save","outcome":{"kind":"return","value":{"id":"new","version":1}}}]`)})
	r := save(in, `{"id":"new","text":"x"}`)
	if _, ok := records(in)["new"]; ok || r.Evidence.StateVersion != 0 {
		t.Errorf("state changed: %v (version %d)", records(in), r.Evidence.StateVersion)
	}
}

func TestRule_ReturnValueMustMatchOutputSchema(t *testing.T) {
	w := seedWorld(t)
	_, err := w.ParseOverrides(mustParse(`[{"operation":"record-store/records.save","outcome":{"kind":"return","value":{"id":1}}}]`), ScopeTest)
	if err == nil || !strings.Contains(err.Error(), "does not match the output schema") {
		t.Fatalf("got %v", err)
	}
}

func TestRule_ErrorReturnsDeclaredErrorWithoutHandlerOrFaults(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Scenario: "busy-store", TestOverrides: rules(t, w, ScopeTest,
		`[{"operation":"record-store/records.save","outcome":{"kind":"error","code":"BUSY"}}]`)})
	for i := 0; i < 2; i++ {
		r := save(in, `{"id":"a","text":"x"}`)
		wantCode(t, r, "BUSY")
		if r.Evidence.Fault != nil || !r.Error.Retryable {
			t.Errorf("%+v %+v", r.Evidence, r.Error)
		}
	}
	if len(in.Emitted()) != 0 {
		t.Error("the handler ran")
	}
	_, err := w.ParseOverrides(mustParse(`[{"operation":"record-store/records.save","outcome":{"kind":"error","code":"BUZY"}}]`), ScopeTest)
	if err == nil || !strings.Contains(err.Error(), `error "BUZY" is not declared by record-store/records.save (did you mean "BUSY"?)`) {
		t.Errorf("undeclared code: %v", err)
	}
}

func TestRule_OriginalUsesBehaviorWithFaultsOverLowerStub(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Scenario: "busy-store", TestOverrides: rules(t, w, ScopeTest,
		`[{"operation":"record-store/records.save","when":{"arguments":{"id":"stubbed"}},"outcome":{"kind":"original"}}]`)})
	r1 := save(in, `{"id":"stubbed","text":"x"}`)
	wantOK(t, r1)
	if r1.Output.(map[string]any)["id"] != "stubbed" || r1.Evidence.Outcome != OutcomeOriginal {
		t.Errorf("the stub answered: %s %+v", r1.Content(), r1.Evidence)
	}
	r2 := save(in, `{"id":"stubbed","text":"y"}`) // the fault fires every 2nd call
	wantCode(t, r2, "DOWN")
	if r2.Evidence.Fault == nil || *r2.Evidence.Fault != "flaky" || r2.Evidence.Outcome != OutcomeOriginal {
		t.Errorf("%+v", r2.Evidence)
	}
}

func TestRule_OriginalNeverCallsAProductionService(t *testing.T) {
	// original runs the world's own Starlark behavior, which has no I/O at
	// all: the modules see only Starlark's built-ins (some wrapped to keep
	// the memory budget), the memory checks and ctx.
	for name := range predeclared {
		if _, builtin := starlark.Universe[name]; !builtin && name != opFn && name != methodFn && name != attrFn {
			t.Errorf("behavior modules see the host function %s", name)
		}
	}
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, `[{"operation":"record-store/records.save","outcome":{"kind":"original"}}]`)})
	if r := save(in, `{"id":"a","text":"x"}`); r.Evidence.Outcome != OutcomeOriginal || records(in)["a"] == nil {
		t.Errorf("%+v", r.Evidence)
	}
}

func TestRule_RulesApplyAfterTransportDecoding(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	// The same call as JSON text with other spacing and key order (what an
	// HTTP or MCP transport hands over) and as a decoded value (a direct
	// Go call) match the same rule.
	r := in.Call(Request{Tool: "save_record", Arguments: "{ \"text\" : \"a\",\n \"id\": \"record-1\" }"})
	wantCode(t, r, "BUSY")
	in.Reset()
	r = in.Call(Request{Operation: "record-store/records.save", Args: map[string]any{"id": "record-1", "text": "a"}})
	wantCode(t, r, "BUSY")
}

func TestRule_PermissionsInputBudgetsIdempotencyRemainEnforced(t *testing.T) {
	w := seedWorld(t)
	all := `[{"operation":"record-store/records.get","outcome":{"kind":"return","value":{"text":"stub"}}},
	         {"operation":"mail/send","outcome":{"kind":"return","value":{"stub":true}}},
	         {"id":"b","operation":"record-store/records.save","outcome":{"kind":"error","code":"BUSY"}}]`
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, all)})
	// Permission: the auditor may not send mail, whatever a rule returns.
	r := in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`, Actor: "auditor"})
	wantCode(t, r, CodePermission)
	// Input: a rule never answers an invalid call.
	wantCode(t, in.Call(Request{Operation: "record-store/records.get", Arguments: `{}`}), CodeInvalidInput)
	// Budget: 3 mail/send calls, then the budget answers.
	for i := 0; i < 3; i++ {
		wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`}))
	}
	r = in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})
	wantCode(t, r, CodeBudget)
	if r.Evidence.Override != nil {
		t.Error("an override was selected past the budget")
	}
	// Idempotency: a successful key's receipt comes back before the BUSY rule is selected.
	in2 := newDrill(t, w, Drill{})
	wantOK(t, in2.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"k","text":"x"}`, IdempotencyKey: "save-k"}))
	in2.rules = rules(t, w, ScopeTest, all)
	in2.ruleUsed = make([]int, len(in2.rules))
	r = in2.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"k","text":"x"}`, IdempotencyKey: "save-k"})
	wantOK(t, r)
	if !r.Receipt || r.Evidence.Outcome != OutcomeReceipt || r.Evidence.Override != nil {
		t.Errorf("receipt: %+v", r.Evidence)
	}
	wantCode(t, in2.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"k","text":"x"}`, IdempotencyKey: "save-k2"}), "BUSY")
}

func TestRule_RulesMatchOperationActorAndArgumentKeys(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"id":"auditor-only","operation":"record-store/records.get","when":{"actorId":"auditor"},"outcome":{"kind":"return","value":{"text":"audited"}}},
		  {"id":"by-arg","operation":"record-store/records.get","when":{"arguments":{"id":"x"}},"outcome":{"kind":"return","value":{"text":"x"}}}]`)})
	get := func(actor, args string) string {
		return in.Call(Request{Operation: "record-store/records.get", Arguments: args, Actor: actor}).Content()
	}
	if got := get("auditor", `{"id":"record-0"}`); got != `{"text":"audited"}` {
		t.Errorf("actor rule: %s", got)
	}
	if got := get("agent", `{"id":"record-0"}`); got != `{"text":"hello","version":1}` {
		t.Errorf("no rule: %s", got)
	}
	if got := get("agent", `{"id":"x"}`); got != `{"text":"x"}` {
		t.Errorf("argument rule: %s", got)
	}
	if r := in.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"x","text":"t"}`}); r.Evidence.Override != nil {
		t.Error("a rule matched another operation")
	}
}

func TestRule_ArgumentValuesMatchExactlyIncludingNested(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"operation":"record-store/records.save","when":{"arguments":{"id":"a","meta":{"k":[1,{"x":2}]}}},"outcome":{"kind":"error","code":"BUSY"}}]`)})
	for _, c := range []struct {
		args  string
		match bool
	}{
		{`{"id":"a","text":"t","meta":{"k":[1,{"x":2}]}}`, true},
		{`{"id":"a","text":"other","tags":[1],"meta":{"k":[1.0,{"x":2}]}}`, true}, // other top-level keys differ; 1 == 1.0
		{`{"id":"a","text":"t","meta":{"k":[1,{"x":2}],"more":1}}`, false},        // nested objects match exactly, not as a subset
		{`{"id":"a","text":"t","meta":{"k":[1,{"x":2,"y":3}]}}`, false},           // inside arrays too
		{`{"id":"a","text":"t","meta":{"k":[1]}}`, false},                         // arrays exactly
		{`{"id":"a","text":"t"}`, false},                                          // a supplied key must be present
	} {
		r := save(in, c.args)
		if got := r.Evidence.Override != nil; got != c.match {
			t.Errorf("%s: matched %v, want %v", c.args, got, c.match)
		}
	}
}

func TestRule_PriorityWorldScenarioDrillPerTest(t *testing.T) {
	w := seedWorld(t)
	rule := func(scope Scope, id string) []*Override {
		return rules(t, w, scope, `[{"operation":"record-store/records.save","when":{"arguments":{"id":"stubbed"}},"outcome":{"kind":"return","value":{"id":"`+id+`","version":0}}}]`)
	}
	in := newDrill(t, w, Drill{Scenario: "busy-store", Overrides: rule(ScopeDrill, "drill"), TestOverrides: rule(ScopeTest, "test")})
	r := save(in, `{"id":"stubbed","text":"x"}`)
	if r.Output.(map[string]any)["id"] != "test" || r.Evidence.Override.Scope != ScopeTest.String() {
		t.Errorf("per-test should win: %s", r.Content())
	}
	in = newDrill(t, w, Drill{Scenario: "busy-store", Overrides: rule(ScopeDrill, "drill")})
	if r := save(in, `{"id":"stubbed","text":"x"}`); r.Output.(map[string]any)["id"] != "drill" {
		t.Errorf("drill should beat scenario: %s", r.Content())
	}
	in = newDrill(t, w, Drill{Scenario: "busy-store"})
	if r := save(in, `{"id":"stubbed","text":"x"}`); r.Output.(map[string]any)["id"] != "scenario-stub" {
		t.Errorf("scenario should beat world: %s", r.Content())
	}
}

func TestRule_LaterMatchingRuleWinsWithinScope(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"id":"first","operation":"record-store/records.get","outcome":{"kind":"return","value":{"text":"first"}}},
		  {"id":"second","operation":"record-store/records.get","outcome":{"kind":"return","value":{"text":"second"}}},
		  {"id":"third","operation":"record-store/records.get","when":{"arguments":{"id":"zzz"}},"outcome":{"kind":"return","value":{"text":"third"}}}]`)})
	r := in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"a"}`})
	if r.Content() != `{"text":"second"}` || r.Evidence.Override.ID != "second" {
		t.Errorf("%s", r.Content())
	}
}

func TestRule_SameIDInHigherScopeReplacesEntirely(t *testing.T) {
	w := seedWorld(t)
	// The world's "stub" matches id=stubbed; a per-test "stub" with no when
	// replaces it entirely: its when is gone too, and once spent the
	// world's definition does not come back.
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"id":"stub","operation":"record-store/records.save","when":{"arguments":{"id":"other"}},"times":1,"outcome":{"kind":"error","code":"BUSY"}}]`)})
	r := save(in, `{"id":"stubbed","text":"x"}`)
	wantOK(t, r)
	if r.Evidence.Override != nil || r.Output.(map[string]any)["id"] != "stubbed" {
		t.Errorf("the replaced world rule still matched: %s %+v", r.Content(), r.Evidence.Override)
	}
}

func TestRule_SpentRuleContinuesToOtherRulesThenBehaviorNotReplaced(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{
		Overrides:     rules(t, w, ScopeDrill, `[{"id":"other","operation":"record-store/records.save","when":{"arguments":{"id":"stubbed"}},"times":1,"outcome":{"kind":"return","value":{"id":"drill-other","version":0}}}]`),
		TestOverrides: rules(t, w, ScopeTest, `[{"id":"stub","operation":"record-store/records.save","when":{"arguments":{"id":"stubbed"}},"times":1,"outcome":{"kind":"error","code":"BUSY"}}]`),
	})
	wantCode(t, save(in, `{"id":"stubbed","text":"x"}`), "BUSY") // per-test "stub"
	if r := save(in, `{"id":"stubbed","text":"x"}`); r.Output.(map[string]any)["id"] != "drill-other" {
		t.Errorf("second call: want the other rule, got %s", r.Content())
	}
	r := save(in, `{"id":"stubbed","text":"x"}`)
	if r.Evidence.Outcome != OutcomeBehavior || r.Output.(map[string]any)["id"] != "stubbed" {
		t.Errorf("third call: want normal behavior (not the replaced world stub), got %s %+v", r.Content(), r.Evidence)
	}
}

func TestRule_OmittedTimesMatchesUnlimited(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, `[{"id":"u","operation":"record-store/records.save","outcome":{"kind":"error","code":"BUSY"}}]`)})
	var r *Response
	for i := 0; i < 50; i++ {
		r = save(in, `{"id":"a","text":"x"}`)
		wantCode(t, r, "BUSY")
	}
	if r.Evidence.Override.MatchCount != 50 || r.Evidence.Override.Remaining != nil {
		t.Errorf("%+v", r.Evidence.Override)
	}
}

func TestRule_InlineScenarioIsCompleteSetupNotOverlay(t *testing.T) {
	w := seedWorld(t)
	inline, err := w.ParseSetup(map[string]any{"state": map[string]any{"record-store": map[string]any{"records": map[string]any{"only": map[string]any{"text": "t", "version": json1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	in := newDrill(t, w, Drill{Inline: inline})
	recs := records(in)
	if _, ok := recs["record-0"]; ok || recs["only"] == nil {
		t.Errorf("inline scenario overlaid the world's state: %v", recs)
	}
	if mail := in.State()["mail"].(map[string]any); len(mail) != 0 {
		t.Errorf("a package the inline scenario does not name kept the world's state: %v", mail)
	}
	// ...and the world's budgets are not in force either.
	for i := 0; i < 5; i++ {
		wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`}))
	}
}

var json1 = mustParse("1")

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
