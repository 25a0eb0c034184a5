package runner_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

const sandboxSuite = `version: 1
workspace: template
agent:
  command: [python3, agent.py]
  network: NETWORK
tools:
  lookup_order:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order: [{return: {tier: gold}}]
cases:
  - name: tries every way out
    input: Please look up A-991.
    expect:
      - called: {tool: lookup_order, times: 2}
      - output: {contains: "model: on it"}
`

// sandboxRun runs testdata/sandbox/agent.py under network, with a
// listening port and two Unix sockets outside (one in the project's
// directory, one in another temporary directory) and a secret file in
// the home directory for it to try, and returns its case.
func sandboxRun(t *testing.T, network string) report.Case {
	t.Helper()
	netnsOrSkip(t)
	dir, port, conns := networkDir(t)
	if err := os.WriteFile(filepath.Join(dir, "agent.py"), must(os.ReadFile("testdata/sandbox/agent.py")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "template"), 0o755); err != nil {
		t.Fatal(err)
	}
	listenUnix := func(path string) {
		ln, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
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
	}
	elsewhere := t.TempDir()
	listenUnix(filepath.Join(dir, "project.sock"))
	listenUnix(filepath.Join(elsewhere, "other.sock"))
	// A hard link to a socket, in the project (issue 36, hole 7): the
	// socket is its inode, and it connected by the other name. On a
	// filesystem of its own, small to search (on the root filesystem the
	// search passes netjail.MaxSocketSearch, and the case does not start).
	hardlink := ""
	if fsys := filepath.Join(dir, "fs"); os.Mkdir(fsys, 0o755) == nil && tmpfsAt(t, fsys) {
		os.Mkdir(filepath.Join(fsys, "a"), 0o755)
		listenUnix(filepath.Join(fsys, "a", "linked.sock"))
		hardlink = filepath.Join(fsys, "hardlink.sock")
		if err := os.Link(filepath.Join(fsys, "a", "linked.sock"), hardlink); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("no tmpfs could be mounted: the hard link proves nothing")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		t.Skip("no home directory")
	}
	secretDir, err := os.MkdirTemp(home, ".dryfire-sandbox-test-")
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { os.RemoveAll(secretDir) })
	secret := filepath.Join(secretDir, "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o600)
	t.Cleanup(func() { os.Remove("/etc/dryfire-sandbox-probe") }) // isolated leaves the filesystem open
	srv := fakeapi.NewOpenAIChat(fakeapi.Script{"Please look up A-991.": {{Text: "on it"}}})
	defer srv.Close()
	suites := writeSuite(t, dir, "sandbox.dryfire.yaml", strings.Replace(sandboxSuite, "NETWORK", network, 1))
	env := append([]string{
		"OPENAI_BASE_URL=" + srv.URL + "/v1", fmt.Sprintf("TEST_OTHER_PORT=%d", port), "HOME=" + home,
		"TEST_SOCKET_PROJECT=" + filepath.Join(dir, "project.sock"), "TEST_SOCKET_ELSEWHERE=" + filepath.Join(elsewhere, "other.sock"),
		"TEST_SOCKET_HARDLINK=" + hardlink,
		"TEST_SECRET=" + secret, "TEST_PROJECT=" + dir, fmt.Sprintf("TEST_OUTSIDE_PID=%d", os.Getpid()),
	}, kernelKnobs(t)...)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: commandEnv(env...)})
	if err != nil {
		t.Fatal(err)
	}
	if n := conns.Load(); n != 0 {
		t.Errorf("%s: the listeners outside got %d connections", network, n)
	}
	if _, err := os.Stat(filepath.Join(dir, "written-by-agent")); network == "sandboxed" && err == nil {
		t.Errorf("sandboxed: the agent wrote into the project's directory")
	}
	return rep.Cases[0]
}

// kernelTries are the tries of the kernel's knobs: refused under every
// level of confinement.
var kernelTries = []string{"write core_pattern", "write a sysctl", "write hostname", "share the UTS namespace", "share the IPC namespace",
	"write sysrq-trigger", "write /sys", "write a cgroup", "open a block device", "write /dev/kmsg"}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// tries are the agent's lines "TRY: could" / "TRY: refused (WHY)", by
