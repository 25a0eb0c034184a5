package cli_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cli"
)

// A provider error body that echoed the key was printed in the text, JSON
// and JUnit reports; so was a key in base_url's query, through Go's
// `Post "URL"` error. Every output and every file the run writes is
// scanned for both.
func TestHostileSecretsNeverReachAnOutput(t *testing.T) {
	const key, queryKey = "sk-ant-env-secret-0123456789", "qk-query-secret-987654"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"type":"error","error":{"type":"invalid_request_error","message":"bad key ` + r.Header.Get("X-Api-Key") + ` for ` + r.URL.RawQuery + `"}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	suite := `version: 1
name: secrets
agent:
  provider: anthropic
  model: claude-test
  retries: 0
cases:
  - name: echoed key
    input: hi
    base_url: BASE
  - name: key in the query of an unreachable url
    input: hi
`
	suite = strings.Replace(suite, "    base_url: BASE\n", "", 1)
	write := func(name, base string) string {
		s := strings.Replace(suite, "  retries: 0\n", "  retries: 0\n  base_url: "+base+"\n", 1)
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	echo := write("echo.dryfire.yaml", srv.URL+"?key="+queryKey)
	dead := write("dead.dryfire.yaml", "http://127.0.0.1:1?key="+queryKey)
	t.Setenv("ANTHROPIC_API_KEY", key)
	t.Setenv("NO_COLOR", "1")
	var stdout, stderr bytes.Buffer
	code := cli.Main([]string{"run", "--record", "all", "--json", filepath.Join(dir, "report.json"), "--junit", filepath.Join(dir, "report.xml"), echo, dead}, nil, &stdout, &stderr)
	if code == 0 {
		t.Errorf("exit 0:\n%s", stdout.String())
	}
	outputs := map[string]string{"stdout": stdout.String(), "stderr": stderr.String()}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".dryfire.yaml") {
			data, _ := os.ReadFile(p)
			outputs[p] = string(data)
		}
		return nil
	})
	if !strings.Contains(outputs["stdout"], "bad key REDACTED for key=REDACTED") {
		t.Errorf("the echoed error is not in the report, redacted:\n%s", outputs["stdout"])
	}
	for name, text := range outputs {
		for _, secret := range []string{key, queryKey} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s:\n%s", name, secret, text)
			}
		}
	}
	if len(outputs) < 4 {
		t.Errorf("outputs: %v", outputs)
	}
}

