package toolserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// newWorldScope is the scope of testdata/desk.dryfire.yaml's world: the
// suite's default setup, or the drill of caseName.
func newWorldScope(t testing.TB, caseName string, o ScopeOptions) *Scope {
	t.Helper()
	s := loadSuite(t, "desk.dryfire.yaml")
	sw, ds := world.AttachSuite(s, world.Cache{}, "")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	d := world.Drill{Seed: sw.World.Seed}
	if caseName != "" {
		c := findCase(t, s, caseName)
		d = *sw.Drills[c]
		d.Seed = *c.Seed
	}
	in, err := sw.World.New(d)
	if err != nil {
		t.Fatal(err)
	}
	o.Plan, o.World = plan.New(s, sw, nil).Case(o.Case), in
	return NewScope(o)
}

func decode(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
	return v
}

// Each operation is an MCP tool, in operation order, with its input
// schema and (when it is an object's) its output schema; a result carries
// the output as text, and as structuredContent when the operation declares
// that output schema (MCP's outputSchema); a declared error is isError
// with the error envelope as its text. Both eras; the sessions share the
// one world.
func TestWorldMCP(t *testing.T) {
	for _, version := range []string{"", legacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			hs := startServer(t, New(newWorldScope(t, "", ScopeOptions{}), Options{}))
			cs := connectHTTP(t, hs.URL+"/mcp", version)
			lr, err := cs.ListTools(testContext(t), nil)
			if err != nil {
				t.Fatal(err)
			}
			want := []*mcp.Tool{
				{Name: "get_record", Description: "Read a record.", InputSchema: map[string]any{
					"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}, "required": []any{"id"}}},
				{Name: "save_record", Description: "Save a record.", InputSchema: map[string]any{
					"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}, "text": map[string]any{"type": "string"}}, "required": []any{"id", "text"}},
					OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}, "version": map[string]any{"type": "integer"}}, "required": []any{"id", "version"}}},
				{Name: "tickets_escalate", InputSchema: map[string]any{"type": "object"}},
				{Name: "open_ticket", InputSchema: map[string]any{
					"type": "object", "properties": map[string]any{"subject": map[string]any{"type": "string"}}, "required": []any{"subject"}},
					OutputSchema: map[string]any{"type": "object", "properties": map[string]any{"ticket": map[string]any{"type": "integer"}}, "required": []any{"ticket"}}},
			}
			if diff := cmp.Diff(want, lr.Tools); diff != "" {
				t.Errorf("tools/list (-want +got):\n%s", diff)
			}
			for _, tt := range []struct {
				name string
				args any
				want callOutcome
			}{
				{"save_record", map[string]any{"id": "r2", "text": "hi"}, callOutcome{Text: `{"id":"r2","version":1}`, Structured: map[string]any{"id": "r2", "version": 1.0}}},
				{"save_record", map[string]any{"id": "record-1", "text": "x"}, callOutcome{Text: `{"error":{"code":"BUSY","message":"Try again","retryable":true}}`, IsError: true}},
				{"save_record", map[string]any{"id": "record-1", "text": "x"}, callOutcome{Text: `{"id":"record-1","version":1}`, Structured: map[string]any{"id": "record-1", "version": 1.0}}},
				{"get_record", map[string]any{"id": "nope"}, callOutcome{Text: `{"error":{"code":"NOT_FOUND","message":"no record nope","retryable":false}}`, IsError: true}},
				{"get_record", map[string]any{}, callOutcome{Text: `{"error":{"code":"INVALID_INPUT","message":"the arguments do not match the input schema: at /: missing property 'id'","retryable":false}}`, IsError: true}},
				{"tickets_escalate", nil, callOutcome{Text: `{"error":{"code":"PERMISSION_DENIED","message":"actor \"agent\" may not call tickets/tickets.escalate","retryable":false}}`, IsError: true}},
				{"nope", nil, callOutcome{Text: `{"error":{"code":"UNKNOWN_OPERATION","message":"unknown operation \"nope\"","retryable":false}}`, IsError: true}},
			} {
				got := callTool(t, cs, tt.name, tt.args)
				if tt.name == "get_record" && strings.Contains(got.Text, "INVALID_INPUT") {
					// The validator's wording is its own; the code is what counts.
					got.Text = tt.want.Text
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("%s %v (-want +got):\n%s", tt.name, tt.args, diff)
				}
			}
			// A second session sees the same world.
			other := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
			// get_record declares no output schema: its object result is
			// text only, no structuredContent.
			if got := callTool(t, other, "get_record", map[string]any{"id": "r2"}); !cmp.Equal(got, callOutcome{Text: `{"text":"hi","version":1}`}) {
				t.Errorf("another session reads %+v", got)
			}
		})
	}
}

