package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The passthrough mocks (impl:) end to end, through the built binary and
// a real python3: what only a real process shows — signals, a helper
// killed from outside, the wall time of concurrent calls.

// ptModule is the Python code of these tests, in ptools.py. Each call
// first writes started-N (N from the arguments), so that a test knows
// when a call is running.
const ptModule = `import os
import time


def started(args):
    open("started-%s" % args.get("n", "x"), "w").close()


def nap(args):
    started(args)
    time.sleep(args.get("s", 1))
    return "rested %s" % args.get("n")


def echo(args):
    return args
`

// ptSuite writes a suite of cases that each call nap once with
// {n: i, s: seconds}, named c01, c02, ...; rule is the mock rule of nap.
func ptSuite(t *testing.T, dir string, n int, seconds float64, rule string, more string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "version: 1\nagent: {provider: script}\nmocks:\n  nap:\n    - %s\n  echo:\n    - impl: ptools:echo\ncases:\n", rule)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - name: c%02d\n    input: hi\n    script:\n      - tool_calls: [{name: nap, args: {n: %d, s: %g}}]\n      - text: ok\n    expect:\n      - no_errors: true\n", i, i, seconds)
	}
	b.WriteString(more)
	if err := os.WriteFile(filepath.Join(dir, "pt.dryfire.yaml"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// ptDir is a directory holding ptools.py.
func ptDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ptools.py"), []byte(ptModule), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// running is a dryfire process under test.
type running struct {
	cmd            *exec.Cmd
	stdout, stderr lockedBuffer
	start          time.Time
	done           chan struct{}
	end            time.Time
	code           int
}

func startBinary(t *testing.T, dir, bin string, env []string, args ...string) *running {
	t.Helper()
	r := &running{done: make(chan struct{})}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Dir = dir
	r.cmd.Env = append(os.Environ(), env...)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := r.cmd.Wait()
		r.end = time.Now()
		r.code = r.cmd.ProcessState.ExitCode()
		if err != nil && r.code == 0 {
			r.code = -1
		}
		close(r.done)
	}()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return r
}

// wait waits for the process to exit and returns its exit code.
func (r *running) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-r.done:
		return r.code
	case <-time.After(limit):
		t.Fatalf("still running after %v\nstdout:\n%s\nstderr:\n%s", limit, r.stdout.String(), r.stderr.String())
		return 0
	}
}

// waitFor waits until cond holds, failing the test after limit.
func (r *running) waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		select {
		case <-r.done:
			t.Fatalf("exited (code %d) before %s\nstdout:\n%s\nstderr:\n%s", r.code, what, r.stdout.String(), r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s after %v\nstdout:\n%s\nstderr:\n%s", what, limit, r.stdout.String(), r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *running) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// helperPIDs are the passthrough helpers started by the process pid: its
// children running the helper (found in /proc, so that the helpers of
// other tests running meanwhile are not counted).
func helperPIDs(t *testing.T, pid int) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, state := procStat(child); ppid == pid && state != "Z" {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", child))
			if bytes.Contains(cmdline, []byte("dryfire passthrough helper")) {
				out = append(out, child)
			}
		}
	}
	return out
}

// procStat returns the parent and the state of a process, or 0 and "" when
// it is gone.
func procStat(pid int) (ppid int, state string) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, ""
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, ""
	}
	ppid, _ = strconv.Atoi(fields[1])
	return ppid, fields[0]
}

// killPid kills the process pid.
func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// alive reports whether pid is a live process (not gone, not a zombie).
func alive(pid int) bool {
	if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return false
	}
	_, state := procStat(pid)
	return state != "" && state != "Z"
}

// ptReport is the part of the JSON report these tests read.
type ptReport struct {
	Cases []struct {
		Name       string  `json:"name"`
		Status     string  `json:"status"`
		Reason     string  `json:"reason"`
		DurationMS float64 `json:"duration_ms"`
		Notes      []string
		ToolCalls  []struct {
			Tool    string `json:"tool"`
			IsError bool   `json:"is_error"`
			Result  string `json:"result"`
		} `json:"tool_calls"`
	} `json:"cases"`
}

