package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/elastic/go-seccomp-bpf/arch"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// The escape catalogue (issue 36): testdata/escape/escape.py tries the
// known ways out of a container (core_pattern, uevent_helper, modprobe,
// binfmt_misc, cgroup release_agent, sysrq-trigger, keyrings, ptrace,
// user namespaces, raw sockets, mounts of /proc and /sys, device nodes,
// the host name, modules, bpf, perf, kexec, file handles, ...) and
// finds nothing open under sandboxed or isolated; its suite has a check
// per try, so the case's report lists each refusal.
func TestEscapeCatalogue(t *testing.T) {
	netnsOrSkip(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	for _, network := range []string{"sandboxed", "isolated"} {
		rep, err := runner.Run(context.Background(), load(t, "testdata/escape/escape.dryfire.yaml"), runner.Options{
			Record: cassette.None, Network: network, Env: commandEnv(fmt.Sprintf("TEST_OUTSIDE_PID=%d", os.Getpid()))})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Cases[0]
		if c.Status != report.Passed {
			t.Errorf("%s: %s %s\n%s\n%s", network, c.Status, c.Reason, c.Output, c.Stderr)
			continue
		}
		var checks []*regexp.Regexp
		for _, ch := range c.Checks {
			if re, ok := strings.CutPrefix(ch.Message, "output matches /"); ok {
				checks = append(checks, regexp.MustCompile(strings.TrimSuffix(re, "/")))
			}
		}
		tries := 0
		for _, line := range strings.Split(c.Output, "\n") {
			if strings.HasPrefix(line, "machine: ") || strings.HasPrefix(line, "open: ") {
				continue
			}
			tries++
			name, rest, _ := strings.Cut(line, ": ")
			if !strings.HasPrefix(rest, "refused (") {
				t.Errorf("%s: %s", network, line)
			}
			covered := false
			for _, re := range checks {
				covered = covered || re.MatchString(name+": refused (x)") && !re.MatchString("other: refused (x)")
			}
			if !covered {
				t.Errorf("%s: no check of escape.dryfire.yaml names the try %q", network, name)
			}
		}
		if tries < 55 {
			t.Errorf("%s: %d tries, want the whole catalogue\n%s", network, tries, c.Output)
		}
		if testing.Verbose() {
			t.Logf("%s:\n%s", network, c.Output)
		}
	}
}

// escape.py's system call numbers are Linux's, for both machines it
// knows (its table against go-seccomp-bpf's).
func TestEscapeCatalogueNumbers(t *testing.T) {
	src, err := os.ReadFile("testdata/escape/escape.py")
	if err != nil {
		t.Fatal(err)
	}
	table := regexp.MustCompile(`(?s)"(x86_64|aarch64)": \{(.*?)\}`)
	entry := regexp.MustCompile(`"(\w+)": (\d+)`)
	found := 0
	for _, m := range table.FindAllStringSubmatch(string(src), -1) {
		info, err := arch.GetInfo(map[string]string{"x86_64": "amd64", "aarch64": "arm64"}[m[1]])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entry.FindAllStringSubmatch(m[2], -1) {
			found++
			if want, ok := info.SyscallNames[e[1]]; !ok || fmt.Sprint(want) != e[2] {
				t.Errorf("%s: %s is %s in escape.py, %d in Linux's table", m[1], e[1], e[2], want)
			}
		}
	}
	if found < 55 {
		t.Errorf("only %d numbers found in escape.py", found)
	}
}
