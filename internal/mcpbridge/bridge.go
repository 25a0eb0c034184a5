// Package mcpbridge relays MCP between standard input and output and a
// streamable HTTP endpoint: for an agent that takes only an MCP server
// command (stdio), `dryfire mcp-bridge URL` is that command, and its calls
// land on the HTTP server it names (an agent.command case's /mcp), in that
// case's record, with its sequences and world.
//
// It is a relay, not a server: each newline-delimited JSON-RPC message read
// is POSTed as it is, and every message of the answer (a JSON body, or the
// events of a stream: notifications, then the response) is written as one
// line. The session the server opens at initialize (Mcp-Session-Id) and
// the protocol version agreed there are sent with every later request;
// the session is closed (DELETE) when input ends.
package mcpbridge

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/jsonrpc"
)

// MaxMessage bounds one message read or relayed.
const MaxMessage = 16 << 20

// Bridge relays one stdio client to one endpoint.
type Bridge struct {
	URL    string
	Client *http.Client // nil: a client of its own, no proxy (the endpoint is loopback)

	out     io.Writer
	outMu   sync.Mutex
	mu      sync.Mutex
	session string
	version string
}

// Run relays until in ends (and every request sent has its answer) or ctx
// ends. Errors reaching the endpoint are answered to the client as
// JSON-RPC errors of the request they belong to; only a failure to read
// in or write out ends Run with an error.
func (b *Bridge) Run(ctx context.Context, in io.Reader, out io.Writer) error {
	if b.Client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		b.Client = &http.Client{Transport: t}
	}
	b.out = out
	var wg sync.WaitGroup
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), MaxMessage)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		msg := append([]byte(nil), line...)
		switch h := headOf(msg); {
		case h.Method == "initialize":
			// Later requests need the session it opens: relay it first.
			wg.Wait()
			b.relay(ctx, msg)
		case len(h.ID) == 0:
			// A notification (initialized, cancelled) is taken before
			// whatever the client sends after it.
			b.relay(ctx, msg)
		default:
			wg.Go(func() { b.relay(ctx, msg) })
		}
	}
	wg.Wait()
	b.close()
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading standard input: %w (a message is at most %d MiB)", err, MaxMessage>>20)
	}
	return nil
}

// head is what the bridge reads of a message: its id and method.
type head struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func headOf(msg []byte) head {
	var h head
	json.Unmarshal(msg, &h)
	return h
}

// relay sends one message and writes what comes back.
func (b *Bridge) relay(ctx context.Context, msg []byte) {
	h := headOf(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.URL, bytes.NewReader(msg))
	if err != nil {
		b.fail(h, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	b.mu.Lock()
	if b.session != "" {
		req.Header.Set("Mcp-Session-Id", b.session)
	}
	if b.version != "" {
		req.Header.Set("Mcp-Protocol-Version", b.version)
	}
	b.mu.Unlock()
	resp, err := b.Client.Do(req)
	if err != nil {
		b.fail(h, err)
		return
	}
	defer resp.Body.Close()
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		b.mu.Lock()
		b.session = sid
		b.mu.Unlock()
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	switch {
	case resp.StatusCode == http.StatusAccepted || resp.StatusCode == http.StatusNoContent:
		// a notification or a response of the client's, taken
	case ct == "text/event-stream":
		b.events(h, resp.Body)
	case ct == "application/json":
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxMessage+1))
		switch {
		case err != nil:
			b.fail(h, fmt.Errorf("reading the answer: %w", err))
		case len(data) > MaxMessage:
			b.fail(h, fmt.Errorf("the answer is larger than %d MiB", MaxMessage>>20))
		default:
			b.write(h, data)
		}
	default:
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		b.fail(h, fmt.Errorf("%s answered %s: %s", b.URL, resp.Status, strings.TrimSpace(string(data))))
	}
}

// progressPause is the pause between a request's progress notifications
// and its answer. The MCP TypeScript SDK (1.x) loses progress
// notifications that reach it in the same read as the answer: it
// dispatches notifications in microtasks but removes the call's progress
// handler as soon as it reads the answer. The pause puts the answer in a
// read of its own (dryfire serve --stdio does the same).
const progressPause = 20 * time.Millisecond

// events writes the data of each event of a stream.
func (b *Bridge) events(h head, body io.Reader) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 64<<10), MaxMessage)
	var data bytes.Buffer
	progress := false
	emit := func() {
		if data.Len() == 0 {
			return
		}
		var m head
		json.Unmarshal(data.Bytes(), &m)
		if m.Method == "" && progress {
			time.Sleep(progressPause)
		}
		progress = progress || m.Method == "notifications/progress"
		b.write(h, data.Bytes())
		data.Reset()
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			emit()
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.Write(bytes.TrimPrefix(v, []byte(" ")))
		}
	}
	emit()
	if err := sc.Err(); err != nil {
		b.fail(h, fmt.Errorf("reading the answer's stream: %w", err))
	}
}

// write writes one message as a line, learning the protocol version from
// an initialize result.
func (b *Bridge) write(h head, msg []byte) {
	if h.Method == "initialize" {
		var r struct {
			Result struct {
				ProtocolVersion string `json:"protocolVersion"`
			} `json:"result"`
		}
		if json.Unmarshal(msg, &r) == nil && r.Result.ProtocolVersion != "" {
			b.mu.Lock()
			b.version = r.Result.ProtocolVersion
			b.mu.Unlock()
		}
	}
	var line bytes.Buffer
	if json.Compact(&line, msg) != nil {
		line.Reset()
		line.Write(msg)
	}
	line.WriteByte('\n')
	b.outMu.Lock()
	b.out.Write(line.Bytes())
	b.outMu.Unlock()
}

// fail answers a request the bridge could not relay with a JSON-RPC
// error (-32603); a notification gets nothing.
func (b *Bridge) fail(h head, err error) {
	if len(h.ID) == 0 || string(h.ID) == "null" {
		return
	}
	msg := jsonrpc.Error(h.ID, -32603, "dryfire mcp-bridge: "+err.Error())
	b.write(head{}, msg)
}

// close ends the session, if one was opened.
func (b *Bridge) close() {
	b.mu.Lock()
	sid := b.session
	b.mu.Unlock()
	if sid == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.URL, nil)
	if err != nil {
		return
	}
	req.Header.Set("Mcp-Session-Id", sid)
	if resp, err := b.Client.Do(req); err == nil {
		resp.Body.Close()
	}
}
