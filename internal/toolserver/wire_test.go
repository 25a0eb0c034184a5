package toolserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Raw JSON-RPC exchanges over streamable HTTP, as clients in the wild send
// them: the legacy era (initialize, a session) and the 2026-07-28 era
// (server/discover, _meta on every request, no session).

type exchange struct {
	status  int
	header  http.Header
	body    []byte
	decoded any
}

func rpc(t *testing.T, url string, header map[string]string, body string) exchange {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) exchange {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	ex := exchange{status: resp.StatusCode, header: resp.Header, body: b}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") && len(b) > 0 {
		if err := json.Unmarshal(b, &ex.decoded); err != nil {
			t.Fatalf("%s %s: answer is not JSON: %v\n%s", req.Method, req.URL, err, b)
		}
	}
	return ex
}

// at digs into a decoded JSON value by keys and indices.
func at(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}

func TestWireLegacySession(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	url := hs.URL + "/mcp"
	init := rpc(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	if init.status != 200 {
		t.Fatalf("initialize: %d %s", init.status, init.body)
	}
	sid := init.header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatal("initialize: no Mcp-Session-Id")
	}
	if got := at(init.decoded, "result", "protocolVersion"); got != "2025-11-25" {
		t.Errorf("initialize: protocolVersion %v", got)
	}
	if got := at(init.decoded, "result", "serverInfo", "name"); got != "dryfire" {
		t.Errorf("initialize: serverInfo.name %v", got)
	}
	if got := at(init.decoded, "result", "capabilities", "tools"); got == nil {
		t.Errorf("initialize: no tools capability: %s", init.body)
	}
	h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
	if ex := rpc(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); ex.status != http.StatusAccepted {
		t.Errorf("notifications/initialized: %d, want 202", ex.status)
	}
	list := rpc(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	var names []string
	for _, tl := range at(list.decoded, "result", "tools").([]any) {
		names = append(names, at(tl, "name").(string))
		if typ := at(tl, "inputSchema", "type"); typ != "object" {
			t.Errorf("tool %v: inputSchema.type %v, want object", at(tl, "name"), typ)
		}
	}
	if diff := cmp.Diff([]string{"lookup_order", "issue_refund", "ping", "weather"}, names); diff != "" {
		t.Errorf("tools/list order (-want +got):\n%s", diff)
	}
	call := func(id int) any {
		ex := rpc(t, url, h, `{"jsonrpc":"2.0","id":`+string(rune('0'+id))+`,"method":"tools/call","params":{"name":"issue_refund","arguments":{"order_id":"A-991"}}}`)
		return at(ex.decoded, "result")
	}
	if got, want := call(3), map[string]any{"content": []any{map[string]any{"type": "text", "text": "timeout"}}, "isError": true}; !cmp.Equal(want, got) {
		t.Errorf("first call: %v, want %v", got, want)
	}
	want := map[string]any{"content": []any{map[string]any{"type": "text", "text": `{"ok":true}`}}} // no output schema, no structuredContent
	if got := call(4); !cmp.Equal(want, got) {
		t.Errorf("second call: %v, want %v", got, want)
	}
	// A GET without a session is refused; DELETE ends the session.
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("Accept", "text/event-stream")
	if ex := do(t, get); ex.status != http.StatusBadRequest {
		t.Errorf("GET without a session: %d, want 400", ex.status)
	}
	del, _ := http.NewRequest(http.MethodDelete, url, nil)
	del.Header.Set("Mcp-Session-Id", sid)
	if ex := do(t, del); ex.status != http.StatusNoContent {
		t.Errorf("DELETE: %d, want 204", ex.status)
	}
	if ex := rpc(t, url, h, `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); ex.status != http.StatusNotFound {
		t.Errorf("request on a deleted session: %d, want 404", ex.status)
	}
}

// A legacy request without a session is answered on the scope's shared
// state, like an HTTP tool call.
func TestWireLegacyWithoutSession(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	for i, want := range []string{"timeout", `{"ok":true}`} {
		ex := rpc(t, hs.URL+"/mcp", map[string]string{"MCP-Protocol-Version": "2025-06-18"},
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"issue_refund","arguments":{}}}`)
		if got := at(ex.decoded, "result", "content", 0, "text"); got != want {
			t.Errorf("call %d: %v, want %q (%d %s)", i, got, want, ex.status, ex.body)
		}
		if ex.header.Get("Mcp-Session-Id") != "" {
			t.Errorf("call %d: a session id was set", i)
		}
	}
}

