package main_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// The keys the end-to-end tests use: a scan of every cassette they write
// finds none of them.
const (
	e2eAnthropicKey = "sk-ant-e2e-key-0123456789"
	e2eOpenAIKey    = "sk-proj-e2e-key-9876543210"
)

// cleanEnv is the environment without anything that would change how
// dryfire records (keys, base URLs, CI), plus extra.
func cleanEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "OPENAI_") || k == "GOGC" {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}

// runEnv runs bin in dir with exactly env.
func runEnv(tb testing.TB, dir, bin string, env []string, args ...string) (int, string, string) {
	tb.Helper()
	r := startBinaryEnv(tb, dir, bin, env, args...)
	code := r.wait(tb)
	return code, r.r.stdout.String(), r.r.stderr.String()
}

// proc is a dryfire process.
type proc struct {
	r *running
}

func startBinaryEnv(tb testing.TB, dir, bin string, env []string, args ...string) *proc {
	tb.Helper()
	r := &running{done: make(chan struct{})}
	r.cmd = exec.Command(bin, args...)
	r.cmd.Dir = dir
	r.cmd.Env = env
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.start = time.Now()
	if err := r.cmd.Start(); err != nil {
		tb.Fatal(err)
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
	tb.Cleanup(func() {
		select {
		case <-r.done:
		default:
			r.cmd.Process.Kill()
			<-r.done
		}
	})
	return &proc{r: r}
}

func (p *proc) wait(tb testing.TB) int {
	tb.Helper()
	select {
	case <-p.r.done:
		return p.r.code
	case <-time.After(2 * time.Minute):
		tb.Fatalf("still running after 2 minutes\nstdout:\n%s\nstderr:\n%s", p.r.stdout.String(), p.r.stderr.String())
		return 0
	}
}

func (p *proc) stdoutString() string { return p.r.stdout.String() }

// scanCassettes checks every cassette under dir: it parses, and holds no
// key or auth header. It returns how many there are.
func scanCassettes(tb testing.TB, dir string, keys ...string) int {
	tb.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".json" || !strings.Contains(path, string(filepath.Separator)+"cassettes"+string(filepath.Separator)) {
			return err
		}
		n++
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if _, err := cassette.Unmarshal(data); err != nil {
			tb.Errorf("%s does not parse: %v", path, err)
		}
		low := bytes.ToLower(data)
		for _, s := range append(keys, e2eAnthropicKey, e2eOpenAIKey, "authorization", "x-api-key", `"api-key"`, "bearer ") {
			if bytes.Contains(low, bytes.ToLower([]byte(s))) {
				tb.Errorf("%s holds %q", path, s)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// supportBrain answers the cases of supportSuite.
var supportBrain = fakeapi.Script{
	"Please refund order A-991.": {
		{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
		{Text: "Your refund is done."},
	},
	"Refund order B-1.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"B-1"}`}}},
		{Text: "B-1 is standard tier: no refund."},
	},
}

const supportSuite = `version: 1
agent:
  provider: PROVIDER
  model: test-model
  system: You are a support agent.
  max_turns: 5
tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
    - return: {tier: standard}
  issue_refund:
    - return: {ok: true}
cases:
  - name: refund for a gold customer
    input: Please refund order A-991.
    expect:
      - called: {tool: issue_refund, times: 1}
      - output: {contains: done}
  - name: no refund for a standard customer
    input: Refund order B-1.
    expect:
      - not_called: issue_refund
`

func TestE2ECassettes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	bin := buildBinary(t, t.TempDir())
	for _, p := range []struct {
		name, keyEnv, key, baseEnv, suffix string
		start                              func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
		system                             string // where the system prompt is in a request
	}{
		{"anthropic", "ANTHROPIC_API_KEY", e2eAnthropicKey, "ANTHROPIC_BASE_URL", "", fakeapi.NewAnthropic, "$.system"},
		{"openai", "OPENAI_API_KEY", e2eOpenAIKey, "OPENAI_BASE_URL", "/v1", fakeapi.NewOpenAIChat, "$.messages[0].content"},
		{"openai-responses", "OPENAI_API_KEY", e2eOpenAIKey, "OPENAI_BASE_URL", "/v1", fakeapi.NewOpenAIResponses, "$.instructions"},
	} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			srv := p.start(supportBrain, fakeapi.RequireKey(p.key))
			defer srv.Close()
			suite := strings.Replace(supportSuite, "PROVIDER", p.name, 1)
			os.WriteFile(filepath.Join(dir, "support.dryfire.yaml"), []byte(suite), 0o644)
			base := p.baseEnv + "=" + srv.URL + p.suffix

			// No key, no cassette: exit 2 before anything runs.
			code, out, errOut := runEnv(t, dir, bin, cleanEnv(base), "run", "support.dryfire.yaml")
			if code != 2 || !strings.HasPrefix(errOut, "dryfire: "+p.keyEnv+" is not set, and these 2 cases need the live model:\n") || srv.Requests() != 0 {
				t.Fatalf("without a key: exit %d\n%s%s", code, out, errOut)
			}
			// CI set, no cassette: exit 3, the file and the command named.
			code, out, _ = runEnv(t, dir, bin, cleanEnv(base, "CI=true"), "run", "support.dryfire.yaml")
			if code != 3 || !strings.Contains(out, "error: no cassette for this case: cassettes/support/refund-for-a-gold-customer.json does not exist") || !strings.HasSuffix(out, "0 passed, 0 failed, 2 errors\n") {
				t.Fatalf("CI without cassettes: exit %d\n%s", code, out)
			}

			// Record (once, the default outside CI).
			code, out, errOut = runEnv(t, dir, bin, cleanEnv(base, p.keyEnv+"="+p.key), "run", "support.dryfire.yaml", "--json", "recorded.json")
			if code != 0 || errOut != "" {
				t.Fatalf("recording: exit %d\n%s%s", code, out, errOut)
			}
			wantOut := `PASS  support.dryfire.yaml: refund for a gold customer
      note: recorded 3 model calls into cassettes/support/refund-for-a-gold-customer.json
PASS  support.dryfire.yaml: no refund for a standard customer
      note: recorded 2 model calls into cassettes/support/no-refund-for-a-standard-customer.json
usage: `
			if !strings.HasPrefix(out, wantOut) || !strings.HasSuffix(out, " output tokens\n2 passed, 0 failed\n") || strings.Contains(out, "nothing was spent") {
				t.Errorf("recording output:\n%s\nwant it to start\n%s", out, wantOut)
			}
			if n := srv.Requests(); n != 5 {
				t.Errorf("%d requests recording, want 5", n)
			}
			first := readCassettes(t, dir)

			// Replay with CI set (none), no key, the server still up: the
			// same results and not one connection.
			conns := srv.Conns()
			code, out, errOut = runEnv(t, dir, bin, cleanEnv(base, "CI=1"), "run", "support.dryfire.yaml", "--json", "replayed.json")
			if code != 0 || errOut != "" {
				t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
			}
			if !strings.HasSuffix(out, " output tokens (as recorded: every model call was replayed, nothing was spent)\n2 passed, 0 failed\n") {
				t.Errorf("replay output:\n%s", out)
			}
			if got := srv.Conns(); got != conns {
				t.Errorf("replaying with --record none opened %d connections", got-conns)
			}
			if a, b := stableReport(t, filepath.Join(dir, "recorded.json")), stableReport(t, filepath.Join(dir, "replayed.json")); a != b {
				t.Errorf("reports differ:\n%s\n---\n%s", a, b)
			}

			// With the server stopped, once replays too.
			srv.Close()
			code, out, _ = runEnv(t, dir, bin, cleanEnv(base), "run", "support.dryfire.yaml")
			if code != 0 {
				t.Fatalf("replay, server stopped: exit %d\n%s", code, out)
			}

			// The agent's system prompt changed: exit 1 with the difference
			// and the command that re-records.
			os.WriteFile(filepath.Join(dir, "support.dryfire.yaml"), []byte(strings.Replace(suite, "You are a support agent.", "You are a brief support agent.", 1)), 0o644)
			code, out, _ = runEnv(t, dir, bin, cleanEnv(base), "run", "support.dryfire.yaml", "--record", "none", "--filter", "gold")
			wantFail := `FAIL  support.dryfire.yaml: refund for a gold customer
      model request 1 differs from the recording in cassettes/support/refund-for-a-gold-customer.json:
        ` + p.system + `: recorded "You are a support agent.", now "You are a brief support agent."
      the agent sent something else than when the case was recorded; if that is intended, re-record the case:
        dryfire run support.dryfire.yaml --filter '^refund for a gold customer$' --record all
      output after 0 turn(s): (none)
0 passed, 1 failed
`
			if code != 1 || out != wantFail {
				t.Errorf("mismatch: exit %d\n%s\nwant\n%s", code, out, wantFail)
			}
			os.WriteFile(filepath.Join(dir, "support.dryfire.yaml"), []byte(suite), 0o644)

			// A recording with one call more than the agent makes now:
			// exit 1, the unplayed interaction named.
			gold := filepath.Join(dir, "cassettes/support/refund-for-a-gold-customer.json")
			c, err := cassette.Unmarshal([]byte(first[gold]))
			if err != nil {
				t.Fatal(err)
			}
			c.Interactions = append(c.Interactions, c.Interactions[len(c.Interactions)-1])
			os.WriteFile(gold, c.Marshal(), 0o644)
			code, out, _ = runEnv(t, dir, bin, cleanEnv(base), "run", "support.dryfire.yaml", "--record", "none", "--json", "unplayed.json")
			wantUnplayed := `FAIL  support.dryfire.yaml: refund for a gold customer
      1 of 4 interactions recorded in cassettes/support/refund-for-a-gold-customer.json was not played:
        interaction 4: POST ` + map[bool]string{true: "/v1/messages", false: "/v1/" + map[bool]string{true: "chat/completions", false: "responses"}[p.name == "openai"]}[p.name == "anthropic"] + `
      the agent made fewer model calls than when the case was recorded; if that is intended, re-record the case:
        dryfire run support.dryfire.yaml --filter '^refund for a gold customer$' --record all
      output after 3 turn(s): "Your refund is done."
PASS  support.dryfire.yaml: no refund for a standard customer
`
			if code != 1 || !strings.HasPrefix(out, wantUnplayed) {
				t.Errorf("unplayed: exit %d\n%s\nwant it to start\n%s", code, out, wantUnplayed)
			}
			if rep := stableReport(t, filepath.Join(dir, "unplayed.json")); !strings.Contains(rep, `"reason": "1 of 4 interactions recorded in cassettes/support/refund-for-a-gold-customer.json was not played"`) {
				t.Errorf("unplayed report:\n%s", rep)
			}

			// A corrupt cassette: exit 3, naming the file.
			os.WriteFile(gold, []byte(first[gold][:len(first[gold])/2]), 0o644)
			code, out, _ = runEnv(t, dir, bin, cleanEnv(base), "run", "support.dryfire.yaml", "--record", "none")
			if code != 3 || !strings.Contains(out, "error: cassette cassettes/support/refund-for-a-gold-customer.json: not valid JSON: unexpected EOF; fix it, or delete it and record the case again") {
				t.Errorf("corrupt: exit %d\n%s", code, out)
			}

			// Re-recording against another server gives the same bytes.
			srv2 := p.start(supportBrain)
			defer srv2.Close()
			code, out, _ = runEnv(t, dir, bin, cleanEnv(p.baseEnv+"="+srv2.URL+p.suffix, p.keyEnv+"="+p.key), "run", "support.dryfire.yaml", "--record", "all")
			if code != 0 {
				t.Fatalf("re-recording: exit %d\n%s", code, out)
			}
			again := readCassettes(t, dir)
			for f, data := range first {
				if again[f] != data {
					t.Errorf("%s changed on re-recording:\n%s\n---\n%s", f, data, again[f])
				}
			}
			if n := scanCassettes(t, dir); n != 2 {
				t.Errorf("%d cassettes, want 2", n)
			}
		})
	}
}

