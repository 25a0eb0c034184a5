package world

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/value"
)

func TestRule_BehaviorChangesRecordsEmitsEventsSchedulesConsequences(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{})
	wantOK(t, save(in, `{"id":"a","text":"x"}`))
	if records(in)["a"] == nil {
		t.Fatal("no record")
	}
	if em := in.Emitted(); len(em) != 1 || em[0].Type != "record.saved" {
		t.Fatalf("emitted %v", em)
	}
	in.Advance(10 * time.Minute) // the scheduled expiry is due
	if records(in)["a"] != nil {
		t.Errorf("the scheduled consequence did not run: %v", records(in))
	}
	ev := in.Evidence()
	last := ev[len(ev)-1]
	if last.Operation != "record-store/records.expire" || !strings.HasPrefix(last.Actor, "event:") || last.Time != "2026-01-01T09:10:00Z" {
		t.Errorf("event evidence %+v", last)
	}
}

func TestRule_BehaviorOverridesSelectsBehavior(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{BehaviorOverrides: map[string]string{"record-store/records.save": "save_upper"}})
	wantOK(t, save(in, `{"id":"a","text":"shout"}`))
	if got := records(in)["a"].(map[string]any)["text"]; got != "SHOUT" {
		t.Errorf("text %v", got)
	}
	if _, err := w.New(Drill{BehaviorOverrides: map[string]string{"record-store/records.save": "nope"}}); err == nil {
		t.Error("an unknown behavior was accepted")
	}
}

func TestRule_FunctionMocksAndProtocolClientsShareStateAndEvidence(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{})
	// A direct call by operation (what a bound function does) and a call
	// by tool name (what HTTP, MCP and the built-in loop do) reach one world.
	wantOK(t, in.Call(Request{Operation: "record-store/records.save", Args: map[string]any{"id": "a", "text": "x"}}))
	r := in.Call(Request{Tool: "get_record", Arguments: `{"id":"a"}`})
	if r.Content() != `{"text":"x","version":1}` || len(in.Evidence()) != 2 {
		t.Errorf("%s, %d evidence entries", r.Content(), len(in.Evidence()))
	}
}

func TestRule_OverrideIdentityScopeOutcomeMatchCountRecorded(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Overrides: rules(t, w, ScopeDrill, busyOnce)})
	r := save(in, `{"id":"record-1","text":"x"}`)
	got := value.Canonical(mustParse(mustJSON(r.Evidence.Override)))
	want := `{"id":"busy-once","match_count":1,"outcome":"error","remaining":0,"scope":"drill"}`
	if got != want {
		t.Errorf("override evidence %s; want %s", got, want)
	}
}