func modernMeta(version string) string {
	return `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + version + `","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
}

func modernHeaders(method, name string) map[string]string {
	h := map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": method}
	if name != "" {
		h["Mcp-Name"] = name
	}
	return h
}

func TestWireModernStateless(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	url := hs.URL + "/mcp"
	disc := rpc(t, url, modernHeaders("server/discover", ""), `{"jsonrpc":"2.0","id":"d","method":"server/discover","params":{`+modernMeta(modernVersion)+`}}`)
	if disc.status != 200 {
		t.Fatalf("server/discover: %d %s", disc.status, disc.body)
	}
	versions, _ := at(disc.decoded, "result", "supportedVersions").([]any)
	if len(versions) == 0 || versions[0] != modernVersion || !containsAny(versions, legacyVersion) {
		t.Errorf("server/discover: supportedVersions %v", versions)
	}
	for k, want := range map[string]any{"resultType": "complete", "cacheScope": "public", "ttlMs": 0.0} {
		if got := at(disc.decoded, "result", k); got != want {
			t.Errorf("server/discover: %s = %v, want %v", k, got, want)
		}
	}
	if got := at(disc.decoded, "result", "_meta", "io.modelcontextprotocol/serverInfo", "name"); got != "dryfire" {
		t.Errorf("server/discover: serverInfo %v", got)
	}
	if disc.header.Get("Mcp-Session-Id") != "" {
		t.Error("server/discover: a session id was set")
	}

	list := rpc(t, url, modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+modernMeta(modernVersion)+`}}`)
	if got := at(list.decoded, "result", "tools", 0, "name"); got != "lookup_order" {
		t.Errorf("tools/list: first tool %v (%s)", got, list.body)
	}
	if at(list.decoded, "result", "cacheScope") != "public" || at(list.decoded, "result", "resultType") != "complete" {
		t.Errorf("tools/list: not a complete cacheable result: %s", list.body)
	}

	call := rpc(t, url, modernHeaders("tools/call", "lookup_order"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},`+modernMeta(modernVersion)+`}}`)
	want := map[string]any{
		"content":    []any{map[string]any{"type": "text", "text": `{"order_id":"A-991","tier":"gold"}`}},
		"resultType": "complete",
		"_meta":      map[string]any{"io.modelcontextprotocol/serverInfo": map[string]any{"name": "dryfire", "title": "dryfire: serve-test", "version": ServerVersion}},
	}
	if diff := cmp.Diff(want, at(call.decoded, "result")); diff != "" {
		t.Errorf("tools/call (-want +got):\n%s", diff)
	}

	// The new era's errors, as go-sdk's stateless handler answers them.
	for _, tt := range []struct {
		name   string
		header map[string]string
		body   string
		status int
		code   float64
	}{
		{"unknown method", modernHeaders("nope/nope", ""), `{"jsonrpc":"2.0","id":3,"method":"nope/nope","params":{` + modernMeta(modernVersion) + `}}`, 404, -32601},
		{"unsupported version", map[string]string{"MCP-Protocol-Version": "2099-01-01", "Mcp-Method": "tools/list"}, `{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{` + modernMeta("2099-01-01") + `}}`, 400, -32022},
		{"header differs from _meta", modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{` + modernMeta("2025-11-25") + `}}`, 400, -32020},
		{"Mcp-Name differs", modernHeaders("tools/call", "ping"), `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"lookup_order","arguments":{},` + modernMeta(modernVersion) + `}}`, 400, -32020},
		{"no _meta without the header", nil, `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{` + modernMeta(modernVersion) + `}}`, 400, -32020},
	} {
		ex := rpc(t, url, tt.header, tt.body)
		if ex.status != tt.status || at(ex.decoded, "error", "code") != tt.code {
			t.Errorf("%s: %d %s, want %d with code %v", tt.name, ex.status, ex.body, tt.status, tt.code)
		}
	}
	get, _ := http.NewRequest(http.MethodGet, url, nil)
	get.Header.Set("MCP-Protocol-Version", modernVersion)
	get.Header.Set("Accept", "text/event-stream")
	if ex := do(t, get); ex.status != http.StatusMethodNotAllowed {
		t.Errorf("GET in the new era: %d, want 405", ex.status)
	}
}

