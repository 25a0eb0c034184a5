package world

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// One test per stage of the call pipeline (Instance.Call), in its order.

func TestStageDueEventsFireBeforeTheNextCallInTimeOrder(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{})
	save(in, `{"id":"a","text":"x"}`) // schedules an expiry at +10m
	in.mu.Lock()
	in.push(scheduled{at: w.Start.Add(5 * time.Minute), id: "early", op: "record-store/records.expire", args: map[string]any{"id": "record-0"}})
	in.now = w.Start.Add(time.Hour)
	in.mu.Unlock()
	r := in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"a"}`})
	wantCode(t, r, "NOT_FOUND") // the expiry ran first
	ev := in.Evidence()
	if len(ev) != 4 || ev[1].Actor != "event:early" || !strings.HasPrefix(ev[2].Actor, "event:record-store/records.save#") || ev[3].Seq != 4 {
		t.Errorf("order: %+v", ev)
	}
}

func TestStageDecode(t *testing.T) {
	in := newDrill(t, seedWorld(t), Drill{})
	for args, want := range map[string]string{`{"id":`: "not valid JSON", `[1]`: "must be a JSON object"} {
		r := in.Call(Request{Operation: "record-store/records.get", Arguments: args})
		wantCode(t, r, CodeInvalidInput)
		if !strings.Contains(r.Error.Message, want) || r.Evidence.Outcome != OutcomeInvalid {
			t.Errorf("%s: %s", args, r.Error.Message)
		}
	}
	r := in.Call(Request{Tool: "no_such_tool"})
	wantCode(t, r, CodeUnknownOperation)
	if r.HTTPStatus() != 404 {
		t.Errorf("status %d", r.HTTPStatus())
	}
}

func TestStagePermission(t *testing.T) {
	in := newDrill(t, seedWorld(t), Drill{Actor: "auditor"})
	wantOK(t, in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"record-0"}`}))
	r := save(in, `{"id":"a","text":"x"}`)
	wantCode(t, r, CodePermission)
	if r.Evidence.Outcome != OutcomeDenied || r.HTTPStatus() != 403 || r.Evidence.Actor != "auditor" {
		t.Errorf("%+v", r.Evidence)
	}
	wantCode(t, in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"x"}`, Actor: "stranger"}), CodePermission)
}

func TestStageInputSchema(t *testing.T) {
	in := newDrill(t, seedWorld(t), Drill{})
	r := save(in, `{"id":1}`)
	wantCode(t, r, CodeInvalidInput)
	if !strings.Contains(r.Error.Message, "at /id: got number, want string") || !strings.Contains(r.Error.Message, "missing property 'text'") {
		t.Errorf("%s", r.Error.Message)
	}
}

func TestStageBudgetCountsCallsThatPassTheEarlierStages(t *testing.T) {
	in := newDrill(t, seedWorld(t), Drill{})
	in.Call(Request{Operation: "mail/send", Arguments: `{}`}) // invalid: no budget spent
	for i := 0; i < 3; i++ {
		wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`}))
	}
	r := in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})
	wantCode(t, r, CodeBudget)
	if r.HTTPStatus() != 429 || r.Evidence.Outcome != OutcomeBudget {
		t.Errorf("%+v", r.Evidence)
	}
}

func TestStageIdempotencyReceipts(t *testing.T) {
	w := mustLoad(t, "../../examples/world/support.world.yaml")
	in := newDrill(t, w, Drill{Scenario: "refunds-down"})
	req := `{"order_id":"A-991","amount":10,"request_id":"k1"}`
	call := func(args string) *Response {
		return in.Call(Request{Operation: "refunds/refunds.create", Arguments: args})
	}
	wantCode(t, call(req), "UNAVAILABLE") // an error leaves no receipt
	first := call(req)
	wantOK(t, first)
	again := call(`{"order_id":"A-991","amount":10,"request_id":"k1"}`)
	if !again.Receipt || again.Content() != first.Content() || *again.Evidence.IdempotencyKey != "k1" || again.Evidence.StateVersion != first.Evidence.StateVersion {
		t.Errorf("receipt %+v", again.Evidence)
	}
	other := call(`{"order_id":"A-991","amount":10,"request_id":"k2"}`)
	if other.Receipt || other.Content() == first.Content() {
		t.Errorf("a distinct key got the receipt: %s", other.Content())
	}
	// A non-idempotent operation records a transport key but keeps no receipt.
	r1 := in.Call(Request{Operation: "tickets/tickets.open", Arguments: `{"subject":"s"}`, IdempotencyKey: "t"})
	r2 := in.Call(Request{Operation: "tickets/tickets.open", Arguments: `{"subject":"s"}`, IdempotencyKey: "t"})
	if r2.Receipt || r1.Content() == r2.Content() {
		t.Errorf("%s %s", r1.Content(), r2.Content())
	}
}

