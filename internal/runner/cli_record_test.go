package runner_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

// codingCLIs is where scripts/ci.d/65-coding-agents.sh installs the
// pinned coding-agent CLIs; the tests that run them are asked for with
// DRYFIRE_CODING_CLIS=1 (they take tens of seconds and node).
func codingCLIs(t testing.TB) string {
	t.Helper()
	if os.Getenv("DRYFIRE_CODING_CLIS") == "" {
		t.Skip("DRYFIRE_CODING_CLIS is not set: the real coding-agent CLIs run in scripts/ci.d/65-coding-agents.sh")
	}
	bin, err := filepath.Abs("../../e2e/coding-agents/node_modules/.bin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(bin, "claude")); err != nil {
		t.Fatalf("the CLIs are not installed (npm ci in e2e/coding-agents): %v", err)
	}
	return bin
}

// fixBrain is the fake model of a coding CLI fixing calc.py: read, edit,
// run the tests, answer, with the CLI's own tools (told apart by the
// tools its request offers).
type fixBrain struct{}

func (fixBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	var calls []fakeapi.ToolCall
	switch {
	case slices.Contains(c.Tools, "Bash"):
		calls = []fakeapi.ToolCall{{Name: "Read", Args: `{"file_path":"calc.py"}`},
			{Name: "Edit", Args: `{"file_path":"calc.py","old_string":"a - b","new_string":"a + b"}`},
			{Name: "Bash", Args: `{"command":"python3 -m unittest -q","description":"Run the tests"}`}}
	case slices.Contains(c.Tools, "exec_command"):
		calls = []fakeapi.ToolCall{{Name: "exec_command", Args: `{"cmd":"cat calc.py"}`},
			{Name: "exec_command", Args: `{"cmd":"sed -i 's/a - b/a + b/' calc.py"}`},
			{Name: "exec_command", Args: `{"cmd":"python3 -m unittest -q"}`}}
	case slices.Contains(c.Tools, "run_shell_command"):
		calls = []fakeapi.ToolCall{{Name: "read_file", Args: `{"file_path":"calc.py"}`},
			{Name: "replace", Args: `{"file_path":"calc.py","old_string":"a - b","new_string":"a + b","instruction":"Fix add"}`},
			{Name: "run_shell_command", Args: `{"command":"python3 -m unittest -q","description":"Run the tests"}`}}
	default:
		return fakeapi.Turn{Text: "I have no tools."}, nil
	}
	n := 0
	for _, m := range c.Messages {
		if m.Role == "assistant" && len(m.ToolCalls) > 0 {
			n++
		}
	}
	if n < len(calls) {
		return fakeapi.Turn{ToolCalls: calls[n : n+1]}, nil
	}
	return fakeapi.Turn{Text: "Fixed add in calc.py; the tests pass."}, nil
}

