// Package program runs an agent's program (agent.command) for one case:
// its process group started (in a network namespace when one is given)
// and killed whole when it exits, times out or the run is interrupted,
// its output and the end of its standard error kept within bounds, and
// how it ended said in words a case's report can show. What the program
// is told (its environment, its input, a conversation) is the caller's;
// this package only runs it.
package program

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dryfire-dev/dryfire/internal/netjail"
	"github.com/dryfire-dev/dryfire/internal/reaper"
)

// StderrLines is how many of the last lines a program wrote on standard
// error a result keeps.
const StderrLines = 20

// MaxOutput bounds what a program's standard output may hold; the rest
// is dropped, and the result says so (Result.Cut).
const MaxOutput = 16 << 20

// waitDelay is how long a program that exited may leave what it started
// holding its output open.
const waitDelay = 2 * time.Second

// Spec is one run of a program.
type Spec struct {
	Argv []string
	// Command is the command line as the suite writes it, for the error
	// saying the program could not start; Argv when nil.
	Command []string
	Dir     string
	Env     []string
	Stdin   string        // the program's standard input, when Talk is nil
	Timeout time.Duration // agent.timeout_s: the run is killed past it
	// Jail, when set, is the network namespace the program runs in; it
	// is closed when the program has exited.
	Jail *netjail.Jail
	// Talk, when set, speaks with the program while it runs: it gets the
	// program's standard input (to close when done) and a channel closed
	// when the program has exited, and its standard output goes to
	// Stdout, not to Result.Output.
	Talk   func(ctx context.Context, stdin io.WriteCloser, exited <-chan struct{})
	Stdout io.Writer
}

// Result is how a run ended.
type Result struct {
	Output string // standard output, less one line end at its end
	Cut    bool   // the output went past MaxOutput
	Stderr string // the last StderrLines lines of standard error
	Err    error  // why the run failed, or nil
	Infra  bool   // Err is the surroundings': it could not start, or was interrupted
	// ExitCode is the status it exited with (0 with no Err), -1 when it
	// did not exit by itself; TimedOut says it was killed at Timeout.
	ExitCode int
	TimedOut bool
	// Attempts are what the program tried past dryfire in its Jail.
	Attempts []netjail.Attempt
}

// Run runs the program to its end. The program and whatever it starts
// are one process group (a job object on Windows), killed whole on a
// timeout, when ctx ends, and when the program has exited (what it left
// running).
func Run(ctx context.Context, s Spec) Result {
	cctx, cancel := context.WithTimeout(ctx, s.Timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, s.Argv[0], s.Argv[1:]...)
	cmd.Dir, cmd.Env = s.Dir, s.Env
	stdout := &capped{max: MaxOutput}
	stderr := &tail{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	var stdin io.WriteCloser
	if s.Talk != nil {
		cmd.Stdout = s.Stdout
		var err error
		if stdin, err = cmd.StdinPipe(); err != nil {
			return Result{Err: err, Infra: true}
		}
	} else {
		cmd.Stdin = strings.NewReader(s.Stdin)
	}
	newGroup(cmd)
	cmd.Cancel = func() error { return killGroup(cmd) }
	cmd.WaitDelay = waitDelay
	var err error
	if s.Jail != nil {
		err = s.Jail.Start(cmd)
	} else if started := reaper.Wrap(cmd); started != nil {
		err = started(cmd.Start())
	} else {
		err = cmd.Start()
	}
	if err == nil {
		joinGroup(cmd)
	}
	if err == nil && s.Talk != nil {
		exited := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		s.Talk(cctx, stdin, exited)
		<-exited
		err = waitErr
	} else if err == nil {
		err = cmd.Wait()
	}
	if cmd.Process != nil {
		killGroup(cmd)
	}
	var attempts []netjail.Attempt
	if s.Jail != nil {
		attempts = s.Jail.Close()
	}
	if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // it exited 0; what it left running held its output open
	}
	r := Result{Output: trimNewline(stdout.String()), Cut: stdout.cut, Stderr: stderr.String(), Attempts: attempts, ExitCode: -1}
	var exit *exec.ExitError
	switch {
	case err == nil:
		r.ExitCode = 0
	case ctx.Err() != nil:
		r.Err, r.Infra = errors.New("interrupted"), true
	case cctx.Err() != nil:
		r.TimedOut = true
		r.Err = fmt.Errorf("the agent did not finish within %s s (agent.timeout_s), and was killed", strconv.FormatFloat(s.Timeout.Seconds(), 'f', -1, 64))
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.Err = fmt.Errorf("the agent was killed by signal %s", ws.Signal())
		} else if code := exit.ExitCode(); s.Jail != nil && code > 128 && code <= 128+64 {
			// In a jail, bubblewrap is between dryfire and the program: it
			// exits 128+N for a program killed by signal N.
			r.Err = fmt.Errorf("the agent was killed by signal %s", syscall.Signal(code-128))
		} else {
			r.ExitCode = exit.ExitCode()
			r.Err = fmt.Errorf("the agent exited with status %d", exit.ExitCode())
		}
	default:
		shown := s.Command
		if shown == nil {
			shown = s.Argv
		}
		r.Err = fmt.Errorf("the agent could not start: %s: %w", strings.Join(quoteArgs(shown), " "), err)
		r.Infra = true
	}
	return r
}

