package passthrough

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

func needPython(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not on PATH")
	}
}

// syncBuffer is a bytes.Buffer safe for the helper's stderr forwarding.
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

func newRunner(t testing.TB, opts Options) (*Runner, *syncBuffer) {
	t.Helper()
	needPython(t)
	stderr := &syncBuffer{}
	if opts.Dir == "" {
		opts.Dir = "testdata"
	}
	opts.Stderr = stderr
	r := New(opts)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r.Close(ctx, nil)
	})
	return r, stderr
}

func TestCallResults(t *testing.T) {
	r, _ := newRunner(t, Options{})
	tests := []struct {
		ref, args string
		want      Result
	}{
		{"mytools.impls:echo", `{"b":1,"a":[true,null]}`, Result{Content: `{"a":[true,null],"b":1}`}},
		{"mytools.impls:greet", `{"name":"Ada"}`, Result{Content: `hello Ada`}},
		{"mytools.impls:aecho", `{"x":1.50}`, Result{Content: `{"args":{"x":1.5},"async":true}`}},
		{"mytools.impls:none", `{}`, Result{Content: `null`}},
		{"mytools.impls:a_list", `{}`, Result{Content: `[1,"two",{"a":1,"b":2}]`}},
		{"mytools.impls:an_int", `{}`, Result{Content: `7`}},
		{"mytools.impls:tool", `{}`, Result{Content: `callable object`}},
		{"mytools.impls:boom", `{"order_id":"A-1"}`, Result{Content: `order A-1 is locked`, IsError: true,
			Note: `impl mytools.impls:boom raised ValueError: order A-1 is locked (at mytools/impls.py:24 in boom)`}},
		{"mytools.impls:aboom", `{}`, Result{Content: `'missing'`, IsError: true,
			Note: `impl mytools.impls:aboom raised KeyError: 'missing' (at mytools/impls.py:28 in aboom)`}},
		{"mytools.impls:a_set", `{}`, Result{Content: `dryfire: impl mytools.impls:a_set returned a value that is not JSON-representable: Object of type set is not JSON serializable`, IsError: true,
			Note: `impl mytools.impls:a_set returned a value that is not JSON-representable: Object of type set is not JSON serializable`}},
		{"mytools.impls:nan", `{}`, Result{Content: `dryfire: impl mytools.impls:nan returned a value that is not JSON-representable: Out of range float values are not JSON compliant`, IsError: true,
			Note: `impl mytools.impls:nan returned a value that is not JSON-representable: Out of range float values are not JSON compliant`}},
		{"mytools.impls:echo", `{"broken"`, Result{Content: `dryfire: impl mytools.impls:echo not called: the arguments are not valid JSON`, IsError: true}},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			got := r.Call(context.Background(), Request{Ref: tt.ref, Args: tt.args, Label: "case"})
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestStdoutDoesNotCorruptTheProtocol(t *testing.T) {
	r, stderr := newRunner(t, Options{})
	got := r.Call(context.Background(), Request{Ref: "mytools.impls:noisy", Args: `{}`})
	if got != (Result{Content: `{"ok":true}`}) {
		t.Fatalf("got %+v", got)
	}
	// The next call still works: the protocol stream is intact.
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
		t.Fatalf("after printing: %+v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r.Close(ctx, nil)
	for _, want := range []string{"python: this goes to stderr, not the protocol\n", "python: even raw writes to fd 1\n"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr %q lacks %q", stderr.String(), want)
		}
	}
}

func TestModuleImportedOnce(t *testing.T) {
	r, _ := newRunner(t, Options{})
	for i := 1; i <= 3; i++ {
		got := r.Call(context.Background(), Request{Ref: "mytools.impls:count", Args: `{}`})
		if got.Content != fmt.Sprint(i) {
			t.Fatalf("call %d: %+v (module state lost?)", i, got)
		}
	}
}

func TestResolveErrors(t *testing.T) {
	r, _ := newRunner(t, Options{})
	tests := []struct{ ref, want string }{
		{"mytools.impls:echo", ""},
		{"mytools.impls:tool", ""},
		{"mytools.nope:f", `module "mytools.nope" not found: package mytools (mytools/__init__.py) has no module "nope"`},
		{"nosuchpkg.mod:f", `module "nosuchpkg" not found: Python looks first in the directory dryfire runs in, then in the interpreter's sys.path; run dryfire from the directory that contains nosuchpkg, or choose the interpreter that has it installed with --python`},
		{"broken:f", `importing broken raised RuntimeError: top-level failure in broken.py (at broken.py:1 in <module>)`},
		{"mytools.impls:missing", `module mytools.impls (mytools/impls.py) has no attribute "missing"`},
		{"mytools.impls:VALUE", `mytools.impls:VALUE is not callable: it is a value of type int; impl names a function that takes the tool's arguments as one dict`},
		{"mytools.impls:ecko", `module mytools.impls (mytools/impls.py) has no attribute "ecko" (did you mean "echo"?)`},
		{"mytools:impls", `mytools:impls is a module, not a function: write mytools.impls:FUNCTION`},
		{"mytools.impls:kwargs_only", `mytools.impls:kwargs_only(**kwargs) cannot take one positional argument: dryfire calls it with the tool's arguments as one dict, kwargs_only(args), never kwargs_only(**args)`},
	}
	for _, tt := range tests {
		err := r.Resolve(context.Background(), tt.ref)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Resolve(%s) = %q, want %q", tt.ref, got, tt.want)
		}
	}
}

func TestPythonNotFound(t *testing.T) {
	r := New(Options{Python: "", Getenv: func(k string) string {
		if k == "DRYFIRE_PYTHON" {
			return "/nonexistent/python3"
		}
		return ""
	}})
	err := r.Resolve(context.Background(), "a.b:c")
	if err == nil || err.Error() != `the Python interpreter "/nonexistent/python3" given by DRYFIRE_PYTHON does not exist; fix DRYFIRE_PYTHON, or unset it to use python3 from PATH` {
		t.Fatalf("err = %v", err)
	}
	r2 := New(Options{Getenv: func(string) string { return "" }})
	t.Setenv("PATH", t.TempDir())
	err = r2.Resolve(context.Background(), "a.b:c")
	if err == nil || !strings.Contains(err.Error(), "python3 not found on PATH") {
		t.Fatalf("err = %v", err)
	}
	got := r2.Call(context.Background(), Request{Ref: "a.b:c", Args: `{}`})
	if !got.IsError || !strings.Contains(got.Content, "python3 not found on PATH") {
		t.Fatalf("call = %+v", got)
	}
}

func TestTimeouts(t *testing.T) {
	r, stderr := newRunner(t, Options{})
	if err := r.Resolve(context.Background(), "mytools.impls:wedge"); err != nil {
		t.Fatal(err) // starts the helper, so that the timing below is the call's
	}
	start := time.Now()
	got := r.Call(context.Background(), Request{Ref: "mytools.impls:wedge", Args: `{"s": 1.5}`, Timeout: 300 * time.Millisecond, Label: "case A / slow"})
	if el := time.Since(start); el > time.Second {
		t.Errorf("timeout took %v", el)
	}
	want := Result{Content: "dryfire: impl mytools.impls:wedge: timed out after 0.3 s", IsError: true,
		Note: "impl mytools.impls:wedge (case A / slow) timed out after 0.3 s"}
	if got != want {
		t.Errorf("sync timeout:\n got %+v\nwant %+v", got, want)
	}
	if run := r.Running(); len(run) != 1 || run[0] != "case A / slow → mytools.impls:wedge" {
		t.Errorf("Running() = %q, want the wedged call", run)
	}

	got = r.Call(context.Background(), Request{Ref: "mytools.impls:asleep", Args: `{}`, Timeout: 200 * time.Millisecond, Label: "case B"})
	if !got.IsError || !strings.HasSuffix(got.Content, "timed out after 0.2 s") {
		t.Errorf("async timeout: %+v", got)
	}
	// Other calls go on while the sync one is wedged.
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
		t.Errorf("call beside a wedged one: %+v", got)
	}
	// The async call, cancelled, soon stops running; the sync one runs on.
	deadline := time.Now().Add(2 * time.Second)
	for len(r.Running()) > 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if run := r.Running(); len(run) != 1 || run[0] != "case A / slow → mytools.impls:wedge" {
		t.Errorf("Running() after the async cancel = %q", run)
	}
	var w bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Close(ctx, &w); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(w.String(), "waiting for 1 passthrough call(s) to finish (Ctrl-C to abandon them): case A / slow → mytools.impls:wedge") {
		t.Errorf("close said %q", w.String())
	}
	if !strings.Contains(stderr.String(), "python: cancelled cleanly") {
		t.Errorf("the async call was not cancelled: stderr %q", stderr.String())
	}
}

