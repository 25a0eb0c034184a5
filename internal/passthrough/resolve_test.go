package passthrough

import (
	"context"
	"errors"
	"os"
	"runtime"
	"testing"
	"time"
)

// An import that never finishes is given up on once: its module is not
// imported again, and the other references are still checked, by a new
// helper, instead of each waiting for the hung import.
func TestResolveHungImport(t *testing.T) {
	r, _ := newRunner(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := r.Resolve(ctx, "hangs:f"); err == nil || !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("Resolve(hangs:f) = %v, ctx %v", err, ctx.Err())
	}
	start := time.Now()
	err := r.Resolve(context.Background(), "hangs:g")
	if want := "not checked: importing hangs did not finish when resolving hangs:f"; err == nil || err.Error() != want {
		t.Errorf("Resolve(hangs:g) = %v, want %q", err, want)
	}
	if err := r.Resolve(context.Background(), "mytools.impls:echo"); err != nil {
		t.Errorf("Resolve(mytools.impls:echo) after a hung import: %v", err)
	}
	if got := r.Call(context.Background(), Request{Ref: "mytools.impls:an_int", Args: `{}`}); got.Content != "7" {
		t.Errorf("call after a hung import: %+v", got)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Errorf("the references after the hung import took %v", el)
	}
}

// A helper that cannot start is not started again for every reference.
func TestStartFailureRemembered(t *testing.T) {
	// A program that exits at once: true, or on Windows this test binary
	// (it refuses the interpreter's flags).
	exits := "/bin/true"
	if runtime.GOOS == "windows" {
		exits, _ = os.Executable()
	}
	r := New(Options{Python: exits, Getenv: func(string) string { return "" }})
	for _, ref := range []string{"a.b:c", "d.e:f"} {
		err := r.Resolve(context.Background(), ref)
		if err == nil || err.Error() != exits+" exited before the python helper's handshake: is it Python 3.8 or later?" {
			t.Fatalf("Resolve(%s) = %v", ref, err)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.startErr == nil {
		t.Error("the start failure is not remembered")
	}
}