func TestRule_OneShotConsumptionDurableWhenHandlerRollsBack(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"id":"once","operation":"record-store/records.save","times":1,"outcome":{"kind":"original"}}]`)})
	r := save(in, `{"id":"boom","text":"x","meta":{"explode":true}}`)
	wantCode(t, r, CodeBehaviorFailed)
	if records(in)["boom"] != nil || len(in.Emitted()) != 0 || r.Evidence.StateVersion != 0 {
		t.Errorf("the failed handler's changes were kept: %v %v", records(in), in.Emitted())
	}
	if !strings.Contains(r.Error.Message, "seed.star:9:13") {
		t.Errorf("no file:line in %q", r.Error.Message)
	}
	r = save(in, `{"id":"a","text":"x"}`)
	if r.Evidence.Override != nil {
		t.Errorf("the one-shot rule matched again after the rollback: %+v", r.Evidence.Override)
	}
}

func TestRule_WholeWorldResetRestoresInitialRuleCounts(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	wantCode(t, save(in, `{"id":"record-1","text":"x"}`), "BUSY")
	wantOK(t, save(in, `{"id":"record-1","text":"x"}`))
	for i := 0; i < 3; i++ {
		in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})
	}
	in.Reset()
	if records(in)["record-1"] != nil || !in.Now().Equal(w.Start) {
		t.Errorf("state or clock not restored")
	}
	wantCode(t, save(in, `{"id":"record-1","text":"x"}`), "BUSY")                // rule count restored
	wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})) // budget restored
}

func TestRule_PackageResetRestoresCountsOnlyForThosePackages(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		busyOnce[:len(busyOnce)-1]+`,{"id":"mail-once","operation":"mail/send","times":1,"outcome":{"kind":"error","code":"BUSY"}}]`)})
	wantCode(t, save(in, `{"id":"record-1","text":"x"}`), "BUSY")
	wantCode(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`}), "BUSY")
	wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`}))
	if err := in.ResetPackage("record-store"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, save(in, `{"id":"record-1","text":"x"}`), "BUSY")                // its count restored
	wantOK(t, in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})) // mail's stays spent
	if n := len(in.State()["mail"].(map[string]any)["outbox"].([]any)); n != 2 {
		t.Errorf("mail state was reset: %d in the outbox", n)
	}
}

func TestRule_RestoringRunnerMocksAndResettingWorldAreSeparate(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{})
	wantOK(t, save(in, `{"id":"a","text":"x"}`))
	in.Reset()
	// A world reset neither ends the drill (bound functions keep working)
	// nor forgets the evidence.
	wantOK(t, save(in, `{"id":"a","text":"x"}`))
	if len(in.Evidence()) != 2 {
		t.Errorf("evidence: %d entries", len(in.Evidence()))
	}
	in.End()
	wantCode(t, save(in, `{"id":"a","text":"x"}`), CodeEnded)
}

func TestRule_PerTestRulesCompiledIntoBuild(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Scenario: "busy-store", TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	b := in.Build()
	if !strings.Contains(b.JSON, `"busy-once"`) || !strings.HasPrefix(b.Hash, "sha256:") || !strings.Contains(b.JSON, `"name":"busy-store"`) {
		t.Errorf("build %s", b.JSON)
	}
	in2 := newDrill(t, w, Drill{Scenario: "busy-store"})
	if in2.Build().Hash == b.Hash {
		t.Error("per-test rules do not change the build hash")
	}
}

func TestRule_ReproductionWithBuildAndSeedRestoresRules(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{Scenario: "busy-store", Seed: 99, TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	run := func(in *Instance) string {
		save(in, `{"id":"record-1","text":"x"}`)
		save(in, `{"id":"record-1","text":"x"}`)
		save(in, `{"id":"record-1","text":"y"}`)
		return mustJSON(in.Evidence())
	}
	first := run(in)
	re, err := FromBuild(in.Build().JSON, 99)
	if err != nil {
		t.Fatal(err)
	}
	if again := run(re); again != first {
		t.Errorf("evidence differs:\n%s\n%s", first, again)
	}
	if re.Build().Hash != in.Build().Hash {
		t.Errorf("the rebuilt drill has another build")
	}
}

func TestRule_BuildCapturesNoClosuresApplicationCodeOrModelRandomness(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest, busyOnce)})
	v := mustParse(in.Build().JSON).(map[string]any)
	want := "behaviors drill dryfire_build scenario test world"
	if got := strings.Join(sortedKeys(v), " "); got != want {
		t.Errorf("build holds %s; want only %s", got, want)
	}
}

func TestOneCriticalSectionExactUnder64Goroutines(t *testing.T) {
	w := seedWorld(t)
	in := newDrill(t, w, Drill{TestOverrides: rules(t, w, ScopeTest,
		`[{"id":"ten","operation":"record-store/records.get","times":10,"outcome":{"kind":"return","value":{"text":"o"}}}]`)})
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				in.Call(Request{Operation: "record-store/records.get", Arguments: `{"id":"record-0"}`})
				in.Call(Request{Operation: "mail/send", Arguments: `{"to":"x"}`})
			}
		}()
	}
	wg.Wait()
	ev := in.Evidence()
	overridden, sent, budget := 0, 0, 0
	for i, e := range ev {
		if e.Seq != i+1 {
			t.Fatalf("seq %d at %d", e.Seq, i)
		}
		if e.Override != nil {
			overridden++
		}
		switch e.Outcome {
		case OutcomeBudget:
			budget++
		case OutcomeBehavior:
			if e.Operation == "mail/send" {
				sent++
			}
		}
	}
	if overridden != 10 || sent != 3 || budget != 64*20-3 || len(ev) != 64*40 {
		t.Errorf("overridden %d (want 10), sent %d (want 3), budget %d, total %d", overridden, sent, budget, len(ev))
	}
	if n := len(in.State()["mail"].(map[string]any)["outbox"].([]any)); n != 3 {
		t.Errorf("outbox %d", n)
	}
}

func TestSeedDrivesOnlyRandomness(t *testing.T) {
	w := mustLoad(t, "testdata/records.world.yaml")
	run := func(seed int64) []Evidence {
		in := newDrill(t, w, Drill{Seed: seed})
		in.Call(Request{Tool: "save_record", Arguments: `{"id":"a","text":"x"}`})
		in.Call(Request{Tool: "archive_records", Arguments: `{}`})
		return in.Evidence()
	}
	a, b, c := run(1), run(1), run(2)
	if mustJSON(a) != mustJSON(b) {
		t.Error("same seed, different evidence")
	}
	if mustJSON(a[0]) != mustJSON(c[0]) {
		t.Error("a different seed changed a call the seed does not drive")
	}
	if mustJSON(a[1]) == mustJSON(c[1]) {
		t.Error("a different seed did not change random()")
	}
}