func readCassettes(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	files, _ := filepath.Glob(filepath.Join(dir, "cassettes", "*", "*.json"))
	for _, f := range files {
		data, _ := os.ReadFile(f)
		out[f] = string(data)
	}
	if len(out) == 0 {
		t.Fatal("no cassettes")
	}
	return out
}

// stableReport is a JSON report without its durations and without the
// notes that say a cassette was written.
func stableReport(t testing.TB, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(data, &rep); err != nil {
		t.Fatal(err)
	}
	for _, c := range rep["cases"].([]any) {
		c := c.(map[string]any)
		delete(c, "duration_ms")
		var notes []any
		for _, n := range c["notes"].([]any) {
			if !strings.HasPrefix(n.(string), "recorded ") {
				notes = append(notes, n)
			}
		}
		c["notes"] = notes
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	return string(out)
}

// slowBrain answers like b, after a pause: recording takes long enough to
// be interrupted.
type slowBrain struct {
	b     fakeapi.Brain
	pause time.Duration
	calls atomic.Int64
}

func (s *slowBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	s.calls.Add(1)
	time.Sleep(s.pause)
	return s.b.Next(c)
}

// TestE2EKilledWhileRecording kills a recording dryfire (SIGKILL, at
// several moments) and checks that every cassette present parses; and
// interrupts one (SIGINT): the cases it stopped have no cassette.
func TestE2EKilledWhileRecording(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	const cases = 60
	brain := writeRealSuite(t, dir, cases, "anthropic")
	slow := &slowBrain{b: brain, pause: 5 * time.Millisecond}
	srv := fakeapi.NewAnthropic(slow)
	defer srv.Close()
	env := cleanEnv("ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY="+e2eAnthropicKey)
	for i, after := range []time.Duration{150, 300, 450, 600} {
		os.RemoveAll(filepath.Join(dir, "cassettes"))
		p := startBinaryEnv(t, dir, bin, env, "run", "big.dryfire.yaml", "--record", "all", "-j", "4")
		start := slow.calls.Load()
		deadline := time.Now().Add(time.Minute)
		for slow.calls.Load()-start < int64(after)/5 {
			select {
			case <-p.r.done:
				t.Fatalf("exited (code %d) before the kill:\n%s%s", p.r.code, p.r.stdout.String(), p.r.stderr.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatal("no model calls")
			}
			time.Sleep(2 * time.Millisecond)
		}
		if i == 3 {
			p.r.cmd.Process.Signal(syscall.SIGINT)
			if code := p.wait(t); code != 130 {
				t.Errorf("SIGINT: exit %d\n%s", code, p.stdoutString())
			}
		} else {
			p.r.cmd.Process.Signal(syscall.SIGKILL)
			p.wait(t)
		}
		n := scanCassettes(t, dir)
		t.Logf("killed after %d model calls: %d complete cassettes", int64(after)/5, n)
		if n == 0 || n >= cases {
			t.Errorf("%d cassettes after the kill: the kill came too early or too late", n)
		}
		// Every cassette present is a whole case's recording: replaying
		// it passes.
		if i == 3 {
			code, out, _ := runEnv(t, dir, bin, cleanEnv(), "run", "big.dryfire.yaml", "--record", "none")
			if code != 3 || strings.Count(out, "PASS ") != n || strings.Count(out, "no cassette for this case") != cases-n {
				t.Errorf("replay after SIGINT: exit %d, %d passed, want %d:\n%s", code, strings.Count(out, "PASS "), n, out)
			}
		}
	}
}

// writeRealSuite writes big.dryfire.yaml: n cases of three model turns
// each (two with tool calls, then the answer) for provider, and returns
// the brain that answers them.
func writeRealSuite(tb testing.TB, dir string, n int, provider string) fakeapi.Script {
	tb.Helper()
	var b strings.Builder
	b.WriteString(`version: 1
name: big
agent:
  provider: ` + provider + `
  model: test-model
  system: You are a support agent.
  max_turns: 6
tools:
  lookup_order:
    description: Look up an order by its id.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  issue_refund:
    description: Refund an order.
    input_schema: {type: object, properties: {order_id: {type: string}, amount: {type: number}}, required: [order_id]}
  find_coupon:
    description: Find a coupon.
    input_schema: {type: object, properties: {customer: {type: string}, tier: {type: string}}}
mocks:
  lookup_order:
    - when: {order_id: A-1}
      return: {order_id: A-1, tier: gold, total: 120.5}
    - when: {order_id: A-2}
      return: {order_id: A-2, tier: silver, total: 80}
    - return: {tier: standard}
  issue_refund:
    - when: {amount: 0}
      error: nothing to refund
    - return: {refund_id: R-0, status: queued}
  find_coupon:
    - when: {tier: gold}
      return: {code: GOLD10, percent: 10}
    - return: null
cases:
`)
	brain := fakeapi.Script{}
	for i := range n {
		order := fmt.Sprintf("A-%d", i%4+1)
		tier := []string{"gold", "silver", "bronze", "none"}[i%4]
		input := fmt.Sprintf("Please refund order %s and find coupon c-%d.", order, i)
		fmt.Fprintf(&b, `  - name: case %04d refunds order %s
    input: %s
    expect:
      - called: {tool: lookup_order, with: {order_id: %s}, times: 1}
      - called: {tool: issue_refund, min: 1}
      - order: [lookup_order, issue_refund, find_coupon]
      - output: {contains: %s, regex: 'Refund for [A-Z]-\d+'}
`, i, order, input, order, order)
		brain[input] = []fakeapi.Turn{
			{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: fmt.Sprintf(`{"order_id":%q}`, order)}}},
			{ToolCalls: []fakeapi.ToolCall{
				{Name: "issue_refund", Args: fmt.Sprintf(`{"order_id":%q,"amount":%d}`, order, 10+i%50)},
				{Name: "find_coupon", Args: fmt.Sprintf(`{"customer":"c-%d","tier":%q}`, i, tier)},
			}},
			{Text: fmt.Sprintf("Refund for %s requested; coupon checked.", order)},
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "big.dryfire.yaml"), []byte(b.String()), 0o644); err != nil {
		tb.Fatal(err)
	}
	return brain
}

