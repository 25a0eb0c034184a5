package engine_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// bin is the dryfire binary the tests start, built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "dryfire-engine-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bin = filepath.Join(dir, "dryfire")
	build := exec.Command("go", "build", "-o", bin, "github.com/dryfire-dev/dryfire/cmd/dryfire")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building dryfire:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running `dryfire engine`.
type proc struct {
	t      testing.TB
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	url    string
	token  string
	ready  map[string]any
	stderr *syncBuffer
	exited chan error
	client *http.Client

	stopOnce sync.Once
	exitErr  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// engineEnv is the environment of the engines the tests start: no CI (the
// default record mode is once) and no keys.
func engineEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "CI", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL":
			continue
		}
		env = append(env, kv)
	}
	return env
}

// startEngine starts `dryfire engine` in dir and reads its ready line.
func startEngine(t testing.TB, dir string, args ...string) *proc {
	t.Helper()
	return startEngineEnv(t, dir, nil, args...)
}

// startEngineEnv is startEngine with more variables (KEY=VALUE) in the
// engine's environment.
func startEngineEnv(t testing.TB, dir string, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"engine"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(engineEnv(), env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdin: stdin, stderr: &syncBuffer{}, exited: make(chan error, 1), client: &http.Client{Timeout: 30 * time.Second}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		io.Copy(io.Discard, stdout)
	}()
	go func() { p.exited <- cmd.Wait() }()
	t.Cleanup(p.stop)
	select {
	case line, ok := <-lines:
		if !ok {
			t.Fatalf("the engine printed no ready line; stderr:\n%s", p.stderr)
		}
		if err := json.Unmarshal([]byte(line), &p.ready); err != nil {
			t.Fatalf("ready line %q: %v", line, err)
		}
		p.url, _ = p.ready["url"].(string)
		p.token, _ = p.ready["token"].(string)
	case <-time.After(10 * time.Second):
		t.Fatalf("no ready line within 10 s; stderr:\n%s", p.stderr)
	}
	return p
}

// stop closes the engine's standard input and waits for it to exit;
// the second call returns at once.
func (p *proc) stop() {
	p.stopOnce.Do(func() {
		p.stdin.Close()
		select {
		case p.exitErr = <-p.exited:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			p.t.Errorf("the engine did not exit within 10 s of its standard input closing")
		}
	})
}

// call makes a request; body is JSON-encoded unless it is a string or
// []byte. auth adds the bearer token.
func (p *proc) call(method, url string, body any, auth bool) (int, map[string]any) {
	p.t.Helper()
	status, data := p.raw(method, url, body, auth, nil)
	if len(bytes.TrimSpace(data)) == 0 {
		return status, nil
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		p.t.Fatalf("%s %s: answer %q is not a JSON object: %v", method, url, data, err)
	}
	return status, m
}

func (p *proc) raw(method, url string, body any, auth bool, header http.Header) (int, []byte) {
	p.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			p.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	if !strings.HasPrefix(url, "http") {
		url = p.url + url
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		p.t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if auth {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	resp, err := p.client.Do(req)
	if err != nil {
		p.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.StatusCode, data
}

// drill is a started drill, as the tests use it.
type drill struct {
	p       *proc
	id      string
	url     string
	mcpURL  string
	answer  map[string]any
	binding map[string]any
}

// start starts a drill and fails the test unless it is 201.
func (p *proc) start(body map[string]any) *drill {
	p.t.Helper()
	status, m := p.call("POST", "/engine/drills", body, true)
	if status != http.StatusCreated {
		p.t.Fatalf("start %v: %d %v", body, status, m)
	}
	b := m["binding"].(map[string]any)
	return &drill{p: p, id: m["id"].(string), url: b["url"].(string), mcpURL: b["mcp_url"].(string), answer: m, binding: b}
}

// op calls an operation through /ops.
func (d *drill) op(operation string, args map[string]any, key string) (int, map[string]any) {
	d.p.t.Helper()
	body := map[string]any{"arguments": args}
	if key != "" {
		body["idempotencyKey"] = key
	}
	return d.p.call("POST", d.url+"/ops/"+operation, body, false)
}

// end ends the drill and fails the test unless it is 200.
func (d *drill) end(output any, agentErr any) map[string]any {
	d.p.t.Helper()
	status, m := d.p.call("POST", "/engine/drills/"+d.id+"/end", map[string]any{"output": output, "error": agentErr}, true)
	if status != http.StatusOK {
		d.p.t.Fatalf("end: %d %v", status, m)
	}
	return m
}

// project copies testdata/project into a temporary directory: drills may
// write cassettes there, and tests may change its files.
func project(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir("testdata/project", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("testdata/project", path)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// errorOf is the code and message of an error answer.
func errorOf(t testing.TB, m map[string]any) (string, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("not an error answer: %v", m)
	}
	code, _ := e["code"].(string)
	msg, _ := e["message"].(string)
	return code, msg
}

// evidence is the operation and outcome of each evidence entry.
func evidence(t testing.TB, m map[string]any) []string {
	t.Helper()
	list, _ := m["evidence"].([]any)
	out := make([]string, 0, len(list))
	for _, e := range list {
		ev := e.(map[string]any)
		s := fmt.Sprintf("%v %v", ev["operation"], ev["outcome"])
		if o, ok := ev["override"].(map[string]any); ok {
			s += fmt.Sprintf(" %v@%v", o["id"], o["scope"])
		}
		out = append(out, s)
	}
	return out
}
