package passthrough

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestHostileFunctionsUnderLoadAndMemoryCap: functions that close fd 0
// (sys.stdin.close(); os.close(0)) and fd 1, beside plain ones, in
// several helpers at once, each under a memory cap (prlimit --as=3G),
// ten rounds. The helper read its requests from fd 0: closing it killed
// a reader thread (EBADF), and the run could wedge. Now the requests
// have a descriptor of their own and fd 0 is /dev/null: the same helper
// answers every later call, and Close returns.
func TestHostileFunctionsUnderLoadAndMemoryCap(t *testing.T) {
	needPython(t)
	python := "python3"
	if _, err := exec.LookPath("prlimit"); err == nil {
		python = filepath.Join(t.TempDir(), "capped-python")
		if err := os.WriteFile(python, []byte("#!/bin/sh\nexec prlimit --as=3221225472 python3 \"$@\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	} else {
		t.Log("prlimit (util-linux) is not installed: no memory cap")
	}
	const rounds, helpers = 10, 4
	for round := range rounds {
		var wg sync.WaitGroup
		for h := range helpers {
			wg.Go(func() {
				r, stderr := newRunner(t, Options{Python: python})
				call := func(ref string) string {
					return r.Call(context.Background(), Request{Ref: "mytools.impls:" + ref, Args: `{}`, Timeout: 10 * time.Second}).Content
				}
				before := call("pid")
				for _, ref := range []string{"close_stdin_fully", "close_stdout", "close_stdin_fully"} {
					if got := call(ref); got != "closed" {
						t.Errorf("round %d, helper %d: %s: %q", round, h, ref, got)
					}
				}
				for range 3 {
					if got := call("pid"); got != before {
						t.Errorf("round %d, helper %d: a call after fd 0 and 1 were closed went to helper %s, not %s (the first one broke); stderr:\n%s", round, h, got, before, stderr)
					}
				}
				done := make(chan error, 1)
				go func() { done <- r.Close(context.Background(), nil) }()
				select {
				case <-done:
				case <-time.After(15 * time.Second):
					t.Errorf("round %d, helper %d: Close did not return within 15 s", round, h)
				}
			})
		}
		wg.Wait()
		if t.Failed() {
			return
		}
	}
}

// TestStderrLinesArePrintable: what the helper writes on standard error
// reaches the terminal with its control characters written out (an
// escape sequence, a carriage return), each line prefixed.
func TestStderrLinesArePrintable(t *testing.T) {
	var b syncBuffer
	w := &prefixWriter{w: &b, prefix: "python: "}
	w.Write([]byte("clear\x1b[2J\rdone\ttab\r\nlast\x07"))
	w.flush()
	if got, want := b.String(), "python: clear\\x1b[2J\\x0ddone\ttab\npython: last\\x07\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestHelperFailureIsOneLine: a function that closes the protocol's
// descriptors (os.closerange) breaks the helper; what the helper says of
// it on standard error is one line of dryfire's, not a Python traceback.
func TestHelperFailureIsOneLine(t *testing.T) {
	r, stderr := newRunner(t, Options{})
	r.Call(context.Background(), Request{Ref: "mytools.impls:close_protocol", Args: `{}`, Timeout: 10 * time.Second})
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`, Timeout: 10 * time.Second}); got.Content != "7" {
		t.Fatalf("after: %+v", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r.Close(ctx, nil)
	if s := stderr.String(); strings.Contains(s, "Traceback") || !strings.Contains(s, "python: dryfire passthrough helper: ") {
		t.Fatalf("stderr:\n%s", s)
	}
}
