package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

const networkSuite = `version: 1
agent:
  command: [python3, agent.py]
tools:
  lookup_order:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order: [{return: {tier: gold}}]
cases:
  - name: reaches out
    input: Please look up A-991.
    expect:
      - called: {tool: lookup_order, times: 1}
      - output: {contains: "model: on it"}
`

// netnsOrSkip skips a test where no namespace can be made, unless
// DRYFIRE_TEST_NETNS=1 says it must run.
func netnsOrSkip(t *testing.T) {
	t.Helper()
	if err := netjail.Available(); err != nil {
		if os.Getenv("DRYFIRE_TEST_NETNS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
}

// networkDir is a suite around testdata/network/agent.py, and a listener
// outside any namespace that counts the connections it gets.
func networkDir(t *testing.T) (dir string, port int, conns *atomic.Int64) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir = t.TempDir()
	data, err := os.ReadFile("testdata/network/agent.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.py"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conns = new(atomic.Int64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns.Add(1)
			c.Close()
		}
	}()
	return dir, ln.Addr().(*net.TCPAddr).Port, conns
}

// Isolated (asked for while recording; the default under CI when
// replaying): the program's model and MCP calls work, a connection to
// another local port that is listening and a lookup of an outside name
// are refused at once, and both are in the report and fail the case. Open:
// the same program reaches the other port, and the case passes.
func TestNetworkIsolated(t *testing.T) {
	netnsOrSkip(t)
	dir, port, conns := networkDir(t)
	srv := fakeapi.NewOpenAIChat(fakeapi.Script{"Please look up A-991.": {{Text: "on it"}}})
	defer srv.Close()
	suites := writeSuite(t, dir, "net.dryfire.yaml", networkSuite)
	other := fmt.Sprintf("TEST_OTHER_PORT=%d", port)
	wantReason := fmt.Sprintf("the agent tried to reach the network past dryfire (refused: agent.network is isolated): dns lookup of registry.npmjs.org via ")
	isolated := func(what string, rep *report.Report) {
		t.Helper()
		c := rep.Cases[0]
		if c.Status != report.Failed || !strings.HasPrefix(c.Reason, wantReason) || !strings.HasSuffix(c.Reason, fmt.Sprintf(", tcp 127.0.0.1:%d (1)", port)) {
			t.Fatalf("%s: %s %s\n%s", what, c.Status, c.Reason, c.Stderr)
		}
		if c.Output != "model: on it\ntool: True\nblocked 127.0.0.1 ConnectionRefusedError\nblocked registry.npmjs.org gaierror" || len(c.ToolCalls) != 1 || c.Turns != 1 {
			t.Errorf("%s: output %q, %d tool calls, %d turns", what, c.Output, len(c.ToolCalls), c.Turns)
		}
		js, _ := json.Marshal(c.Network)
		if c.Network == nil || c.Network.Mode != "isolated" || len(c.Network.Attempts) != 2 ||
			!strings.Contains(string(js), `{"kind":"dns","address":`) || !strings.Contains(string(js), fmt.Sprintf(`{"kind":"tcp","address":"127.0.0.1","port":%d,"count":1}`, port)) {
			t.Errorf("%s: network %s", what, js)
		}
	}
	rec, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Network: "isolated",
		Env: commandEnv(other, "OPENAI_BASE_URL="+srv.URL+"/v1")})
	if err != nil {
		t.Fatal(err)
	}
	isolated("recording", rec)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv(other, "CI=true")})
	if err != nil {
		t.Fatal(err)
	}
	isolated("replay under CI", rep)
	if n := conns.Load(); n != 0 {
		t.Errorf("the other port got %d connections from isolated programs", n)
	}
	rep, err = runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Network: "open", Env: commandEnv(other, "CI=true")})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != report.Passed || c.Network != nil || !strings.Contains(c.Output, "reached 127.0.0.1") || conns.Load() != 1 {
		t.Errorf("open: %s %s, network %+v, output %q, %d connections", c.Status, c.Reason, c.Network, c.Output, conns.Load())
	}
}

