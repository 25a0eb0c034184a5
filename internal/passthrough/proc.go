package passthrough

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"
)

// handshakeTimeout bounds the helper's start, Python's own start included.
const handshakeTimeout = 20 * time.Second

type response struct {
	ID      int64           `json:"id"`
	OK      bool            `json:"ok"`
	Text    string          `json:"text"`
	JSON    json.RawMessage `json:"json"`
	Kind    string          `json:"kind"`
	Type    string          `json:"type"`
	Message string          `json:"message"`
	Frame   string          `json:"frame"`
}

type pending struct {
	ch        chan response
	label     string
	abandoned bool // the caller stopped waiting (timeout): still running
}

// proc is one running helper process.
type proc struct {
	cmd   *exec.Cmd
	stdin *os.File // the requests' pipe
	wmu   sync.Mutex

	mu      sync.Mutex
	nextID  int64
	pending map[int64]*pending
	dead    chan struct{} // closed once the process has exited
	exitErr error         // why it exited, valid after dead
}

// helper returns the running helper, starting one when there is none or
// the last one died.
func (r *Runner) helper() (*proc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.proc != nil {
		select {
		case <-r.proc.dead:
		default:
			return r.proc, nil
		}
	}
	if r.closed {
		return nil, errors.New("the run is over")
	}
	if r.startErr != nil {
		// An interpreter that is missing or is not Python does not come
		// right during a run: every reference would wait to fail again.
		return nil, r.startErr
	}
	p, err := start(r.opts)
	if err != nil {
		r.startErr = err
		return nil, err
	}
	r.proc = p
	return p, nil
}

