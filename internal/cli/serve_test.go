package cli_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dryfire-dev/dryfire/internal/cli"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// TestServeScript runs testdata/serve/*.txtar: dryfire serve and dryfire
// call as processes; $REPO is the repository root. Besides the commands
// of TestScript they have:
//
//	servebg ARGS...  start `dryfire serve ARGS...` in the background and
//	                 wait for the line saying where it listens; $ADDR
//	                 is then that address, $URL http://$ADDR, $PORT its port
//	servedoc PAGE MARKER [OLD=NEW...]  servebg with the arguments of the
//	                 docs page's dryfire serve command (see cmdServeDoc)
//	servestop        stop it with SIGINT, wait, and write its standard
//	                 error to $WORK/serve.stderr and "exit N" to
//	                 $WORK/serve.exit
//	httppost URL [BODY]  POST BODY (default empty) to URL; the answer's
//	                 body on standard output (fails unless the status is 200)
//	httpget URL      the same for GET
//	fakeopenai       start the fake OpenAI Chat Completions API; $FAKE
//	                 is its URL
//	cmplines A B     A and B hold the same lines, in any order
func TestServeScript(t *testing.T) {
	root := repoRoot(t)
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/serve",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       *update,
		Setup: func(e *testscript.Env) error {
			e.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			e.Setenv("DRYFIRE_TOOLS_URL", "")
			e.Setenv("REPO", root)
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"servebg":    cmdServeBG,
			"servestop":  cmdServeStop,
			"httppost":   cmdHTTPPost,
			"httpget":    cmdHTTPGet,
			"fakeopenai": cmdFakeOpenAI,
			"cmplines":   cmdCmpLines,
			"doc":        cmdDoc,
			"docappend":  cmdDocAppend,
			"servedoc":   cmdServeDoc,
			"contains":   cmdContains,
			"fakescript": cmdFakeScript,
			"jsonkeys":   cmdJSONKeys,
		},
	})
}

// servedoc PAGE MARKER [OLD=NEW...] is servebg with the arguments of a
// page's command: the line of its block that starts with MARKER (a
// "dryfire serve ..." line), its comment and a final & dropped, each
// OLD=NEW replaced, its words split as sh would (quotes, no expansion).
func cmdServeDoc(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: servedoc PAGE MARKER [OLD=NEW...]")
	}
	block, err := docBlock(filepath.Join(ts.Getenv("REPO"), args[0]), args[1])
	ts.Check(err)
	line := ""
	if strings.HasPrefix(args[1], "$ ") {
		line = args[1] // the block is what follows the command
	}
	for _, l := range strings.Split(block, "\n") {
		if strings.HasPrefix(l, args[1]) {
			line = l
			break
		}
	}
	line = strings.TrimPrefix(line, "$ ")
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	line = strings.TrimSuffix(strings.TrimSpace(line), "&")
	for _, r := range args[2:] {
		old, new, _ := strings.Cut(r, "=")
		line = strings.ReplaceAll(line, old, new)
	}
	words := shellWords(ts, line)
	if len(words) < 2 || words[0] != "dryfire" || words[1] != "serve" {
		ts.Fatalf("servedoc: %q is not a dryfire serve command", line)
	}
	cmdServeBG(ts, false, words[2:])
}

// shellWords splits a command line as sh does for plain words and quotes.
func shellWords(ts *testscript.TestScript, line string) []string {
	var words []string
	var w strings.Builder
	inWord := false
	quote := rune(0)
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		ts.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// background is a `dryfire serve` a script started.
type background struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	stderr strings.Builder
	done   chan error
}

var (
	bgMu sync.Mutex
	bgs  = map[*testscript.TestScript]*background{}
)

var listening = regexp.MustCompile(`on http://(\S+): MCP`)

func cmdServeBG(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("usage: servebg ARGS...")
	}
	bg := &background{done: make(chan error, 1)}
	bg.cmd = exec.Command("dryfire", append([]string{"serve"}, args...)...)
	bg.cmd.Dir = ts.MkAbs(".")
	bg.cmd.Env = append(os.Environ(), "GORACE="+ts.Getenv("GORACE"))
	for _, k := range []string{"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CI"} {
		bg.cmd.Env = append(bg.cmd.Env, k+"="+ts.Getenv(k)) // the script's, not the test process's
	}
	pr, err := bg.cmd.StderrPipe()
	ts.Check(err)
	ts.Check(bg.cmd.Start())
	bgMu.Lock()
	bgs[ts] = bg
	bgMu.Unlock()
	ts.Defer(func() {
		bg.cmd.Process.Kill()
		<-bg.done
	})
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			bg.mu.Lock()
			bg.stderr.WriteString(line + "\n")
			bg.mu.Unlock()
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case addr <- m[1]:
				default:
				}
			}
		}
		bg.done <- bg.cmd.Wait()
	}()
	select {
	case a := <-addr:
		ts.Setenv("URL", "http://"+a)
		ts.Setenv("ADDR", a)
		_, port, _ := strings.Cut(a, ":")
		ts.Setenv("PORT", port)
	case <-time.After(20 * time.Second):
		bg.mu.Lock()
		defer bg.mu.Unlock()
		ts.Fatalf("dryfire serve did not say where it listens within 20s; standard error:\n%s", bg.stderr.String())
	}
}

