package runner_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

// The keys the tests use: no cassette may hold them.
const (
	testAnthropicKey = "sk-ant-test-0123456789abcdef"
	testOpenAIKey    = "sk-proj-test-fedcba9876543210"
	testGeminiKey    = "AIza-test-0a1b2c3d4e5f6789"
	testAzureKey     = "0123456789abcdef0123456789azure"
)

// brain answers the cases of realSuite.
var brain = fakeapi.Script{
	"Please refund order A-991.": {
		{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
		{Text: "Your refund is done.", InputTokens: 100, OutputTokens: 7},
	},
	"Refund order B-1.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"B-1"}`}, {Name: "find_coupon", Args: `{"tier":"standard"}`}}},
		{Text: "B-1 is standard tier: no refund."},
	},
	"Say hi.": {{Text: "hi"}},
}

func realSuite(provider, extra string) string {
	return `version: 1
agent:
  provider: ` + provider + `
  model: test-model
  system: You are a support agent.
  max_turns: 5
  params: {temperature: 0}
` + extra + `tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
  find_coupon:
    input_schema: {type: object, properties: {tier: {type: string}}}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
    - return: {tier: standard}
  issue_refund:
    - return: {ok: true}
  find_coupon:
    - return: null
cases:
  - name: refund for a gold customer
    input: Please refund order A-991.
    expect:
      - called: {tool: issue_refund, with: {order_id: A-991}, times: 1}
      - output: {contains: done}
  - name: "Refund: standard customer!"
    input: Refund order B-1.
    expect:
      - not_called: issue_refund
  - name: hi
    input: Say hi.
`
}

type fakeProvider struct {
	name  string
	start func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
	base  func(*fakeapi.Server) string
	key   string
}

var providers = []fakeProvider{
	{provider.Anthropic, fakeapi.NewAnthropic, func(s *fakeapi.Server) string { return s.URL }, testAnthropicKey},
	{provider.OpenAI, fakeapi.NewOpenAIChat, func(s *fakeapi.Server) string { return s.URL + "/v1" }, testOpenAIKey},
	{provider.OpenAIResponses, fakeapi.NewOpenAIResponses, func(s *fakeapi.Server) string { return s.URL + "/v1" }, testOpenAIKey},
	{provider.Gemini, fakeapi.NewGemini, func(s *fakeapi.Server) string { return s.URL }, testGeminiKey},
	{provider.AzureOpenAI, fakeapi.NewOpenAIChat, func(s *fakeapi.Server) string { return s.URL }, testAzureKey},
	{provider.AzureOpenAIResponses, fakeapi.NewOpenAIResponses, func(s *fakeapi.Server) string { return s.URL }, testAzureKey},
}

func keyEnv(p string) string {
	if provider.IsAzure(p) {
		return "AZURE_OPENAI_API_KEY"
	}
	if p == provider.Gemini {
		return "GEMINI_API_KEY"
	}
	if p == provider.Anthropic {
		return "ANTHROPIC_API_KEY"
	}
	return "OPENAI_API_KEY"
}

func baseEnv(p string) string {
	if provider.IsAzure(p) {
		return "AZURE_OPENAI_ENDPOINT"
	}
	if p == provider.Gemini {
		return "GOOGLE_GEMINI_BASE_URL"
	}
	if p == provider.Anthropic {
		return "ANTHROPIC_BASE_URL"
	}
	return "OPENAI_BASE_URL"
}

func writeSuite(t testing.TB, dir, name, text string) []*spec.Suite {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return load(t, path)
}

// withoutRecordedNotes is the report without the notes that say a
// cassette was written, which only a recording run has.
func withoutRecordedNotes(rep *report.Report) *report.Report {
	out := *rep
	out.Cases = slices.Clone(rep.Cases)
	for i := range out.Cases {
		out.Cases[i].Notes = slices.DeleteFunc(slices.Clone(out.Cases[i].Notes), func(n string) bool { return strings.HasPrefix(n, "recorded ") })
	}
	return &out
}

