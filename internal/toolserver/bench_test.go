package toolserver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// benchSuite has a tool "one" with one rule, a tool "many" with n rules,
// each matching {"k": "vI"}, and a tool "create_order" with n rules of
// three keys as bench/setup writes them (tools100.dryfire.yaml).
func benchSuite(tb testing.TB, n int) *spec.Suite {
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  one:\n    - return: {ok: true}\n  many:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - when: {k: v%d}\n      return: {rule: %d}\n", i, i)
	}
	b.WriteString("  create_order:\n")
	for i := range n {
		fmt.Fprintf(&b, "    - when: {amount: 100, currency: EUR, sku: SKU-%d}\n      return: {ok: true, rule: %d}\n", i, i)
	}
	b.WriteString("cases:\n  - name: c\n    input: x\n    script: [{text: ok}]\n")
	s, ds := spec.Parse("bench.dryfire.yaml", []byte(b.String()), nil)
	if ds.HasErrors() {
		tb.Fatal(ds)
	}
	return s
}

// The handler alone (no network): what the server adds per call; _serve
// on a scope that keeps no record, as serve's (pure tools' answers kept,
// memo.go).
func BenchmarkHandlerToolCall(b *testing.B) {
	for _, tt := range []struct {
		name, path, body string
		serve            bool
	}{
		{"1rule", "/tools/one", `{"k":"x"}`, false},
		{"100rules_last", "/tools/many", `{"k":"v99"}`, false},
		{"100rules_order", "/tools/create_order", `{"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"}`, false},
		{"1rule_serve", "/tools/one", `{"k":"x"}`, true},
		{"100rules_order_serve", "/tools/create_order", `{"amount":100,"currency":"EUR","sku":"SKU-99","note":"deliver before noon"}`, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			srv := New(NewScope(ScopeOptions{Suite: benchSuite(b, 100), NoRecords: tt.serve}), Options{})
			body := strings.NewReader(tt.body)
			req := httptest.NewRequest("POST", tt.path, body)
			w := &discard{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				body.Reset(tt.body)
				w.reset()
				srv.ServeHTTP(w, req)
				if w.status != 200 {
					b.Fatal(w.status)
				}
			}
		})
	}
}

type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) WriteHeader(s int)   { d.status = s }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK // as net/http's writer does
	}
	return len(p), nil
}
func (d *discard) reset() { clear(d.h); d.status = 0 }

// Over loopback HTTP with one keep-alive connection per goroutine.
func BenchmarkHTTPToolCall(b *testing.B) {
	for _, tt := range []struct{ name, path, body string }{
		{"1rule", "/tools/one", `{"k":"x"}`},
		{"100rules_last", "/tools/many", `{"k":"v99"}`},
	} {
		b.Run(tt.name, func(b *testing.B) {
			hs := httptest.NewServer(New(NewScope(ScopeOptions{Suite: benchSuite(b, 100)}), Options{}))
			defer hs.Close()
			benchPost(b, hs.URL+tt.path, fixed(nil), tt.body)
		})
	}
}

// tools/call over streamable HTTP: a legacy session (8 sessions in
// parallel) and stateless 2026-07-28 requests.
func BenchmarkMCPToolCall(b *testing.B) {
	hs := httptest.NewServer(New(NewScope(ScopeOptions{Suite: benchSuite(b, 1)}), Options{}))
	defer hs.Close()
	b.Run("legacy_8sessions", func(b *testing.B) {
		init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`
		benchPost(b, hs.URL+"/mcp", func(c *http.Client) map[string]string {
			resp, err := c.Do(mcpRequest(hs.URL+"/mcp", nil, init))
			if err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			return map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
		}, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"}}}`)
	})
	b.Run("stateless_2026", func(b *testing.B) {
		h := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "one"}
		benchPost(b, hs.URL+"/mcp", fixed(h), `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"},`+modernMeta("2026-07-28")+`}}`)
	})
}

