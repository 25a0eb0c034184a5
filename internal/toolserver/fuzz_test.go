package toolserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzHTTPEntryPoints posts arbitrary bodies, with arbitrary headers, to
// the JSON-RPC and HTTP tool routes: every request gets an answer with a
// status, and the server never panics.
func FuzzHTTPEntryPoints(f *testing.F) {
	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"} trailing`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, `{"arguments":{"order_id":"A-991"}}`, "", "\x00\xff", `{"jsonrpc":"2.0","id":` + strings.Repeat("[", 1000) + `}`,
	} {
		f.Add("/mcp", "2025-06-18", b)
		f.Add("/tools/lookup_order", "", b)
	}
	srv := New(NewScope(ScopeOptions{Suite: loadSuite(f, "support.dryfire.yaml"), NoRecords: true}), Options{})
	f.Fuzz(func(t *testing.T, path, version, body string) {
		if !strings.HasPrefix(path, "/") {
			path = "/" + path
		}
		req, err := http.NewRequest(http.MethodPost, "http://127.0.0.1"+path, strings.NewReader(body))
		if err != nil {
			return
		}
		req.Host = "127.0.0.1"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, req)
		if w.Code < 200 || w.Code > 599 {
			t.Fatalf("status %d", w.Code)
		}
	})
}