func readReport(t *testing.T, path string) ptReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep ptReport
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rep
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestPassthroughE2E(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not on PATH")
	}
	bin := buildBinary(t, t.TempDir())
	linux := runtime.GOOS == "linux"

	// Not parallel: the timings are the point.
	t.Run("16 concurrent 1 s calls", func(t *testing.T) {
		dir := ptDir(t)
		ptSuite(t, dir, 16, 1, "impl: ptools:nap", "")
		r := startBinary(t, dir, bin, nil, "run", "pt.dryfire.yaml", "--concurrency", "16", "--json", "report.json")
		if code := r.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout.String(), r.stderr.String())
		}
		wall := r.end.Sub(r.start)
		t.Logf("16 cases, each a 1 s sync impl call, --concurrency 16: %v wall time (process start to exit)", wall.Round(time.Millisecond))
		// One at a time would take 16 s; 8 s leaves room for a loaded
		// machine and still shows the calls ran side by side.
		if wall >= 8*time.Second {
			t.Errorf("wall time %v, want < 8 s", wall)
		}
		for _, c := range readReport(t, filepath.Join(dir, "report.json")).Cases {
			if c.Status != "passed" || len(c.ToolCalls) != 1 || c.ToolCalls[0].Result != "rested "+strings.TrimLeft(c.Name[1:], "0") {
				t.Errorf("case %s: %s %s %+v", c.Name, c.Status, c.Reason, c.ToolCalls)
			}
		}
	})

	t.Run("a wedged call beside 16 others", func(t *testing.T) {
		dir := ptDir(t)
		ptSuite(t, dir, 16, 1, "impl: ptools:nap", `  - name: wedged
    input: hi
    mocks:
      nap:
        - impl: ptools:nap
          timeout_s: 0.5
    script:
      - tool_calls: [{name: nap, args: {n: wedged, s: 2}}]
      - text: ok
`)
		r := startBinary(t, dir, bin, nil, "run", "pt.dryfire.yaml", "-j", "17", "--json", "report.json")
		if code := r.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout.String(), r.stderr.String())
		}
		t.Logf("16 cases of 1 s and one wedged for 2 s with timeout_s 0.5: %v wall time (the exit waits for the wedged call)", r.end.Sub(r.start).Round(time.Millisecond))
		rep := readReport(t, filepath.Join(dir, "report.json"))
		if len(rep.Cases) != 17 {
			t.Fatalf("%d cases", len(rep.Cases))
		}
		for _, c := range rep.Cases {
			if c.Name == "wedged" {
				t.Logf("the wedged case yielded its error result in %.1f ms", c.DurationMS)
				if c.DurationMS >= 1000 {
					t.Errorf("the wedged case took %.1f ms, want < 1000", c.DurationMS)
				}
				want := "dryfire: impl ptools:nap: timed out after 0.5 s"
				if c.Status != "passed" || len(c.ToolCalls) != 1 || !c.ToolCalls[0].IsError || c.ToolCalls[0].Result != want {
					t.Errorf("wedged case: %s %+v, want the result %q", c.Status, c.ToolCalls, want)
				}
				continue
			}
			if c.Status != "passed" {
				t.Errorf("case %s: %s %s %+v", c.Name, c.Status, c.Reason, c.ToolCalls)
			}
		}
		if want := `dryfire: waiting for 1 passthrough call(s) to finish (Ctrl-C to abandon them): case "wedged", tool nap → ptools:nap`; !strings.Contains(r.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr.String())
		}
	})

	t.Run("Ctrl-C abandons a wedged call at exit", func(t *testing.T) {
		if !linux {
			t.Skip("finds the helper in /proc")
		}
		t.Parallel()
		dir := ptDir(t)
		ptSuite(t, dir, 1, 30, "{impl: ptools:nap, timeout_s: 0.5}", "")
		r := startBinary(t, dir, bin, nil, "run", "pt.dryfire.yaml", "--json", "report.json")
		waiting := "dryfire: waiting for 1 passthrough call(s) to finish (Ctrl-C to abandon them): case \"c01\", tool nap → ptools:nap\n"
		r.waitFor(t, "waiting message", 10*time.Second, func() bool { return strings.Contains(r.stderr.String(), waiting) })
		// The run is over (its report is written, its summary printed: the
		// case fails its no_errors check): dryfire only waits for the
		// wedged call.
		if out := r.stdout.String(); !strings.HasSuffix(out, "0 passed, 1 failed\n") {
			t.Errorf("stdout:\n%s", out)
		}
		rep := readReport(t, filepath.Join(dir, "report.json"))
		if c := rep.Cases[0]; len(c.ToolCalls) != 1 || c.ToolCalls[0].Result != "dryfire: impl ptools:nap: timed out after 0.5 s" {
			t.Errorf("the case got %+v", c.ToolCalls)
		}
		helpers := helperPIDs(t, r.cmd.Process.Pid)
		if len(helpers) != 1 {
			t.Fatalf("helpers of the run: %v, want one", helpers)
		}
		// Still waiting a moment later.
		time.Sleep(300 * time.Millisecond)
		select {
		case <-r.done:
			t.Fatalf("exited while the wedged call ran\nstderr:\n%s", r.stderr.String())
		default:
		}
		sent := time.Now()
		r.signal(t, os.Interrupt)
		code := r.wait(t, 10*time.Second)
		latency := r.end.Sub(sent)
		t.Logf("exit %d %v after the Ctrl-C that abandoned the wedged call", code, latency.Round(time.Millisecond))
		if latency >= 3*time.Second {
			t.Errorf("abandoning took %v, want < 3 s", latency)
		}
		if code != 1 {
			t.Errorf("exit %d, want 1, the run's (a failed case)", code)
		}
		if want := waiting + "dryfire: abandoned the passthrough calls still running\n"; r.stderr.String() != want {
			t.Errorf("stderr:\n%s\nwant:\n%s", r.stderr.String(), want)
		}
		deadline := time.Now().Add(time.Second)
		for alive(helpers[0]) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(helpers[0]) {
			t.Errorf("the helper (pid %d) is still running", helpers[0])
			killPid(helpers[0])
		}
	})

	t.Run("Ctrl-C during a run of sleeping impl calls", func(t *testing.T) {
		t.Parallel()
		dir := ptDir(t)
		ptSuite(t, dir, 4, 30, "impl: ptools:nap", "")
		r := startBinary(t, dir, bin, nil, "run", "pt.dryfire.yaml", "-j", "2", "--json", "report.json")
		r.waitFor(t, "two calls running", 10*time.Second, func() bool {
			return exists(filepath.Join(dir, "started-1")) && exists(filepath.Join(dir, "started-2"))
		})
		var helpers []int
		if linux {
			helpers = helperPIDs(t, r.cmd.Process.Pid)
		}
		r.signal(t, os.Interrupt)
		// The run stops; dryfire then waits for the two sync calls, which
		// keep their threads; a second Ctrl-C abandons them.
		waiting := `dryfire: waiting for 2 passthrough call(s) to finish (Ctrl-C to abandon them): case "c01", tool nap → ptools:nap; case "c02", tool nap → ptools:nap`
		r.waitFor(t, "waiting message", 10*time.Second, func() bool { return strings.Contains(r.stderr.String(), waiting) })
		r.signal(t, os.Interrupt)
		if code := r.wait(t, 5*time.Second); code != 130 {
			t.Errorf("exit %d, want 130", code)
		}
		rep := readReport(t, filepath.Join(dir, "report.json"))
		var got []string
		for _, c := range rep.Cases {
			got = append(got, c.Name+" "+c.Status+" "+c.Reason)
		}
		want := []string{"c01 error interrupted", "c02 error interrupted", "c03 skipped interrupted before it started", "c04 skipped interrupted before it started"}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		for _, f := range []string{"started-3", "started-4"} {
			if exists(filepath.Join(dir, f)) {
				t.Errorf("%s: a case started after the Ctrl-C", f)
			}
		}
		if !strings.HasSuffix(r.stdout.String(), "0 passed, 0 failed, 2 errors, 2 skipped\n") {
			t.Errorf("stdout:\n%s", r.stdout.String())
		}
		if !strings.Contains(r.stderr.String(), "dryfire: abandoned the passthrough calls still running\n") ||
			!strings.HasSuffix(r.stderr.String(), "dryfire: interrupted; the cases not started are reported as skipped\n") {
			t.Errorf("stderr:\n%s", r.stderr.String())
		}
		for _, pid := range helpers {
			deadline := time.Now().Add(time.Second)
			for alive(pid) && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if alive(pid) {
				t.Errorf("the helper (pid %d) is still running", pid)
				killPid(pid)
			}
		}
	})

	t.Run("helper killed mid-call", func(t *testing.T) {
		if !linux {
			t.Skip("finds the helper in /proc")
		}
		t.Parallel()
		dir := ptDir(t)
		ptSuite(t, dir, 1, 30, "impl: ptools:nap", `  - name: later
    input: hi
    script:
      - tool_calls: [{name: echo, args: {after: kill}}]
      - tool_calls: [{name: nap, args: {n: again, s: 0}}]
      - text: ok
    expect:
      - no_errors: true
`)
		r := startBinary(t, dir, bin, nil, "run", "pt.dryfire.yaml", "-j", "1", "--json", "report.json")
		r.waitFor(t, "the call running", 10*time.Second, func() bool { return exists(filepath.Join(dir, "started-1")) })
		helpers := helperPIDs(t, r.cmd.Process.Pid)
		if len(helpers) != 1 {
			t.Fatalf("helpers of the run: %v, want one", helpers)
		}
		if err := killPid(helpers[0]); err != nil {
			t.Fatal(err)
		}
		if code := r.wait(t, 10*time.Second); code != 1 {
			t.Errorf("exit %d, want 1 (c01 fails its no_errors check)\nstdout:\n%s\nstderr:\n%s", code, r.stdout.String(), r.stderr.String())
		}
		rep := readReport(t, filepath.Join(dir, "report.json"))
		if len(rep.Cases) != 2 {
			t.Fatalf("%d cases", len(rep.Cases))
		}
		killed := rep.Cases[0]
		want := "dryfire: impl ptools:nap: the python helper was killed by signal 9 (killed) while running this call; it will be started again for later calls"
		if killed.Status != "failed" || len(killed.ToolCalls) != 1 || !killed.ToolCalls[0].IsError || killed.ToolCalls[0].Result != want {
			t.Errorf("the killed call: %s %+v\nwant the result %q", killed.Status, killed.ToolCalls, want)
		}
		later := rep.Cases[1]
		if later.Status != "passed" || len(later.ToolCalls) != 2 || later.ToolCalls[0].Result != `{"after":"kill"}` || later.ToolCalls[1].Result != "rested again" {
			t.Errorf("the later case: %s %s %+v", later.Status, later.Reason, later.ToolCalls)
		}
		if alive(helpers[0]) {
			t.Errorf("the killed helper (pid %d) is alive", helpers[0])
		}
	})

	t.Run("no python3 on PATH", func(t *testing.T) {
		t.Parallel()
		dir := ptDir(t)
		ptSuite(t, dir, 1, 0, "impl: ptools:nap", "")
		empty := t.TempDir()
		for _, args := range [][]string{{"validate", "pt.dryfire.yaml"}, {"run", "pt.dryfire.yaml"}} {
			r := startBinary(t, dir, bin, []string{"PATH=" + empty, "DRYFIRE_PYTHON="}, args...)
			code := r.wait(t, 10*time.Second)
			msg := "python3 not found on PATH: install Python 3, activate your virtualenv, or set --python / DRYFIRE_PYTHON"
			want := "pt.dryfire.yaml:5:13: impl \"ptools:nap\": " + msg + "\n" +
				"pt.dryfire.yaml:7:13: impl \"ptools:echo\": " + msg + "\n" +
				"2 errors, 0 warnings"
			if args[0] == "run" {
				want += ": nothing ran"
			}
			if code != 2 || r.stdout.String() != "" || r.stderr.String() != want+"\n" {
				t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s\nwant:\n%s", args[0], code, r.stdout.String(), r.stderr.String(), want)
			}
		}
		if exists(filepath.Join(dir, "started-1")) {
			t.Error("the impl ran")
		}
	})
}
