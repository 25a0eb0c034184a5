package serve

import (
	"bytes"
	"context"
	"encoding/json"
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
	t := &mcp.IOTransport{
		Reader: &drainReader{r: in, c: closer, p: p},
		Writer: &countWriter{w: out, p: p},
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

// drainReader passes input through, counting the requests of each
// complete line; at the end of input it waits for their answers before
// reporting it.
type drainReader struct {
	r    io.Reader
	c    io.Closer
	p    *pending
	line []byte // the incomplete last line so far
	eof  bool
}

func (d *drainReader) Read(b []byte) (int, error) {
	if d.eof {
		d.p.wait()
		return 0, io.EOF
	}
	n, err := d.r.Read(b)
	d.scan(b[:n])
	if err == io.EOF {
		d.scan([]byte("\n")) // a last line without its newline
		d.eof = true
		if n > 0 {
			return n, nil // let go-sdk read those requests first
		}
		d.p.wait()
	}
	return n, err
}

func (d *drainReader) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			d.line = append(d.line, b...)
			return
		}
		if len(d.line) > 0 {
			d.line = append(d.line, b[:i]...)
			d.p.add(calls(d.line))
			d.line = d.line[:0]
		} else {
			d.p.add(calls(b[:i]))
		}
		b = b[i+1:]
	}
}

func (d *drainReader) Close() error {
	if d.c != nil {
		return d.c.Close()
	}
	return nil
}

// countWriter passes output through, counting the answers.
type countWriter struct {
	w io.Writer
	p *pending
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if k := responses(b[:n]); k > 0 {
		c.p.add(-k)
	}
	return n, err
}

func (c *countWriter) Close() error { return nil }
