package cli_test

import (
	"bytes"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
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