func cmdServeStop(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) > 1 {
		ts.Fatalf("usage: servestop [INT|TERM|HUP]")
	}
	sig := syscall.SIGINT
	if len(args) == 1 {
		sig = map[string]syscall.Signal{"INT": syscall.SIGINT, "TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP}[args[0]]
		if sig == 0 {
			ts.Fatalf("servestop: unknown signal %q", args[0])
		}
	}
	bgMu.Lock()
	bg := bgs[ts]
	delete(bgs, ts)
	bgMu.Unlock()
	if bg == nil {
		ts.Fatalf("no servebg to stop")
	}
	ts.Check(bg.cmd.Process.Signal(sig))
	var err error
	select {
	case err = <-bg.done:
		bg.done <- err // for the deferred cleanup
	case <-time.After(20 * time.Second):
		ts.Fatalf("dryfire serve did not stop within 20s of %v", sig)
	}
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("waiting for dryfire serve: %v", err)
	}
	bg.mu.Lock()
	defer bg.mu.Unlock()
	work := ts.Getenv("WORK")
	ts.Check(os.WriteFile(filepath.Join(work, "serve.stderr"), []byte(bg.stderr.String()), 0o644))
	ts.Check(os.WriteFile(filepath.Join(work, "serve.exit"), fmt.Appendf(nil, "exit %d\n", code), 0o644))
}

// suiteFile writes the suite the serve tests use to a temporary directory.
func suiteFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "shop.dryfire.yaml")
	err := os.WriteFile(file, []byte(`version: 1
agent: {provider: script}
tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
  issue_refund:
    - sequence: [{error: timeout}, {return: {ok: true}}]
cases:
  - name: refund
    input: x
    script: [{text: ok}]
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return file
}

func refundTexts(t *testing.T, cs *mcp.ClientSession, n int) []string {
	t.Helper()
	var out []string
	for range n {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "issue_refund", Arguments: map[string]any{}})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res.Content[0].(*mcp.TextContent).Text)
	}
	return out
}

// `dryfire serve --stdio` as a process, driven by the go-sdk client in
// both eras: each process is one session with its own sequence state.
func TestServeStdioProcess(t *testing.T) {
	file := suiteFile(t)
	for _, version := range []string{"", "2025-11-25"} {
		t.Run("version="+version, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cmd := exec.Command("dryfire", "serve", file, "--stdio")
			cmd.Stderr = io.Discard
			cmd.Env = append(os.Environ(), "GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
			var opts *mcp.ClientSessionOptions
			if version != "" {
				opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
			}
			client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			want := version
			if want == "" {
				want = "2026-07-28"
			}
			if got := cs.InitializeResult().ProtocolVersion; got != want {
				t.Errorf("negotiated %q, want %q", got, want)
			}
			lr, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range lr.Tools {
				names = append(names, tl.Name)
			}
			if diff := cmp.Diff([]string{"lookup_order", "issue_refund"}, names); diff != "" {
				t.Errorf("tools (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"timeout", `{"ok":true}`, `{"ok":true}`}, refundTexts(t, cs, 3)); diff != "" {
				t.Errorf("sequence (-want +got):\n%s", diff)
			}
		})
	}
}

// --stdio reads and writes the command's own standard streams (not the
// process's), until standard input ends; stdin is kept open while the
// client talks (go-sdk#1061).
func TestServeStdioInProcess(t *testing.T) {
	file := suiteFile(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var stderr strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- cli.Main([]string{"serve", file, "--stdio", "--case", "refund"}, inR, outW, &stderr)
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(context.Background(), &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"timeout", `{"ok":true}`}, refundTexts(t, cs, 2)); diff != "" {
		t.Errorf("sequence (-want +got):\n%s", diff)
	}
	cs.Close()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("exit %d; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("dryfire serve --stdio did not stop when its input closed")
	}
	if want := fmt.Sprintf("serving %s (case \"refund\") over stdio (MCP)\n", filepath.ToSlash(file)); stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

func cmdHTTPPost(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: [!] httppost URL [BODY]")
	}
	var body io.Reader
	if len(args) == 2 {
		body = strings.NewReader(args[1])
	}
	resp, err := http.Post(args[0], "application/json", body)
	ts.Check(err)
	answer(ts, neg, "POST "+args[0], resp)
}

// fakeopenai: start the repository's fake OpenAI Chat Completions server
// (internal/test/fakeapi), whose model answers "Hello there." to a
// conversation that starts "hi"; $FAKE is its URL.
func cmdFakeOpenAI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: fakeopenai")
	}
	fake := fakeapi.NewOpenAIChat(fakeapi.Script{"hi": {{Text: "Hello there."}}})
	ts.Defer(fake.Close)
	ts.Setenv("FAKE", fake.URL)
}

// httpget URL: GET URL; the answer's body on standard output (fails
// unless the status is 200).
func cmdHTTPGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: httpget URL")
	}
	resp, err := http.Get(args[0])
	ts.Check(err)
	answer(ts, false, "GET "+args[0], resp)
}

// answer writes the body of resp on standard output; the status must be
// 200, or with neg anything else.
func answer(ts *testscript.TestScript, neg bool, what string, resp *http.Response) {
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	ts.Check(err)
	ts.Stdout().Write(b)
	ts.Stdout().Write([]byte("\n"))
	if ok := resp.StatusCode == http.StatusOK; ok == neg {
		ts.Fatalf("%s: %s", what, resp.Status)
	}
}

func cmdCmpLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: cmplines A B")
	}
	read := func(name string) []string {
		var text string
		if name == "stdout" {
			text = ts.ReadFile("stdout")
		} else {
			text = ts.ReadFile(name)
		}
		lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
		slices.Sort(lines)
		return lines
	}
	if diff := cmp.Diff(read(args[1]), read(args[0])); diff != "" {
		ts.Fatalf("%s and %s differ (-%[2]s +%[1]s):\n%s", args[0], args[1], diff)
	}
}
