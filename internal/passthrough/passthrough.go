// Package passthrough runs impl: mocks, the user's own code behind a tool:
// Python callables in one long-lived python3 helper per run, or Go
// functions registered through the library. Every call is bounded, every
// failure becomes an error result, and nothing the user's code does can
// crash the run. The code runs unsandboxed, by design.
package passthrough

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/value"
)

//go:embed helper.py
var helperSource string

// Protocol is the helper protocol version this build speaks.
const Protocol = 1

// closeGrace is how long Close lets calls that are ending finish before
// it names the ones still running.
const closeGrace = 500 * time.Millisecond

// closeStuck is how long Close waits for a helper with no call running to
// end before killing it.
const closeStuck = 3 * time.Second

// DefaultTimeout bounds a call whose rule sets no timeout_s.
const DefaultTimeout = 30 * time.Second

// Func is a Go callable registered under an impl name: it receives the
// parsed arguments (one object) and returns a JSON-representable value,
// a string delivered verbatim, or an error delivered as an error result.
type Func func(ctx context.Context, args map[string]any) (any, error)

// Options configure a Runner.
type Options struct {
	// Python is the interpreter; empty means $DRYFIRE_PYTHON, then
	// python3 from PATH (so an activated virtualenv is used).
	Python string
	// Dir is the helper's working directory, put first on sys.path;
	// empty means dryfire's own.
	Dir string
	// Stderr receives the helper's standard error (and whatever user code
	// prints), each line prefixed. Nil discards it.
	Stderr io.Writer
	// Funcs are Go callables by impl name (package.module:function);
	// they take precedence over Python.
	Funcs map[string]Func
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
	// Workspace, when set, is a case's workspace directory: the helper's
	// working directory and its DRYFIRE_WORKSPACE, while Dir stays first
	// on sys.path (see InWorkspace).
	Workspace string
}

// Request is one passthrough call.
type Request struct {
	Ref     string        // package.module:function
	Args    string        // the arguments, JSON text
	Timeout time.Duration // 0 means DefaultTimeout
	Label   string        // names the call in messages (case and tool)
}

// Result is what the model receives, plus a note for the report.
type Result struct {
	Content string
	IsError bool
	// Note carries what the model does not see: an exception's type and
	// last traceback frame, a timeout.
	Note string
}

// Runner serves the passthrough calls of one run.
type Runner struct {
	opts Options

	mu       sync.Mutex
	proc     *proc
	startErr error // why the helper could not start: not tried again
	resolved map[string]error
	hung     map[string]string // module: the reference whose import did not finish
	goCalls  map[int64]string  // Go calls still running, by id
	nextGo   int64
	closed   bool
}

// New returns a Runner; the Python helper starts on first use.
func New(opts Options) *Runner {
	if opts.Getenv == nil {
		opts.Getenv = os.Getenv
	}
	return &Runner{opts: opts, resolved: map[string]error{}, hung: map[string]string{}, goCalls: map[int64]string{}}
}

// InWorkspace is a Runner like r, whose helper (a process of its own,
// started at its first call) runs in a case's workspace directory: its
// working directory and DRYFIRE_WORKSPACE are dir, so that the impl code
// of concurrent cases never shares files. Its modules are imported again
// in that helper. Close it when the case ends.
func (r *Runner) InWorkspace(dir string) *Runner {
	o := r.opts
	o.Workspace = dir
	return New(o)
}

// Resolve checks that ref names a callable, importing its module (which
// runs the module's top-level code) the first time.
func (r *Runner) Resolve(ctx context.Context, ref string) error {
	if _, ok := r.opts.Funcs[ref]; ok {
		return nil
	}
	module, _, _ := strings.Cut(ref, ":")
	r.mu.Lock()
	err, done := r.resolved[ref]
	first, hung := r.hung[module]
	r.mu.Unlock()
	if done {
		return err
	}
	if hung {
		return fmt.Errorf("not checked: importing %s did not finish when resolving %s", module, first)
	}
	p, err := r.helper()
	if err == nil {
		var resp response
		resp, err = p.request(ctx, request{Op: "resolve", Ref: ref}, "resolving "+ref, 0)
		if err == nil && !resp.OK {
			err = fmt.Errorf("%s", resp.Message)
		}
		if err != nil && ctx.Err() != nil {
			// The import is still running and holds the helper's import
			// lock: every later reference would wait for it in vain. That
			// helper is ended (the next reference starts another), and
			// this module is not imported again.
			err = fmt.Errorf("importing %s did not finish", module)
			r.mu.Lock()
			r.hung[module] = ref
			r.mu.Unlock()
			p.kill()
			<-p.dead
		}
	}
	r.mu.Lock()
	r.resolved[ref] = err
	r.mu.Unlock()
	return err
}