// The MCP fast path answers world calls as go-sdk does.
func TestWorldFastPathMatchesGoSDK(t *testing.T) {
	type run struct {
		url, sid string
		sc       *Scope
	}
	start := func(slow bool) run {
		sc := newWorldScope(t, "", ScopeOptions{})
		sc.slowMCP = slow
		hs := startServer(t, New(sc, Options{}))
		init := rpc(t, hs.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		return run{hs.URL + "/mcp", init.header.Get("Mcp-Session-Id"), sc}
	}
	fast, slow := start(false), start(true)
	for i, c := range []struct{ name, args string }{
		{"save_record", `{"id":"r2","text":"hi"}`},
		{"save_record", `{"id":"record-1","text":"x"}`},
		{"get_record", `{"id":"nope"}`},
		{"get_record", `[1]`},
		{"nope", `{}`},
	} {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, c.name, c.args)
		a := rpc(t, fast.url, map[string]string{"Mcp-Session-Id": fast.sid, "MCP-Protocol-Version": legacyVersion}, body)
		b := rpc(t, slow.url, map[string]string{"Mcp-Session-Id": slow.sid, "MCP-Protocol-Version": legacyVersion}, body)
		if a.status != b.status || !cmp.Equal(a.decoded, b.decoded) {
			t.Errorf("%s %s:\nfast %d %s\nsdk  %d %s", c.name, c.args, a.status, a.body, b.status, b.body)
		}
	}
	if fast.sc.fastCalls.Load() != 5 {
		t.Errorf("the fast path answered %d calls, want 5", fast.sc.fastCalls.Load())
	}
}

// POST /tools/NAME calls the operation behind a tool, as the drill's actor.
func TestWorldHTTPTools(t *testing.T) {
	hs := startServer(t, New(newWorldScope(t, "", ScopeOptions{}), Options{}))
	list := decode(t, get(t, hs.URL+"/tools", 200))
	if got := at(list, "tools", 1, "operation"); got != "record-store/records.save" {
		t.Errorf("GET /tools: operation %v", got)
	}
	if got := at(list, "tools", 1, "output_schema", "type"); got != "object" {
		t.Errorf("GET /tools: output_schema %v", got)
	}
	if got := post(t, hs.URL+"/tools/get_record", `{"id":"record-0"}`, 200); got != `{"content":"{\"text\":\"hello\",\"version\":1}","is_error":false}` {
		t.Errorf("got %s", got)
	}
	if got := post(t, hs.URL+"/tools/save_record", `{"id":"record-1","text":"x"}`, 200); got != `{"content":"{\"error\":{\"code\":\"BUSY\",\"message\":\"Try again\",\"retryable\":true}}","is_error":true}` {
		t.Errorf("got %s", got)
	}
}