// TRY, and its other lines.
func tries(out string) map[string]string {
	m := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok {
			m[k] = v
		}
	}
	return m
}

// Sandboxed (issue 30): the agent's model, MCP and HTTP tool calls work;
// it cannot reach 127.0.0.1 by any route (a connection, setns into any
// namespace it can name, nsenter, a Unix socket in the project or
// elsewhere), read the home directory, write outside its workspace and
// private /tmp, or see or signal a process outside its case; it holds no
// capability; the report says what was hidden.
func TestSandbox(t *testing.T) {
	c := sandboxRun(t, "sandboxed")
	got := tries(c.Output)
	for try, want := range map[string]string{
		"model": "on it", "mcp tool": "True", "http tool": "True",
		"reach 127.0.0.1": "refused", "setns": "refused", "nsenter": "refused",
		"unix socket in the project": "refused", "unix socket elsewhere": "refused", "unix socket by a hard link": "refused",
		"read home": "refused", "write project": "refused", "write /etc": "refused",
		"write tmp": "could", "write workspace": "could",
		"see a process outside": "refused", "signal a process outside": "refused", "capabilities": "refused",
	} {
		if !strings.HasPrefix(got[try], want) {
			t.Errorf("%s: %q, want %s", try, got[try], want)
		}
	}
	for _, try := range kernelTries {
		if !strings.HasPrefix(got[try], "refused") {
			t.Errorf("%s: %q, want refused", try, got[try])
		}
	}
	if got["processes seen"] > "3" || len(got["processes seen"]) != 1 {
		t.Errorf("the agent saw %s processes", got["processes seen"])
	}
	// The connection to 127.0.0.1 is reported and fails the case.
	if c.Status != report.Failed || !strings.HasPrefix(c.Reason, "the agent tried to reach the network past dryfire (refused: agent.network is sandboxed): tcp 127.0.0.1:") {
		t.Errorf("%s: %s", c.Status, c.Reason)
	}
	note := ""
	for _, n := range c.Notes {
		if strings.HasPrefix(n, "sandboxed (agent.network):") {
			note = n
		}
	}
	if !strings.Contains(note, "no capabilities, no_new_privs, a seccomp filter, its own PID, UTS, IPC and cgroup namespaces; /proc/sys and /sys read-only, a minimal /dev; the filesystem read-only but its workspace and a private /tmp; hidden: /home, /root, /run, /tmp, /var/tmp") {
		t.Errorf("the report's note on the sandbox: %q (notes %q)", note, c.Notes)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("output:\n%s\nstderr:\n%s", c.Output, c.Stderr)
	}
}

// Isolated (issue 30, holes 1 and 10): the agent kept root's
// capabilities and setns() or nsenter into its parent's namespace reached
// 127.0.0.1; a filesystem Unix socket was reachable. Both are refused
// now, and it sees and signals only its own processes; the filesystem is
// the machine's (sandboxed confines it).
func TestIsolatedConfines(t *testing.T) {
	c := sandboxRun(t, "isolated")
	got := tries(c.Output)
	for try, want := range map[string]string{
		"model": "on it", "mcp tool": "True", "http tool": "True",
		"reach 127.0.0.1": "refused", "setns": "refused", "nsenter": "refused",
		"unix socket in the project": "refused", "unix socket elsewhere": "refused", "unix socket by a hard link": "refused",
		"read home": "could", "write project": "could", "write /etc": "refused",
		"see a process outside": "refused", "signal a process outside": "refused", "capabilities": "refused",
	} {
		if !strings.HasPrefix(got[try], want) {
			t.Errorf("%s: %q, want %s", try, got[try], want)
		}
	}
	for _, try := range kernelTries {
		if !strings.HasPrefix(got[try], "refused") {
			t.Errorf("%s: %q, want refused", try, got[try])
		}
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("output:\n%s\nstderr:\n%s", c.Output, c.Stderr)
	}
}

