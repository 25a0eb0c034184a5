//go:build linux

package runner_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

// longSession is the fake model of a long coding session: a shell call
// each turn until the last, then the answer.
type longSession struct{ turns int }

func (s longSession) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	if n := c.Turns(); n < s.turns-1 {
		return fakeapi.Turn{ToolCalls: []fakeapi.ToolCall{{Name: "Bash", Args: fmt.Sprintf(`{"command":"echo turn %d","description":"Say the turn"}`, n+1)}}}, nil
	}
	return fakeapi.Turn{Text: "Done."}, nil
}

// BenchmarkCodingCLIReplay replays a 30-turn Claude Code session
// (29 Bash calls and the answer), recorded once against the fake
// Anthropic API in one project, from another project (the claude-code
// preset), sandboxed, as dryfire run --record none would: one op is the
// whole case, Claude Code's start included. dryfire's share is the CPU
// this process (the runner, the case's model endpoint and MCP server)
// used during the op over the op's wall time: an upper bound of the time
// the CLI waited on dryfire, since some of that CPU (the cassette read,
// the workspace's diff, the report) overlaps nothing the CLI does. Needs the CLIs (DRYFIRE_CODING_CLIS=1, as
// 65-coding-agents.sh installs them); issue 38 point 10,
// docs/performance.md.
//
//	DRYFIRE_CODING_CLIS=1 go test ./internal/runner -run '^$' -bench CodingCLIReplay -benchtime 5x
func BenchmarkCodingCLIReplay(b *testing.B) {
	bin := codingCLIs(b)
	const turns, key = 30, "fake-key-for-the-coding-clis"
	fake := fakeapi.NewAnthropic(longSession{turns}, fakeapi.RequireKey(key))
	defer fake.Close()
	suite := `version: 1
agent:
  cli: claude-code
  command: [` + filepath.Join(bin, "claude") + `]
  provider: anthropic
  network: sandboxed
  max_turns: 40
  timeout_s: 300
workspace: repo
cases:
  - name: long
    input: Say each turn with the shell, 29 times, then say Done.
`
	here, there := b.TempDir(), filepath.Join(b.TempDir(), "another", "project")
	for _, dir := range []string{here, there} {
		os.MkdirAll(dir, 0o755)
		if out, err := exec.Command("cp", "-r", "../../e2e/coding-agents/repo", filepath.Join(dir, "repo")).CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	env := commandEnv("ANTHROPIC_API_KEY="+key, "ANTHROPIC_BASE_URL="+fake.URL)
	rec, err := runner.Run(context.Background(), writeSuite(b, here, "long.dryfire.yaml", suite), runner.Options{Record: cassette.Once, Env: env})
	if err != nil {
		b.Fatal(err)
	}
	if c := rec.Cases[0]; c.Status != report.Passed || c.Turns < turns {
		b.Fatalf("recording: %s %s in %d turns\n%s", c.Status, c.Reason, c.Turns, c.Stderr)
	}
	tape, err := os.ReadFile(filepath.Join(here, "cassettes", "long", "long.json"))
	if err != nil {
		b.Fatal(err)
	}
	os.MkdirAll(filepath.Join(there, "cassettes", "long"), 0o755)
	os.WriteFile(filepath.Join(there, "cassettes", "long", "long.json"), tape, 0o644)
	suites := writeSuite(b, there, "long.dryfire.yaml", suite)
	cpu := func(who int) time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(who, &ru) //nolint:errcheck // RUSAGE_SELF does not fail
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	var self time.Duration
	requests := 0
	b.ResetTimer()
	for b.Loop() {
		s0 := cpu(syscall.RUSAGE_SELF)
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
		if err != nil {
			b.Fatal(err)
		}
		self += cpu(syscall.RUSAGE_SELF) - s0
		c := rep.Cases[0]
		if c.Status != report.Passed || c.Live != 0 {
			b.Fatalf("replay: %s %s (live %d)\n%s", c.Status, c.Reason, c.Live, c.Stderr)
		}
		requests += c.Turns
	}
	wall := b.Elapsed()
	b.ReportMetric(float64(self.Milliseconds())/float64(b.N), "dryfire-cpu-ms/case")
	b.ReportMetric(100*float64(self)/float64(wall), "dryfire-cpu-%-of-wall")
	b.ReportMetric(float64(requests)/float64(b.N), "turns/case")
	b.ReportMetric(float64(len(tape))/1024, "cassette-KB")
}
