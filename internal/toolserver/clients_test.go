package toolserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

// The official MCP clients' own bytes: what the MCP TypeScript SDK
// (1.32.2) and Python SDK (mcp 1.30.0, and 2.3.0 in both eras) send over
// streamable HTTP for every tools/call they make, captured by a recording
// handler in front of /mcp (TestCaptureClientShapes) and kept in
// testdata/mcp-clients, replayed byte for byte by
// TestWireOfficialClientShapes against the fast path and against go-sdk.

var captureClients = flag.Bool("capture-clients", false,
	"run the official MCP clients against /mcp and rewrite testdata/mcp-clients with what they sent "+
		"(needs e2e/node installed, and DRYFIRE_TEST_MCP1 and DRYFIRE_TEST_MCP2: folders holding mcp==1.30.0 and mcp==2.3.0, "+
		"e.g. pip install --target .cache/python/mcp1 mcp==1.30.0)")

// clientCapture is what one client sent, request by request, with what it
// was answered (the answer is the record's; the test compares live answers
// with each other, not with it).
type clientCapture struct {
	Client    string           `json:"client"`
	Exchanges []clientExchange `json:"exchanges"`
}

type clientExchange struct {
	Method   string      `json:"method"`
	Header   http.Header `json:"header"`
	Body     string      `json:"body,omitempty"`
	Status   int         `json:"status"`
	RespHead http.Header `json:"response_header"`
	Response string      `json:"response,omitempty"`
}

var captures = []struct {
	file, client string
	command      func(t *testing.T, url string) *exec.Cmd
}{
	{"ts-sdk-1.32.2.json", "@modelcontextprotocol/sdk 1.32.2 (Client, StreamableHTTPClientTransport)", func(t *testing.T, url string) *exec.Cmd {
		cmd := exec.Command("node", "mcp-shapes.mjs", url)
		cmd.Dir = filepath.Join("..", "..", "e2e", "node")
		return cmd
	}},
	{"python-mcp-1.30.0.json", "mcp 1.30.0 (ClientSession, streamablehttp_client)", python("DRYFIRE_TEST_MCP1", "legacy")},
	{"python-mcp-2.3.0-legacy.json", "mcp 2.3.0 (Client, mode=legacy)", python("DRYFIRE_TEST_MCP2", "legacy")},
	{"python-mcp-2.3.0-2026.json", "mcp 2.3.0 (Client, mode=auto: 2026-07-28)", python("DRYFIRE_TEST_MCP2", "auto")},
}

