package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// judgeBrain grades a judge's request: a conversation whose agent said
// its refund is done passes, any other fails; other conversations are
// supportBrain's.
type judgeBrain struct{}

func (judgeBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	if !strings.Contains(c.System, "judge of an AI agent's work") {
		return supportBrain.Next(c)
	}
	if strings.Contains(c.FirstUser(), "[agent] Your refund is done.") {
		return fakeapi.Turn{Text: "```json\n{\"pass\": true, \"score\": 0.9, \"reasoning\": \"The agent confirms the refund.\"}\n```"}, nil
	}
	return fakeapi.Turn{Text: `{"pass": false, "score": 0.1, "reasoning": "The agent never confirms a refund."}`}, nil
}

// A suite of the scripted agent graded by a judge on a real provider.
const judgeScriptSuite = `version: 1
agent: {provider: script}
mocks:
  issue_refund: [{return: {ok: true}}]
cases:
  - name: refund confirmed
    input: Please refund order A-991.
    script:
      - tool_calls: [{name: issue_refund, args: {order_id: A-991}}]
      - text: Your refund is done.
    expect:
      - judge: {rubric: The agent confirms the refund., provider: anthropic, model: judge-model}
  - name: refund not confirmed
    input: Please refund order A-991.
    script:
      - text: Please call us.
    expect:
      - judge: {rubric: The agent confirms the refund., provider: anthropic, model: judge-model, threshold: 0.5}
`

// Judge checks record their model calls into cassettes of their own
// against a local Anthropic API, then replay them offline with the server
// stopped, the same report twice; a changed rubric fails its check.
func TestE2EJudge(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	dir := t.TempDir()
	srv := fakeapi.NewAnthropic(judgeBrain{}, fakeapi.RequireKey(e2eAnthropicKey))
	defer srv.Close()
	agentSuite := strings.Replace(supportSuite, "PROVIDER", "anthropic", 1)
	agentSuite = strings.Replace(agentSuite, "      - output: {contains: done}\n", "      - output: {contains: done}\n      - judge: {rubric: The agent confirms the refund.}\n", 1)
	os.WriteFile(filepath.Join(dir, "support.dryfire.yaml"), []byte(agentSuite), 0o644)
	os.WriteFile(filepath.Join(dir, "graded.dryfire.yaml"), []byte(judgeScriptSuite), 0o644)
	base := "ANTHROPIC_BASE_URL=" + srv.URL

	// Without a key, the judges that need the live model are named.
	code, out, errOut := runEnv(t, dir, bin, cleanEnv(base), "run", "graded.dryfire.yaml")
	if code != 2 || !strings.Contains(errOut, "graded.dryfire.yaml: refund confirmed (no judge cassette yet: cassettes/graded/refund-confirmed.judge-1.json)") {
		t.Fatalf("without a key: exit %d\n%s%s", code, out, errOut)
	}

	code, out, errOut = runEnv(t, dir, bin, cleanEnv(base, "ANTHROPIC_API_KEY="+e2eAnthropicKey), "run", "support.dryfire.yaml", "graded.dryfire.yaml", "-v", "--json", "recorded.json")
	if code != 1 || errOut != "" {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"note: recorded the judge's model call into cassettes/support/refund-for-a-gold-customer.judge-1.json",
		"the judge (anthropic test-model) passed the answer (score 0.9): The agent confirms the refund.",
		"the judge (anthropic judge-model) passed the answer (score 0.9): The agent confirms the refund.",
		`expected the judge (anthropic judge-model) to score the answer at least 0.5 against the rubric "The agent confirms the refund."; it scored 0.1: The agent never confirms a refund.`,
		"3 passed, 1 failed",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("recording output lacks %q:\n%s", want, out)
		}
	}
	if n := srv.Requests(); n != 5+3 {
		t.Errorf("%d requests recording, want 8 (5 of the agent, 3 of judges)", n)
	}
	for _, f := range []string{"support/refund-for-a-gold-customer.judge-1.json", "graded/refund-confirmed.judge-1.json", "graded/refund-not-confirmed.judge-1.json"} {
		if _, err := os.Stat(filepath.Join(dir, "cassettes", f)); err != nil {
			t.Error(err)
		}
	}
	srv.Close()

	// Offline, twice: the same report as the recording's.
	want := stableReport(t, filepath.Join(dir, "recorded.json"))
	for i := range 2 {
		code, out, errOut = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "support.dryfire.yaml", "graded.dryfire.yaml", "--json", "replayed.json", "--html", "replayed.html")
		if code != 1 || errOut != "" || !strings.HasSuffix(out, "3 passed, 1 failed\n") {
			t.Fatalf("replay %d: exit %d\n%s%s", i+1, code, out, errOut)
		}
		if got := stableReport(t, filepath.Join(dir, "replayed.json")); got != want {
			t.Errorf("replay %d: the report differs from the recording's:\n%s\n---\n%s", i+1, got, want)
		}
	}
	data, _ := os.ReadFile(filepath.Join(dir, "replayed.json"))
	if !strings.Contains(string(data), `"reasoning": "The agent never confirms a refund."`) {
		t.Errorf("the JSON report has no judge reasoning:\n%s", data)
	}
	if page, _ := os.ReadFile(filepath.Join(dir, "replayed.html")); !strings.Contains(string(page), "The agent never confirms a refund.") {
		t.Errorf("the HTML report has no judge reasoning")
	}

	// Trials: each trial's judge has its own cassette.
	srv2 := fakeapi.NewAnthropic(judgeBrain{}, fakeapi.RequireKey(e2eAnthropicKey))
	defer srv2.Close()
	code, out, _ = runEnv(t, dir, bin, cleanEnv("ANTHROPIC_BASE_URL="+srv2.URL, "ANTHROPIC_API_KEY="+e2eAnthropicKey), "run", "graded.dryfire.yaml", "--filter", "^refund confirmed$", "--trials", "2")
	if code != 0 {
		t.Fatalf("trials: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes", "graded", "refund-confirmed.trial-2.judge-1.json")); err != nil || srv2.Requests() != 1 {
		t.Errorf("trial 2's judge: %v, %d requests (want 1: trial 1's is replayed)", err, srv2.Requests())
	}

	// The rubric changed: the judge's request strays from its recording.
	os.WriteFile(filepath.Join(dir, "graded.dryfire.yaml"), []byte(strings.Replace(judgeScriptSuite, "The agent confirms the refund., provider: anthropic, model: judge-model}", "The agent confirms the refund politely., provider: anthropic, model: judge-model}", 1)), 0o644)
	code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "graded.dryfire.yaml", "--filter", "^refund confirmed$")
	if code != 1 || !strings.Contains(out, "expected a verdict from the judge (anthropic judge-model); it gave none: its request differs from its recording in cassettes/graded/refund-confirmed.judge-1.json") ||
		!strings.Contains(out, "dryfire run graded.dryfire.yaml --filter '^refund confirmed$' --record all") {
		t.Errorf("a changed rubric: exit %d\n%s", code, out)
	}
}