// POST /ops/{package}/{operation}: the envelope in, the answer out, at
// the status the world gives it; actorId and idempotencyKey carried.
func TestWorldOps(t *testing.T) {
	hs := startServer(t, New(newWorldScope(t, "", ScopeOptions{}), Options{}))
	ops := hs.URL + "/ops/"
	for _, tt := range []struct {
		op, body string
		status   int
		want     string
	}{
		{"record-store/records.save", `{"arguments":{"id":"r2","text":"hi"},"idempotencyKey":"k1"}`, 200,
			`{"status":"ok","output":{"id":"r2","version":1},"error":null,"receipt":false}`},
		// A repeated successful key returns its receipt.
		{"record-store/records.save", `{"arguments":{"id":"r2","text":"changed"},"idempotencyKey":"k1"}`, 200,
			`{"status":"ok","output":{"id":"r2","version":1},"error":null,"receipt":true}`},
		// A declared retryable error: 503.
		{"record-store/records.save", `{"arguments":{"id":"record-1","text":"x"}}`, 503,
			`{"status":"error","output":null,"error":{"code":"BUSY","message":"Try again","retryable":true},"receipt":false}`},
		// A declared error that is not retryable: 422.
		{"record-store/records.get", `{"arguments":{"id":"nope"}}`, 422,
			`{"status":"error","output":null,"error":{"code":"NOT_FOUND","message":"no record nope","retryable":false},"receipt":false}`},
		// The actor: the default one may not escalate, the supervisor may.
		{"tickets/tickets.escalate", `{}`, 403,
			`{"status":"error","output":null,"error":{"code":"PERMISSION_DENIED","message":"actor \"agent\" may not call tickets/tickets.escalate","retryable":false},"receipt":false}`},
		{"tickets/tickets.escalate", `{"actorId":"supervisor"}`, 200,
			`{"status":"ok","output":{"escalated":0},"error":null,"receipt":false}`},
		{"tickets/nope", `{}`, 404,
			`{"status":"error","output":null,"error":{"code":"UNKNOWN_OPERATION","message":"unknown operation \"tickets/nope\"","retryable":false},"receipt":false}`},
		{"tickets/tickets.open", `{"arguments":[1]}`, 400,
			`{"status":"error","output":null,"error":{"code":"INVALID_INPUT","message":"the arguments must be a JSON object, not array","retryable":false},"receipt":false}`},
		// A malformed envelope is refused before the world sees it.
		{"tickets/tickets.open", `{"args":{}}`, 400, ""},
		{"tickets/tickets.open", `not json`, 400, ""},
		{"tickets", `{}`, 404, ""},
	} {
		got := post(t, ops+tt.op, tt.body, tt.status)
		if tt.want != "" && got != tt.want {
			t.Errorf("%s %s:\ngot  %s\nwant %s", tt.op, tt.body, got, tt.want)
		}
		if tt.want == "" && (at(decode(t, got), "status") != "error" || at(decode(t, got), "error", "code") == nil) {
			t.Errorf("%s %s: %s", tt.op, tt.body, got)
		}
	}
	if got := at(decode(t, post(t, ops+"tickets/tickets.open", `{"args":{}}`, 400)), "error", "code"); got != CodeInvalidRequest {
		t.Errorf("code %v", got)
	}
	// Evidence has the operations, the refused envelopes not.
	ev := decode(t, get(t, hs.URL+"/world/evidence", 200))
	entries := at(ev, "evidence").([]any)
	if len(entries) != 8 {
		t.Fatalf("%d evidence entries, want 8: %v", len(entries), ev)
	}
	if got := at(entries[1], "outcome"); got != "receipt" {
		t.Errorf("evidence 2 outcome %v", got)
	}
	if got := at(entries[5], "actor"); got != "supervisor" {
		t.Errorf("evidence 6 actor %v", got)
	}
	if got := at(entries[0], "idempotency_key"); got != "k1" {
		t.Errorf("evidence 1 key %v", got)
	}
	// A scope of mocks has no /ops.
	mocks := startServer(t, New(newTestScope(t, ""), Options{}))
	post(t, mocks.URL+"/ops/a/b", `{}`, 404)
	get(t, mocks.URL+"/world/state", 404)
}

