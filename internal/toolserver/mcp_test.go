package toolserver

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const legacyVersion = "2025-11-25"

// connectInMemory connects a go-sdk client to sc over an in-memory
// connection (one MCP session). version "" lets the client choose (the
// new era first, with a fallback).
func connectInMemory(t *testing.T, sc *Scope, version string) *mcp.ClientSession {
	t.Helper()
	ctx := testContext(t)
	st, ct := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- sc.ServeMCP(ctx, st) }()
	cs := connect(t, ct, version)
	t.Cleanup(func() {
		cs.Close()
		if err := <-done; err != nil {
			t.Errorf("ServeMCP: %v", err)
		}
	})
	return cs
}

func connect(t *testing.T, tr mcp.Transport, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "dryfire-test", Version: "1"}, nil)
	var opts *mcp.ClientSessionOptions
	if version != "" {
		opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
	}
	cs, err := client.Connect(testContext(t), tr, opts)
	if err != nil {
		t.Fatalf("connecting: %v", err)
	}
	return cs
}

// connectHTTP connects a go-sdk client to the /mcp endpoint at url.
func connectHTTP(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	cs := connect(t, &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, version)
	t.Cleanup(func() { cs.Close() })
	return cs
}

type callOutcome struct {
	Text       string
	IsError    bool
	Structured any
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) callOutcome {
	t.Helper()
	res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("calling %s: %v", name, err)
	}
	var out callOutcome
	if len(res.Content) != 1 {
		t.Fatalf("calling %s: %d content blocks, want 1", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("calling %s: content is %T, want text", name, res.Content[0])
	}
	out.Text, out.IsError, out.Structured = tc.Text, res.IsError, res.StructuredContent
	return out
}

// wantTools is what tools/list shows for testdata/support.dryfire.yaml.
var wantTools = []*mcp.Tool{
	{Name: "lookup_order", Description: "Look up an order by its id.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"},
	}},
	{Name: "issue_refund", Description: "Refund an order.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}},
	}},
	{Name: "ping", Description: "Answers pong.", InputSchema: map[string]any{"type": "object"}},
	{Name: "weather", InputSchema: map[string]any{"type": "object"}},
}

// checkTools checks the basics every era shares: the list, and the
// answers of calls that hold no state.
func checkTools(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := testContext(t)
	lr, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wantTools, lr.Tools); diff != "" {
		t.Errorf("tools/list (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		name string
		args any
		want callOutcome
	}{
		{"lookup_order", map[string]any{"order_id": "A-991"}, callOutcome{
			Text: `{"order_id":"A-991","tier":"gold"}`}}, // no output schema: no structuredContent
		{"lookup_order", map[string]any{"order_id": "B-1"}, callOutcome{Text: "plain text for B-1"}},
		{"lookup_order", map[string]any{"order_id": "E-1"}, callOutcome{Text: "order service unavailable", IsError: true}},
		{"lookup_order", map[string]any{"order_id": "Z-1"}, callOutcome{
			Text: `dryfire: no mock rule matched this call to "lookup_order"; closest rule testdata/support.dryfire.yaml:16 differs at $.order_id: expected "A-991", got "Z-1"`, IsError: true}},
		{"lookup_ordr", map[string]any{}, callOutcome{
			Text: `dryfire: no mock rule matched this call to "lookup_ordr": no mock rules for this tool (did you mean "lookup_order"?)`, IsError: true}},
		{"ping", nil, callOutcome{Text: "pong"}},
		{"ping", []int{1}, callOutcome{
			Text: `dryfire: no mock rule matched this call to "ping": the arguments are not a JSON object (got an array)`, IsError: true}},
		{"weather", map[string]any{"city": "Rome"}, callOutcome{
			Text: `{"city":"Rome","tempC":21}`}},
	} {
		got := callTool(t, cs, tt.name, tt.args)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s %v (-want +got):\n%s", tt.name, tt.args, diff)
		}
	}
}

func protocolVersion(cs *mcp.ClientSession) string {
	if r := cs.InitializeResult(); r != nil {
		return r.ProtocolVersion
	}
	return ""
}