// scanSecrets fails the test when a file under dir holds a key or an auth
// header.
func scanSecrets(t testing.TB, dir string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		n++
		data, _ := os.ReadFile(path)
		low := bytes.ToLower(data)
		for _, s := range []string{testAnthropicKey, testOpenAIKey, testGeminiKey, testAzureKey, "authorization", "x-api-key", `"api-key"`, "x-goog-api-key", "bearer "} {
			if bytes.Contains(low, bytes.ToLower([]byte(s))) {
				t.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	return n
}

func TestRecordThenReplayEveryProvider(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			dir := t.TempDir()
			srv := p.start(brain, fakeapi.RequireKey(p.key))
			defer srv.Close()
			suites := writeSuite(t, dir, "support.dryfire.yaml", realSuite(p.name, ""))
			env := []string{keyEnv(p.name) + "=" + p.key, baseEnv(p.name) + "=" + p.base(srv)}
			recorded, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			if recorded.Summary.Passed != 3 {
				t.Fatalf("recording: %+v\n%s", recorded.Summary, stableJSON(t, recorded))
			}
			if n := srv.Requests(); n != 6 {
				t.Errorf("%d requests while recording, want 6", n)
			}
			if u := recorded.Summary.Usage; u.InputTokens == 0 || u.OutputTokens == 0 {
				t.Errorf("usage %+v, want totals", u)
			}
			wantNotes := []string{"recorded 3 model calls into " + filepath.Join(dir, "cassettes/support/refund-for-a-gold-customer.json")}
			if diff := cmp.Diff(wantNotes, recorded.Cases[0].Notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
			for i, name := range []string{"refund-for-a-gold-customer", "refund-standard-customer", "hi"} {
				want := filepath.Join(dir, "cassettes", "support", name+".json")
				if c := recorded.Cases[i]; c.Cassette != want || c.Live == 0 {
					t.Errorf("case %d: cassette %q (live %d), want %q", i, c.Cassette, c.Live, want)
				}
				if _, err := cassette.Load(want); err != nil {
					t.Error(err)
				}
			}
			conns := srv.Conns()

			// Replay: no key, nothing reaches the server, the same report.
			replayEnv := []string{baseEnv(p.name) + "=" + p.base(srv)}
			replayed, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: replayEnv})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(stableJSON(t, withoutRecordedNotes(recorded)), stableJSON(t, replayed)); diff != "" {
				t.Errorf("replay differs from the recording run (-recorded +replayed):\n%s", diff)
			}
			if got := srv.Conns(); got != conns {
				t.Errorf("replaying opened %d connections", got-conns)
			}
			// Once replays too; and with the server gone, so does none.
			srv.Close()
			for _, mode := range []cassette.Mode{cassette.Once, cassette.None, cassette.New} {
				again, err := runner.Run(context.Background(), suites, runner.Options{Record: mode, Env: replayEnv})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(stableJSON(t, replayed), stableJSON(t, again)); diff != "" {
					t.Errorf("%s with the server closed (-none +%s):\n%s", mode, mode, diff)
				}
			}

			// Re-recording identical traffic against another server gives
			// byte-identical files.
			before := readAll(t, dir)
			srv2 := p.start(brain)
			defer srv2.Close()
			env2 := []string{keyEnv(p.name) + "=" + p.key, baseEnv(p.name) + "=" + p.base(srv2)}
			rerec, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.All, Env: env2})
			if err != nil || rerec.Summary.Passed != 3 {
				t.Fatalf("re-recording: %v %+v", err, rerec.Summary)
			}
			if srv2.Requests() != 6 {
				t.Errorf("%d requests re-recording, want 6", srv2.Requests())
			}
			if diff := cmp.Diff(before, readAll(t, dir)); diff != "" {
				t.Errorf("re-recording changed the cassettes:\n%s", diff)
			}
			if n := scanSecrets(t, dir); n != 3 {
				t.Errorf("%d cassettes, want 3", n)
			}
		})
	}
}