// The control routes: reset (whole and per package), the clock, state
// and evidence.
func TestWorldControl(t *testing.T) {
	sc := newWorldScope(t, "", ScopeOptions{})
	hs := startServer(t, New(sc, Options{}))
	u := hs.URL
	for path, want := range map[string]string{
		"/nope":       `no route GET /nope; this server has /mcp, GET /tools, POST /tools/{name}, POST /reset, POST /ops/{package}/{operation}, GET /http, /http/{package}/{path}, GET /world, GET /world/build, POST /world/reset, POST /world/reset/{package}, GET /world/clock, POST /world/clock/advance, GET /world/state, GET /world/evidence`,
		"/world/nope": `no route GET /world/nope; the world routes are GET /world, GET /world/build, POST /world/reset, POST /world/reset/{package}, GET /world/clock, POST /world/clock/advance, GET /world/state, GET /world/evidence`,
	} {
		if got := at(decode(t, get(t, u+path, 404)), "error", "message"); got != want {
			t.Errorf("GET %s: %q\nwant %q", path, got, want)
		}
	}
	info := decode(t, get(t, u+"/world", 200))
	if at(info, "world") != "desk" || at(info, "seed") != 7.0 || at(info, "actor") != "agent" || at(info, "now") != "2026-01-01T09:00:00Z" ||
		!strings.HasPrefix(at(info, "build_hash").(string), "sha256:") {
		t.Errorf("GET /world: %v", info)
	}
	if b := decode(t, get(t, u+"/world/build", 200)); at(b, "build", "dryfire_build") != 1.0 || at(b, "build_hash") != at(info, "build_hash") {
		t.Errorf("GET /world/build: %v", b)
	}
	post(t, u+"/ops/record-store/records.save", `{"arguments":{"id":"r2","text":"hi"}}`, 200)
	post(t, u+"/ops/tickets/tickets.open", `{"arguments":{"subject":"late"}}`, 200)
	state := decode(t, get(t, u+"/world/state", 200))
	if at(state, "record-store", "records", "r2", "text") != "hi" || at(state, "tickets", "queue", 0, "subject") != "late" {
		t.Errorf("state %v", state)
	}
	if got := decode(t, get(t, u+"/world/clock", 200)); at(got, "now") != "2026-01-01T09:00:02Z" {
		t.Errorf("clock %v", got)
	}
	// The clock forward by an hour: the escalation event fires.
	if got := decode(t, post(t, u+"/world/clock/advance", `{"by":"1h"}`, 200)); at(got, "now") != "2026-01-01T10:00:02Z" {
		t.Errorf("advance %v", got)
	}
	if got := at(decode(t, get(t, u+"/world/state", 200)), "tickets", "queue", 0, "escalated"); got != true {
		t.Errorf("after the event, escalated = %v", got)
	}
	get(t, u+"/world/evidence?limit=0", 400)
	if page := decode(t, get(t, u+"/world/evidence?limit=1", 200)); len(at(page, "evidence").([]any)) != 1 || at(page, "more") != true || at(page, "next") != 1.0 || at(page, "dropped") != 0.0 {
		t.Errorf("a page of 1: %v", page)
	}
	ev := decode(t, get(t, u+"/world/evidence?since=2", 200))
	if list := at(ev, "evidence").([]any); len(list) != 1 || at(list[0], "actor") != "event:escalation" {
		t.Errorf("evidence since 2: %v", ev)
	}
	if got := at(decode(t, get(t, u+"/world/evidence", 200)), "events", 0, "type"); got != "record.saved" {
		t.Errorf("events %v", got)
	}
	post(t, u+"/world/clock/advance", `{"by":"-1m"}`, 400)
	post(t, u+"/world/clock/advance", `{"by":"soon"}`, 400)
	post(t, u+"/world/clock/advance", `{}`, 400)
	// Hostile: an advance so large it overflows a duration is refused, not "negative".
	if body := post(t, u+"/world/clock/advance", `{"by":1e12}`, 400); !strings.Contains(body, "more than the most one advance") {
		t.Errorf("advance by 1e12: %s", body)
	}
	if got := decode(t, post(t, u+"/world/clock/advance", `{"by":30}`, 200)); at(got, "now") != "2026-01-01T10:00:32Z" {
		t.Errorf("advance by seconds %v", got)
	}
	// One package back to its start; the other keeps its state.
	post(t, u+"/world/reset/tickets", ``, 200)
	state = decode(t, get(t, u+"/world/state", 200))
	if q := at(state, "tickets", "queue").([]any); len(q) != 0 || at(state, "record-store", "records", "r2") == nil {
		t.Errorf("after resetting tickets: %v", state)
	}
	post(t, u+"/world/reset/nope", ``, 404)
	// The whole world, clock included; the one-shot override again.
	post(t, u+"/world/reset", ``, 200)
	state = decode(t, get(t, u+"/world/state", 200))
	if at(state, "record-store", "records", "r2") != nil {
		t.Errorf("after a reset: %v", state)
	}
	if got := decode(t, get(t, u+"/world/clock", 200)); at(got, "now") != "2026-01-01T09:00:00Z" {
		t.Errorf("clock after a reset %v", got)
	}
	post(t, u+"/ops/record-store/records.save", `{"arguments":{"id":"record-1","text":"x"}}`, 503)
	// Methods and unknown routes.
	get(t, u+"/world/reset", 405)
	post(t, u+"/world/state", ``, 405)
	get(t, u+"/world/nope", 404)
	get(t, u+"/ops/record-store/records.get", 405)
}