// Call runs one passthrough call and never fails: every problem comes back
// as an error result.
func (r *Runner) Call(ctx context.Context, req Request) Result {
	if req.Timeout <= 0 {
		req.Timeout = DefaultTimeout
	}
	if !json.Valid([]byte(req.Args)) {
		return Result{Content: fmt.Sprintf("dryfire: impl %s not called: the arguments are not valid JSON", req.Ref), IsError: true}
	}
	if f, ok := r.opts.Funcs[req.Ref]; ok {
		return r.callGo(ctx, f, req)
	}
	var resp response
	var err error
	// A helper whose input is broken (a function closed its fd 0) cannot
	// take the call: it is killed, and the call goes to a new one, once.
	for attempt := 0; ; attempt++ {
		var p *proc
		p, err = r.helper()
		if err != nil {
			return Result{Content: fmt.Sprintf("dryfire: impl %s: %v", req.Ref, err), IsError: true}
		}
		resp, err = p.request(ctx, request{Op: "call", Ref: req.Ref, Args: req.Args}, req.Label+" → "+req.Ref, req.Timeout)
		var se *sendError
		if !errors.As(err, &se) || attempt > 0 {
			break
		}
		p.kill()
		<-p.dead
	}
	if err != nil {
		res := Result{Content: fmt.Sprintf("dryfire: impl %s: %v", req.Ref, err), IsError: true}
		if _, ok := err.(*timeoutError); ok {
			res.Note = fmt.Sprintf("impl %s (%s) %v", req.Ref, req.Label, err)
		}
		return res
	}
	ref := req.Ref
	if resp.OK {
		if resp.JSON != nil {
			return render(ref, string(resp.JSON))
		}
		return Result{Content: resp.Text}
	}
	switch resp.Kind {
	case "raised":
		note := fmt.Sprintf("impl %s raised %s: %s", ref, resp.Type, resp.Message)
		if resp.Frame != "" {
			note += " (at " + resp.Frame + ")"
		}
		return Result{Content: resp.Message, IsError: true, Note: note}
	case "not_json":
		return Result{Content: fmt.Sprintf("dryfire: impl %s %s", ref, resp.Message), IsError: true,
			Note: fmt.Sprintf("impl %s %s", ref, resp.Message)}
	}
	return Result{Content: fmt.Sprintf("dryfire: impl %s: %s", ref, resp.Message), IsError: true}
}

// render turns JSON text into the canonical form every result uses.
func render(ref, text string) Result {
	v, err := value.Parse([]byte(text))
	if err != nil {
		return Result{Content: fmt.Sprintf("dryfire: impl %s returned invalid JSON: %v", ref, err), IsError: true}
	}
	return Result{Content: value.Canonical(v)}
}

// seconds renders a duration the way messages say it: 30 s, 0.5 s.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

type timeoutError struct{ d time.Duration }

func (e *timeoutError) Error() string { return "timed out after " + seconds(e.d) }