func python(env, mode string) func(t *testing.T, url string) *exec.Cmd {
	return func(t *testing.T, url string) *exec.Cmd {
		dir := os.Getenv(env)
		if dir == "" {
			t.Fatalf("%s is not set", env)
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("python3", filepath.Join("..", "..", "e2e", "python", "mcp_shapes.py"), url, mode)
		cmd.Env = append(os.Environ(), "PYTHONPATH="+abs)
		return cmd
	}
}

// TestCaptureClientShapes rewrites testdata/mcp-clients (-capture-clients).
func TestCaptureClientShapes(t *testing.T) {
	if !*captureClients {
		t.Skip("-capture-clients rewrites testdata/mcp-clients")
	}
	for _, c := range captures {
		t.Run(c.file, func(t *testing.T) {
			rec := &recorder{next: New(newTestScope(t, ""), Options{})}
			hs := httptest.NewServer(rec)
			defer hs.Close()
			cmd := c.command(t, hs.URL+"/mcp")
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", c.client, err, out)
			}
			hs.Close()
			if rec.bad != nil {
				t.Fatalf("%s sent bodies that are not UTF-8: %q", c.client, rec.bad)
			}
			data, err := json.MarshalIndent(clientCapture{Client: c.client, Exchanges: rec.got}, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join("testdata", "mcp-clients", c.file), append(data, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// recorder keeps every request to next and its answer (a GET stream's
// answer only up to its headers).
type recorder struct {
	next http.Handler
	mu   sync.Mutex
	got  []clientExchange
	bad  []string // bodies that are not UTF-8, which the capture cannot keep as text
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	if !utf8.Valid(body) {
		rec.mu.Lock()
		rec.bad = append(rec.bad, string(body))
		rec.mu.Unlock()
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	h := r.Header.Clone()
	h.Del("Content-Length")
	rec.mu.Lock()
	i := len(rec.got)
	rec.got = append(rec.got, clientExchange{Method: r.Method, Header: h, Body: string(body)})
	rec.mu.Unlock()
	cw := &captureWriter{ResponseWriter: w}
	if r.Method == http.MethodGet {
		// The standalone stream stays open until the session ends; what
		// matters of it here is that the client opened it.
		cw.headersOnly = true
	}
	rec.next.ServeHTTP(cw, r)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	e := &rec.got[i]
	e.Status, e.RespHead, e.Response = cw.status, w.Header().Clone(), cw.buf.String()
	e.RespHead.Del("Date")
}

type captureWriter struct {
	http.ResponseWriter
	status      int
	buf         bytes.Buffer
	headersOnly bool
}

func (c *captureWriter) WriteHeader(s int) {
	if c.status == 0 {
		c.status = s
	}
	c.ResponseWriter.WriteHeader(s)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if !c.headersOnly {
		c.buf.Write(p)
	}
	return c.ResponseWriter.Write(p)
}

func (c *captureWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func loadCapture(t *testing.T, file string) clientCapture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "mcp-clients", file))
	if err != nil {
		t.Fatal(err)
	}
	var c clientCapture
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return c
}

// liveServer is a scope behind a real loopback server, the fast path on
// or off, and the sessions it opened by the capture's session ids.
type liveServer struct {
	sc       *Scope
	url      string
	sessions map[string]string
}

func newLiveServer(t *testing.T, scope func() *Scope, slow bool) *liveServer {
	sc := scope()
	sc.slowMCP = slow
	hs := startServer(t, New(sc, Options{}))
	return &liveServer{sc: sc, url: hs.URL + "/mcp", sessions: map[string]string{}}
}

// answer is a live answer: its status, headers (less Date and the value
// of Mcp-Session-Id, which differ from server to server) and body.
type answer struct {
	status int
	header http.Header
	body   []byte
	fast   bool // the fast path answered it
}

// send sends the captured request e as the client sent it (its headers,
// its body's bytes), its session id mapped to the one this server gave.
func (ls *liveServer) send(t *testing.T, e clientExchange) answer {
	t.Helper()
	req, err := http.NewRequest(e.Method, ls.url, strings.NewReader(e.Body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range e.Header {
		switch k {
		case "Host", "Content-Length":
			continue
		case "Mcp-Session-Id":
			v = []string{ls.sessions[v[0]]}
		}
		req.Header[k] = v
	}
	before := ls.sc.fastCalls.Load()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		if captured := e.RespHead.Get("Mcp-Session-Id"); captured != "" {
			ls.sessions[captured] = sid
		}
		resp.Header.Set("Mcp-Session-Id", "(a session)")
	}
	resp.Header.Del("Date")
	return answer{resp.StatusCode, resp.Header, body, ls.sc.fastCalls.Load() > before}
}

// sameAnswer fails the test unless a (the fast path on) and b (off) are
// the same bytes: status, every header, body.
func sameAnswer(t *testing.T, what string, a, b answer) {
	t.Helper()
	if a.status != b.status || !headersEqual(a.header, b.header) || !bytes.Equal(a.body, b.body) {
		t.Errorf("%s:\nfast path %d %v\n%s\ngo-sdk    %d %v\n%s", what, a.status, a.header, a.body, b.status, b.header, b.body)
	}
}

func headersEqual(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// isToolsCall says whether a captured body is a lone tools/call.
func isToolsCall(body string) bool {
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal([]byte(body), &m) == nil && m.Method == "tools/call"
}

// Every request the official clients sent, replayed in order with its
// exact bytes and headers to a server with the fast path and to one
// without: each answer is the same bytes (status, headers, body), and
// the fast path answered every tools/call of them (and nothing else). A
// GET (the legacy standalone stream) is not replayed: it stays open.
func TestWireOfficialClientShapes(t *testing.T) {
	for _, c := range captures {
		t.Run(strings.TrimSuffix(c.file, ".json"), func(t *testing.T) {
			capt := loadCapture(t, c.file)
			fast := newLiveServer(t, func() *Scope { return newTestScope(t, "") }, false)
			slow := newLiveServer(t, func() *Scope { return newTestScope(t, "") }, true)
			calls := 0
			for i, e := range capt.Exchanges {
				if e.Method == http.MethodGet {
					continue
				}
				a, b := fast.send(t, e), slow.send(t, e)
				what := capt.Client + ": request " + strconv.Itoa(i) + " " + e.Method + " " + e.Body
				sameAnswer(t, what, a, b)
				call := e.Method == http.MethodPost && isToolsCall(e.Body)
				if call {
					calls++
				}
				if a.fast != call || b.fast {
					t.Errorf("%s: taken by the fast path: %v (on), %v (off)", what, a.fast, b.fast)
				}
			}
			if calls < 7 {
				t.Errorf("%s: %d tools/call captured, want at least 7 (the capture is short)", capt.Client, calls)
			}
		})
	}
}

// What the clients could send and did not in the capture, made from a
// captured tools/call by changing one thing: a string id, a string
// progress token, the Accept headers clients send elsewhere (or ones
// go-sdk refuses), and batches (2025-03-26 allows them; later versions do
// not). Each is answered the same bytes with the fast path on and off; the
// fast path takes exactly the ones listed as taken.
func TestWireFastPathDerivedShapes(t *testing.T) {
	capt := loadCapture(t, "ts-sdk-1.32.2.json")
	var initialize, initialized, call clientExchange
	for _, e := range capt.Exchanges {
		switch {
		case strings.Contains(e.Body, `"method":"initialize"`):
			initialize = e
		case strings.Contains(e.Body, `"method":"notifications/initialized"`):
			initialized = e
		case call.Body == "" && strings.Contains(e.Body, `"progressToken"`):
			call = e
		}
	}
	if initialize.Body == "" || call.Body == "" {
		t.Fatal("the capture has no initialize or no tools/call with a progress token")
	}
	with := func(e clientExchange, header map[string]string, from, to string) clientExchange {
		e.Header = e.Header.Clone()
		for k, v := range header {
			e.Header.Set(k, v)
		}
		if from != "" {
			if !strings.Contains(e.Body, from) {
				t.Fatalf("no %s in %s", from, e.Body)
			}
			e.Body = strings.Replace(e.Body, from, to, 1)
		}
		return e
	}
	batchSession := with(initialize, nil, `"protocolVersion":"2025-11-25"`, `"protocolVersion":"2025-03-26"`)
	batch := `[` + call.Body + `,{"method":"notifications/roots/list_changed","jsonrpc":"2.0"}]`
	for _, tt := range []struct {
		name  string
		open  clientExchange // the session's initialize
		e     clientExchange
		taken bool
	}{
		{"as captured", initialize, call, true},
		{"string id", initialize, with(call, nil, `"id":3}`, `"id":"call-3"}`), true},
		{"string progress token", initialize, with(call, nil, `"progressToken":3`, `"progressToken":"p-3"`), true},
		{"negative id", initialize, with(call, nil, `"id":3}`, `"id":-3}`), true},
		{"Accept, SSE first", initialize, with(call, map[string]string{"Accept": "text/event-stream, application/json"}, "", ""), true},
		{"Accept, with q-values", initialize, with(call, map[string]string{"Accept": "application/json;q=0.9, text/event-stream;q=0.8"}, "", ""), true},
		{"Accept */*", initialize, with(call, map[string]string{"Accept": "*/*"}, "", ""), true},
		{"Accept JSON only", initialize, with(call, map[string]string{"Accept": "application/json"}, "", ""), false},
		{"Accept SSE only", initialize, with(call, map[string]string{"Accept": "text/event-stream"}, "", ""), false},
		{"no Accept", initialize, with(call, map[string]string{"Accept": ""}, "", ""), false},
		{"batch, 2025-03-26", batchSession, with(call, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, call.Body, batch), false},
		{"batch, 2025-11-25", initialize, with(call, nil, call.Body, batch), false},
		{"null id", initialize, with(call, nil, `"id":3}`, `"id":null}`), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fast := newLiveServer(t, func() *Scope { return newTestScope(t, "") }, false)
			slow := newLiveServer(t, func() *Scope { return newTestScope(t, "") }, true)
			for _, ls := range []*liveServer{fast, slow} {
				ls.send(t, tt.open)
				ls.send(t, initialized)
			}
			a, b := fast.send(t, tt.e), slow.send(t, tt.e)
			sameAnswer(t, tt.name, a, b)
			if a.fast != tt.taken || b.fast {
				t.Errorf("%s: taken by the fast path: %v (on), %v (off), want %v", tt.name, a.fast, b.fast, tt.taken)
			}
		})
	}
}

// An answer with notifications before it (a rule's log and progress) is
// the one shape the fast path answers as an event stream: the
// notifications, then the answer, in the call's own stream. go-sdk, which
// dryfire runs in JSON mode, answers the call in JSON and, in a legacy
// session, sends the notifications on the session's standalone stream
// (the GET the clients open); in the 2026-07-28 era it has no stream to
// send them on and drops them. The answer event and the notifications are
// go-sdk's JSON byte for byte.
func TestWireFastPathEventStreamMatchesGoSDK(t *testing.T) {
	ts := loadCapture(t, "ts-sdk-1.32.2.json")
	find := func(c clientCapture, match func(clientExchange) bool) clientExchange {
		for _, e := range c.Exchanges {
			if match(e) {
				return e
			}
		}
		t.Fatalf("%s: no such request in the capture", c.Client)
		return clientExchange{}
	}
	body := func(part string) func(clientExchange) bool {
		return func(e clientExchange) bool { return strings.Contains(e.Body, part) }
	}
	initialize, initialized := find(ts, body(`"method":"initialize"`)), find(ts, body(`"method":"notifications/initialized"`))
	setLevel := find(ts, body(`"method":"logging/setLevel"`))
	get := find(ts, func(e clientExchange) bool { return e.Method == http.MethodGet })
	call := find(ts, body(`"progressToken"`))
	call.Body = strings.Replace(call.Body, `"name":"lookup_order","arguments":{"order_id":"B-1"}`, `"name":"export","arguments":{}`, 1)
	modern := find(loadCapture(t, "python-mcp-2.3.0-2026.json"), body(`"progressToken"`))
	modern.Header = modern.Header.Clone()
	modern.Header.Set("Mcp-Name", "export")
	modern.Body = strings.Replace(modern.Body, `"name":"lookup_order","arguments":{"order_id":"B-1"}`, `"name":"export","arguments":{}`, 1)
	if !strings.Contains(call.Body, `"export"`) || !strings.Contains(modern.Body, `"export"`) {
		t.Fatalf("the captured calls changed: %s %s", call.Body, modern.Body)
	}

	fast := newLiveServer(t, func() *Scope { return contentScope(t) }, false)
	slow := newLiveServer(t, func() *Scope { return contentScope(t) }, true)
	for _, ls := range []*liveServer{fast, slow} {
		ls.send(t, initialize)
		ls.send(t, initialized)
	}
	stream := slow.openStream(t, get)
	for _, step := range []struct {
		name  string
		e     clientExchange
		sends int // notifications go-sdk sends
	}{
		{"legacy, progress only", call, 3},
		{"legacy, level info: log messages too", call, 5},
		{"2026-07-28, level info and progress", modern, 0},
	} {
		if strings.Contains(step.name, "level info:") {
			sameAnswer(t, "logging/setLevel", fast.send(t, setLevel), slow.send(t, setLevel))
		}
		a, b := fast.send(t, step.e), slow.send(t, step.e)
		if !a.fast || b.fast {
			t.Fatalf("%s: taken by the fast path: %v (on), %v (off)", step.name, a.fast, b.fast)
		}
		if ct := a.header.Get("Content-Type"); ct != "text/event-stream" || b.header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s: answered as %s (fast path) and %s (go-sdk)", step.name, ct, b.header.Get("Content-Type"))
		}
		events := eventData(a.body)
		if len(events) < 4 || events[len(events)-1] != string(b.body) {
			t.Errorf("%s: the answer:\nfast path %s\ngo-sdk    %s", step.name, a.body, b.body)
			continue
		}
		if step.sends == 0 {
			continue
		}
		got, want := events[:len(events)-1], stream.next(t, step.sends)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: notifications:\nfast path, in the call's stream:\n%s\ngo-sdk, in the GET stream:\n%s", step.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// sseStream reads the data of the events of a GET stream.
type sseStream struct{ data chan string }

func (ls *liveServer) openStream(t *testing.T, e clientExchange) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ls.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range e.Header {
		if k == "Mcp-Session-Id" {
			v = []string{ls.sessions[v[0]]}
		}
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("GET stream: %d", resp.StatusCode)
	}
	s := &sseStream{data: make(chan string, 64)}
	go func() {
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				s.data <- d
			}
		}
	}()
	return s
}

func (s *sseStream) next(t *testing.T, n int) []string {
	t.Helper()
	var got []string
	timeout := time.After(10 * time.Second)
	for len(got) < n {
		select {
		case d := <-s.data:
			got = append(got, d)
		case <-timeout:
			t.Fatalf("the GET stream sent %d events of %d: %q", len(got), n, got)
		}
	}
	return got
}

// eventData is the data of each event of an event stream.
func eventData(body []byte) []string {
	var out []string
	for _, line := range strings.Split(string(body), "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = append(out, d)
		}
	}
	return out
}