// A drill's setup: its scenario, actor and seed.
func TestWorldDrillSetup(t *testing.T) {
	hs := startServer(t, New(newWorldScope(t, "empty store", ScopeOptions{}), Options{}))
	info := decode(t, get(t, hs.URL+"/world", 200))
	if at(info, "actor") != "supervisor" || at(info, "seed") != 9.0 {
		t.Errorf("GET /world: %v", info)
	}
	post(t, hs.URL+"/ops/record-store/records.get", `{"arguments":{"id":"record-0"}}`, 422)
	post(t, hs.URL+"/ops/tickets/tickets.escalate", `{}`, 200)
}

// Calls over MCP, /tools and /ops land in the scope's one record, in
// order, named by their tool; with NoRecords, nowhere.
func TestWorldRecords(t *testing.T) {
	sc := newWorldScope(t, "", ScopeOptions{})
	hs := startServer(t, New(sc, Options{}))
	cs := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	callTool(t, cs, "save_record", map[string]any{"id": "a", "text": "1"})
	post(t, hs.URL+"/tools/get_record", `{"id":"a"}`, 200)
	post(t, hs.URL+"/ops/record-store/records.get", `{"arguments":{"id":"zz"}}`, 422)
	recs := sc.Records()
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s %s %v", r.Name, r.Result.Outcome, r.Result.IsError))
	}
	want := []string{"save_record behavior false", "get_record behavior false", "get_record behavior true"}
	if !cmp.Equal(got, want) {
		t.Errorf("records %q, want %q", got, want)
	}
	if ev, ok := recs[0].Result.Evidence.(world.Evidence); !ok || ev.Operation != "record-store/records.save" {
		t.Errorf("evidence %#v", recs[0].Result.Evidence)
	}

	quiet := newWorldScope(t, "", ScopeOptions{NoRecords: true})
	qs := startServer(t, New(quiet, Options{}))
	post(t, qs.URL+"/tools/get_record", `{"id":"record-0"}`, 200)
	if n := len(quiet.Records()); n != 0 {
		t.Errorf("NoRecords kept %d records", n)
	}
}

// One world under concurrent calls from every transport: each call is
// one operation, none lost.
func TestWorldConcurrent(t *testing.T) {
	sc := newWorldScope(t, "", ScopeOptions{})
	hs := startServer(t, New(sc, Options{}))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 10 {
				body := fmt.Sprintf(`{"arguments":{"subject":"t%d-%d"}}`, i, j)
				resp, err := http.Post(hs.URL+"/ops/tickets/tickets.open", "application/json", strings.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
			}
		})
	}
	wg.Wait()
	if q := at(sc.World().State(), "tickets", "queue").([]any); len(q) != 80 {
		t.Errorf("%d tickets, want 80", len(q))
	}
}