func TestCloseAbandonsOnSecondInterrupt(t *testing.T) {
	r, _ := newRunner(t, Options{})
	r.Call(context.Background(), Request{Ref: "mytools.impls:wedge", Args: `{"s": 30}`, Timeout: 100 * time.Millisecond, Label: "stuck"})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var w bytes.Buffer
	start := time.Now()
	err := r.Close(ctx, &w)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Close = %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Errorf("abandoning took %v", time.Since(start))
	}
	if !strings.Contains(w.String(), "abandoned the passthrough calls still running") {
		t.Errorf("close said %q", w.String())
	}
}

func TestHelperDeathAndRestart(t *testing.T) {
	for _, ref := range []string{"mytools.impls:die", "mytools.impls:segv"} {
		t.Run(ref, func(t *testing.T) {
			r, _ := newRunner(t, Options{})
			// One call in flight on the helper that is about to die.
			var wg sync.WaitGroup
			wg.Add(1)
			var inflight Result
			go func() {
				defer wg.Done()
				inflight = r.Call(context.Background(), Request{Ref: "mytools.impls:wedge", Args: `{"s": 5}`, Timeout: 10 * time.Second})
			}()
			time.Sleep(200 * time.Millisecond)
			got := r.Call(context.Background(), Request{Ref: ref, Args: `{}`})
			wg.Wait()
			for _, res := range []Result{got, inflight} {
				if !res.IsError || !strings.Contains(res.Content, "the python helper ") || !strings.Contains(res.Content, "while running this call; it will be started again for later calls") {
					t.Errorf("result = %+v", res)
				}
			}
			if ref == "mytools.impls:die" && !strings.Contains(got.Content, "exited with status 3") {
				t.Errorf("exit status not named: %q", got.Content)
			}
			if ref == "mytools.impls:segv" && !strings.Contains(got.Content, "killed by signal 11") {
				t.Errorf("signal not named: %q", got.Content)
			}
			// Started again for later calls.
			if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
				t.Errorf("after the death: %+v", got)
			}
		})
	}
}

