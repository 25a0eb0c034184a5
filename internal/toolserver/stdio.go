package toolserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ServeStdio serves the scope over MCP on in and out, newline-delimited
// JSON-RPC as a stdio server speaks it, until in ends (once every request
// read has been answered) or ctx is done.
//
// go-sdk v1.8.0 alone answers nothing when in ends right after the last
// request (go-sdk#1061: the end of input closes the connection before the
// answers are written), so `printf '...' | dryfire serve --stdio` would
// print nothing. ServeStdio holds the end of in back until every request
// has its answer.
func (s *Scope) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	p := &pending{done: ctx.Done()}
	p.cond = sync.NewCond(&p.mu)
	stop := context.AfterFunc(ctx, func() {
		p.mu.Lock()
		p.cond.Broadcast()
		p.mu.Unlock()
	})
	defer stop()
	var closer io.Closer
	if c, ok := in.(io.Closer); ok {
		closer = c
	}
	cw := &countWriter{w: out, p: p}
	t := &mcp.IOTransport{
		Reader: &drainReader{r: in, c: closer, p: p, refuse: cw.writeOwn},
		Writer: cw,
	}
	return s.ServeMCP(ctx, t)
}

// pending counts the requests read and not yet answered.
type pending struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
	done <-chan struct{}
}

func (p *pending) add(d int) {
	p.mu.Lock()
	p.n += d
	if p.n <= 0 {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

// wait returns once every request read has been answered, or the server
// is stopping.
func (p *pending) wait() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.n > 0 {
		select {
		case <-p.done:
			return
		default:
		}
		p.cond.Wait()
	}
}

// message is what counting needs of a JSON-RPC message.
type message struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

// calls counts the requests in one line (a message or a batch).
func calls(line []byte) int { return count(line, (*message).isCall) }

// responses counts the responses in what the server writes.
func responses(data []byte) int {
	n := 0
	for line := range bytes.Lines(data) {
		n += count(line, (*message).isResponse)
	}
	return n
}

// count counts the messages of one line (a message or a batch) that are
// what is.
func count(line []byte, is func(*message) bool) int {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return 0
	}
	if line[0] == '[' {
		var batch []message
		if json.Unmarshal(line, &batch) != nil {
			return 0
		}
		n := 0
		for i := range batch {
			if is(&batch[i]) {
				n++
			}
		}
		return n
	}
	var m message
	if json.Unmarshal(line, &m) != nil || !is(&m) {
		return 0
	}
	return 1
}

func (m *message) hasID() bool      { return len(m.ID) > 0 && string(m.ID) != "null" }
func (m *message) isResponse() bool { return m.Method == "" && m.hasID() }
func (m *message) isCall() bool     { return m.Method != "" && m.hasID() }

// drainReader passes input through line by line, counting the requests
// of each line; a line that is not a JSON-RPC message (or is longer than
// maxBody) is answered with a JSON-RPC error and not passed on, so that
// one bad line does not end the connection. At the end of input it waits
// for the answers of what it passed before reporting it.
type drainReader struct {
	r       io.Reader
	c       io.Closer
	p       *pending
	refuse  func([]byte) // writes the error answering a refused line
	buf     []byte       // what was read
	line    []byte       // the incomplete last line so far
	ready   []byte       // complete lines to pass on
	discard bool         // the current line is over the bound: drop to its end
	eof     bool
}

func (d *drainReader) Read(b []byte) (int, error) {
	for len(d.ready) == 0 && !d.eof {
		if d.buf == nil {
			d.buf = make([]byte, 64<<10)
		}
		n, err := d.r.Read(d.buf)
		d.scan(d.buf[:n])
		if err == io.EOF {
			d.scan([]byte("\n")) // a last line without its newline
			d.eof = true
		} else if err != nil {
			return 0, err
		}
	}
	if len(d.ready) > 0 {
		n := copy(b, d.ready)
		d.ready = d.ready[n:]
		if len(d.ready) == 0 {
			d.ready = nil
		}
		return n, nil
	}
	d.p.wait()
	return 0, io.EOF
}

func (d *drainReader) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		part := b
		if i >= 0 {
			part = b[:i]
		}
		switch {
		case d.discard:
		case len(d.line)+len(part) > maxBody:
			d.discard = true
			d.line = d.line[:0]
			d.refuse(rpcErrorLine(nil, -32600, fmt.Sprintf("invalid request: a line over %d bytes", maxBody)))
		default:
			d.line = append(d.line, part...)
		}
		if i < 0 {
			return
		}
		if !d.discard {
			d.take(d.line)
		}
		d.discard = false
		d.line = d.line[:0]
		b = b[i+1:]
	}
}

// take passes one complete line on, or refuses it.
func (d *drainReader) take(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	if bad, id, code, msg := checkRPC(line); bad {
		d.refuse(rpcErrorLine(id, code, msg))
		return
	}
	d.p.add(calls(line))
	d.ready = append(append(d.ready, line...), '\n')
}

func (d *drainReader) Close() error {
	if d.c != nil {
		return d.c.Close()
	}
	return nil
}

// countWriter passes output through, counting the answers.
type countWriter struct {
	mu sync.Mutex
	w  io.Writer
	p  *pending
}

func (c *countWriter) Write(b []byte) (int, error) {
	c.mu.Lock()
	n, err := c.w.Write(b)
	c.mu.Unlock()
	if k := responses(b[:n]); k > 0 {
		c.p.add(-k)
	}
	return n, err
}

// writeOwn writes an answer the server made itself, between go-sdk's.
func (c *countWriter) writeOwn(b []byte) {
	c.mu.Lock()
	c.w.Write(b)
	c.mu.Unlock()
}

func (c *countWriter) Close() error { return nil }
