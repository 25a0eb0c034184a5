package toolrec_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
)

// serversDir is the pinned npm project of the real MCP servers recorded.
func serversDir(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "e2e", "mcp-servers")
	npm.Ready(t, dir, "the real MCP servers recorded")
	return dir
}

// bin is the path of an installed server's program.
func bin(t testing.TB, name string) string {
	p := filepath.Join(serversDir(t), "node_modules", ".bin", name)
	if _, err := exec.LookPath(p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestStdioUpstreamListsAndForwards(t *testing.T) {
	ctx := context.Background()
	u, err := toolrec.Dial(ctx, toolrec.Target{Command: []string{bin(t, "mcp-server-everything"), "stdio"}})
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	var echo bool
	for _, tl := range u.Tools() {
		if tl.Name == "echo" {
			echo = tl.Input != nil && tl.Description != ""
		}
	}
	if !echo {
		t.Fatalf("no echo tool with a schema and a description in %+v", u.Tools())
	}
	a := u.For("s.dryfire.yaml", "c")
	res := a.Answer(ctx, tool.Call{Name: "echo", Args: `{"message":"hi"}`}, map[string]any{"message": "hi"}, nil)
	if res.Content != "Echo: hi" || res.IsError || res.Outcome != tool.Return {
		t.Fatalf("echo answered %+v", res)
	}
	res = a.Answer(ctx, tool.Call{Name: "no-such-tool", Args: `{}`}, map[string]any{}, nil)
	if !res.IsError {
		t.Fatalf("an unknown tool answered %+v", res)
	}
	ex := u.Exchanges()
	if len(ex) != 2 || ex[0].Tool != "echo" || ex[0].Case != "c" || ex[0].Suite != "s.dryfire.yaml" {
		t.Fatalf("exchanges %+v", ex)
	}
}