// pythonPath finds the interpreter.
func pythonPath(o Options) (string, error) {
	py, from := o.Python, "--python"
	if py == "" {
		py, from = o.Getenv("DRYFIRE_PYTHON"), "DRYFIRE_PYTHON"
	}
	if py == "" {
		py, from = "python3", ""
	}
	path, err := exec.LookPath(py)
	if err == nil {
		return path, nil
	}
	if from == "" {
		return "", errors.New("python3 not found on PATH: install Python 3, activate your virtualenv, or set --python / DRYFIRE_PYTHON")
	}
	why := "cannot be run (" + err.Error() + ")"
	if st, serr := os.Stat(py); serr == nil && st.IsDir() {
		why = "is a directory, not an interpreter"
	} else if errors.Is(err, exec.ErrNotFound) && !strings.ContainsAny(py, `/\`) {
		why = "is not on PATH"
	} else if errors.Is(err, fs.ErrNotExist) || errors.Is(err, exec.ErrNotFound) {
		// A path that names no file: Windows' LookPath says "not found"
		// when no file is there with any extension of PATHEXT.
		why = "does not exist"
	} else if errors.Is(err, fs.ErrPermission) {
		why = "is not executable"
	}
	msg := fmt.Sprintf("the Python interpreter %q given by %s %s", py, from, why)
	if from == "DRYFIRE_PYTHON" {
		msg += "; fix DRYFIRE_PYTHON, or unset it to use python3 from PATH"
	}
	return "", errors.New(msg)
}

// envRequests tells the helper which descriptor its requests come on.
const envRequests = "DRYFIRE_PASSTHROUGH_REQUESTS"

// envImplDir tells a helper running in a workspace where the impl
// modules are (its sys.path[0]).
const envImplDir = "DRYFIRE_IMPL_DIR"

func start(o Options) (*proc, error) {
	py, err := pythonPath(o)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(py, "-u", "-c", helperSource)
	cmd.Dir = o.Dir
	if o.Workspace != "" {
		dir, err := filepath.Abs(cmp.Or(o.Dir, "."))
		if err != nil {
			return nil, fmt.Errorf("starting the python helper: %w", err)
		}
		cmd.Dir = o.Workspace
		cmd.Env = append(os.Environ(), "DRYFIRE_WORKSPACE="+o.Workspace, envImplDir+"="+dir)
	}
	newGroup(cmd)
	cmd.Stderr = io.Discard
	if o.Stderr != nil {
		cmd.Stderr = &prefixWriter{w: o.Stderr, prefix: "python: "}
	}
	cmd.WaitDelay = 2 * time.Second
	// The requests reach the helper on a descriptor of their own (3, which
	// it moves out of the way at once), not its standard input: user code
	// may close fd 0 (and the number be reused). Its standard input is
	// /dev/null.
	reqR, reqW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the python helper: %w", err)
	}
	requestsOn(cmd, reqR)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		reqR.Close()
		reqW.Close()
		return nil, fmt.Errorf("starting the python helper: %w", err)
	}
	err = cmd.Start()
	reqR.Close()
	if err != nil {
		reqW.Close()
		return nil, fmt.Errorf("starting the python helper (%s): %w", py, err)
	}
	p := &proc{cmd: cmd, stdin: reqW, pending: map[int64]*pending{}, dead: make(chan struct{})}
	br := bufio.NewReaderSize(stdout, 64<<10)

	hs := make(chan error, 1)
	go func() {
		line, err := br.ReadBytes('\n')
		if err != nil {
			hs <- fmt.Errorf("%s exited before the python helper's handshake: is it Python 3.8 or later?", py)
			return
		}
		var h struct {
			Protocol *int   `json:"dryfire_passthrough"`
			Python   string `json:"python"`
		}
		if json.Unmarshal(line, &h) != nil || h.Protocol == nil {
			hs <- fmt.Errorf("%s is not Python 3.8 or later: instead of the python helper's handshake it printed %q", py, clip(bytes.TrimSpace(line), 60))
			return
		}
		if *h.Protocol != Protocol {
			hs <- fmt.Errorf("the python helper speaks protocol %d; this dryfire speaks %d", *h.Protocol, Protocol)
			return
		}
		hs <- nil
		p.read(br)
	}()
	select {
	case err = <-hs:
	case <-time.After(handshakeTimeout):
		err = fmt.Errorf("the python helper did not start within %s", handshakeTimeout)
	}
	if err != nil {
		p.kill()
		go cmd.Wait()
		return nil, err
	}
	return p, nil
}

// read dispatches responses until the helper's output ends, then fails
// every call still waiting.
func (p *proc) read(br *bufio.Reader) {
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var resp response
			if json.Unmarshal(line, &resp) == nil {
				p.mu.Lock()
				pd := p.pending[resp.ID]
				delete(p.pending, resp.ID)
				live := pd != nil && !pd.abandoned
				p.mu.Unlock()
				if live {
					pd.ch <- resp
				}
			}
		}
		if err != nil {
			break
		}
	}
	// The answers ended: a helper that lives on without them (a function
	// closed its output) can answer nothing more.
	exited := make(chan struct{})
	go func() {
		select {
		case <-exited:
		case <-time.After(closeStuck):
			p.kill()
		}
	}()
	werr := p.cmd.Wait()
	close(exited)
	if pw, ok := p.cmd.Stderr.(*prefixWriter); ok {
		pw.flush() // a last line without a newline, such as a crash's
	}
	why := fmt.Sprintf("failed (%v)", werr)
	if st := p.cmd.ProcessState; st != nil {
		why = fmt.Sprintf("exited with status %d", st.ExitCode())
		if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			why = fmt.Sprintf("was killed by signal %d (%s)", int(ws.Signal()), ws.Signal())
		} else if st.ExitCode() == 0 {
			why = "exited"
		}
	}
	p.mu.Lock()
	p.exitErr = errors.New(why)
	close(p.dead) // before failing calls, so that their callers start a new helper
	for id, pd := range p.pending {
		delete(p.pending, id)
		if !pd.abandoned {
			pd.ch <- response{ID: id, Kind: "died", Message: "the python helper " + why + " while running this call; it will be started again for later calls"}
		}
	}
	p.mu.Unlock()
}

// request sends one message and waits for its answer. timeout 0 waits as
// long as ctx allows.
func (p *proc) request(ctx context.Context, msg request, label string, timeout time.Duration) (response, error) {
	pd := &pending{ch: make(chan response, 1), label: label}
	p.mu.Lock()
	select {
	case <-p.dead:
		p.mu.Unlock()
		return response{}, fmt.Errorf("the python helper %v", p.exitErr)
	default:
	}
	p.nextID++
	id := p.nextID
	p.pending[id] = pd
	p.mu.Unlock()

	data := encodeRequest(id, msg)
	err := p.send(data)
	if err != nil {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
		return response{}, &sendError{err}
	}

	var expire <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	select {
	case resp := <-pd.ch:
		if resp.Kind == "died" {
			return resp, errors.New(resp.Message)
		}
		return resp, nil
	case <-expire:
		p.abandon(id)
		return response{}, &timeoutError{timeout}
	case <-ctx.Done():
		p.abandon(id)
		return response{}, errors.New("interrupted")
	}
}

// sendError is a request the helper never received: its input is broken.
type sendError struct{ err error }

func (e *sendError) Error() string { return "sending to the python helper: " + e.err.Error() }
func (e *sendError) Unwrap() error { return e.err }

// encodeRequest writes one request line; args is already JSON.
func encodeRequest(id int64, r request) []byte {
	b := make([]byte, 0, 64+len(r.Ref)+len(r.Args))
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, `,"op":`...)
	b = strconv.AppendQuote(b, r.Op)
	if r.Ref != "" {
		b = append(b, `,"ref":`...)
		q, _ := json.Marshal(r.Ref)
		b = append(b, q...)
	}
	if r.Args != "" {
		b = append(b, `,"args":`...)
		b = append(b, r.Args...)
	}
	return append(b, "}\n"...)
}

// request is one message to the helper.
type request struct {
	Op   string // call, resolve, cancel
	Ref  string
	Args string // JSON text
}

// abandon stops waiting for a call: an async one is cancelled, a sync one
// runs on in its thread and is counted until it returns.
func (p *proc) abandon(id int64) {
	p.mu.Lock()
	pd := p.pending[id]
	if pd != nil {
		pd.abandoned = true
	}
	p.mu.Unlock()
	if pd == nil {
		return
	}
	p.send(encodeRequest(id, request{Op: "cancel"}))
}

// sendBound is how long a request may wait for the helper to take it: a
// helper that reads nothing for that long (its pipe full) is broken.
const sendBound = 10 * time.Second

// send writes one request, within sendBound.
func (p *proc) send(data []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	p.stdin.SetWriteDeadline(time.Now().Add(sendBound))
	_, err := p.stdin.Write(data)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		err = fmt.Errorf("the python helper took no request for %s", seconds(sendBound))
	}
	return err
}

// running names the calls the helper has not answered.
func (p *proc) running() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, pd := range p.pending {
		out = append(out, pd.label)
	}
	return out
}

func (p *proc) kill() {
	if p.cmd.Process != nil {
		killGroup(p.cmd)
	}
}

// clip shortens b to at most n bytes (and a whole rune), marking the cut.
func clip(b []byte, n int) string {
	if len(b) <= n {
		return string(b)
	}
	for n > 0 && !utf8.RuneStart(b[n]) {
		n--
	}
	return string(b[:n]) + "…"
}

// prefixWriter forwards output line by line, each line prefixed.
type prefixWriter struct {
	mu     sync.Mutex
	w      io.Writer
	prefix string
	buf    []byte
}

func (pw *prefixWriter) Write(b []byte) (int, error) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	pw.buf = append(pw.buf, b...)
	for i := bytes.IndexByte(pw.buf, '\n'); i >= 0; i = bytes.IndexByte(pw.buf, '\n') {
		fmt.Fprintf(pw.w, "%s%s\n", pw.prefix, printable(bytes.TrimSuffix(pw.buf[:i], []byte("\r"))))
		pw.buf = pw.buf[i+1:]
	}
	return len(b), nil
}

// flush writes what is left, a line without its newline.
func (pw *prefixWriter) flush() {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if len(pw.buf) > 0 {
		fmt.Fprintf(pw.w, "%s%s\n", pw.prefix, printable(pw.buf))
		pw.buf = nil
	}
}

// printable is a line of the helper's standard error as the terminal may
// show it: control characters (an escape sequence, a carriage return
// that would overwrite dryfire's own words) written as \xNN.
func printable(b []byte) []byte {
	control := func(c byte) bool { return c < 0x20 && c != '\t' || c == 0x7f }
	if !slices.ContainsFunc(b, control) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for _, c := range b {
		if control(c) {
			out = fmt.Appendf(out, "\\x%02x", c)
			continue
		}
		out = append(out, c)
	}
	return out
}