// recordBig writes and records the 1,000-case suite in dir.
func recordBig(tb testing.TB, dir, bin string) {
	tb.Helper()
	brain := writeRealSuite(tb, dir, benchCases, "anthropic")
	srv := fakeapi.NewAnthropic(brain)
	defer srv.Close()
	code, out, errOut := runEnv(tb, dir, bin, cleanEnv("ANTHROPIC_BASE_URL="+srv.URL, "ANTHROPIC_API_KEY="+e2eAnthropicKey), "run", "big.dryfire.yaml", "--record", "all")
	if code != 0 {
		tb.Fatalf("recording: exit %d\n%s\n%s", code, out[max(0, len(out)-2000):], errOut)
	}
	if srv.Requests() != 3*benchCases {
		tb.Fatalf("%d requests recording, want %d", srv.Requests(), 3*benchCases)
	}
}

// targetReplayRate is the end-to-end replay target, cases/s.
const targetReplayRate = 2000

// TestE2EReplayPerformance replays 1,000 recorded cases of three model
// turns each through the binary. It asserts the target only with
// -e2e-perf.
func TestE2EReplayPerformance(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary; skipped with -short")
	}
	dir := t.TempDir()
	bin := buildBinary(t, dir)
	recordBig(t, dir, bin)
	env := cleanEnv("CI=true")
	code, out, errOut := runEnv(t, dir, bin, env, "run", "big.dryfire.yaml")
	if code != 0 || !strings.HasSuffix(out, "\n1000 passed, 0 failed\n") || errOut != "" {
		t.Fatalf("replay: exit %d\n%s\n%s", code, out[max(0, len(out)-500):], errOut)
	}
	if n := scanCassettes(t, dir); n != benchCases {
		t.Errorf("%d cassettes, want %d", n, benchCases)
	}
	if !*e2ePerf {
		return
	}
	wall, cpu := best(9, func() time.Duration {
		r := startBinaryEnv(t, dir, bin, env, "run", "big.dryfire.yaml")
		if code := r.wait(t); code != 0 {
			t.Fatalf("exit %d", code)
		}
		return r.r.cmd.ProcessState.UserTime() + r.r.cmd.ProcessState.SystemTime()
	})
	rate := benchCases / wall.Seconds()
	t.Logf("replay: %.1f ms for %d cases of 3 model turns = %.0f cases/s (%.1f ms CPU)", float64(wall.Microseconds())/1000, benchCases, rate, float64(cpu.Microseconds())/1000)
	if rate < targetReplayRate {
		t.Errorf("replay: %.0f cases/s, want ≥ %d", rate, targetReplayRate)
	}
}

// BenchmarkE2EReplay times replaying 1,000 recorded cases of three model
// turns each through the binary.
func BenchmarkE2EReplay(b *testing.B) {
	dir := b.TempDir()
	bin := buildBinary(b, dir)
	recordBig(b, dir, bin)
	env := cleanEnv("CI=true")
	for b.Loop() {
		if code, _, errOut := runEnv(b, dir, bin, env, "run", "big.dryfire.yaml"); code != 0 {
			b.Fatalf("exit %d: %s", code, errOut)
		}
	}
	b.ReportMetric(float64(benchCases*b.N)/b.Elapsed().Seconds(), "cases/s")
}
