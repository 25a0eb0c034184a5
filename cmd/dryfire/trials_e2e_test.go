package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// moodyBrain answers supportSuite's cases; the gold customer's last answer
// is drawn at random, so that its check on the output passes in some
// trials and fails in others.
var moodyBrain = fakeapi.Moody{
	Script: fakeapi.Script{
		"Please refund order A-991.": supportBrain["Please refund order A-991."][:2],
		"Refund order B-1.":          supportBrain["Refund order B-1."][:1],
	},
	Endings: map[string][]fakeapi.Turn{
		"Please refund order A-991.": {{Text: "Your refund is done."}, {Text: "I could not refund it."}},
		"Refund order B-1.":          {{Text: "B-1 is standard tier: no refund."}},
	},
}

// stableTrialReport is a JSON report without what varies between runs
// (durations) and between recording and replaying (the "recorded …"
// notes), at every depth.
func stableTrialReport(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep any
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	var clean func(v any)
	clean = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "duration_ms")
			if notes, ok := v["notes"].([]any); ok {
				kept := []any{}
				for _, n := range notes {
					if s, _ := n.(string); !strings.HasPrefix(s, "recorded ") {
						kept = append(kept, n)
					}
				}
				v["notes"] = kept
			}
			for _, x := range v {
				clean(x)
			}
		case []any:
			for _, x := range v {
				clean(x)
			}
		}
	}
	clean(rep)
	out, _ := json.MarshalIndent(rep, "", "  ")
	return string(out)
}

type trialReport struct {
	Cases []struct {
		Name   string `json:"name"`
		Status string `json:"status"`
		Trials *struct {
			N        int       `json:"n"`
			Passed   int       `json:"passed"`
			Flaky    bool      `json:"flaky"`
			PassAtK  []float64 `json:"pass_at_k"`
			PassHatK []float64 `json:"pass_hat_k"`
			Runs     []struct {
				Status   string `json:"status"`
				Cassette string `json:"cassette"`
			} `json:"runs"`
		} `json:"trials"`
	} `json:"cases"`
	Summary struct {
		Passed, Failed, Flaky int
	} `json:"summary"`
}

func readTrialReport(t testing.TB, path string) trialReport {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r trialReport
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A model whose answers vary: --trials 5 records five cassettes per case;
// replaying them offline gives the recording's pass counts, twice alike.
func TestE2ETrialsRecordReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	dir := t.TempDir()
	srv := fakeapi.NewAnthropic(moodyBrain, fakeapi.RequireKey(e2eAnthropicKey))
	defer srv.Close()
	suite := strings.Replace(supportSuite, "PROVIDER", "anthropic", 1)
	os.WriteFile(filepath.Join(dir, "support.dryfire.yaml"), []byte(suite), 0o644)
	base := "ANTHROPIC_BASE_URL=" + srv.URL

	code, out, errOut := runEnv(t, dir, bin, cleanEnv(base, "ANTHROPIC_API_KEY="+e2eAnthropicKey), "run", "support.dryfire.yaml", "--trials", "5", "--json", "recorded.json")
	if code != 0 && code != 1 || errOut != "" {
		t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
	}
	if n := srv.Requests(); n != 25 {
		t.Errorf("%d requests recording 5 trials, want 25 (3 and 2 per trial)", n)
	}
	rec := readTrialReport(t, filepath.Join(dir, "recorded.json"))
	for _, slug := range []string{"refund-for-a-gold-customer", "no-refund-for-a-standard-customer"} {
		for k := 1; k <= 5; k++ {
			name := slug + ".json"
			if k > 1 {
				name = fmt.Sprintf("%s.trial-%d.json", slug, k)
			}
			if _, err := os.Stat(filepath.Join(dir, "cassettes", "support", name)); err != nil {
				t.Errorf("trial %d: %v", k, err)
			}
		}
	}
	// A trial's cassette says how to record the case again: all its trials.
	if data, _ := os.ReadFile(filepath.Join(dir, "cassettes", "support", "refund-for-a-gold-customer.trial-2.json")); !strings.Contains(string(data), "--filter '^refund for a gold customer$' --record all --trials 5") {
		t.Errorf("trial 2's cassette note does not name --trials 5:\n%.600s", data)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "cassettes", "support", "*"))
	if len(files) != 10 {
		t.Errorf("%d cassettes, want 10: %v", len(files), files)
	}
	gold, standard := rec.Cases[0].Trials, rec.Cases[1].Trials
	if gold == nil || standard == nil || gold.N != 5 || len(gold.Runs) != 5 || standard.Passed != 5 || standard.Flaky {
		t.Fatalf("recorded trials: %s", stableTrialReport(t, filepath.Join(dir, "recorded.json")))
	}
	if want := "cassettes/support/refund-for-a-gold-customer.trial-3.json"; gold.Runs[2].Cassette != want {
		t.Errorf("trial 3's cassette %q, want %q", gold.Runs[2].Cassette, want)
	}
	if gold.Flaky != (gold.Passed > 0 && gold.Passed < 5) || rec.Cases[0].Status != map[bool]string{true: "passed", false: "failed"}[gold.Passed == 5] {
		t.Errorf("gold case: status %s, %d of 5 passed, flaky %v", rec.Cases[0].Status, gold.Passed, gold.Flaky)
	}
	line := regexp.MustCompile(`(?m)^(PASS |FAIL ) support.dryfire.yaml: refund for a gold customer \((\d)/5 trials passed(, flaky)?\)$`).FindStringSubmatch(out)
	if line == nil || line[2] != fmt.Sprint(gold.Passed) {
		t.Errorf("recording output does not give the gold case's trials (%d passed):\n%s", gold.Passed, out)
	}
	if !strings.Contains(out, "\ntrials: 2 case(s) × 5, 10 runs; ") {
		t.Errorf("no trials line:\n%s", out)
	}
	t.Logf("recorded: %d of 5 trials of the gold case passed; pass@k %v, pass^k %v", gold.Passed, gold.PassAtK, gold.PassHatK)

	// Replay offline, server gone, twice: the recording's results, alike.
	srv.Close()
	want := stableTrialReport(t, filepath.Join(dir, "recorded.json"))
	for _, name := range []string{"replay1.json", "replay2.json"} {
		code2, out2, errOut2 := runEnv(t, dir, bin, cleanEnv(base, "CI=true"), "run", "support.dryfire.yaml", "--trials", "5", "--json", name)
		if code2 != code || errOut2 != "" {
			t.Fatalf("replay: exit %d (recording %d)\n%s%s", code2, code, out2, errOut2)
		}
		if got := stableTrialReport(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s differs from the recording:\n%s\n---\n%s", name, got, want)
		}
	}
	// A threshold the recorded pass count meets passes the case; one
	// trial more fails it.
	if gold.Passed > 0 {
		at := fmt.Sprint(float64(gold.Passed) / 5)
		code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=true"), "run", "support.dryfire.yaml", "--trials", "5", "--pass-threshold", at)
		if code != 0 || !strings.HasSuffix(out, "2 passed, 0 failed\n") {
			t.Errorf("--pass-threshold %s with %d of 5 passed: exit %d, want 0\n%s", at, gold.Passed, code, out)
		}
	}
	if gold.Passed < 5 {
		at := fmt.Sprint(float64(gold.Passed+1) / 5)
		code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=true"), "run", "support.dryfire.yaml", "--trials", "5", "--pass-threshold", at)
		if code != 1 || !strings.HasSuffix(out, "1 passed, 1 failed\n") {
			t.Errorf("--pass-threshold %s with %d of 5 passed: exit %d, want 1\n%s", at, gold.Passed, code, out)
		}
	}
}
