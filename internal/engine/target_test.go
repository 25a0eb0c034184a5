package engine_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The product note's target (kind: external, bindings: [direct]) is what
// an SDK drill is: the start answer lists its bindings, /ops works, and a
// call through a binding it does not list (MCP, the /tools and /http
// routes) is refused with 403 BINDING_NOT_DECLARED before it reaches the
// world: no evidence, no state. A suite without target has every binding.
func TestTargetBindings(t *testing.T) {
	dir := project(t)
	suite := `version: 1
world: records.world.yaml
target: {kind: external, bindings: [direct]}
cases:
  - name: direct-only
    input: Save record-1 with the text hello.
`
	if err := os.WriteFile(filepath.Join(dir, "tests", "target.dryfire.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startEngine(t, dir)

	d := p.start(map[string]any{"drill": "direct-only", "suite": "tests/target.dryfire.yaml"})
	if got := fmt.Sprint(d.binding["bindings"]); got != "[direct]" {
		t.Errorf("bindings %s; want [direct]", got)
	}
	file := filepath.Join(dir, "tests", "target.dryfire.yaml")
	for _, route := range []struct{ binding, path string }{
		{"mcp", "/mcp"},
		{"http", "/tools/save_record"},
		{"http", "/http/record-store/records/record-1"},
	} {
		status, m := p.call("POST", d.url+route.path, map[string]any{"id": "record-1", "text": "hello"}, false)
		code, msg := errorOf(t, m)
		want := "drill direct-only: its target lists bindings [direct], not " + route.binding + ": the call to " + route.path + " is refused before it reaches the world (add " + route.binding + " to target.bindings in " + file + ")"
		if status != http.StatusForbidden || code != "BINDING_NOT_DECLARED" || msg != want {
			t.Errorf("POST %s: %d %s %q; want 403 BINDING_NOT_DECLARED %q", route.path, status, code, msg, want)
		}
	}
	if status, m := d.op("record-store/records.save", map[string]any{"id": "record-1", "text": "hello"}, ""); status != http.StatusOK || m["status"] != "ok" {
		t.Errorf("/ops: %d %v", status, m)
	}
	res := d.end("Saved record-1.", nil)
	if diff := cmp.Diff([]string{"record-store/records.save behavior"}, evidence(t, res)); diff != "" {
		t.Errorf("evidence (-want +got):\n%s", diff)
	}

	all := p.start(map[string]any{"drill": "save-record"})
	if got := fmt.Sprint(all.binding["bindings"]); got != "[direct mcp http]" {
		t.Errorf("without target: bindings %s; want [direct mcp http]", got)
	}
	all.end("", nil)
}