func mcpRequest(url string, h map[string]string, body string) *http.Request {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header.Set(k, v)
	}
	return req
}

func fixed(h map[string]string) func(*http.Client) map[string]string {
	return func(*http.Client) map[string]string { return h }
}

// benchPost posts body from 8 goroutines, each with its own keep-alive
// connection and headers (from start); a %d in body is a request id,
// unique per goroutine.
func benchPost(b *testing.B, url string, start func(*http.Client) map[string]string, body string) {
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}
	b.ReportAllocs()
	b.SetParallelism(4) // 4 x GOMAXPROCS goroutines: 8 on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		h := start(client)
		id := 10
		for pb.Next() {
			id++
			text := body
			if strings.Contains(body, "%d") {
				text = fmt.Sprintf(body, id)
			}
			resp, err := client.Do(mcpRequest(url, h, text))
			if err != nil {
				b.Error(err)
				return
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || bytes.Contains(data, []byte(`"error"`)) {
				b.Errorf("%d %s", resp.StatusCode, data)
				return
			}
		}
	})
}

// The MCP handler alone (no network): a tools/call in a legacy session
// (as the official clients send it, with and without a progress token),
// and a stateless 2026-07-28 one with its _meta; each through the fast
// path, through go-sdk as dryfire serves it (_sdk: the fast path off),
// and, for the legacy call, by go-sdk's own server with the same tool
// (gosdk_plain: a plain StreamableHTTPHandler, what bench/gosdk serves).
func BenchmarkHandlerMCPCall(b *testing.B) {
	legacyCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"}}}`
	progressCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"},"_meta":{"progressToken":3}}}`
	modernCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"},` + modernMeta("2026-07-28") + `}}`
	modern := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "one"}
	for _, path := range []string{"", "_sdk"} {
		sc := NewScope(ScopeOptions{Suite: benchSuite(b, 1), NoRecords: true}) // as serve's
		sc.slowMCP = path == "_sdk"
		srv := New(sc, Options{})
		legacy := benchSession(b, srv)
		for _, tt := range []struct {
			name string
			h    map[string]string
			body string
		}{
			{"legacy", legacy, legacyCall},
			{"legacy_progress", legacy, progressCall},
			{"stateless_2026", modern, modernCall},
		} {
			b.Run(tt.name+path, func(b *testing.B) {
				fast := sc.fastCalls.Load()
				benchHandler(b, srv, tt.h, tt.body)
				if took := sc.fastCalls.Load() != fast; took != (path == "") {
					b.Fatalf("the fast path took the calls: %v", took)
				}
			})
		}
	}
	b.Run("legacy_gosdk_plain", func(b *testing.B) {
		server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1"}, nil)
		server.AddTool(&mcp.Tool{Name: "one", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}}, nil
			})
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
		benchHandler(b, h, benchSession(b, h), legacyCall)
	})
}

// benchSession opens a 2025-11-25 session on h over loopback HTTP and
// returns the headers of a request in it.
func benchSession(b *testing.B, h http.Handler) map[string]string {
	hs := httptest.NewServer(h)
	b.Cleanup(hs.Close)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}`
	resp, err := http.DefaultClient.Do(mcpRequest(hs.URL+"/mcp", nil, init))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	hdr := map[string]string{"Mcp-Session-Id": resp.Header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": "2025-11-25"}
	resp, err = http.DefaultClient.Do(mcpRequest(hs.URL+"/mcp", hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`))
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return hdr
}

// benchHandler serves the same request to h, the handler alone.
func benchHandler(b *testing.B, h http.Handler, hdr map[string]string, text string) {
	body := strings.NewReader(text)
	rc := io.NopCloser(body)
	req := mcpRequest("/mcp", hdr, text)
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		body.Reset(text)
		req.Body = rc // go-sdk's path replaces it
		w.reset()
		h.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatal(w.status)
		}
	}
}
