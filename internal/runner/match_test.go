package runner_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

// volatileSuite runs testdata/volatile/agent.py, whose requests carry the
// time and a random id, with the match rules given (indented for the
// agent) and the case's own.
func volatileSuite(agentMatch string) string {
	return `version: 1
agent:
  provider: openai
  command: [python3, agent.py]
` + agentMatch + `cases:
  - name: what time
    input: What time is it?
    expect:
      - output: {contains: "noon"}
`
}

const volatileRules = `  match:
    normalize:
      - preset: timestamp
      - preset: epoch-s
      - preset: uuid
    ignore: [$.metadata.sent_at_ms]
`

var volatileBrain = fakeapi.Script{"What time is it?": {{Text: "It is noon somewhere."}}}

func volatileDir(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	data, err := os.ReadFile("testdata/volatile/agent.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent.py"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// An agent whose requests hold the time and a random id: recorded once
// under match rules, it replays every time; the cassette lists the rules.
func TestMatchRulesReplayVolatileAgent(t *testing.T) {
	dir := volatileDir(t)
	srv := fakeapi.NewOpenAIChat(volatileBrain, fakeapi.RequireKey(testOpenAIKey))
	defer srv.Close()
	suites := writeSuite(t, dir, "clock.dryfire.yaml", volatileSuite(volatileRules))
	rec, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once,
		Env: commandEnv("OPENAI_API_KEY="+testOpenAIKey, "OPENAI_BASE_URL="+srv.URL+"/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if c := rec.Cases[0]; c.Status != report.Passed || c.Live != 1 {
		t.Fatalf("recording: %s %s (live %d)\n%s", c.Status, c.Reason, c.Live, c.Stderr)
	}
	tape, err := cassette.Load(filepath.Join(dir, "cassettes", "clock", "what-time.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := []reqmatch.Rule{{Preset: "timestamp"}, {Preset: "epoch-s"}, {Preset: "uuid"}, {Ignore: "$.metadata.sent_at_ms"}}
	if diff := cmp.Diff(want, tape.Match); diff != "" {
		t.Errorf("the cassette's match rules (-want +got):\n%s", diff)
	}
	requests := srv.Requests()
	passed := 0
	for range 20 {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
		if err != nil {
			t.Fatal(err)
		}
		if c := rep.Cases[0]; c.Status == report.Passed {
			passed++
		} else {
			t.Errorf("replay: %s %s\n%s", c.Status, c.Reason, c.Replay)
		}
	}
	if passed != 20 {
		t.Errorf("%d of 20 replays passed", passed)
	}
	if n := srv.Requests(); n != requests {
		t.Errorf("replays sent %d requests upstream", n-requests)
	}
}

// What a replay that does not match says, with fixed volatile values so
// that the message is the same every time: without rules it names the
// presets that would match; with rules, a real change shows the
// normalised values and the rules that applied.
func TestMatchRulesMismatchMessages(t *testing.T) {
	dir := volatileDir(t)
	srv := fakeapi.NewOpenAIChat(volatileBrain)
	defer srv.Close()
	recordEnv := commandEnv("OPENAI_BASE_URL="+srv.URL+"/v1", "FAKE_NOW=1796111701.339", "FAKE_UUID=3f2504e0-4f89-41d3-9a0c-0305e82c3301")
	replayEnv := commandEnv("FAKE_NOW=1796198102.695", "FAKE_UUID=6ba7b810-9dad-11d1-80b4-00c04fd430c8")
	var out strings.Builder
	for _, tt := range []struct {
		name, rules string
		env         []string
	}{
		{"without rules", "", nil},
		{"with rules, another persona", volatileRules, []string{"PERSONA=You are an oracle."}},
	} {
		suites := writeSuite(t, dir, "clock.dryfire.yaml", volatileSuite(tt.rules))
		os.RemoveAll(filepath.Join(dir, "cassettes"))
		rec, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: recordEnv})
		if err != nil {
			t.Fatal(err)
		}
		if c := rec.Cases[0]; c.Status != report.Passed {
			t.Fatalf("%s: recording: %s %s\n%s", tt.name, c.Status, c.Reason, c.Stderr)
		}
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: append(replayEnv, tt.env...)})
		if err != nil {
			t.Fatal(err)
		}
		c := rep.Cases[0]
		if c.Status != report.Failed {
			t.Errorf("%s: %s, want failed", tt.name, c.Status)
		}
		out.WriteString("# " + tt.name + "\n" + strings.ReplaceAll(c.Replay, dir, "$DIR") + "\n\n")
	}
	golden(t, "testdata/volatile/mismatch.golden", out.String())
}

var updateGolden = flag.Bool("update", false, "rewrite the golden files of testdata from the actual output")

// golden compares got with a golden file (-update rewrites it).
func golden(t *testing.T, file, got string) {
	t.Helper()
	if *updateGolden {
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -run %s -update)", err, t.Name())
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", file, diff)
	}
}