func containsAny(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// The fast path answers a tools/call with what go-sdk answers: the same
// status, content type and JSON, in both eras.
func TestWireFastPathMatchesGoSDK(t *testing.T) {
	compareFastWithSDK(t, func() *Scope { return newTestScope(t, "") }, []struct{ name, args string }{
		{"lookup_order", `{"order_id":"A-991"}`},
		{"lookup_order", `{"order_id":"B-1"}`},
		{"lookup_order", `{"order_id":"E-1"}`},
		{"lookup_order", `{"order_id":"<Z&1>"}`},
		{"issue_refund", `{}`},
		{"issue_refund", `{}`},
		{"nope", `{}`},
		{"ping", `[1]`},
		{"ping", `null`},
	})
}

// The same for content outcomes: the blocks as go-sdk writes them.
func TestWireFastPathContentMatchesGoSDK(t *testing.T) {
	compareFastWithSDK(t, func() *Scope { return contentScope(t) }, []struct{ name, args string }{
		{"screenshot", `{"page":"home"}`},
		{"screenshot", `{"page":"json"}`},
		{"export", `{}`},
	})
}

func compareFastWithSDK(t *testing.T, scope func() *Scope, calls []struct{ name, args string }) {
	t.Helper()
	type run struct {
		sc  *Scope
		url string
		sid string
	}
	start := func(slow bool) run {
		sc := scope()
		sc.slowMCP = slow
		hs := startServer(t, New(sc, Options{}))
		init := rpc(t, hs.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		return run{sc, hs.URL + "/mcp", init.header.Get("Mcp-Session-Id")}
	}
	fast, slow := start(false), start(true)
	n := 0
	for _, era := range []string{"legacy", "modern"} {
		for i, c := range calls {
			body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(100+i) + `,"method":"tools/call","params":{"name":"` + c.name + `","arguments":` + c.args
			var h func(r run) map[string]string
			if era == "modern" {
				body += `,` + modernMeta(modernVersion)
				h = func(run) map[string]string { return modernHeaders("tools/call", c.name) }
			} else {
				h = func(r run) map[string]string {
					return map[string]string{"Mcp-Session-Id": r.sid, "MCP-Protocol-Version": legacyVersion}
				}
			}
			body += `}}`
			a, b := rpc(t, fast.url, h(fast), body), rpc(t, slow.url, h(slow), body)
			n++
			if a.status != b.status || a.header.Get("Content-Type") != b.header.Get("Content-Type") || !cmp.Equal(a.decoded, b.decoded) {
				t.Errorf("%s %s %s:\nfast %d %s %s\nsdk  %d %s %s", era, c.name, c.args,
					a.status, a.header.Get("Content-Type"), a.body, b.status, b.header.Get("Content-Type"), b.body)
			}
		}
	}
	if got := fast.sc.fastCalls.Load(); got != int64(n) {
		t.Errorf("the fast path answered %d calls, want %d", got, n)
	}
	if got := slow.sc.fastCalls.Load(); got != 0 {
		t.Errorf("the fast path answered %d calls with it off", got)
	}
}

// What the fast path leaves to go-sdk, go-sdk answers.
func TestWireFastPathDeclines(t *testing.T) {
	sc := newTestScope(t, "")
	hs := startServer(t, New(sc, Options{}))
	url := hs.URL + "/mcp"
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{}}}`
	modernCall := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","arguments":{},` + modernMeta(modernVersion) + `}}`
	for _, tt := range []struct {
		name   string
		header map[string]string
		body   string
		status int
	}{
		{"unknown session", map[string]string{"Mcp-Session-Id": "nope"}, call, 404},
		{"batch", map[string]string{"MCP-Protocol-Version": "2025-03-26"}, `[` + call + `]`, 200},
		{"new era without Mcp-Name", map[string]string{"MCP-Protocol-Version": modernVersion, "Mcp-Method": "tools/call"}, modernCall, 400},
		{"new era, a task", modernHeaders("tools/call", "ping"), strings.Replace(modernCall, `"arguments":{}`, `"arguments":{},"task":{}`, 1), 200},
		{"no params", modernHeaders("tools/call", "ping"), `{"jsonrpc":"2.0","id":1,"method":"tools/call"}`, 400},
	} {
		ex := rpc(t, url, tt.header, tt.body)
		if ex.status != tt.status {
			t.Errorf("%s: %d %s, want %d", tt.name, ex.status, ex.body, tt.status)
		}
	}
	if got := sc.fastCalls.Load(); got != 0 {
		t.Errorf("the fast path answered %d of them", got)
	}
}

