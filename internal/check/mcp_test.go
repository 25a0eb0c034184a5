package check

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// TestMCPChecks: only answered requests count; times is exact.
func TestMCPChecks(t *testing.T) {
	f := &Facts{MCP: []tool.MCPUse{
		{Method: "resources/read", URI: "docs://a"},
		{Method: "resources/read", URI: "docs://a"},
		{Method: "resources/read", URI: "docs://b", Error: "Resource not found"},
		{Method: "prompts/get", Name: "p", Arguments: map[string]string{"x": "1"}},
		{Method: "completion/complete", Name: "p", Arguments: map[string]string{"x": ""}},
	}}
	two, once := 2, 1
	tests := []struct {
		c    spec.Check
		pass bool
		msg  string
	}{
		{spec.Check{Kind: spec.CheckRead, URI: "docs://a"}, true, "a read of resource docs://a: read 2 times"},
		{spec.Check{Kind: spec.CheckRead, URI: "docs://a", Times: &two}, true, "a read of resource docs://a: read 2 times"},
		{spec.Check{Kind: spec.CheckRead, URI: "docs://a", Times: &once}, false, "expected a read of resource docs://a 1 time; read 2 times (the agent read: docs://a, docs://a)"},
		{spec.Check{Kind: spec.CheckRead, URI: "docs://b"}, false, "expected a read of resource docs://b; the agent read: docs://a, docs://a"},
		{spec.Check{Kind: spec.CheckNotRead, URI: "docs://b"}, true, "resource docs://b was never read"},
		{spec.Check{Kind: spec.CheckPrompted, Prompt: "p", PromptWith: map[string]string{"x": "1"}}, true, "a get of prompt p(x=1): got 1 time"},
		{spec.Check{Kind: spec.CheckPrompted, Prompt: "p", PromptWith: map[string]string{"x": "2"}}, false, "expected a get of prompt p(x=2); the agent got: p(x=1)"},
		{spec.Check{Kind: spec.CheckPrompted, Prompt: "q"}, false, "expected a get of prompt q; the agent got: p(x=1)"},
	}
	for _, tt := range tests {
		pass, msg := one(&tt.c, f)
		if pass != tt.pass || msg != tt.msg {
			t.Errorf("%s %s%s: %v %q, want %v %q", tt.c.Kind, tt.c.URI, tt.c.Prompt, pass, msg, tt.pass, tt.msg)
		}
	}
}