func readAll(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(path)
			out[path] = string(data)
		}
		return err
	})
	return out
}

// recordOnce records realSuite for anthropic into dir and returns it.
func recordOnce(t *testing.T, dir string) []*spec.Suite {
	t.Helper()
	srv := fakeapi.NewAnthropic(brain)
	defer srv.Close()
	suites := writeSuite(t, dir, "support.dryfire.yaml", realSuite("anthropic", ""))
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: []string{"ANTHROPIC_API_KEY=" + testAnthropicKey, "ANTHROPIC_BASE_URL=" + srv.URL}})
	if err != nil || rep.Summary.Passed != 3 {
		t.Fatalf("recording: %v %+v", err, rep.Summary)
	}
	return suites
}

func TestReplayProblemsThroughTheRunner(t *testing.T) {
	dir := t.TempDir()
	recordOnce(t, dir)
	none := runner.Options{Record: cassette.None, Env: []string{}}

	// The system prompt changed: every case's first request differs.
	suites := writeSuite(t, dir, "support.dryfire.yaml", strings.Replace(realSuite("anthropic", ""), "You are a support agent.", "You are a terse support agent.", 1))
	rep, err := runner.Run(context.Background(), suites, none)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	file := filepath.Join(dir, "cassettes/support/refund-for-a-gold-customer.json")
	if c.Status != report.Failed || c.Reason != "model request 1 differs from the recording in "+file || c.Infra {
		t.Errorf("status %s, reason %q", c.Status, c.Reason)
	}
	wantReplay := "model request 1 differs from the recording in " + file + `:
  $.system: recorded "You are a support agent.", now "You are a terse support agent."
the agent sent something else than when the case was recorded; if that is intended, re-record the case:
  dryfire run ` + filepath.Join(dir, "support.dryfire.yaml") + ` --filter '^refund for a gold customer$' --record all`
	if diff := cmp.Diff(wantReplay, c.Replay); diff != "" {
		t.Errorf("replay (-want +got):\n%s", diff)
	}
	if len(c.Checks) != 0 {
		t.Errorf("checks %v", c.Checks)
	}
	var text bytes.Buffer
	printer := report.NewText(&text, report.TextOptions{})
	printer.Start(len(rep.Cases))
	for i := range rep.Cases {
		printer.CaseDone(i, &rep.Cases[i])
	}
	printer.Finish(rep)
	if !strings.Contains(text.String(), "      $.system: recorded \"You are a support agent.\"") || !strings.HasSuffix(text.String(), "\n0 passed, 3 failed\n") {
		t.Errorf("text output:\n%s", text.String())
	}

	// A recording with one interaction more than the case asks for.
	suites = writeSuite(t, dir, "support.dryfire.yaml", realSuite("anthropic", ""))
	cas, err := cassette.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	cas.Interactions = append(cas.Interactions, cas.Interactions[2])
	os.WriteFile(file, cas.Marshal(), 0o644)
	// And a corrupt one.
	hi := filepath.Join(dir, "cassettes/support/hi.json")
	os.WriteFile(hi, []byte(`{"dryfire_cassette": 1, "interactions": [{"request": `), 0o644)
	rep, err = runner.Run(context.Background(), suites, none)
	if err != nil {
		t.Fatal(err)
	}
	c = rep.Cases[0]
	if c.Status != report.Failed || c.Reason != "1 of 4 interactions recorded in "+file+" was not played" || len(c.Checks) != 2 || !strings.Contains(c.Replay, "  interaction 4: POST /v1/messages\n") {
		t.Errorf("unplayed: %s %q %q", c.Status, c.Reason, c.Replay)
	}
	if c := rep.Cases[1]; c.Status != report.Passed {
		t.Errorf("case 2: %s %s", c.Status, c.Reason)
	}
	c = rep.Cases[2]
	if c.Status != report.Errored || !c.Infra || c.Reason != "cassette "+hi+": not valid JSON: unexpected EOF; fix it, or delete it and record the case again" {
		t.Errorf("corrupt: %s %v %q", c.Status, c.Infra, c.Reason)
	}

	// Only the corrupt file: an infrastructure error alone (exit 3).
	os.WriteFile(file, cas.Marshal()[:0], 0o644)
	rep, _ = runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: []string{}, Filter: regexp.MustCompile("^hi$")})
	if s := rep.Summary; len(rep.Cases) != 1 || !rep.Cases[0].Infra || s.Error != 1 || s.Failed != 0 {
		t.Errorf("summary %+v, want one infrastructure error", s)
	}
	scanSecrets(t, dir)
}

