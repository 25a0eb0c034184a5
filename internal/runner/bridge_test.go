package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/report"
)

var (
	dryfireOnce sync.Once
	dryfireBin  string
	dryfireErr  error
)

// dryfire builds the dryfire binary once for the tests that start it.
func dryfire(t *testing.T) string {
	t.Helper()
	dryfireOnce.Do(func() {
		dir, err := os.MkdirTemp("", "dryfire-runner-test-")
		if err != nil {
			dryfireErr = err
			return
		}
		// Others may run it (TestNetworkUnavailable: as nobody).
		if err := os.Chmod(dir, 0o755); err != nil {
			dryfireErr = err
			return
		}
		dryfireBin = filepath.Join(dir, "dryfire")
		out, err := exec.Command("go", "build", "-o", dryfireBin, "github.com/dryfire-dev/dryfire/cmd/dryfire").CombinedOutput()
		if err != nil {
			dryfireErr = fmt.Errorf("building dryfire: %v\n%s", err, out)
		}
	})
	if dryfireErr != nil {
		t.Fatal(dryfireErr)
	}
	return dryfireBin
}

// Eight cases at once, each an agent on the MCP TypeScript SDK client
// that starts its MCP server itself, as DRYFIRE_MCP_ARGV says (dryfire
// mcp-bridge with the case's URL): each gets its own tools, its own
// sequence from the start, and its calls in its own record.
func TestMCPBridgeNode(t *testing.T) {
	dir := filepath.Join("..", "..", "e2e", "node")
	npm.Ready(t, dir, "the Node MCP clients")
	script, err := filepath.Abs(filepath.Join(dir, "mcp-stdio-agent.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	var cases strings.Builder
	for i := range 8 {
		fmt.Fprintf(&cases, `  - name: queue %d
    input: next three
    expect:
      - output: {equals: "t1,t2,t3"}
      - called: {tool: next_ticket, with: {queue: queue %d}, times: 3}
`, i, i)
	}
	suites := writeSuite(t, t.TempDir(), "bridge.dryfire.yaml", `version: 1
agent:
  command: [node, `+script+`]
tools:
  next_ticket:
    input_schema: {type: object, properties: {queue: {type: string}}}
mocks:
  next_ticket:
    - sequence: [{return: t1}, {return: t2}, {return: t3}, {return: past the end}]
cases:
`+cases.String())
	// Sandboxed too (where it can be had): the script, its node_modules
	// and the bridge (dryfire, in a temporary directory) stay reachable.
	networks := []string{"open"}
	if netjail.Available() == nil {
		networks = append(networks, "sandboxed")
	}
	for _, network := range networks {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 8, Record: cassette.None,
			Env: commandEnv(), MCPBridge: []string{dryfire(t), "mcp-bridge"}, Network: network})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cases {
			if c.Status != report.Passed || len(c.ToolCalls) != 3 {
				t.Errorf("%s, %s: %s %s (%d calls)\n%s", network, c.Name, c.Status, c.Reason, len(c.ToolCalls), c.Stderr)
			}
		}
	}
}