func TestStageFaultsEveryNAndSeededRate(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Scenario: "busy-store"})
	var got []string
	for i := 0; i < 6; i++ {
		r := save(in, `{"id":"a","text":"x"}`)
		if r.Evidence.Fault != nil {
			got = append(got, *r.Evidence.Fault)
		} else {
			got = append(got, "-")
		}
	}
	if strings.Join(got, " ") != "- flaky - flaky - flaky" {
		t.Errorf("every 2: %v", got)
	}
	// A rate fault draws from the drill's seed: the same seed, the same calls fail.
	inline := func(seed int64) string {
		s, err := w.ParseSetup(map[string]any{"faults": []any{map[string]any{"id": "r", "operation": "record-store/records.save", "error": "BUSY", "rate": mustParse("0.5")}}})
		if err != nil {
			t.Fatal(err)
		}
		in := newDrill(t, w, Drill{Inline: s, Seed: seed})
		var b strings.Builder
		for i := 0; i < 32; i++ {
			if save(in, `{"id":"a","text":"x"}`).Evidence.Fault != nil {
				b.WriteByte('x')
			} else {
				b.WriteByte('.')
			}
		}
		return b.String()
	}
	a, b, c := inline(1), inline(1), inline(2)
	if a != b || a == c || !strings.Contains(a, "x") || !strings.Contains(a, ".") {
		t.Errorf("rate faults: %s %s %s", a, b, c)
	}
}

func TestStageOutputSchemaRollsBack(t *testing.T) {
	w := mustLoad(t, "testdata/records.world.yaml")
	in := newDrill(t, w, Drill{BehaviorOverrides: map[string]string{"record-store/records.save": "get"}})
	r := in.Call(Request{Tool: "save_record", Arguments: `{"id":"record-0","text":"x"}`})
	wantCode(t, r, CodeInvalidOutput)
	if r.HTTPStatus() != 500 || !strings.Contains(r.Error.Message, "does not match the output schema") {
		t.Errorf("%s", r.Error.Message)
	}
}

func TestStageEvidenceFields(t *testing.T) {
	in := newDrill(t, seedWorld(t), Drill{TestOverrides: rules(t, seedWorld(t), ScopeTest, busyOnce)})
	r := in.Call(Request{Operation: "record-store/records.save", Arguments: `{"id":"record-1","text":"x"}`, IdempotencyKey: "k"})
	got := mustJSON(r.Evidence)
	want := `{"seq":1,"time":"2026-01-01T09:00:00Z","actor":"agent","operation":"record-store/records.save","arguments":{"id":"record-1","text":"x"},"idempotency_key":"k","override":{"id":"busy-once","scope":"test","outcome":"error","match_count":1,"remaining":0},"fault":null,"outcome":"error","is_error":true,"result":{"code":"BUSY","message":"Try again","retryable":true},"state_version":0}`
	if got != want {
		t.Errorf("evidence\n got %s\nwant %s", got, want)
	}
	if r2 := save(in, `{"id":"b","text":"x"}`); r2.Evidence.Time != "2026-01-01T09:00:01Z" || r2.Evidence.StateVersion != 1 {
		t.Errorf("tick or version: %+v", r2.Evidence)
	}
}

func TestBehaviorStepBudgetIsPerCallAndDeterministic(t *testing.T) {
	w := mustLoad(t, "testdata/records.world.yaml")
	in := newDrill(t, w, Drill{})
	for i := 0; i < 2; i++ {
		r := in.Call(Request{Operation: "record-store/records.spin"})
		wantCode(t, r, CodeBehaviorFailed)
		if !strings.Contains(r.Error.Message, "records.star:") || !strings.Contains(r.Error.Message, "step budget (100000 steps)") {
			t.Errorf("%s", r.Error.Message)
		}
	}
	// The budget is per call: a normal call after two spent ones works.
	wantOK(t, in.Call(Request{Tool: "get_record", Arguments: `{"id":"record-0"}`}))
}

// An operation's latency moves the virtual clock on by that much per
// call: what is scheduled meanwhile comes due before the next call, and
// the evidence says how long the call took. No real time passes.
func TestStageLatencyAdvancesTheClock(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("testdata/seed.world.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(src), "        behavior: get\n", "        behavior: get\n        latency: 15m\n", 1)
	star, _ := os.ReadFile("testdata/seed.star")
	os.WriteFile(filepath.Join(dir, "seed.star"), star, 0o644)
	os.WriteFile(filepath.Join(dir, "seed.world.yaml"), []byte(text), 0o644)
	w := mustLoad(t, filepath.Join(dir, "seed.world.yaml"))
	in := newDrill(t, w, Drill{})
	start := time.Now()
	wantOK(t, save(in, `{"id":"a","text":"x"}`))                                                               // 09:00:00; expires at 09:10:00
	wantOK(t, in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"a"}`}))                // 09:00:01, answered 09:15:01
	wantCode(t, in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"a"}`}), "NOT_FOUND") // the expiry came due meanwhile
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the calls took %v of real time", took)
	}
	var got []string
	for _, e := range in.Evidence() {
		got = append(got, fmt.Sprintf("%s %s %s %v", e.Time, e.Actor, e.Operation, e.LatencyMS))
	}
	want := []string{
		"2026-01-01T09:00:00Z agent record-store/records.save 0",
		"2026-01-01T09:00:01Z agent record-store/records.get 900000",
		"2026-01-01T09:10:00Z event:record-store/records.save#1 record-store/records.expire 0",
		"2026-01-01T09:15:02Z agent record-store/records.get 900000",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("evidence:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
