package cli_test

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dryfire-dev/dryfire/internal/test/npm"
)

// TestRecordToolsScript runs testdata/record/*.txtar: dryfire
// record-tools against real MCP servers from npm (e2e/mcp-servers, pinned).
// $SERVERS is their node_modules/.bin, $OLD_SERVERS an older release's
// (e2e/mcp-servers-old); $REPO the repository root.
func TestRecordToolsScript(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "e2e", "mcp-servers")
	npm.Ready(t, dir, "the real MCP servers record-tools is tested against")
	old := filepath.Join(root, "e2e", "mcp-servers-old")
	npm.Ready(t, old, "the older MCP server verify is tested against")
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/record",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("REPO", root)
			e.Setenv("SERVERS", filepath.Join(dir, "node_modules", ".bin"))
			e.Setenv("OLD_SERVERS", filepath.Join(old, "node_modules", ".bin"))
			e.Setenv("NO_COLOR", "")
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"doc":         cmdDoc,
			"jsonsummary": cmdJSONSummary,
			"samereport":  cmdSameReport,
			"freeport":    cmdFreePort,
			"waitport":    cmdWaitPort,
		},
	})
}

// samereport A B checks that two JSON reports say the same, durations
// aside, the rule that answered each tool call aside (a recording's calls
// are answered by the real tools, a replay's by the recorded rules) and
// the lines of checks aside (the recording adds lines above them).
func cmdSameReport(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: samereport A B")
	}
	read := func(file string) string {
		var rep map[string]any
		ts.Check(json.Unmarshal([]byte(ts.ReadFile(file)), &rep))
		var strip func(v any)
		strip = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				delete(x, "duration_ms")
				delete(x, "rule")
				if _, ok := x["check"]; ok {
					delete(x, "at")
				}
				for _, e := range x {
					strip(e)
				}
			case []any:
				for _, e := range x {
					strip(e)
				}
			}
		}
		strip(rep)
		b, err := json.MarshalIndent(rep, "", "  ")
		ts.Check(err)
		return string(b)
	}
	a, b := read(args[0]), read(args[1])
	if a != b {
		ts.Fatalf("the reports differ:\n--- %s\n%s\n--- %s\n%s", args[0], a, args[1], b)
	}
}

// freeport VAR sets VAR to a loopback TCP port that is free now, for a
// server the script starts.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := l.Addr().(*net.TCPAddr).Port
	ts.Check(l.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// waitport PORT waits up to 60 s for a server to listen on the loopback
// port.
func cmdWaitPort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitport PORT")
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+args[0], time.Second)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("nothing listens on port %s after 60 s: %v", args[0], err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