// Every JSON-RPC message that reaches /mcp and is refused gets a JSON-RPC
// error, in every era, never go-sdk's plain-text 400: an unknown method is
// -32601 (a normal answer, HTTP 200, before 2026-07-28; 404 in that era),
// a request the method table refuses is -32600, a body that is not JSON
// -32700, a session the server does not know -32001 (HTTP 404).
func TestWireJSONRPCErrorsEveryEra(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	url := hs.URL + "/mcp"
	session := func(version string) map[string]string {
		init := rpc(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		sid := init.header.Get("Mcp-Session-Id")
		if sid == "" {
			t.Fatalf("initialize %s: no session: %d %s", version, init.status, init.body)
		}
		h := map[string]string{"Mcp-Session-Id": sid, "MCP-Protocol-Version": version}
		rpc(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		return h
	}
	s1125, s0618 := session("2025-11-25"), session("2025-06-18")
	sessionless := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	gone := map[string]string{"Mcp-Session-Id": "no-such-session", "MCP-Protocol-Version": "2025-11-25"}
	for _, tt := range []struct {
		name   string
		header map[string]string
		body   string
		status int
		id     any // nil: the error's id is null
		code   float64
	}{
		{"2025-11-25 session, unknown method", s1125, `{"jsonrpc":"2.0","id":7,"method":"nope/nope"}`, 200, 7.0, -32601},
		{"2025-06-18 session, unknown method", s0618, `{"jsonrpc":"2.0","id":"x","method":"nope/nope"}`, 200, "x", -32601},
		{"no session, unknown method", sessionless, `{"jsonrpc":"2.0","id":8,"method":"nope/nope","params":{}}`, 200, 8.0, -32601},
		{"a notification's method with an id", s1125, `{"jsonrpc":"2.0","id":9,"method":"notifications/initialized"}`, 400, 9.0, -32600},
		{"not JSON", s1125, `{"jsonrpc":`, 400, nil, -32700},
		{"unknown session", gone, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, 404, 10.0, -32001},
		{"2026-07-28, unknown method", modernHeaders("nope/nope", ""), `{"jsonrpc":"2.0","id":11,"method":"nope/nope","params":{` + modernMeta(modernVersion) + `}}`, 404, 11.0, -32601},
	} {
		ex := rpc(t, url, tt.header, tt.body)
		if ex.status != tt.status || !strings.HasPrefix(ex.header.Get("Content-Type"), "application/json") {
			t.Errorf("%s: HTTP %d %q %s, want %d with a JSON-RPC error", tt.name, ex.status, ex.header.Get("Content-Type"), ex.body, tt.status)
			continue
		}
		if at(ex.decoded, "jsonrpc") != "2.0" || at(ex.decoded, "id") != tt.id || at(ex.decoded, "error", "code") != tt.code || at(ex.decoded, "error", "message") == "" {
			t.Errorf("%s: %s, want id %v and code %v", tt.name, ex.body, tt.id, tt.code)
		}
	}
}

// ttlMs and cacheScope are 2026-07-28 result fields: answers in sessions
// of earlier versions (and legacy requests without a session) leave them
// out, answers in 2026-07-28 carry them.
func TestWireCacheFieldsOnlyIn2026(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	url := hs.URL + "/mcp"
	headers := map[string]map[string]string{"no session, 2025-11-25": {"MCP-Protocol-Version": "2025-11-25"}}
	for _, version := range []string{"2025-11-25", "2025-06-18"} {
		init := rpc(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+version+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		h := map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": version}
		rpc(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		headers["session "+version] = h
	}
	for name, h := range headers {
		for _, method := range []string{"tools/list", "resources/list"} {
			ex := rpc(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"`+method+`"}`)
			res, ok := at(ex.decoded, "result").(map[string]any)
			if !ok {
				t.Errorf("%s: %s: no result: %d %s", name, method, ex.status, ex.body)
				continue
			}
			for _, k := range []string{"ttlMs", "cacheScope", "resultType"} {
				if _, ok := res[k]; ok {
					t.Errorf("%s: %s carries %s: %s", name, method, k, ex.body)
				}
			}
		}
	}
	for _, method := range []string{"tools/list", "resources/list"} {
		ex := rpc(t, url, modernHeaders(method, ""), `{"jsonrpc":"2.0","id":3,"method":"`+method+`","params":{`+modernMeta(modernVersion)+`}}`)
		if at(ex.decoded, "result", "cacheScope") != "public" || at(ex.decoded, "result", "ttlMs") != 0.0 {
			t.Errorf("2026-07-28: %s lacks the cache fields: %s", method, ex.body)
		}
	}
}

// Nothing of dryfire's own that changes reaches the agent: no answer
// carries a Date header (net/http writes the wall clock by default), and
// serverInfo holds a fixed version, not dryfire's (a framework hands it
// to the model).
func TestNothingVolatileReachesTheAgent(t *testing.T) {
	model := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"error":{"message":"refused"}}`))
	})
	hs := startServer(t, New(newTestScope(t, ""), Options{Model: model}))
	get, err := http.Get(hs.URL + "/tools")
	if err != nil {
		t.Fatal(err)
	}
	get.Body.Close()
	post, err := http.Post(hs.URL+"/v1/chat/completions", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	post.Body.Close()
	notFound, err := http.Get(hs.URL + "/nothing/here")
	if err != nil {
		t.Fatal(err)
	}
	notFound.Body.Close()
	legacy := rpc(t, hs.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"`+legacyVersion+`","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	call := rpc(t, hs.URL+"/mcp", modernHeaders("tools/call", "lookup_order"), `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},`+modernMeta(modernVersion)+`}}`)
	for what, h := range map[string]http.Header{"GET /tools": get.Header, "a model answer": post.Header, "a 404": notFound.Header,
		"MCP initialize": legacy.header, "MCP tools/call": call.header} {
		if d := h.Get("Date"); d != "" {
			t.Errorf("%s: Date %q", what, d)
		}
	}
	if got := at(legacy.decoded, "result", "serverInfo", "version"); got != "1.0.0" {
		t.Errorf("initialize: serverInfo version %v (%s)", got, legacy.body)
	}
	if got := at(call.decoded, "result", "_meta", "io.modelcontextprotocol/serverInfo", "version"); got != "1.0.0" {
		t.Errorf("tools/call: serverInfo version %v (%s)", got, call.body)
	}
}
