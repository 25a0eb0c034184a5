package toolserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// A scope that keeps no records stays flat under load: 100,000 calls over
// HTTP and through an MCP session's fast path grow the heap by less than
// a megabyte (with the record, each call kept ~760 bytes: ~75 MB).
func TestNoRecordsMemoryFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 calls")
	}
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml"), NoRecords: true})
	srv := New(sc, Options{})
	hs := startServer(t, srv)
	init := rpc(t, hs.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	sid := init.header.Get("Mcp-Session-Id")
	mcpCall := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}`
	w := &discard{h: http.Header{}}
	call := func(i int) {
		var r *http.Request
		if i%2 == 0 {
			r = httptest.NewRequest(http.MethodPost, "/tools/lookup_order", strings.NewReader(`{"order_id":"A-991"}`))
		} else {
			r = httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(mcpCall))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Mcp-Session-Id", sid)
			r.Header.Set("Mcp-Protocol-Version", legacyVersion)
		}
		w.reset()
		srv.ServeHTTP(w, r)
		if w.status != 200 {
			t.Fatalf("call %d: status %d", i, w.status)
		}
	}
	for i := range 1000 { // warm the pools
		call(i)
	}
	before := heapInUse()
	const n = 100_000
	for i := range n {
		call(i)
	}
	after := heapInUse()
	if fast := sc.fastCalls.Load(); fast < n/2 {
		t.Fatalf("the fast path answered %d calls, want %d", fast, n/2)
	}
	if grew := int64(after) - int64(before); grew > 1<<20 {
		t.Errorf("the heap grew by %d bytes over %d calls (%d bytes a call)", grew, n, grew/n)
	}
	if got := len(sc.Records()); got != 0 {
		t.Errorf("%d records kept", got)
	}
}

// An MCP session over HTTP ends after SessionTimeout without a request,
// fast-path calls and go-sdk's own requests alike keeping it alive; its
// client then gets 404 (and would open a new one).
func TestSessionIdleTimeout(t *testing.T) {
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml"), SessionTimeout: 600 * time.Millisecond})
	hs := startServer(t, New(sc, Options{}))
	cs := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	// Busy for three timeouts: fast-path calls and pings (go-sdk).
	for i := range 45 {
		if i%2 == 0 {
			callTool(t, cs, "ping", nil)
		} else if err := cs.Ping(testContext(t), nil); err != nil {
			t.Fatalf("ping %d: %v", i, err)
		}
		time.Sleep(40 * time.Millisecond)
	}
	if sc.fastCalls.Load() == 0 {
		t.Fatal("no call took the fast path")
	}
	// Then idle: the session ends.
	deadline := time.Now().Add(10 * time.Second)
	for {
		sc.sessions.mu.Lock()
		n, expiring := len(sc.sessions.byID), sc.sessions.expiring
		sc.sessions.mu.Unlock()
		if n == 0 && !expiring {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s, %d sessions are left (sweeper running: %v)", n, expiring)
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"}); err == nil {
		t.Error("a call in the expired session succeeded")
	}
	// A new session works, and starts the sweeper again.
	cs2 := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	if got := callTool(t, cs2, "ping", nil); got.Text != "pong" {
		t.Errorf("new session: %q", got.Text)
	}
	sc.sessions.mu.Lock()
	expiring := sc.sessions.expiring
	sc.sessions.mu.Unlock()
	if !expiring {
		t.Error("the sweeper did not start again")
	}
}

// A negative SessionTimeout never ends sessions; 0 is the default.
func TestSessionTimeoutOptions(t *testing.T) {
	s := loadSuite(t, "support.dryfire.yaml")
	if got := NewScope(ScopeOptions{Suite: s}).sessions.idle; got != DefaultSessionTimeout {
		t.Errorf("default %v", got)
	}
	never := NewScope(ScopeOptions{Suite: s, SessionTimeout: -1})
	hs := startServer(t, New(never, Options{}))
	connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	never.sessions.mu.Lock()
	defer never.sessions.mu.Unlock()
	if never.sessions.expiring || len(never.sessions.byID) != 1 {
		t.Errorf("sweeper %v, %d sessions", never.sessions.expiring, len(never.sessions.byID))
	}
}

// 100,000 initialize requests held 3.6 GB for the 30-minute idle timeout:
// the sessions open at once are bounded, the one idle the longest ending
// when one more opens.
func TestHostileSessionFloodIsBounded(t *testing.T) {
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml"), MaxSessions: 3})
	hs := startServer(t, New(sc, Options{}))
	var sessions []*mcp.ClientSession
	for range 5 {
		sessions = append(sessions, connectHTTP(t, hs.URL+"/mcp", legacyVersion))
		time.Sleep(5 * time.Millisecond)
	}
	sc.sessions.mu.Lock()
	n := len(sc.sessions.byID)
	sc.sessions.mu.Unlock()
	if n != 3 {
		t.Errorf("%d sessions open, want 3", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for i, cs := range sessions {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "ping"})
		if evicted := i < 2; evicted != (err != nil) {
			t.Errorf("session %d: %v", i, err)
		}
	}
	if got := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml")}).sessions.max; got != DefaultMaxSessions {
		t.Errorf("default %d", got)
	}
}