func TestHelperKilledFromOutside(t *testing.T) {
	r, _ := newRunner(t, Options{})
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
		t.Fatal(got)
	}
	done := make(chan Result)
	go func() {
		done <- r.Call(context.Background(), Request{Ref: "mytools.impls:wedge", Args: `{"s": 5}`, Timeout: 10 * time.Second})
	}()
	time.Sleep(200 * time.Millisecond)
	r.mu.Lock()
	r.proc.kill()
	r.mu.Unlock()
	got := <-done
	if !got.IsError || !strings.Contains(got.Content, "killed by signal 9") {
		t.Errorf("in-flight call = %+v", got)
	}
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
		t.Errorf("after the kill: %+v", got)
	}
}

func TestConcurrentSyncCallsDoNotStall(t *testing.T) {
	r, _ := newRunner(t, Options{})
	if err := r.Resolve(context.Background(), "mytools.impls:sleep1"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var wg sync.WaitGroup
	results := make([]Result, 16)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = r.Call(context.Background(), Request{Ref: "mytools.impls:sleep1", Args: `{}`})
		}()
	}
	wg.Wait()
	el := time.Since(start)
	for i, res := range results {
		if res.Content != "slept" {
			t.Errorf("call %d: %+v", i, res)
		}
	}
	if el > 3*time.Second {
		t.Errorf("16 concurrent 1 s calls took %v, want < 3 s", el)
	}
	t.Logf("16 concurrent 1 s sync calls: %v", el)
}

