package toolrec

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// MaxStderrTail bounds what is kept of an MCP server command's standard
// error: its last bytes, quoted when the server cannot be connected to.
const MaxStderrTail = 2 << 10

// stderrTail reads a command's standard error through a pipe of its own
// (no goroutine of os/exec for Wait to wait on), keeping its end.
type stderrTail struct {
	mu   sync.Mutex
	b    []byte
	w    *os.File // the command's end, closed once it has started
	done chan struct{}
}

// newStderrTail is nil when no pipe can be made (standard error is then
// not read, as before).
func newStderrTail() *stderrTail {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	t := &stderrTail{w: w, done: make(chan struct{})}
	go func() {
		io.Copy(t, r)
		r.Close()
		close(t.done)
	}()
	return t
}

func (t *stderrTail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > MaxStderrTail {
		t.b = append([]byte(nil), t.b[len(t.b)-MaxStderrTail:]...)
	}
	return len(p), nil
}

// started closes this process's copy of the command's end.
func (t *stderrTail) started() { t.w.Close() }

// end is what the command wrote last, waiting a moment for it to end.
func (t *stderrTail) end() string {
	select {
	case <-t.done:
	case <-time.After(time.Second):
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.b))
}