// Confined programs are each pid 2 of their PID namespace: a tool that
// names a file in /tmp by its pid (tsx's IPC pipe, /tmp/tsx-0/2.pipe)
// collided across cases while /tmp was the machine's. Each case has a
// /tmp of its own: two cases at once, and one after them, each create
// /tmp/pid-$$ exclusively.
func TestConfinedProgramsHaveTheirOwnTmp(t *testing.T) {
	netnsOrSkip(t)
	dir := t.TempDir()
	suites := writeSuite(t, dir, "tmp.dryfire.yaml", `version: 1
agent:
  command: [sh, -c, "set -C; echo x > /tmp/pid-$$ && sleep 0.3 && echo made /tmp/pid-$$"]
cases:
  - {name: one, input: x, expect: [{output: {equals: made /tmp/pid-2}}]}
  - {name: two, input: x, expect: [{output: {equals: made /tmp/pid-2}}]}
`)
	for _, network := range []string{"isolated", "sandboxed", "report"} {
		for round := range 2 {
			rep, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 2, Record: cassette.None, Network: network, Env: commandEnv()})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range rep.Cases {
				if c.Status != report.Passed {
					t.Errorf("%s, round %d, %s: %s %s\n%s", network, round, c.Name, c.Status, c.Reason, c.Stderr)
				}
			}
		}
	}
	if _, err := os.Stat("/tmp/pid-2"); err == nil {
		t.Errorf("a confined program wrote the machine's /tmp/pid-2")
	}
}

// The cost of a sandboxed case against bubblewrap alone on the same
// program (issue 36), interleaved in one run so that the machine's load
// weighs on both alike: each round runs the program under bare bwrap
// (what any sandbox would at least cost), then a one-case suite under
// sandboxed, isolated and open. Medians per mode, and sandboxed ÷ bwrap:
// go test -run XXX -bench SandboxAgainstBwrap -benchtime 40x ./internal/runner
func BenchmarkSandboxAgainstBwrap(b *testing.B) {
	if err := netjail.Available(); err != nil {
		b.Skip(err)
	}
	bw, err := exec.LookPath("bwrap")
	if err != nil {
		b.Skip(err)
	}
	for _, prog := range []struct {
		name    string
		argv    []string
		command string
	}{
		{"sh", []string{"sh", "-c", "exit 0"}, `[sh, -c, "exit 0"]`},
		// The system's Python (not a pyenv shim, itself ~150 ms and noisy).
		{"python", []string{"/usr/bin/python3", "-c", "pass"}, `[/usr/bin/python3, -c, "pass"]`},
	} {
		if _, err := os.Stat(prog.argv[0]); prog.name == "python" && err != nil {
			continue
		}
		b.Run(prog.name, func(b *testing.B) {
			dir := b.TempDir()
			suites := writeSuite(b, dir, "bench.dryfire.yaml", "version: 1\nagent:\n  command: "+prog.command+"\ncases:\n  - name: one\n    input: x\n")
			modes := []string{"bwrap", "sandboxed", "isolated", "open"}
			times := map[string][]time.Duration{}
			for b.Loop() {
				for _, mode := range modes {
					start := time.Now()
					if mode == "bwrap" {
						cmd := exec.Command(bw, append([]string{"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--"}, prog.argv...)...)
						cmd.Dir = dir
						if out, err := cmd.CombinedOutput(); err != nil {
							b.Fatalf("%v: %s", err, out)
						}
					} else {
						rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Network: mode, Env: commandEnv()})
						if err != nil || rep.Cases[0].Status != report.Passed {
							b.Fatalf("%v %+v", err, rep.Cases[0])
						}
					}
					times[mode] = append(times[mode], time.Since(start))
				}
			}
			median := func(mode string) float64 {
				d := slices.Clone(times[mode])
				slices.Sort(d)
				return float64(d[len(d)/2].Microseconds()) / 1000
			}
			for _, mode := range modes {
				b.ReportMetric(median(mode), mode+"-ms")
			}
			b.ReportMetric(median("sandboxed")/median("bwrap"), "sandboxed/bwrap")
			b.ReportMetric(0, "ns/op")
		})
	}
}