// A coding CLI's session recorded against the test fakes in one project
// and workspace on one date replays from another project, another
// workspace, on another date: the CLI's preset (agent.cli) normalises the
// case's paths, the date, session ids and the machine's facts in both
// requests. The dates differ by construction: the recording runs at
// UTC+14, the replay at UTC-12. The replay sends nothing upstream, leaves
// the cassette as it was, and the agent does the same (its output, its
// tool calls as the model made them).
func TestCodingCLIRecordOnceReplayAnywhere(t *testing.T) {
	bin := codingCLIs(t)
	const key = "fake-key-for-the-coding-clis"
	srvs := map[string]*fakeapi.Server{
		"anthropic":        fakeapi.NewAnthropic(fixBrain{}, fakeapi.RequireKey(key)),
		"openai-responses": fakeapi.NewOpenAIResponses(fixBrain{}, fakeapi.RequireKey(key)),
		"gemini":           fakeapi.NewGemini(fixBrain{}, fakeapi.RequireKey(key)),
	}
	for _, s := range srvs {
		t.Cleanup(s.Close) // after the parallel subtests
	}
	recTZ, playTZ := "Pacific/Kiritimati", "Etc/GMT+12"
	for _, tc := range []struct{ name, cli, exe, args, provider, date string }{
		{"claude-code", "claude-code", "claude", "", "anthropic", "2006-01-02"},
		{"codex", "codex", "codex", "", "openai-responses", "2006-01-02"},
		// Codex over the Responses WebSocket: recorded live over one of
		// dryfire's own to the fake's WebSocket mode.
		{"codex over a WebSocket", "codex", "codex", ", -c, model_providers.dryfire.supports_websockets=true", "openai-responses", "2006-01-02"},
		{"gemini-cli", "gemini-cli", "gemini", "", "gemini", "Monday, January 2, 2006"}, // as each writes today's date
	} {
		day := func(tz string) string {
			loc, err := time.LoadLocation(tz)
			if err != nil {
				t.Skipf("no time zone data: %v", err)
			}
			return time.Now().In(loc).Format(tc.date)
		}
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			suite := `version: 1
agent:
  cli: ` + tc.cli + `
  command: [` + filepath.Join(bin, tc.exe) + tc.args + `]
  provider: ` + tc.provider + `
  network: sandboxed
  timeout_s: 120
workspace: repo
cases:
  - name: fix
    input: The test of calc.py fails. Fix it and run the tests.
    expect:
      - file: {path: calc.py, contains: "return a + b"}
`
			here := t.TempDir()
			there := filepath.Join(t.TempDir(), "another", "project")
			for _, dir := range []string{here, there} {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command("cp", "-r", "../../e2e/coding-agents/repo", filepath.Join(dir, "repo")).CombinedOutput(); err != nil {
					t.Fatalf("%v: %s", err, out)
				}
			}
			srv := srvs[tc.provider]
			env := commandEnv("ANTHROPIC_API_KEY="+key, "OPENAI_API_KEY="+key, "GEMINI_API_KEY="+key,
				"ANTHROPIC_BASE_URL="+srvs["anthropic"].URL, "OPENAI_BASE_URL="+srvs["openai-responses"].URL+"/v1",
				"GOOGLE_GEMINI_BASE_URL="+srvs["gemini"].URL, "TZ="+recTZ)
			rec, err := runner.Run(context.Background(), writeSuite(t, here, "fix.dryfire.yaml", suite), runner.Options{Record: cassette.Once, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			c := rec.Cases[0]
			if c.Status != report.Passed || c.Live < 4 {
				t.Fatalf("recording: %s %s (live %d)\n%s\n%s", c.Status, c.Reason, c.Live, c.Replay, c.Stderr)
			}
			tape, err := os.ReadFile(filepath.Join(here, "cassettes", "fix", "fix.json"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(tape, []byte(day(recTZ))) || bytes.Contains(tape, []byte(day(playTZ))) || !bytes.Contains(tape, []byte("dryfire-workspace-")) {
				t.Errorf("the recording does not hold its date %s (and not %s) and its workspace path", day(recTZ), day(playTZ))
			}
			if ws := strings.Contains(tc.args, "websockets"); ws != bytes.Contains(tape, []byte("responses_websockets=")) {
				t.Errorf("over a WebSocket %v, but the cassette's requests say otherwise (openai-beta)", ws)
			}
			file := filepath.Join(there, "cassettes", "fix", "fix.json")
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, tape, 0o644); err != nil {
				t.Fatal(err)
			}
			sent := srv.Requests()
			env = commandEnv("TZ=" + playTZ)
			rep, err := runner.Run(context.Background(), writeSuite(t, there, "fix.dryfire.yaml", suite), runner.Options{Record: cassette.None, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			p := rep.Cases[0]
			if p.Status != report.Passed || p.Live != 0 {
				t.Fatalf("replay from %s on %s: %s %s\n%s\n%s", there, day(playTZ), p.Status, p.Reason, p.Replay, p.Stderr)
			}
			if n := srv.Requests(); n != sent {
				t.Errorf("the replay sent %d requests upstream", n-sent)
			}
			if again, _ := os.ReadFile(file); !bytes.Equal(again, tape) {
				t.Error("the replay changed the cassette")
			}
			if p.Output != c.Output || p.Turns != c.Turns {
				t.Errorf("replayed output %q in %d turns, recorded %q in %d", p.Output, p.Turns, c.Output, c.Turns)
			}
			if got, want := callsOf(p.ToolCalls), callsOf(c.ToolCalls); !slices.Equal(got, want) || len(want) != 3 {
				t.Errorf("replayed calls %q, recorded %q", got, want)
			}
		})
	}
}

// callsOf are a transcript's calls as the model made them: tool and
// arguments.
func callsOf(calls []report.ToolCall) []string {
	var out []string
	for _, c := range calls {
		out = append(out, c.Tool+" "+string(c.Args))
	}
	return out
}