func TestNewModeRecordsOnlyWhatIsMissing(t *testing.T) {
	dir := t.TempDir()
	recordOnce(t, dir)
	srv := fakeapi.NewAnthropic(brain)
	defer srv.Close()
	os.Remove(filepath.Join(dir, "cassettes/support/hi.json"))
	suites := load(t, filepath.Join(dir, "support.dryfire.yaml"))
	// Without a key, the case that must go live errs (lazily), the others
	// replay.
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.New, Env: []string{"ANTHROPIC_BASE_URL=" + srv.URL}})
	if err != nil {
		t.Fatal(err)
	}
	hi := filepath.Join(dir, "cassettes/support/hi.json")
	if c := rep.Cases[2]; c.Status != report.Errored || !c.Infra || c.Reason != "model request 1 is not in the recording "+hi+", so it must go to the live model, but ANTHROPIC_API_KEY is not set" {
		t.Errorf("hi: %s %q", c.Status, c.Reason)
	}
	if rep.Summary.Passed != 2 || srv.Requests() != 0 {
		t.Errorf("%+v, %d requests", rep.Summary, srv.Requests())
	}
	rep, err = runner.Run(context.Background(), suites, runner.Options{Record: cassette.New, Env: []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=" + testAnthropicKey}})
	if err != nil || rep.Summary.Passed != 3 || srv.Requests() != 1 {
		t.Fatalf("%v %+v, %d requests", err, rep.Summary, srv.Requests())
	}
	if diff := cmp.Diff([]string{"recorded 1 model call into " + hi}, rep.Cases[2].Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	if len(rep.Cases[0].Notes) != 0 {
		t.Errorf("a replayed case has notes %v", rep.Cases[0].Notes)
	}
	scanSecrets(t, dir)
}

func TestPassthroughCasesAreNeverRecorded(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.NewAnthropic(brain)
	defer srv.Close()
	text := strings.Replace(realSuite("anthropic", ""), "  issue_refund:\n    - return: {ok: true}", "  issue_refund:\n    - impl: shop.tools:refund", 1)
	path := filepath.Join(dir, "support.dryfire.yaml")
	os.WriteFile(path, []byte(text), 0o644)
	s, ds := spec.Parse(path, []byte(text), &spec.Options{ResolveImpl: func(string) error { return nil }})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	suites := []*spec.Suite{s}
	env := []string{"ANTHROPIC_BASE_URL=" + srv.URL, "ANTHROPIC_API_KEY=" + testAnthropicKey}
	for range 2 {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: env})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range rep.Cases {
			if c.Cassette != "" || len(c.Notes) == 0 || c.Notes[0] != runner.NoteNeverRecorded {
				t.Errorf("%s: cassette %q, notes %v", c.Name, c.Cassette, c.Notes)
			}
		}
	}
	if srv.Requests() != 12 {
		t.Errorf("%d requests, want every call live twice (12)", srv.Requests())
	}
	if _, err := os.Stat(filepath.Join(dir, "cassettes")); err == nil {
		t.Error("a passthrough suite got cassettes")
	}
	// none: an infrastructure error that says why, and no call.
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != report.Errored || !c.Infra || !strings.HasPrefix(c.Reason, "this case runs passthrough code (impl), so it is never recorded into a cassette and always calls the live model") {
		t.Errorf("%s %v %q", c.Status, c.Infra, c.Reason)
	}
	if srv.Requests() != 12 {
		t.Errorf("%d requests", srv.Requests())
	}
	for _, c := range rep.Cases {
		if c.Status != report.Errored || !c.Infra {
			t.Errorf("%s: %s infra=%v, want only infrastructure errors (exit 3)", c.Name, c.Status, c.Infra)
		}
	}
	// Without a key, once: stopped before the run.
	_, err = runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: env[:1]})
	want := "ANTHROPIC_API_KEY is not set, and these 3 cases need the live model:\n  " + path + ": refund for a gold customer (runs passthrough code, so it always calls the live model)"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err = %v\nwant %s…", err, want)
	}
}

