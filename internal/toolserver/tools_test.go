package toolserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

func get(t *testing.T, url string, wantStatus int) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != wantStatus {
		t.Errorf("GET %s: %d, want %d; %s", url, resp.StatusCode, wantStatus, b)
	}
	return string(b)
}

func TestHTTPToolList(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	var got struct {
		Tools []struct {
			Name        string         `json:"name"`
			Description string         `json:"description"`
			InputSchema map[string]any `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(get(t, hs.URL+"/tools", 200)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Tools) != len(wantTools) {
		t.Fatalf("%d tools, want %d", len(got.Tools), len(wantTools))
	}
	for i, w := range wantTools {
		g := got.Tools[i]
		if g.Name != w.Name || g.Description != w.Description || !cmp.Equal(w.InputSchema, g.InputSchema) {
			t.Errorf("tool %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestHTTPToolCall(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	for _, tt := range []struct {
		tool, body string
		status     int
		want       string
	}{
		{"lookup_order", `{"order_id": "A-991"}`, 200, `{"content":"{\"order_id\":\"A-991\",\"tier\":\"gold\"}","is_error":false}`},
		{"lookup_order", `{"order_id":"E-1"}`, 200, `{"content":"order service unavailable","is_error":true}`},
		{"lookup_order", `{"order_id":"Z-1"}`, 200, `{"content":"dryfire: no mock rule matched this call to \"lookup_order\"; closest rule testdata/support.dryfire.yaml:16 differs at $.order_id: expected \"A-991\", got \"Z-1\"","is_error":true}`},
		{"lookup_ordr", `{}`, 200, `{"content":"dryfire: no mock rule matched this call to \"lookup_ordr\": no mock rules for this tool (did you mean \"lookup_order\"?)","is_error":true}`},
		{"ping", ``, 200, `{"content":"pong","is_error":false}`},
		{"ping", `null`, 200, `{"content":"pong","is_error":false}`},
		{"ping", `[1]`, 200, `{"content":"dryfire: no mock rule matched this call to \"ping\": the arguments are not a JSON object (got an array)","is_error":true}`},
		{"ping", `{"a":`, 400, `{"error":{"type":"invalid_request","message":"the body of POST /tools/ping must be the arguments as JSON (an object); got \"{\\\"a\\\":\""}}`},
	} {
		if got := post(t, hs.URL+"/tools/"+tt.tool, tt.body, tt.status); got != tt.want {
			t.Errorf("POST /tools/%s %s:\n got %s\nwant %s", tt.tool, tt.body, got, tt.want)
		}
	}
}

func TestHTTPRoutes(t *testing.T) {
	var model struct {
		sync.Mutex
		paths []string
	}
	modelHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model.Lock()
		model.paths = append(model.paths, r.URL.Path)
		model.Unlock()
		w.WriteHeader(299)
	})
	su := loadSuite(t, "support.dryfire.yaml")
	srv := New(NewScope(ScopeOptions{Suite: su}), Options{Model: modelHandler, ModelRoutes: []string{"/v1/chat/completions", "/v1/messages"}})
	refund := NewScope(ScopeOptions{ID: "refund-1", Suite: su, Case: findCase(t, su, "refund")})
	if err := srv.Add(refund); err != nil {
		t.Fatal(err)
	}
	if err := srv.Add(NewScope(ScopeOptions{ID: "refund-1", Suite: su})); err == nil {
		t.Error("a second scope with one id was added")
	}
	if err := srv.Add(NewScope(ScopeOptions{ID: "a/b", Suite: su})); err == nil {
		t.Error("a scope id with a slash was added")
	}
	hs := startServer(t, srv)

	// The case's mocks, its own state and record.
	if got := post(t, hs.URL+"/cases/refund-1/tools/issue_refund", `{}`, 200); got != `{"content":"refunded at once","is_error":false}` {
		t.Errorf("case scope: %s", got)
	}
	if got := post(t, hs.URL+"/cases/refund-1/tools/audit", `{}`, 200); got != `{"content":"logged","is_error":false}` {
		t.Errorf("case scope, a tool only the case mocks: %s", got)
	}
	if got := post(t, hs.URL+"/tools/issue_refund", `{}`, 200); got != `{"content":"timeout","is_error":true}` {
		t.Errorf("root scope: %s", got)
	}
	if n := len(refund.Records()); n != 2 {
		t.Errorf("case scope: %d records, want 2", n)
	}
	if !strings.Contains(get(t, hs.URL+"/cases/refund-1/tools", 200), `"name":"audit"`) {
		t.Error("case scope: GET /tools does not list audit")
	}
	cs := connectHTTP(t, hs.URL+"/cases/refund-1/mcp", legacyVersion)
	if got := callTool(t, cs, "issue_refund", nil).Text; got != "refunded at once" {
		t.Errorf("case scope over MCP: %q", got)
	}

	// Model routes: the prefix stripped; POST
	// /messages (what @ai-sdk/anthropic sends to ANTHROPIC_BASE_URL) is
	// /v1/messages, at the root as under a case.
	for _, p := range []string{"/v1/chat/completions", "/cases/refund-1/v1/messages", "/messages", "/cases/refund-1/messages"} {
		resp, err := http.Post(hs.URL+p, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 299 {
			t.Errorf("POST %s: %d, want the model handler's 299", p, resp.StatusCode)
		}
	}
	if diff := cmp.Diff([]string{"/v1/chat/completions", "/v1/messages", "/v1/messages", "/v1/messages"}, model.paths); diff != "" {
		t.Errorf("model paths (-want +got):\n%s", diff)
	}

	for _, tt := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/nope", 404, `{"error":{"type":"not_found","message":"no route GET /nope; this server has /mcp, GET /tools, POST /tools/{name}, POST /reset, POST /v1/chat/completions, POST /v1/messages"}}`},
		{"GET", "/cases/refund-1/nope", 404, `{"error":{"type":"not_found","message":"no route GET /cases/refund-1/nope; this server has /cases/refund-1/mcp, GET /cases/refund-1/tools, POST /cases/refund-1/tools/{name}, POST /cases/refund-1/reset, POST /cases/refund-1/v1/chat/completions, POST /cases/refund-1/v1/messages"}}`},
		{"GET", "/world", 404, `{"error":{"type":"not_found","message":"GET /world: this server serves the mocks of ` + su.File + `, not a world; /ops and /world need a suite with world:"}}`},
		{"GET", "/cases/nope/tools", 404, `{"error":{"type":"not_found","message":"no case is served as \"nope\""}}`},
		// A model request without /v1: the path to use, and the base URL.
		{"POST", "/chat/completions", 404, `{"error":{"type":"not_found","message":"no route POST /chat/completions; model requests go under /v1: POST /v1/chat/completions (an OpenAI SDK's base URL is ` + hs.URL + `/v1)"}}`},
		{"GET", "/tools/ping", 405, `{"error":{"type":"method_not_allowed","message":"GET /tools/ping: use POST"}}`},
		{"POST", "/tools", 405, `{"error":{"type":"method_not_allowed","message":"POST /tools: use GET"}}`},
		{"GET", "/reset", 405, `{"error":{"type":"method_not_allowed","message":"GET /reset: use POST"}}`},
	} {
		req, _ := http.NewRequest(tt.method, hs.URL+tt.path, nil)
		ex := do(t, req)
		if ex.status != tt.status || string(ex.body) != tt.body {
			t.Errorf("%s %s: %d %s, want %d %s", tt.method, tt.path, ex.status, ex.body, tt.status, tt.body)
		}
	}

	srv.Remove("refund-1")
	get(t, hs.URL+"/cases/refund-1/tools", 404)
}

func TestHTTPNoModelEndpoint(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	got := post(t, hs.URL+"/v1/chat/completions", `{}`, 404)
	if want := `{"error":{"type":"not_found","message":"no model endpoint is configured on this server: POST /v1/chat/completions"}}`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// 64 goroutines on one sequence: every entry is handed out exactly as
// often as the semantics say, and every call is in the record.
func TestHTTPConcurrentSequence(t *testing.T) {
	sc := newTestScope(t, "")
	hs := startServer(t, New(sc, Options{}))
	const workers, each = 64, 8
	counts := map[string]int{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range each {
				resp, err := http.Post(hs.URL+"/tools/issue_refund", "application/json", strings.NewReader(`{"order_id":"A-991"}`))
				if err != nil {
					t.Error(err)
					return
				}
				var out struct {
					Content string `json:"content"`
				}
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				counts[out.Content]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	want := map[string]int{"timeout": 1, `{"ok":true}`: 1, "done": workers*each - 2}
	if diff := cmp.Diff(want, counts); diff != "" {
		t.Errorf("answers (-want +got):\n%s", diff)
	}
	recs := sc.Records()
	if len(recs) != workers*each {
		t.Fatalf("%d records, want %d", len(recs), workers*each)
	}
	entries := map[int]int{}
	for _, r := range recs {
		entries[r.Result.Entry]++
	}
	if diff := cmp.Diff(map[int]int{0: 1, 1: 1, 2: workers*each - 2}, entries); diff != "" {
		t.Errorf("sequence entries in the record (-want +got):\n%s", diff)
	}
}

func TestRecords(t *testing.T) {
	sc := newTestScope(t, "")
	ctx := testContext(t)
	sc.Call(ctx, "lookup_order", `{"order_id":"A-991"}`)
	sc.Call(ctx, "ping", `[1]`)
	sc.Call(ctx, "nope", `{}`)
	got := sc.Records()
	type rec struct {
		Name    string
		Args    any
		Outcome tool.Outcome
		Rule    string
		IsError bool
		Note    string
	}
	var gotRecs []rec
	for _, r := range got {
		x := rec{Name: r.Name, Args: r.Args, Outcome: r.Result.Outcome, Rule: r.Result.Rule, IsError: r.Result.IsError}
		if r.Result.NearMiss != nil {
			x.Note = r.Result.NearMiss.Note
		}
		gotRecs = append(gotRecs, x)
	}
	want := []rec{
		{"lookup_order", map[string]any{"order_id": "A-991"}, tool.Return, "testdata/support.dryfire.yaml:16", false, ""},
		{"ping", []any{json.Number("1")}, tool.Unmatched, "", true, "the arguments are not a JSON object (got an array)"},
		{"nope", map[string]any{}, tool.Unmatched, "", true, "no mock rules for this tool"},
	}
	if diff := cmp.Diff(want, gotRecs); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
}

func TestAllowed(t *testing.T) {
	hs := startServer(t, New(newTestScope(t, ""), Options{}))
	for _, tt := range []struct {
		host, origin string
		status       int
	}{
		{"", "", 200},
		{"", "http://localhost:3000", 200},
		{"", "http://127.0.0.1", 200},
		{"", "http://[::1]:8080", 200},
		{"localhost:1234", "", 200},
		{"", "http://evil.example.com", 403},
		{"", "null", 403},
		{"", "http://localhost.evil.example.com", 403},
		{"evil.example.com", "", 403},
		{"evil.example.com", "http://evil.example.com", 403},
	} {
		for _, path := range []string{"/mcp", "/tools"} {
			var req *http.Request
			if path == "/mcp" {
				req, _ = http.NewRequest("POST", hs.URL+path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json, text/event-stream")
			} else {
				req, _ = http.NewRequest("GET", hs.URL+path, nil)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			ex := do(t, req)
			if ex.status != tt.status {
				t.Errorf("%s Host %q Origin %q: %d, want %d (%s)", path, tt.host, tt.origin, ex.status, tt.status, ex.body)
			}
		}
	}
}

// The loopback checks without parsing say what the parse says.
func TestLoopbackShortcuts(t *testing.T) {
	for _, addr := range []string{"127.0.0.1", "127.0.0.1:7777", "localhost", "localhost:1", "[::1]", "[::1]:8080", "::1",
		"127.0.0.1:", "127.0.0.1:x", "127.0.0.1:1234567", "127.0.0.2:80", "LOCALHOST:80", "localhost.evil:80", "evil:80",
		"[::1]:", "[::ffff:127.0.0.1]:80", "", ":80", "127.0.0.1:80:80"} {
		if commonLoopback(addr) && !parsedLoopback(addr) {
			t.Errorf("commonLoopback(%q) is true, the parse says false", addr)
		}
	}
	for _, a := range []*net.TCPAddr{{IP: net.IPv4(127, 0, 0, 1), Port: 80}, {IP: net.IPv6loopback, Port: 1}, {IP: net.IPv4(10, 0, 0, 1)},
		{IP: net.ParseIP("::ffff:127.0.0.9")}, {IP: net.ParseIP("fe80::1"), Zone: "eth0"}, {IP: net.IPv6loopback, Zone: "lo"}, {}} {
		if got, want := localLoopback(a), parsedLoopback(a.String()); got != want {
			t.Errorf("localLoopback(%v) = %v, the parse of %q says %v", a, got, a.String(), want)
		}
	}
}

// Not on loopback (the address a server binds when told to), any Host
// is fine; a browser Origin still has to be a local page.
func TestAllowedOffLoopback(t *testing.T) {
	srv := New(newTestScope(t, ""), Options{})
	for _, tt := range []struct {
		origin string
		status int
	}{{"", 200}, {"http://localhost:1", 200}, {"https://evil.example.com", 403}} {
		req := httptest.NewRequest("GET", "http://build-box.internal:7777/tools", nil)
		if tt.origin != "" {
			req.Header.Set("Origin", tt.origin)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code != tt.status {
			t.Errorf("Origin %q: %d, want %d", tt.origin, w.Code, tt.status)
		}
	}
}

var _ = fmt.Sprint

// A scope may mount its own model routes (a case's model endpoint, as an
// agent.command run does): its /v1/... go to its handler, the prefix
// stripped, on a server with no model handler of its own, whose other
// scopes answer 404; the 404 lists the model routes only where they are
// served.
func TestScopeModelRoutes(t *testing.T) {
	su := loadSuite(t, "support.dryfire.yaml")
	var mu sync.Mutex
	var paths []string
	own := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		w.WriteHeader(298)
	})
	srv := New(nil, Options{ModelRoutes: []string{"/v1/chat/completions"}})
	for _, sc := range []*Scope{
		NewScope(ScopeOptions{ID: "with", Suite: su, Model: own}),
		NewScope(ScopeOptions{ID: "without", Suite: su}),
	} {
		if err := srv.Add(sc); err != nil {
			t.Fatal(err)
		}
	}
	hs := startServer(t, srv)
	for _, tt := range []struct {
		path   string
		status int
	}{
		{"/cases/with/v1/chat/completions", 298},
		{"/cases/without/v1/chat/completions", 404},
	} {
		resp, err := http.Post(hs.URL+tt.path, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("POST %s: %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
	}
	if diff := cmp.Diff([]string{"/v1/chat/completions"}, paths); diff != "" {
		t.Errorf("paths the scope's handler got (-want +got):\n%s", diff)
	}
	if got := get(t, hs.URL+"/cases/with/nope", 404); !strings.Contains(got, "POST /cases/with/v1/chat/completions") {
		t.Errorf("404 of the scope with model routes: %s", got)
	}
	if got := get(t, hs.URL+"/cases/without/nope", 404); strings.Contains(got, "/v1/") {
		t.Errorf("404 of the scope without model routes lists them: %s", got)
	}
}

// No route of the table is a model route: the server answers those
// before it looks at the table.
func TestNoTableRouteUnderV1(t *testing.T) {
	for _, rt := range routes {
		for _, p := range []string{"/v1", "/v1/", "/v1/chat/completions", "/v1/messages", "/v1/x/y"} {
			if _, ok := rt.match(p); ok {
				t.Errorf("route %s matches %s", rt.Path, p)
			}
		}
	}
}