// Report: the same program in a namespace, its model and MCP calls as
// ever, and its connection to the other port let through (the port gets
// it) and reported in a note and the report's network, without failing
// the case. (No outside name here: the test stays off the machine's DNS;
// internal/netjail's TestPass covers lookups.)
func TestNetworkReport(t *testing.T) {
	netnsOrSkip(t)
	dir, port, conns := networkDir(t)
	srv := fakeapi.NewOpenAIChat(fakeapi.Script{"Please look up A-991.": {{Text: "on it"}}})
	defer srv.Close()
	suites := writeSuite(t, dir, "net.dryfire.yaml", strings.Replace(networkSuite, "  command: [python3, agent.py]\n", "  command: [python3, agent.py]\n  network: report\n", 1))
	env := []string{fmt.Sprintf("TEST_OTHER_PORT=%d", port), "TEST_NO_OUTSIDE=1"}
	check := func(what string, rep *report.Report, wantConns int64) {
		t.Helper()
		c := rep.Cases[0]
		if c.Status != report.Passed {
			t.Fatalf("%s: %s %s\n%s", what, c.Status, c.Reason, c.Stderr)
		}
		if c.Output != "model: on it\ntool: True\nreached 127.0.0.1" || len(c.ToolCalls) != 1 {
			t.Errorf("%s: output %q, %d tool calls", what, c.Output, len(c.ToolCalls))
		}
		wantNote := fmt.Sprintf("the agent reached past dryfire (let through: agent.network is report): tcp 127.0.0.1:%d (1)", port)
		if !slices.Contains(c.Notes, wantNote) {
			t.Errorf("%s: notes %q, want %q among them", what, c.Notes, wantNote)
		}
		js, _ := json.Marshal(c.Network)
		if want := fmt.Sprintf(`{"mode":"report","attempts":[{"kind":"tcp","address":"127.0.0.1","port":%d,"count":1}]}`, port); string(js) != want {
			t.Errorf("%s: network %s, want %s", what, js, want)
		}
		if n := conns.Load(); n != wantConns {
			t.Errorf("%s: the other port got %d connections, want %d", what, n, wantConns)
		}
	}
	rec, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: commandEnv(append(env, "OPENAI_BASE_URL="+srv.URL+"/v1")...)})
	if err != nil {
		t.Fatal(err)
	}
	check("recording", rec, 1)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv(append(env, "CI=true")...)})
	if err != nil {
		t.Fatal(err)
	}
	check("replay under CI", rep, 2)
}

// Where no namespace can be made (dryfire run by a user without the
// right, here nobody), isolated is a clear error, never an open network;
// the default under CI runs open and says so.
func TestNetworkUnavailable(t *testing.T) {
	dir, port, conns := networkDir(t)
	// nobody must reach the suite: t.TempDir's directories are the
	// test's own.
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeSuite(t, dir, "net.dryfire.yaml", networkSuite)
	bin := dryfire(t)
	run := func(args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"run", "--record", "none", "net.dryfire.yaml"}, args...)...)
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CI=true", fmt.Sprintf("TEST_OTHER_PORT=%d", port), "HOME=" + dir}
		if os.Geteuid() == 0 {
			asNobody(cmd)
		} else if netjail.Available() == nil {
			t.Skip("namespaces can be made here by this user: nothing to simulate")
		}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := run("--network", "isolated")
	if code != 3 || !strings.Contains(out, "agent.network is isolated, but making a network namespace was refused (operation not permitted): it needs root or CAP_SYS_ADMIN") {
		t.Errorf("isolated: exit %d\n%s", code, out)
	}
	if conns.Load() != 0 {
		t.Errorf("the program ran: %d connections", conns.Load())
	}
	out, code = run("-v")
	if !strings.Contains(out, "network: not isolated, although CI is set (making a network namespace was refused") {
		t.Errorf("the default under CI: exit %d\n%s", code, out)
	}
}

// The cost of the network and the sandbox per case: one program per
// case (sh -c exit, and python3 -c pass), run open, isolated, sandboxed
// and report; compare the ns/op (each op is one case) within one run.
func BenchmarkCommandNetwork(b *testing.B) {
	if err := netjail.Available(); err != nil {
		b.Skip(err)
	}
	for _, prog := range []struct{ name, command string }{{"sh", `[sh, -c, "exit 0"]`}, {"python", `[python3, -c, "pass"]`}} {
		dir := b.TempDir()
		suites := writeSuite(b, dir, "bench.dryfire.yaml", `version: 1
agent:
  command: `+prog.command+`
cases:
  - name: one
    input: x
`)
		for _, mode := range []string{"open", "isolated", "sandboxed", "report"} {
			b.Run(prog.name+"/"+mode, func(b *testing.B) {
				for b.Loop() {
					rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Network: mode, Env: commandEnv()})
					if err != nil || rep.Cases[0].Status != report.Passed {
						b.Fatalf("%v %+v", err, rep.Cases[0])
					}
				}
			})
		}
	}
}
