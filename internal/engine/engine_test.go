package engine_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var busyOnce = map[string]any{"scenario": map[string]any{"toolOverrides": []any{map[string]any{
	"id": "busy-once", "operation": map[string]any{"packageId": "record-store", "operationId": "records.save"},
	"when": map[string]any{"arguments": map[string]any{"id": "record-1"}}, "times": 1,
	"outcome": map[string]any{"kind": "error", "code": "BUSY", "message": "Try again", "retryable": true},
}}}}

func TestReadyLine(t *testing.T) {
	p := startEngine(t, project(t))
	want := []string{"engine", "protocol", "version", "url", "token"}
	if len(p.ready) != len(want) {
		t.Errorf("ready line has keys %v; want exactly %v", p.ready, want)
	}
	if p.ready["engine"] != "dryfire" || fmt.Sprint(p.ready["protocol"]) != "1" || p.ready["version"] == "" {
		t.Errorf("ready line %v", p.ready)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(p.url) {
		t.Errorf("url %q: want http://127.0.0.1:PORT", p.url)
	}
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(p.token) {
		t.Errorf("token %q: want 64 hex characters", p.token)
	}
}

// A drill end to end: a per-test override in scope test, an idempotent
// retry answered by its receipt, the checks, the report, and the binding
// answering DRILL_ENDED after the end.
func TestDrillWithSetup(t *testing.T) {
	dir := project(t)
	p := startEngine(t, dir)
	d := p.start(map[string]any{"drill": "save-record", "setup": busyOnce})
	if got := d.answer["suite"]; got != filepath.Join(dir, "tests", "records.dryfire.yaml") {
		t.Errorf("suite %v", got)
	}
	task := d.answer["task"].(map[string]any)
	if task["instruction"] != "Save record-1 with the text hello." || task["input"] != task["instruction"] {
		t.Errorf("task %v", task)
	}
	if fmt.Sprint(d.answer["seed"]) != "42" || !strings.HasPrefix(d.answer["build_hash"].(string), "sha256:") {
		t.Errorf("seed %v, build_hash %v", d.answer["seed"], d.answer["build_hash"])
	}
	if !regexp.MustCompile(`^`+regexp.QuoteMeta(p.url)+`/drills/[0-9a-f]{32}$`).MatchString(d.url) || d.binding["id"] != d.id {
		t.Errorf("binding url %q, id %v (drill %s)", d.url, d.binding["id"], d.id)
	}
	env := d.binding["env"].(map[string]any)
	for k, want := range map[string]string{
		"OPENAI_BASE_URL": d.url + "/v1", "ANTHROPIC_BASE_URL": d.url, "OPENAI_API_KEY": "dryfire-no-key",
		"DRYFIRE_MCP_URL": d.url + "/mcp", "DRYFIRE_OPS_URL": d.url + "/ops", "DRYFIRE_WORLD_URL": d.url + "/world",
		"DRYFIRE_TOOLS_URL": d.url + "/tools", "DRYFIRE_CASE": "save-record", "DRYFIRE_INPUT": "Save record-1 with the text hello.",
	} {
		if env[k] != want {
			t.Errorf("env %s = %v; want %q", k, env[k], want)
		}
	}
	var ops []string
	for _, o := range d.binding["operations"].([]any) {
		op := o.(map[string]any)
		ops = append(ops, fmt.Sprintf("%v/%v %v %v %v", op["package"], op["operation"], op["tool"], op["errors"], op["idempotent"]))
	}
	wantOps := []string{"mail/send send_mail [] false", "record-store/records.get get_record [NOT_FOUND] false", "record-store/records.save save_record [BUSY TOO_LONG] true"}
	if diff := cmp.Diff(wantOps, ops); diff != "" {
		t.Errorf("operations (-want +got):\n%s", diff)
	}

	args := map[string]any{"id": "record-1", "text": "hello"}
	status, ans := d.op("record-store/records.save", args, "save-1")
	if status != 503 || ans["status"] != "error" || ans["output"] != nil {
		t.Fatalf("first save: %d %v; want 503 BUSY from the test's override", status, ans)
	}
	if code, msg := errorOf(t, ans); code != "BUSY" || msg != "Try again" {
		t.Errorf("first save: %s %s", code, msg)
	}
	status, ans = d.op("record-store/records.save", args, "save-1")
	if status != 200 || fmt.Sprint(ans["output"]) != "map[id:record-1 version:1]" || ans["receipt"] != false {
		t.Fatalf("second save: %d %v", status, ans)
	}
	status, ans = d.op("record-store/records.save", args, "save-1")
	if status != 200 || ans["receipt"] != true {
		t.Fatalf("a repeated successful key: %d %v; want its receipt", status, ans)
	}

	res := d.end("Saved record-1.", nil)
	if res["verdict"] != "passed" || res["status"] != "passed" || len(res["failures"].([]any)) != 0 {
		t.Errorf("end: %v %v %v", res["verdict"], res["status"], res["failures"])
	}
	wantEv := []string{"record-store/records.save error busy-once@test", "record-store/records.save behavior", "record-store/records.save receipt"}
	if diff := cmp.Diff(wantEv, evidence(t, res)); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	rep := res["report"].(map[string]any)
	cases := rep["cases"].([]any)
	if len(cases) != 1 {
		t.Fatalf("report has %d cases; want 1", len(cases))
	}
	c := cases[0].(map[string]any)
	if c["name"] != "save-record" || c["verdict"] != "passed" || c["output"] != "Saved record-1." || c["build_hash"] != d.answer["build_hash"] {
		t.Errorf("report case %v", c)
	}
	if !strings.Contains(fmt.Sprint(c["build"]), "busy-once") {
		t.Errorf("the build does not keep the test's rule: %v", c["build"])
	}
	if s := rep["summary"].(map[string]any); fmt.Sprint(s["passed"]) != "1" {
		t.Errorf("summary %v", s)
	}

	// After the end: the binding answers as an ended drill.
	status, ans = d.op("record-store/records.save", args, "")
	wantMsg := "drill save-record (" + d.id + ") has ended: a retained mockTool callable, or a call after the test, reaches no world"
	if code, msg := errorOf(t, ans); status != 410 || code != "DRILL_ENDED" || msg != wantMsg || ans["status"] != "error" || ans["receipt"] != false {
		t.Errorf("/ops after the end: %d %v", status, ans)
	}
	for _, route := range []string{"/world/state", "/world", "/tools", "/mcp"} {
		status, ans := p.call("GET", d.url+route, nil, false)
		if code, _ := errorOf(t, ans); status != 410 || code != "DRILL_ENDED" {
			t.Errorf("GET %s after the end: %d %v", route, status, ans)
		}
	}
	status, ans = p.call("POST", "/engine/drills/"+d.id+"/end", map[string]any{}, true)
	if code, _ := errorOf(t, ans); status != 410 || code != "DRILL_ENDED" {
		t.Errorf("a second end: %d %v", status, ans)
	}
	// A drill that made no model call leaves no cassette behind.
	if _, err := os.Stat(filepath.Join(dir, "tests", "cassettes")); !os.IsNotExist(err) {
		t.Errorf("a drill without model calls wrote a cassette: %v", err)
	}
}

// The checks fail, and the agent's error fails the drill with its message
// first.
func TestDrillFails(t *testing.T) {
	p := startEngine(t, project(t))
	d := p.start(map[string]any{"drill": "mail-twice", "seed": 9})
	if fmt.Sprint(d.answer["seed"]) != "9" {
		t.Errorf("seed %v; want the request's 9", d.answer["seed"])
	}
	d.op("mail/send", map[string]any{"to": "ada"}, "")
	res := d.end(map[string]any{"sent": 1}, "boom: the model went away")
	if res["verdict"] != "failed" || res["status"] != "failed" {
		t.Errorf("verdict %v, status %v", res["verdict"], res["status"])
	}
	want := []string{"the agent failed: boom: the model went away", "mail.outbox has 1 items; expected 2"}
	var got []string
	for _, f := range res["failures"].([]any) {
		got = append(got, f.(string))
	}
	if len(got) < 1 || got[0] != want[0] || len(got) != 2 {
		t.Errorf("failures %q; want the agent's error, then the failed state check", got)
	}
	c := res["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)
	if c["output"] != `{"sent":1}` {
		t.Errorf("output %q; want the canonical JSON of the agent's value", c["output"])
	}
	if !strings.HasPrefix(c["reason"].(string), "the agent failed: boom") {
		t.Errorf("reason %q", c["reason"])
	}
}

// Every error of the control routes, each with its code and message.
func TestControlErrors(t *testing.T) {
	dir := project(t)
	if err := os.WriteFile(filepath.Join(dir, "broken.dryfire.yaml"), []byte("version: 1\nworld: tests/records.world.yaml\ncases:\n  - name: b\n    input: x\n    expect: [{state: {path: nowhere.x, equals: 1}}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startEngine(t, dir)
	tests := []struct {
		name   string
		method string
		path   string
		body   any
		noAuth bool
		status int
		code   string
		msg    string // a regular expression the message matches
	}{
		{name: "no token", path: "/engine/drills", body: map[string]any{"drill": "save-record"}, noAuth: true, status: 401, code: "UNAUTHORIZED", msg: "Authorization: Bearer TOKEN"},
		{name: "not JSON", path: "/engine/drills", body: "{drill", status: 400, code: "INVALID_REQUEST", msg: "must be a JSON object"},
		{name: "unknown key", path: "/engine/drills", body: map[string]any{"drill": "save-record", "sede": 1}, status: 400, code: "INVALID_REQUEST", msg: `unknown key "sede" .*\(did you mean "seed"\?\)`},
		{name: "no drill", path: "/engine/drills", body: map[string]any{"suite": "tests/records.dryfire.yaml"}, status: 400, code: "INVALID_REQUEST", msg: "drill is missing"},
		{name: "seed not an integer", path: "/engine/drills", body: map[string]any{"drill": "save-record", "seed": 1.5}, status: 400, code: "INVALID_REQUEST", msg: "seed must be an integer"},
		{name: "record mode", path: "/engine/drills", body: map[string]any{"drill": "save-record", "record": "sometimes"}, status: 400, code: "INVALID_REQUEST", msg: `record "sometimes": want none, once, new or all`},
		{name: "unknown actor", path: "/engine/drills", body: map[string]any{"drill": "save-record", "actor": "agnet"}, status: 400, code: "INVALID_REQUEST", msg: `actor "agnet": .*\(did you mean "agent"\?\)`},
		{name: "unknown drill in a suite", path: "/engine/drills", body: map[string]any{"drill": "save-recrod", "suite": "tests/records.dryfire.yaml"}, status: 404, code: "UNKNOWN_DRILL", msg: `has no drill "save-recrod" \(did you mean "save-record"\?\)`},
		{name: "unknown drill found nowhere", path: "/engine/drills", body: map[string]any{"drill": "read-olny"}, status: 404, code: "UNKNOWN_DRILL", msg: `no world suite under .* has a drill "read-olny" \(did you mean "read-only"\?\); these suites do not load .*: broken.dryfire.yaml`},
		{name: "ambiguous drill", path: "/engine/drills", body: map[string]any{"drill": "shared"}, status: 409, code: "AMBIGUOUS_DRILL", msg: `drill "shared" is in 2 suites: other/more.dryfire.yaml, tests/records.dryfire.yaml; pass suite`},
		{name: "unknown suite", path: "/engine/drills", body: map[string]any{"drill": "x", "suite": "nope.dryfire.yaml"}, status: 404, code: "UNKNOWN_SUITE", msg: "suite nope.dryfire.yaml: no such file"},
		{name: "not a world suite", path: "/engine/drills", body: map[string]any{"drill": "plain-case", "suite": "other/plain.dryfire.yaml"}, status: 400, code: "NOT_A_WORLD_SUITE", msg: "is not a world suite"},
		{name: "invalid suite", path: "/engine/drills", body: map[string]any{"drill": "b", "suite": "broken.dryfire.yaml"}, status: 400, code: "INVALID_SUITE", msg: `broken.dryfire.yaml:6:15: state path "nowhere.x": world records has no package "nowhere"`},
		{name: "undeclared error in setup", path: "/engine/drills", body: map[string]any{"drill": "save-record", "setup": map[string]any{"scenario": map[string]any{"toolOverrides": []any{map[string]any{"operation": "record-store/records.get", "outcome": map[string]any{"kind": "error", "code": "BUSY"}}}}}}, status: 400, code: "INVALID_SETUP", msg: `^setup\.scenario\.toolOverrides\[0\]\.outcome\.code: error "BUSY" is not declared by record-store/records.get; declared: NOT_FOUND$`},
		{name: "unknown behavior in setup", path: "/engine/drills", body: map[string]any{"drill": "save-record", "setup": map[string]any{"tools": map[string]any{"behaviorOverrides": map[string]any{"record-store/records.save": "save_slowy"}}}}, status: 400, code: "INVALID_SETUP", msg: `^setup\.tools\.behaviorOverrides\["record-store/records\.save"\]: behaviorOverrides: "save_slowy" is not a function of the behavior modules \(did you mean "save_slowly"\?\)$`},
		{name: "unknown key in setup", path: "/engine/drills", body: map[string]any{"drill": "save-record", "setup": map[string]any{"scenaro": map[string]any{}}}, status: 400, code: "INVALID_SETUP", msg: `^setup\.scenaro: unknown key "scenaro" in setup \(did you mean "scenario"\?\)`},
		{name: "unknown package in an inline scenario", path: "/engine/drills", body: map[string]any{"drill": "save-record", "setup": map[string]any{"scenario": map[string]any{"state": map[string]any{"record-stor": map[string]any{}}}}}, status: 400, code: "INVALID_SETUP", msg: `^setup\.scenario\.state\.record-stor: unknown package "record-stor"$`},
		{name: "end of an unknown drill", path: "/engine/drills/0123456789abcdef0123456789abcdef/end", body: map[string]any{}, status: 404, code: "UNKNOWN_DRILL", msg: "this engine never started it"},
		{name: "abandon an unknown drill", method: "DELETE", path: "/engine/drills/0123456789abcdef0123456789abcdef", status: 404, code: "UNKNOWN_DRILL", msg: "this engine never started it"},
		{name: "start with GET", method: "GET", path: "/engine/drills", status: 405, code: "METHOD_NOT_ALLOWED", msg: "use POST"},
		{name: "unknown control route", method: "GET", path: "/engine/status", status: 404, code: "NOT_FOUND", msg: "the control routes are"},
		{name: "a binding never issued", method: "GET", path: "/drills/0123456789abcdef0123456789abcdef/world", noAuth: true, status: 404, code: "UNKNOWN_DRILL", msg: "never started"},
		{name: "outside both", method: "GET", path: "/", noAuth: true, status: 404, code: "NOT_FOUND", msg: "/engine/drills"},
		{name: "a body too large", path: "/engine/drills", body: `{"drill": "` + strings.Repeat("x", 16<<20) + `"}`, status: 413, code: "REQUEST_TOO_LARGE", msg: "larger than 16 MiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			method := tt.method
			if method == "" {
				method = "POST"
			}
			status, ans := p.call(method, tt.path, tt.body, !tt.noAuth)
			code, msg := errorOf(t, ans)
			if status != tt.status || code != tt.code || !regexp.MustCompile(tt.msg).MatchString(msg) {
				t.Errorf("%d %s %q\nwant %d %s matching %q", status, code, msg, tt.status, tt.code, tt.msg)
			}
		})
	}
	t.Run("diagnostics of an invalid suite", func(t *testing.T) {
		_, ans := p.call("POST", "/engine/drills", map[string]any{"drill": "b", "suite": "broken.dryfire.yaml"}, true)
		ds, _ := ans["diagnostics"].([]any)
		if len(ds) != 1 {
			t.Fatalf("diagnostics %v", ans["diagnostics"])
		}
		d := ds[0].(map[string]any)
		if d["file"] != filepath.Join(dir, "broken.dryfire.yaml") || fmt.Sprint(d["line"]) != "6" || fmt.Sprint(d["col"]) != "15" || d["severity"] != "error" {
			t.Errorf("diagnostic %v", d)
		}
	})
	t.Run("a wrong token", func(t *testing.T) {
		status, _ := p.raw("POST", "/engine/drills", `{"drill":"save-record"}`, false, http.Header{"Authorization": {"Bearer " + strings.Repeat("0", 64)}})
		if status != 401 {
			t.Errorf("status %d; want 401", status)
		}
	})
	t.Run("a host that is not loopback", func(t *testing.T) {
		req, _ := http.NewRequest("POST", p.url+"/engine/drills", strings.NewReader(`{"drill":"save-record"}`))
		req.Host = "evil.example"
		req.Header.Set("Authorization", "Bearer "+p.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 403 {
			t.Errorf("status %d; want 403 (DNS rebinding protection)", resp.StatusCode)
		}
	})
	t.Run("abandon", func(t *testing.T) {
		d := p.start(map[string]any{"drill": "read-only"})
		if status, _ := p.raw("DELETE", "/engine/drills/"+d.id, nil, true, nil); status != 204 {
			t.Fatalf("DELETE: %d; want 204", status)
		}
		status, ans := d.op("record-store/records.get", map[string]any{"id": "record-0"}, "")
		if code, _ := errorOf(t, ans); status != 410 || code != "DRILL_ENDED" {
			t.Errorf("after abandon: %d %v", status, ans)
		}
		status, ans = p.call("POST", "/engine/drills/"+d.id+"/end", map[string]any{}, true)
		if code, _ := errorOf(t, ans); status != 410 || code != "DRILL_ENDED" {
			t.Errorf("end after abandon: %d %v", status, ans)
		}
	})
}

// A drill's actor, the world control routes and a behavior override
// from the test's setup.
func TestWorldRoutes(t *testing.T) {
	p := startEngine(t, project(t))
	d := p.start(map[string]any{"drill": "save-record", "actor": "auditor", "setup": map[string]any{"tools": map[string]any{"behaviorOverrides": map[string]any{"record-store/records.save": "save_slowly"}}}})
	status, ans := d.op("record-store/records.save", map[string]any{"id": "a", "text": "x"}, "")
	if code, _ := errorOf(t, ans); status != 403 || code != "PERMISSION_DENIED" {
		t.Errorf("save as auditor: %d %v", status, ans)
	}
	status, ans = p.call("POST", d.url+"/ops/record-store/records.save", map[string]any{"arguments": map[string]any{"id": "a", "text": "x"}, "actorId": "agent"}, false)
	if status != 200 {
		t.Fatalf("save as agent: %d %v", status, ans)
	}
	_, state := p.call("GET", d.url+"/world/state", nil, false)
	if got := fmt.Sprint(state["record-store"].(map[string]any)["records"].(map[string]any)["a"]); got != "map[text:x (slowly) version:1]" {
		t.Errorf("state of a: %s; want the behavior override's", got)
	}
	_, clock := p.call("POST", d.url+"/world/clock/advance", map[string]any{"by": "10m"}, false)
	if clock["now"] != "2026-01-01T09:10:02Z" {
		t.Errorf("clock after advancing: %v", clock)
	}
	_, ev := p.call("GET", d.url+"/world/evidence?since=1", nil, false)
	if got := evidence(t, ev); len(got) != 1 || got[0] != "record-store/records.save behavior" {
		t.Errorf("evidence since 1: %v", got)
	}
	if status, _ := p.call("POST", d.url+"/world/reset", nil, false); status != 200 {
		t.Errorf("reset: %d", status)
	}
	_, state = p.call("GET", d.url+"/world/state", nil, false)
	if _, ok := state["record-store"].(map[string]any)["records"].(map[string]any)["a"]; ok {
		t.Errorf("record a is still there after a reset")
	}
	_, info := p.call("GET", d.url+"/world", nil, false)
	if info["actor"] != "auditor" || info["build_hash"] != d.answer["build_hash"] {
		t.Errorf("GET /world: %v", info)
	}
}

// mockTool and an MCP client in one drill: one world, one evidence list,
// in arrival order.
func TestMCPAndOpsShareTheWorld(t *testing.T) {
	p := startEngine(t, project(t))
	d := p.start(map[string]any{"drill": "save-record"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "engine-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: d.mcpURL, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if status, ans := d.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, ""); status != 200 {
		t.Fatalf("/ops save: %d %v", status, ans)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_record", Arguments: map[string]any{"id": "record-1"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError || !strings.Contains(text, `"text":"hello"`) {
		t.Errorf("MCP get_record: %v %s; want the record /ops saved", res.IsError, text)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_mail", Arguments: map[string]any{"to": "ada"}}); err != nil {
		t.Fatal(err)
	}
	d.op("record-store/records.get", map[string]any{"id": "nope"}, "")
	res2 := d.end("done", nil)
	want := []string{"record-store/records.save behavior", "record-store/records.get behavior", "mail/send behavior", "record-store/records.get behavior"}
	if diff := cmp.Diff(want, evidence(t, res2)); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}
	if res2["verdict"] != "passed" {
		t.Errorf("verdict %v: %v", res2["verdict"], res2["failures"])
	}
	calls := res2["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)["tool_calls"].([]any)
	if len(calls) != 4 {
		t.Errorf("the report has %d tool calls; want the 4 of MCP and /ops", len(calls))
	}
}

// 16 drills at once in one engine, each its own world.
func TestConcurrentDrillsShareNothing(t *testing.T) {
	p := startEngine(t, project(t))
	const n = 16
	var wg sync.WaitGroup
	results := make([]map[string]any, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := p.start(map[string]any{"drill": "mail-twice"})
			mails := 1 + i%3
			for j := range mails {
				d.op("mail/send", map[string]any{"to": fmt.Sprintf("drill-%d-%d", i, j)}, "")
			}
			results[i] = d.end("sent", nil)
		}()
	}
	wg.Wait()
	for i, res := range results {
		mails := 1 + i%3
		outbox := res["state"].(map[string]any)["mail"].(map[string]any)["outbox"].([]any)
		if len(outbox) != mails {
			t.Errorf("drill %d: %d mails in its outbox; want its own %d", i, len(outbox), mails)
			continue
		}
		for j, m := range outbox {
			if to := m.(map[string]any)["to"]; to != fmt.Sprintf("drill-%d-%d", i, j) {
				t.Errorf("drill %d: mail %d to %v, another drill's", i, j, to)
			}
		}
		want := map[bool]string{true: "passed", false: "failed"}[mails == 2]
		if res["verdict"] != want {
			t.Errorf("drill %d (%d mails): verdict %v; want %s", i, mails, res["verdict"], want)
		}
	}
}

// A stored report reproduced with the same agent is identical; after a
// change, reproduction says where it differs.
func TestReproduce(t *testing.T) {
	p := startEngine(t, project(t))
	agent := func(d *drill, text string) {
		d.op("record-store/records.save", map[string]any{"id": "record-1", "text": text}, "k")
		d.op("record-store/records.save", map[string]any{"id": "record-1", "text": text}, "k")
	}
	d := p.start(map[string]any{"drill": "save-record", "seed": 11, "setup": busyOnce})
	agent(d, "hello")
	first := d.end("ok", nil)
	if first["verdict"] != "passed" {
		t.Fatalf("the first run: %v", first["failures"])
	}

	same := p.start(map[string]any{"reproduce": first["report"], "drill": "ignored?", "seed": 1})
	if same.answer["build_hash"] != first["build_hash"] || fmt.Sprint(same.answer["seed"]) != "11" {
		t.Errorf("reproduction starts from build %v seed %v; want the stored %v, 11", same.answer["build_hash"], same.answer["seed"], first["build_hash"])
	}
	agent(same, "hello")
	again := same.end("ok", nil)
	rep := again["reproduction"].(map[string]any)
	if rep["identical"] != true || len(rep["differences"].([]any)) != 0 {
		t.Errorf("reproduction with the same agent: %v", rep)
	}
	if diff := cmp.Diff(evidence(t, first), evidence(t, again)); diff != "" {
		t.Errorf("evidence differs (-stored +re-run):\n%s", diff)
	}

	// The report's one case works too, and a changed agent differs.
	c := first["report"].(map[string]any)["cases"].([]any)[0]
	changed := p.start(map[string]any{"reproduce": c})
	agent(changed, "HELLO")
	diff := changed.end("ok", nil)["reproduction"].(map[string]any)
	ds := diff["differences"].([]any)
	if diff["identical"] != false || len(ds) == 0 {
		t.Fatalf("reproduction with a changed agent: %v", diff)
	}
	if !strings.HasPrefix(ds[0].(string), `evidence[0].arguments.text: stored "hello", re-run "HELLO"`) {
		t.Errorf("first difference %q", ds[0])
	}
}

// A suite is loaded once and again after its file changes.
func TestSuiteReloadsAfterAChange(t *testing.T) {
	dir := project(t)
	p := startEngine(t, dir)
	file := filepath.Join(dir, "tests", "records.dryfire.yaml")
	first := p.start(map[string]any{"drill": "save-record", "suite": "tests/records.dryfire.yaml"})
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), "Save record-1 with the text hello.", "Save record-1 with the text bye.", 1)
	// A change in the same second with the same size must be seen too:
	// the stamp is size and modification time, so change the size.
	changed += "\n# changed\n"
	if err := os.WriteFile(file, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(file, later, later)
	second := p.start(map[string]any{"drill": "save-record", "suite": file})
	if got := second.answer["task"].(map[string]any)["input"]; got != "Save record-1 with the text bye." {
		t.Errorf("after the change the input is %q", got)
	}
	// The first drill keeps running on the suite it started with.
	if status, _ := first.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, ""); status != 200 {
		t.Errorf("the first drill after the reload: %d", status)
	}
	if res := first.end("", nil); res["verdict"] != "passed" {
		t.Errorf("the first drill: %v", res["failures"])
	}
}

// The engine exits when its standard input ends, without a word on
// standard output after the ready line.
func TestExitsAtEndOfStandardInput(t *testing.T) {
	p := startEngine(t, project(t))
	p.start(map[string]any{"drill": "save-record"}) // abandoned at exit
	start := time.Now()
	p.stop()
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the engine took %s to exit after the end of its standard input", took)
	}
	if p.exitErr != nil {
		t.Errorf("exit: %v; stderr:\n%s", p.exitErr, p.stderr)
	}
}

// A report is a file: the suite it names stays inside cwd.
func TestReproduceConfinesTheSuite(t *testing.T) {
	p := startEngine(t, project(t))
	d := p.start(map[string]any{"drill": "save-record"})
	res := d.end("", nil)
	c := res["report"].(map[string]any)["cases"].([]any)[0].(map[string]any)
	for _, tt := range []struct{ suite, msg string }{
		{"/etc/passwd", `suite "/etc/passwd" is not a \*.dryfire.yaml`},
		{"../../elsewhere.dryfire.yaml", `suite ../../elsewhere.dryfire.yaml is outside the project root`},
	} {
		c["suite"] = tt.suite
		status, ans := p.call("POST", "/engine/drills", map[string]any{"reproduce": c}, true)
		if code, msg := errorOf(t, ans); status != 400 || code != "INVALID_REQUEST" || !regexp.MustCompile(tt.msg).MatchString(msg) {
			t.Errorf("%s: %d %s %q", tt.suite, status, code, msg)
		}
	}
}

// SIGTERM ends the engine too, with its standard input still open.
func TestExitsOnSIGTERM(t *testing.T) {
	p := startEngine(t, project(t))
	p.start(map[string]any{"drill": "save-record"})
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v; stderr:\n%s", err, p.stderr)
		}
		p.exited <- err // for the cleanup
	case <-time.After(5 * time.Second):
		t.Fatal("the engine did not exit within 5 s of SIGTERM")
	}
}