// Issue 30, hole 9: a model API echoed the key JSON-escaped (sk\u002d…)
// in an answer; the cassette kept it, and a CI replay printed it in the
// report. The recording and the replay are scanned for the key in any
// form (its text decoded from the JSON, too).
func TestHostileEscapedKeyNeverReachesACassette(t *testing.T) {
	const key = "sk-ant-env-secret-escaped-0123"
	escaped := strings.ReplaceAll(key, "-", `\u002d`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":"your key is ` + escaped + `"}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":1,"output_tokens":1}}`))
	}))
	defer srv.Close()
	dir := t.TempDir()
	suite := filepath.Join(dir, "echo.dryfire.yaml")
	os.WriteFile(suite, []byte("version: 1\nname: echo\nagent:\n  provider: anthropic\n  model: claude-test\n  retries: 0\n  base_url: "+srv.URL+"\ncases:\n  - name: echoed key\n    input: hi\n    expect:\n      - output: {contains: never}\n"), 0o644)
	t.Setenv("ANTHROPIC_API_KEY", key)
	t.Setenv("NO_COLOR", "1")
	run := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		cli.Main(args, nil, &stdout, &stderr)
		return stdout.String() + stderr.String()
	}
	out := run("run", "--record", "all", suite)
	if !strings.Contains(out, "your key is REDACTED") {
		t.Errorf("the answer is not in the report, redacted:\n%s", out)
	}
	t.Setenv("CI", "true")
	out += run("run", "--record", "none", "--json", filepath.Join(dir, "replay.json"), suite)
	outputs := map[string]string{"output": out}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".dryfire.yaml") {
			data, _ := os.ReadFile(p)
			outputs[p] = string(data)
		}
		return nil
	})
	if len(outputs) < 3 {
		t.Fatalf("no cassette or report: %v", outputs)
	}
	for name, text := range outputs {
		decoded := strings.ReplaceAll(text, `\u002d`, "-")
		if strings.Contains(decoded, key) {
			t.Errorf("%s holds the key:\n%s", name, text)
		}
	}
}

// The Gemini API takes its key in x-goog-api-key or in ?key=: an agent
// whose own key is in the query (as key=, and as KEY=, hole 10 of issue
// 36: a query parameter's name in another case was neither learned nor
// dropped, so it was forwarded and printed), an upstream that echoes both
// the environment's key and the query in its answer. Every output and
// every file of the recording and of the CI replay (text, JSON, JUnit and
// HTML reports, the cassette) is scanned for both keys.
func TestHostileGeminiKeysNeverReachAnOutput(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	for _, param := range []string{"key", "KEY", "Key"} {
		t.Run(param, func(t *testing.T) { geminiKeysNeverReachAnOutput(t, param) })
	}
}

func geminiKeysNeverReachAnOutput(t *testing.T, param string) {
	const envKey, ownKey = "AIza-env-secret-0123456789", "AIza-own-query-secret-9876"
	var forwarded atomic.Bool // the client's own key reached the upstream
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.URL.RawQuery, ownKey) {
			forwarded.Store(true)
		}
		text := "header " + r.Header.Get("X-Goog-Api-Key") + " query " + r.URL.RawQuery
		body, _ := json.Marshal(map[string]any{"candidates": []any{map[string]any{"content": map[string]any{"parts": []any{map[string]any{"text": text}}, "role": "model"}, "finishReason": "STOP", "index": 0}},
			"usageMetadata": map[string]any{"promptTokenCount": 3, "candidatesTokenCount": 2, "totalTokenCount": 5}, "modelVersion": "gemini-test"})
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "agent.mjs"), []byte(`const res = await fetch(process.env.GOOGLE_GEMINI_BASE_URL + '/v1beta/models/gemini-test:generateContent?`+param+`=`+ownKey+`', {
  method: 'POST', headers: {'content-type': 'application/json'},
  body: JSON.stringify({contents: [{role: 'user', parts: [{text: 'my key is `+ownKey+`'}]}]}),
});
const a = await res.json();
console.log(a.candidates ? a.candidates[0].content.parts[0].text : JSON.stringify(a));
`), 0o644)
	suite := filepath.Join(dir, "gemini.dryfire.yaml")
	// The check fails, so that every report prints the output.
	os.WriteFile(suite, []byte("version: 1\nname: gemini keys\nagent:\n  command: [node, agent.mjs]\ncases:\n  - name: echoed keys\n    input: hi\n    expect:\n      - output: {contains: header}\n      - output: {contains: never}\n"), 0o644)
	t.Setenv("GEMINI_API_KEY", envKey)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", srv.URL)
	t.Setenv("NO_COLOR", "1")
	run := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		cli.Main(args, nil, &stdout, &stderr)
		return stdout.String() + stderr.String()
	}
	reports := func(name string) []string {
		return []string{"--json", filepath.Join(dir, name+".json"), "--junit", filepath.Join(dir, name+".xml"), "--html", filepath.Join(dir, name+".html")}
	}
	out := run(append(append([]string{"run", "--record", "all"}, reports("record")...), suite)...)
	if !strings.Contains(out, "0 passed, 1 failed") || !strings.Contains(out, "header REDACTED query") {
		t.Fatalf("the recording did not run, or its output is not in the report:\n%s", out)
	}
	if forwarded.Load() {
		t.Errorf("the client's own key in ?%s= was forwarded, though GEMINI_API_KEY is set", param)
	}
	t.Setenv("CI", "true")
	out += run(append(append([]string{"run", "--record", "none"}, reports("replay")...), suite)...)
	if strings.Count(out, "0 passed, 1 failed") != 2 {
		t.Errorf("the replay did not run as the recording:\n%s", out)
	}
	outputs := map[string]string{"output": out}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".dryfire.yaml") && !strings.HasSuffix(p, ".mjs") {
			data, _ := os.ReadFile(p)
			outputs[p] = string(data)
		}
		return nil
	})
	if len(outputs) < 8 {
		t.Fatalf("no cassette or reports: %v", outputs)
	}
	cassette := outputs[filepath.Join(dir, "cassettes", "gemini", "echoed-keys.json")]
	if !strings.Contains(cassette, "header REDACTED query") || !strings.Contains(cassette, "my key is REDACTED") {
		t.Errorf("the cassette does not hold the answer, redacted:\n%s", cassette)
	}
	for name, text := range outputs {
		for _, secret := range []string{envKey, ownKey} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s:\n%s", name, secret, text)
			}
		}
	}
}

// Azure OpenAI takes its key in api-key (AZURE_OPENAI_API_KEY) and, where
// an API Management front takes it so, in ?api-key= of the endpoint: an
// upstream that echoes both in an answer and in an error. Every output and
// every file of the built-in loop's recording and of the CI replay is
// scanned for both keys.
func TestHostileAzureKeysNeverReachAnOutput(t *testing.T) {
	const envKey, queryKey = "azure-env-secret-0123456789abcdef", "azure-query-secret-fedcba9876"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := "header " + r.Header.Get("Api-Key") + " query " + r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "/deployments/broken/") {
			w.WriteHeader(http.StatusUnauthorized)
			body, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "401", "message": "bad " + echo}})
			w.Write(body)
			return
		}
		body, _ := json.Marshal(map[string]any{"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
			"choices":               []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": echo}, "finish_reason": "stop", "content_filter_results": map[string]any{}}},
			"prompt_filter_results": []any{}, "usage": map[string]any{"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}})
		w.Write(body)
	}))
	defer srv.Close()
	dir := t.TempDir()
	write := func(name, deployment string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("version: 1\nname: "+deployment+"\nagent:\n  provider: azure-openai\n  model: "+deployment+"\n  retries: 0\n  base_url: "+srv.URL+"?api-key="+queryKey+
			"\ncases:\n  - name: echoed keys\n    input: hi\n    expect:\n      - output: {contains: header}\n"), 0o644)
		return p
	}
	ok, broken := write("ok.dryfire.yaml", "gpt-4o"), write("broken.dryfire.yaml", "broken")
	t.Setenv("AZURE_OPENAI_API_KEY", envKey)
	t.Setenv("NO_COLOR", "1")
	run := func(args ...string) string {
		var stdout, stderr bytes.Buffer
		cli.Main(args, nil, &stdout, &stderr)
		return stdout.String() + stderr.String()
	}
	out := run("run", "--record", "all", "--json", filepath.Join(dir, "record.json"), "--junit", filepath.Join(dir, "record.xml"), ok, broken)
	if !strings.Contains(out, "bad header REDACTED query api-key=REDACTED") || !strings.Contains(out, "1 passed") {
		t.Errorf("the recording: the error is not in the report, redacted, or the answer did not pass:\n%s", out)
	}
	t.Setenv("CI", "true")
	t.Setenv("AZURE_OPENAI_API_KEY", "")
	out += run("run", "--record", "none", "--json", filepath.Join(dir, "replay.json"), ok)
	if strings.Count(out, "1 passed") != 2 {
		t.Errorf("the replay did not pass:\n%s", out)
	}
	outputs := map[string]string{"output": out}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".dryfire.yaml") {
			data, _ := os.ReadFile(p)
			outputs[p] = string(data)
		}
		return nil
	})
	cassette := outputs[filepath.Join(dir, "cassettes", "ok", "echoed-keys.json")]
	if !strings.Contains(cassette, "header REDACTED query api-key=REDACTED") || !strings.Contains(cassette, `"path": "/openai/deployments/gpt-4o/chat/completions?api-key=REDACTED&api-version=2024-10-21"`) {
		t.Errorf("the cassette does not hold the answer, redacted, at the deployment's path, the query's key redacted:\n%s", cassette)
	}
	if len(outputs) < 5 {
		t.Fatalf("no cassette or reports: %v", outputs)
	}
	for name, text := range outputs {
		for _, secret := range []string{envKey, queryKey} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %s:\n%s", name, secret, text)
			}
		}
	}
}