func TestMCPInMemoryBothEras(t *testing.T) {
	for _, version := range []string{"", legacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			cs := connectInMemory(t, newTestScope(t, ""), version)
			want := version
			if want == "" {
				want = modernVersion
			}
			if got := protocolVersion(cs); got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			checkTools(t, cs)
		})
	}
}

func TestMCPHTTPBothEras(t *testing.T) {
	for _, version := range []string{"", legacyVersion} {
		t.Run("version="+version, func(t *testing.T) {
			hs := startServer(t, New(newTestScope(t, ""), Options{}))
			cs := connectHTTP(t, hs.URL+"/mcp", version)
			want := version
			if want == "" {
				want = modernVersion
			}
			if got := protocolVersion(cs); got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			checkTools(t, cs)
		})
	}
}

func texts(t *testing.T, cs *mcp.ClientSession, tool string, n int) []string {
	t.Helper()
	var out []string
	for range n {
		out = append(out, callTool(t, cs, tool, map[string]any{"order_id": "A-991"}).Text)
	}
	return out
}

// Legacy sessions each see a sequence from its start: over HTTP (by
// Mcp-Session-Id) and over connections (in memory, as stdio).
func TestMCPSequencePerSession(t *testing.T) {
	sc := newTestScope(t, "")
	hs := startServer(t, New(sc, Options{}))
	a := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	b := connectHTTP(t, hs.URL+"/mcp", legacyVersion)
	c := connectInMemory(t, sc, "")
	if diff := cmp.Diff([]string{"timeout", `{"ok":true}`}, texts(t, a, "issue_refund", 2)); diff != "" {
		t.Errorf("session a (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"timeout"}, texts(t, b, "issue_refund", 1)); diff != "" {
		t.Errorf("session b (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"timeout", `{"ok":true}`, "done", "done"}, texts(t, c, "issue_refund", 4)); diff != "" {
		t.Errorf("in-memory session (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"done"}, texts(t, a, "issue_refund", 1)); diff != "" {
		t.Errorf("session a again (-want +got):\n%s", diff)
	}
	if n := len(sc.Records()); n != 8 {
		t.Errorf("%d records, want 8", n)
	}
	// Reset: every session starts over, the record is empty.
	post(t, hs.URL+"/reset", "", http.StatusOK)
	if n := len(sc.Records()); n != 0 {
		t.Errorf("%d records after reset, want 0", n)
	}
	if diff := cmp.Diff([]string{"timeout"}, texts(t, a, "issue_refund", 1)); diff != "" {
		t.Errorf("session a after reset (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"timeout"}, texts(t, c, "issue_refund", 1)); diff != "" {
		t.Errorf("in-memory session after reset (-want +got):\n%s", diff)
	}
}

// Requests without a session (the 2026-07-28 era, or legacy ones without
// Mcp-Session-Id) share the scope's state with HTTP tool calls.
func TestMCPStatelessSharesScopeState(t *testing.T) {
	sc := newTestScope(t, "")
	hs := startServer(t, New(sc, Options{}))
	a := connectHTTP(t, hs.URL+"/mcp", "")
	b := connectHTTP(t, hs.URL+"/mcp", "")
	if got := texts(t, a, "issue_refund", 1); got[0] != "timeout" {
		t.Errorf("first call: %q, want timeout", got[0])
	}
	if got := texts(t, b, "issue_refund", 1); got[0] != `{"ok":true}` {
		t.Errorf("second call, other client: %q, want {\"ok\":true}", got[0])
	}
	if got := post(t, hs.URL+"/tools/issue_refund", `{"order_id":"A-991"}`, http.StatusOK); got != `{"content":"done","is_error":false}` {
		t.Errorf("third call, over HTTP: %s", got)
	}
	post(t, hs.URL+"/reset", "", http.StatusOK)
	if got := texts(t, a, "issue_refund", 1); got[0] != "timeout" {
		t.Errorf("after reset: %q, want timeout", got[0])
	}
}

func post(t *testing.T, url, body string, wantStatus int) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != wantStatus {
		t.Errorf("POST %s: status %d, want %d; body %s", url, resp.StatusCode, wantStatus, b)
	}
	return string(b)
}

var _ = context.Background
var _ = json.Marshal
