package toolrec_test

import (
	"context"
	"net/http/httptest"
	"os/exec"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// BenchmarkProxyOverhead is a tools/call of the real "everything" MCP
// server's echo tool, made by an MCP client (go-sdk) directly over stdio,
// and through dryfire's recording proxy: the client on dryfire's tool
// server (streamable HTTP, as an agent.command program reaches it), the
// proxy forwarding over stdio and keeping the exchange. Both in one run,
// for a ratio on a loaded machine. "replayed" is the same client on the
// same server answered by a rule, as a recorded suite is: the HTTP hop
// alone.
//
//	go test -run '^$' -bench ProxyOverhead -benchtime 2000x ./internal/toolrec
func BenchmarkProxyOverhead(b *testing.B) {
	ctx := context.Background()
	server := []string{bin(b, "mcp-server-everything"), "stdio"}
	args := map[string]any{"message": "hello"}
	call := func(b *testing.B, s *mcp.ClientSession) {
		b.Helper()
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("echo: %v %+v", err, res)
		}
	}
	b.Run("direct", func(b *testing.B) {
		timeCalls(b, &mcp.CommandTransport{Command: exec.Command(server[0], server[1:]...)}, call)
	})

	b.Run("proxied", func(b *testing.B) {
		up, err := toolrec.Dial(ctx, toolrec.Target{Command: server})
		if err != nil {
			b.Fatal(err)
		}
		defer up.Close()
		suite, ds := spec.Parse("bench.dryfire.yaml", []byte("version: 1\nname: bench\nagent: {provider: script}\ncases:\n  - {name: c, input: x, script: [{text: x}]}\n"), nil)
		if ds.HasErrors() {
			b.Fatal(ds)
		}
		p := plan.New(suite, nil, nil).Case(suite.Cases[0]).WithTools(up.Tools())
		overHTTP(b, toolserver.NewScope(toolserver.ScopeOptions{Plan: p, Upstream: up.For(suite.File, "c"), NoRecords: true}), call)
	})

	b.Run("replayed", func(b *testing.B) {
		suite, ds := spec.Parse("bench.dryfire.yaml", []byte("version: 1\nname: bench\nagent: {provider: script}\nmocks:\n  echo:\n    - when: {message: hello}\n      return: 'Echo: hello'\ncases:\n  - {name: c, input: x, script: [{text: x}]}\n"), nil)
		if ds.HasErrors() {
			b.Fatal(ds)
		}
		overHTTP(b, toolserver.NewScope(toolserver.ScopeOptions{Suite: suite, NoRecords: true}), call)
	})
}

// overHTTP serves a scope over streamable HTTP and times call on an MCP
// session with it.
func overHTTP(b *testing.B, sc *toolserver.Scope, call func(*testing.B, *mcp.ClientSession)) {
	srv := httptest.NewServer(toolserver.New(sc, toolserver.Options{}))
	defer srv.Close()
	timeCalls(b, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, call)
}

// timeCalls times call on an MCP session over t (after one untimed call).
func timeCalls(b *testing.B, t mcp.Transport, call func(*testing.B, *mcp.ClientSession)) {
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	s, err := client.Connect(context.Background(), t, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	call(b, s)
	b.ResetTimer()
	for b.Loop() {
		call(b, s)
	}
}