func TestMissingKeyOnlyForCasesThatGoLive(t *testing.T) {
	dir := t.TempDir()
	suites := recordOnce(t, dir)
	os.Remove(filepath.Join(dir, "cassettes/support/hi.json"))
	for _, tc := range []struct {
		mode cassette.Mode
		want string // "" runs
	}{
		{cassette.Once, "ANTHROPIC_API_KEY is not set, and this case needs the live model:\n  " + suites[0].File + ": hi (no cassette yet: " + filepath.Join(dir, "cassettes/support/hi.json") + ")\nset it, or replay only with --record none"},
		{cassette.All, "ANTHROPIC_API_KEY is not set, and these 3 cases need the live model:\n  " + suites[0].File + ": refund for a gold customer (--record all)"},
		{cassette.New, ""},
		{cassette.None, ""},
	} {
		_, err := runner.Run(context.Background(), suites, runner.Options{Record: tc.mode, Env: []string{}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.mode, err)
		case tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)):
			t.Errorf("%s: err = %v\nwant %s", tc.mode, err, tc.want)
		}
	}
	// openai-compatible needs no key.
	srv := fakeapi.NewOpenAIChat(brain)
	defer srv.Close()
	s := writeSuite(t, dir, "local.dryfire.yaml", realSuite("openai-compatible", "  base_url: "+srv.URL+"/v1\n"))
	rep, err := runner.Run(context.Background(), s, runner.Options{Record: cassette.Once, Env: []string{}})
	if err != nil || rep.Summary.Passed != 3 {
		t.Fatalf("%v %+v", err, rep.Summary)
	}
	if n := scanSecrets(t, dir); n != 5 {
		t.Errorf("%d cassettes, want 5", n)
	}
}

// BenchmarkReplay1000 replays 1,000 recorded cases of three model turns
// each, in process (the end-to-end figure is BenchmarkE2EReplay in
// cmd/dryfire).
func BenchmarkReplay1000(b *testing.B) {
	dir := b.TempDir()
	var text strings.Builder
	text.WriteString(realSuite("anthropic", ""))
	text.WriteString("  # more\n")
	brainN := fakeapi.Script{}
	for k, v := range brain {
		brainN[k] = v
	}
	for i := range 997 {
		input := fmt.Sprintf("Please refund order A-991 for case %d.", i)
		fmt.Fprintf(&text, "  - name: case %d\n    input: %s\n    expect: [{called: issue_refund}]\n", i, input)
		brainN[input] = brain["Please refund order A-991."]
	}
	srv := fakeapi.NewAnthropic(brainN)
	suites := writeSuite(b, dir, "big.dryfire.yaml", text.String())
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.All, Env: []string{"ANTHROPIC_API_KEY=" + testAnthropicKey, "ANTHROPIC_BASE_URL=" + srv.URL}})
	srv.Close()
	if err != nil || rep.Summary.Passed != 1000 {
		b.Fatalf("recording: %v %+v", err, rep.Summary)
	}
	for b.Loop() {
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: []string{}})
		if err != nil || rep.Summary.Passed != 1000 {
			b.Fatalf("%v %+v", err, rep.Summary)
		}
	}
	b.ReportMetric(float64(1000*b.N)/b.Elapsed().Seconds(), "cases/s")
}