func TestGoFuncs(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	r := New(Options{Funcs: map[string]Func{
		"go.tools:echo": func(ctx context.Context, args map[string]any) (any, error) { return args, nil },
		"go.tools:text": func(ctx context.Context, args map[string]any) (any, error) { return "plain <text>", nil },
		"go.tools:fail": func(ctx context.Context, args map[string]any) (any, error) { return nil, errors.New("no stock") },
		"go.tools:panic": func(ctx context.Context, args map[string]any) (any, error) {
			panic("boom")
		},
		"go.tools:chan": func(ctx context.Context, args map[string]any) (any, error) { return make(chan int), nil },
		"go.tools:hang": func(ctx context.Context, args map[string]any) (any, error) {
			<-block
			return nil, nil
		},
	}})
	tests := []struct {
		ref, args string
		timeout   time.Duration
		want      Result
	}{
		{"go.tools:echo", `{"b":[1.50],"a":"<x>"}`, 0, Result{Content: `{"a":"<x>","b":[1.50]}`}},
		{"go.tools:text", `{}`, 0, Result{Content: `plain <text>`}},
		{"go.tools:fail", `{}`, 0, Result{Content: `no stock`, IsError: true, Note: `impl go.tools:fail returned an error: no stock`}},
		{"go.tools:panic", `{}`, 0, Result{Content: `boom`, IsError: true, Note: `impl go.tools:panic panicked: boom`}},
		{"go.tools:chan", `{}`, 0, Result{Content: `dryfire: impl go.tools:chan returned a value that is not JSON-representable: json: unsupported type: chan int`, IsError: true,
			Note: `impl go.tools:chan returned a value that is not JSON-representable: json: unsupported type: chan int`}},
		{"go.tools:hang", `{}`, 100 * time.Millisecond, Result{Content: `dryfire: impl go.tools:hang: timed out after 0.1 s`, IsError: true,
			Note: `impl go.tools:hang (c) timed out after 0.1 s`}},
		{"go.tools:echo", `[1]`, 0, Result{Content: `dryfire: impl go.tools:echo not called: the arguments are not a JSON object`, IsError: true}},
	}
	for _, tt := range tests {
		got := r.Call(context.Background(), Request{Ref: tt.ref, Args: tt.args, Timeout: tt.timeout, Label: "c"})
		if got != tt.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.ref, got, tt.want)
		}
	}
	if err := r.Resolve(context.Background(), "go.tools:echo"); err != nil {
		t.Errorf("Resolve of a Go func: %v", err)
	}
	if run := r.Running(); len(run) != 1 || run[0] != "c → go.tools:hang" {
		t.Errorf("Running() = %q", run)
	}
	r.mu.Lock()
	started := r.proc != nil
	r.mu.Unlock()
	if started {
		t.Error("Go funcs started the python helper")
	}
}

// A passthrough function that closed fd 0 broke the helper for the rest of
// the run: every later call failed with "write |1: broken pipe", the
// helper was never restarted, and the run never ended.
func TestHostileFunctionClosingStdinRestartsTheHelper(t *testing.T) {
	r, _ := newRunner(t, Options{})
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:close_stdin", Args: `{}`}); got.Content != "closed" {
		t.Fatalf("close_stdin: %+v", got)
	}
	for i := range 3 {
		if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`, Timeout: 10 * time.Second}); got.Content != "7" {
			t.Errorf("call %d after the helper broke: %+v", i, got)
		}
	}
	r.Call(context.Background(), Request{Ref: "mytools.impls:close_stdin", Args: `{}`})
	done := make(chan error)
	go func() { done <- r.Close(context.Background(), nil) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Close does not return: the broken helper never exits")
	}
}

// A function that closes the helper's answer pipe: the helper can answer
// nothing more, so it is killed and the next call gets a new one.
func TestHostileFunctionClosingTheAnswerPipeRestartsTheHelper(t *testing.T) {
	r, _ := newRunner(t, Options{})
	got := r.Call(context.Background(), Request{Ref: "mytools.impls:close_protocol", Args: `{}`, Timeout: 10 * time.Second})
	if !got.IsError || !strings.Contains(got.Content, "while running this call; it will be started again for later calls") {
		t.Errorf("close_protocol: %+v", got)
	}
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`, Timeout: 10 * time.Second}); got.Content != "7" {
		t.Errorf("after: %+v", got)
	}
}