// AbsArgs is a command line to run in another directory than dir (where
// it is written): each argument that is a relative path to an existing
// file of dir is made absolute, so that the program and its scripts are
// still found.
func AbsArgs(dir string, args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		if a == "" || filepath.IsAbs(a) || strings.HasPrefix(a, "-") {
			continue
		}
		p := filepath.Join(dir, a)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			if abs, err := filepath.Abs(p); err == nil {
				out[i] = abs
			}
		}
	}
	return out
}

// Environ is the environment of a program: base without the variables
// drop names, then set in its order, and loopback kept away from any
// proxy (with HTTP_PROXY, HTTPS_PROXY or ALL_PROXY set, 127.0.0.1 and
// localhost are added to NO_PROXY and no_proxy).
func Environ(base []string, drop func(key string) bool, set [][2]string) []string {
	out := make([]string, 0, len(base)+len(set)+2)
	var noProxy, noProxyLower string
	proxied := false
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case drop(k):
			continue
		case k == "NO_PROXY":
			noProxy = v
			continue
		case k == "no_proxy":
			noProxyLower = v
			continue
		case strings.EqualFold(k, "HTTP_PROXY") || strings.EqualFold(k, "HTTPS_PROXY") || strings.EqualFold(k, "ALL_PROXY"):
			proxied = proxied || v != ""
		}
		out = append(out, kv)
	}
	for _, kv := range set {
		out = append(out, kv[0]+"="+kv[1])
	}
	if proxied {
		noProxy = joinList(noProxy, "127.0.0.1,localhost")
		noProxyLower = joinList(noProxyLower, "127.0.0.1,localhost")
	}
	if noProxy != "" {
		out = append(out, "NO_PROXY="+noProxy)
	}
	if noProxyLower != "" {
		out = append(out, "no_proxy="+noProxyLower)
	}
	return out
}

func joinList(list, more string) string {
	if list == "" {
		return more
	}
	return list + "," + more
}

func quoteArgs(args []string) []string {
	out := make([]string, len(args))
	for i, s := range args {
		if s == "" || strings.ContainsAny(s, " \t\n'\"\\$`") {
			s = strconv.Quote(s)
		}
		out[i] = s
	}
	return out
}

// trimNewline drops one line end at the end of s: what print and
// console.log add.
func trimNewline(s string) string {
	if t, ok := strings.CutSuffix(s, "\n"); ok {
		return strings.TrimSuffix(t, "\r")
	}
	return s
}

// capped keeps the first max bytes written to it.
type capped struct {
	max int
	buf bytes.Buffer
	cut bool
}

func (w *capped) Write(p []byte) (int, error) {
	room := max(w.max-w.buf.Len(), 0)
	w.cut = w.cut || len(p) > room
	w.buf.Write(p[:min(len(p), room)])
	return len(p), nil
}

func (w *capped) String() string { return w.buf.String() }

// tail keeps the end of what is written to it: its last StderrLines
// lines, each cut to maxTailLine bytes.
type tail struct {
	buf []byte
}

const (
	maxTailLine = 2000
	maxTailBuf  = 64 << 10
)

func (w *tail) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*maxTailBuf {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-maxTailBuf:]...)
	}
	return len(p), nil
}

func (w *tail) String() string {
	s := strings.TrimRight(string(w.buf), "\r\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > StderrLines {
		lines = lines[len(lines)-StderrLines:]
	}
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxTailLine {
			l = l[:maxTailLine] + "…"
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}