func (r *Runner) callGo(ctx context.Context, f Func, req Request) Result {
	var args map[string]any
	if v, err := value.Parse([]byte(req.Args)); err == nil {
		args, _ = v.(map[string]any)
	}
	if args == nil {
		return Result{Content: fmt.Sprintf("dryfire: impl %s not called: the arguments are not a JSON object", req.Ref), IsError: true}
	}
	cctx, cancel := context.WithTimeout(ctx, req.Timeout)
	defer cancel()
	r.mu.Lock()
	id := r.nextGo
	r.nextGo++
	r.goCalls[id] = req.Label + " → " + req.Ref
	r.mu.Unlock()

	type outcome struct {
		v     any
		err   error
		panic any
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- outcome{panic: p}
			}
			r.mu.Lock()
			delete(r.goCalls, id)
			r.mu.Unlock()
		}()
		v, err := f(cctx, args)
		done <- outcome{v: v, err: err}
	}()
	select {
	case o := <-done:
		switch {
		case o.panic != nil:
			msg := fmt.Sprint(o.panic)
			return Result{Content: msg, IsError: true, Note: fmt.Sprintf("impl %s panicked: %s", req.Ref, msg)}
		case o.err != nil:
			return Result{Content: o.err.Error(), IsError: true, Note: fmt.Sprintf("impl %s returned an error: %v", req.Ref, o.err)}
		}
		if s, ok := o.v.(string); ok {
			return Result{Content: s}
		}
		data, err := json.Marshal(o.v)
		if err != nil {
			msg := fmt.Sprintf("returned a value that is not JSON-representable: %v", err)
			return Result{Content: fmt.Sprintf("dryfire: impl %s %s", req.Ref, msg), IsError: true, Note: fmt.Sprintf("impl %s %s", req.Ref, msg)}
		}
		return render(req.Ref, string(data))
	case <-cctx.Done():
		if ctx.Err() != nil {
			return Result{Content: fmt.Sprintf("dryfire: impl %s: interrupted", req.Ref), IsError: true}
		}
		err := &timeoutError{req.Timeout}
		return Result{Content: fmt.Sprintf("dryfire: impl %s: %v", req.Ref, err), IsError: true,
			Note: fmt.Sprintf("impl %s (%s) %v", req.Ref, req.Label, err)}
	}
}

// Running names the calls still running: wedged sync calls past their
// bound, and any call in flight.
func (r *Runner) Running() []string {
	r.mu.Lock()
	p := r.proc
	out := slices.Collect(maps.Values(r.goCalls))
	r.mu.Unlock()
	if p != nil {
		out = append(out, p.running()...)
	}
	slices.Sort(out)
	return out
}

// Close ends the run's passthrough: the helper is told no more calls come
// and exits once its calls have returned. When calls are still running,
// Close says so on w and waits for them until ctx is done; then it kills
// the helper and abandons them.
func (r *Runner) Close(ctx context.Context, w io.Writer) error {
	r.mu.Lock()
	r.closed = true
	p := r.proc
	r.mu.Unlock()
	if p != nil {
		p.stdin.Close() // a send blocked on a full pipe fails at once rather than holding it open
	}
	// Calls about to end (a cancelled async call acknowledging) get a
	// moment before dryfire says it is waiting: only the ones that really
	// run on are named.
	for deadline := time.Now().Add(closeGrace); len(r.Running()) > 0 && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if running := r.Running(); len(running) > 0 && w != nil {
		fmt.Fprintf(w, "dryfire: waiting for %d passthrough call(s) to finish (Ctrl-C to abandon them): %s\n",
			len(running), strings.Join(running, "; "))
	}
	// A helper that does not end within closeStuck of its last call
	// answering (none running) is broken: it is killed, so the run
	// always ends. Calls still running are waited for, until ctx ends.
	if p != nil {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		var idle time.Time
	wait:
		for {
			select {
			case <-p.dead:
				break wait
			case <-ctx.Done():
				p.kill()
				<-p.dead
				if w != nil {
					fmt.Fprintln(w, "dryfire: abandoned the passthrough calls still running")
				}
				return ctx.Err()
			case now := <-tick.C:
				if len(p.running()) > 0 {
					idle = time.Time{}
					continue
				}
				if idle.IsZero() {
					idle = now
				}
				if now.Sub(idle) >= closeStuck {
					p.kill()
					<-p.dead
					break wait
				}
			}
		}
	}
	for {
		r.mu.Lock()
		n := len(r.goCalls)
		r.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			if w != nil {
				fmt.Fprintln(w, "dryfire: abandoned the passthrough calls still running")
			}
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}
