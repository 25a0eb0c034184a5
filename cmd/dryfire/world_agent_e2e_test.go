package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// worldExampleDir holds the support-desk world and its drills, among them
// agent.dryfire.yaml: the existing-agent example's agent.ts in world
// drills.
var worldExampleDir = filepath.Join("..", "..", "examples", "world")

// worldBrain is what the fake model says in the world example's drills
// with the existing agent, for each conversation (by its first user
// message). It is a script: these are not a real model's answers.
var worldBrain = fakeapi.Script{
	"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "Order A-991 was delivered; refunding it in full.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120,"request_id":"refund-A-991"}`}}},
		{Text: "The refund service is busy; retrying the same request.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120,"request_id":"refund-A-991"}`}}},
		{Text: "Your refund R-1 of 120 for order A-991 is on its way."},
	},
	"Refund order A-992, it is late.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-992"}`}}},
		{Text: "Order A-992 has shipped but is not delivered: no refund yet.", ToolCalls: []fakeapi.ToolCall{{Name: "open_ticket", Args: `{"subject":"late order A-992","priority":"high"}`}}},
		{Text: "Order A-992 is on its way, so I cannot refund it yet; I opened ticket 1 to have it chased."},
	},
}

// The world example's drills with the existing agent, end to end:
// agent.ts (npm ci at its pinned versions) runs once per drill against its
// own support-desk world served over MCP, recorded once through dryfire
// against the fake Anthropic server (a scripted model), the server
// stopped, then replayed by `dryfire run --record none` offline: the same
// report byte for byte (durations aside), drill fields and verdicts
// included; the same cassettes as the committed ones, which replay to the
// same report; and `dryfire reproduce` of the report, with the suite's
// agent, finds the same evidence.
func TestE2EWorldAgentExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the Node agent; skipped with -short")
	}
	nodeReady(t, exampleDir)
	bin := buildBinary(t, t.TempDir())

	// Record in a copy laid out as the repository is (world/ beside
	// existing-agent/), or with -record-examples in the example itself.
	dir := worldExampleDir
	if !*recordExamples {
		root := t.TempDir()
		dir = filepath.Join(root, "world")
		agentDir := filepath.Join(root, "existing-agent")
		copyFiles(t, worldExampleDir, dir, "support.world.yaml", "behaviors.star", "agent.dryfire.yaml")
		copyFiles(t, exampleDir, agentDir, "agent.ts", "package.json")
		abs, err := filepath.Abs(filepath.Join(exampleDir, "node_modules"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(abs, filepath.Join(agentDir, "node_modules")); err != nil {
			t.Fatal(err)
		}
	}
	anthropic := fakeapi.NewAnthropic(worldBrain, fakeapi.RequireKey("fake-key-for-the-example"))
	recorded := dryfireRunPath(t, bin, dir, "agent.dryfire.yaml", exampleEnv(
		"ANTHROPIC_BASE_URL="+anthropic.URL, "ANTHROPIC_API_KEY=fake-key-for-the-example",
	), "--record", "all")
	if n := anthropic.Requests(); n != 7 {
		t.Errorf("recording: %d requests to the Anthropic fake, want 7", n)
	}
	anthropic.Close()
	if !strings.Contains(recorded, `"passed": 2,`) || !*recordExamples && strings.Count(recorded, `"recorded `) != 2 {
		t.Fatalf("recording:\n%s", recorded)
	}
	for _, want := range []string{
		`"verdict": "passed"`, `"seed": 42,`, `"build_hash": "sha256:`,
		`"id": "refunds-busy",`, `"scope": "scenario",`, `"id": "bob-lookup-slow",`, `"scope": "world",`,
		`"subject": "late order A-992"`, `"output": "Your refund R-1 of 120 for order A-991 is on its way."`,
	} {
		if !strings.Contains(recorded, want) {
			t.Errorf("the report has no %s:\n%s", want, recorded)
		}
	}

	// Replay with the upstream gone: no key, CI set, mode none.
	offline := exampleEnv("CI=true")
	replayed := dryfireRunPath(t, bin, dir, "agent.dryfire.yaml", offline, "--record", "none")
	if diff := cmp.Diff(withoutRecordedNotes(recorded), replayed); diff != "" {
		t.Errorf("the offline replay differs from the recording run (-recorded +replayed):\n%s", diff)
	}
	// Reproduction from the report's builds and seeds, with the suite's
	// own agent: the same evidence and verdicts.
	if err := os.WriteFile(filepath.Join(dir, "report.json"), []byte(replayed), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runBinary(t, dir, bin, "reproduce", "report.json")
	if code != 0 || !strings.HasSuffix(out, "2 identical, 0 different\n") {
		t.Errorf("reproduce: exit %d\n%s%s", code, out, errOut)
	}
	if *recordExamples {
		os.Remove(filepath.Join(dir, "report.json"))
		return
	}
	for _, f := range []string{"agent/refund-a-delivered-order-retrying-through-a-busy-service.json", "agent/a-shipped-order-gets-a-ticket-not-a-refund.json"} {
		got, err := os.ReadFile(filepath.Join(dir, "cassettes", f))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(worldExampleDir, "cassettes", f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("examples/world/cassettes/%s differs from the committed one; re-record with go test ./cmd/dryfire -run TestE2EWorldAgentExample -record-examples", f)
		}
		for _, bad := range []string{"fake-key-for-the-example", "dryfire-no-key", "x-api-key", "authorization"} {
			if bytes.Contains(bytes.ToLower(got), []byte(bad)) {
				t.Errorf("cassettes/%s holds %q", f, bad)
			}
		}
	}
	committed := dryfireRunPath(t, bin, worldExampleDir, "agent.dryfire.yaml", offline, "--record", "none")
	if diff := cmp.Diff(replayed, committed); diff != "" {
		t.Errorf("the committed cassettes replay differently (-fresh +committed):\n%s", diff)
	}
}

// copyFiles copies the named files of from into to, made if need be.
func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range names {
		data, err := os.ReadFile(filepath.Join(from, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
