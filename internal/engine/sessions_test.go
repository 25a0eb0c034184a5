package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The drill sessions start from: a shipped order, a ticket expected.
const sessionDrill = "a shipped order is not refunded; a ticket is opened instead"

func startSessions(t *testing.T, opts SessionsOptions) (*Sessions, string) {
	t.Helper()
	if opts.Suite == "" {
		opts.Suite = filepath.Join("..", "..", "examples", "world", "support.dryfire.yaml")
	}
	if opts.Record == "" {
		opts.Record = "none"
	}
	s, err := NewSessions(opts)
	if err != nil {
		t.Fatal(err)
	}
	root := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "the server's own world", http.StatusTeapot)
	})
	srv := httptest.NewServer(s.Handler(root))
	s.SetBase(srv.URL)
	t.Cleanup(func() {
		s.Close()
		srv.Close()
	})
	return s, srv.URL
}

func post(t testing.TB, url string, body any) (int, map[string]any) {
	t.Helper()
	data, _ := json.Marshal(body)
	res, err := http.Post(url, "application/json", bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, res)
}

func get(t testing.TB, url string) (int, map[string]any) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	return decode(t, res)
}

func decode(t testing.TB, res *http.Response) (int, map[string]any) {
	t.Helper()
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	var m map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v: %s", res.Request.URL, err, data)
		}
	}
	return res.StatusCode, m
}

func tool(name string, args map[string]any) map[string]any {
	return map[string]any{"action": map[string]any{"tool": name, "arguments": args}}
}

// tickets are the subjects of the tickets in a session's state.
func tickets(t testing.TB, state map[string]any) []string {
	t.Helper()
	st, _ := state["state"].(map[string]any)
	tk, _ := st["tickets"].(map[string]any)
	q, _ := tk["queue"].([]any)
	var out []string
	for _, it := range q {
		out = append(out, it.(map[string]any)["subject"].(string))
	}
	return out
}

// TestSessionsConcurrent: 100 sessions against one server at once, 50
// over HTTP (POST /sessions, step) and 50 MCP sessions opened at /mcp,
// each in a world of its own: each sees only its own tickets, its own
// evidence, and gets its own verdict; reset puts its world back to its
// start.
func TestSessionsConcurrent(t *testing.T) {
	_, base := startSessions(t, SessionsOptions{Case: sessionDrill, PerMCPSession: true})
	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range n {
		wg.Add(2)
		go func() {
			defer wg.Done()
			if err := httpSession(t, base, i); err != nil {
				errs <- fmt.Errorf("HTTP session %d: %w", i, err)
			}
		}()
		go func() {
			defer wg.Done()
			if err := mcpSession(t, base, i); err != nil {
				errs <- fmt.Errorf("MCP session %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// httpSession opens i%3+1 tickets of its own; an even i answers as the
// drill expects (its ticket "late order A-992" after two lookups), an odd
// one not. Then it resets and finds its world as it began.
func httpSession(t testing.TB, base string, i int) error {
	code, s := post(t, base+"/sessions", nil)
	if code != http.StatusCreated {
		return fmt.Errorf("create: %d %v", code, s)
	}
	id := s["session_id"].(string)
	url := base + "/sessions/" + id
	_, before := get(t, url+"/state")
	want := []string{}
	if i%2 == 0 {
		post(t, url+"/step", tool("lookup_order", map[string]any{"order_id": "A-992"}))
		post(t, url+"/step", tool("lookup_order", map[string]any{"order_id": "A-992"}))
		post(t, url+"/step", tool("open_ticket", map[string]any{"subject": "late order A-992"}))
		want = append(want, "late order A-992")
	}
	for k := range i%3 + 1 {
		subject := fmt.Sprintf("http %d/%d", i, k)
		code, r := post(t, url+"/step", tool("open_ticket", map[string]any{"subject": subject}))
		if code != http.StatusOK || r["done"] != false {
			return fmt.Errorf("step: %d %v", code, r)
		}
		want = append(want, subject)
	}
	_, st := get(t, url+"/state")
	if got := tickets(t, st); strings.Join(got, "|") != strings.Join(want, "|") {
		return fmt.Errorf("tickets %q, want its own %q", got, want)
	}
	if int(st["step_count"].(float64)) != len(want)+2*(1-i%2) {
		return fmt.Errorf("step_count %v", st["step_count"])
	}
	code, end := post(t, url+"/step", map[string]any{"action": map[string]any{"answer": "I opened ticket 1 for you."}})
	obs, _ := end["observation"].(map[string]any)
	if code != http.StatusOK || end["done"] != true || obs == nil {
		return fmt.Errorf("answer: %d %v", code, end)
	}
	wantVerdict, wantReward := "passed", 1.0
	if i%2 == 1 {
		// Of its 6 checks, 4 pass (not_called, no refund, the order's
		// status, a ticket opened): not orders.get twice, nor the ticket
		// "late order A-992".
		wantVerdict, wantReward = "failed", 4.0/6
	}
	if obs["verdict"] != wantVerdict || end["reward"].(float64) != wantReward {
		return fmt.Errorf("verdict %v, reward %v; want %s, %v: %v", obs["verdict"], end["reward"], wantVerdict, wantReward, obs["failures"])
	}
	if ev := int(obs["evidence"].(float64)); ev != len(want)+2*(1-i%2) {
		return fmt.Errorf("evidence %d: not its own %d calls", ev, len(want)+2*(1-i%2))
	}
	code, _ = post(t, url+"/reset", nil)
	if code != http.StatusOK {
		return fmt.Errorf("reset: %d", code)
	}
	_, after := get(t, url+"/state")
	b1, _ := json.Marshal(before["state"])
	b2, _ := json.Marshal(after["state"])
	if !bytes.Equal(b1, b2) || after["step_count"].(float64) != 0 || after["done"] != false {
		return fmt.Errorf("after reset:\n%s\nwant the start:\n%s", b2, b1)
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusNoContent {
		return fmt.Errorf("delete: %v %v", res, err)
	}
	if code, _ := get(t, url+"/state"); code != http.StatusGone {
		return fmt.Errorf("an ended session's state: %d, want 410", code)
	}
	return nil
}

// sessionHeader keeps the Dryfire-Session-Id of the answers it carries.
type sessionHeader struct {
	mu sync.Mutex
	id string
}

func (h *sessionHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		if id := res.Header.Get("Dryfire-Session-Id"); id != "" {
			h.mu.Lock()
			h.id = id
			h.mu.Unlock()
		}
	}
	return res, err
}

// mcpSession opens an MCP session at /mcp (the official go-sdk client),
// which gets a world of its own, and opens i%4+1 tickets there.
func mcpSession(t testing.TB, base string, i int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	hdr := &sessionHeader{}
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: &http.Client{Transport: hdr}}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	var want []string
	for k := range i%4 + 1 {
		subject := fmt.Sprintf("mcp %d/%d", i, k)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "open_ticket", Arguments: map[string]any{"subject": subject}})
		if err != nil || res.IsError {
			return fmt.Errorf("call: %v %v", res, err)
		}
		want = append(want, subject)
	}
	hdr.mu.Lock()
	id := hdr.id
	hdr.mu.Unlock()
	if id == "" {
		return fmt.Errorf("no Dryfire-Session-Id")
	}
	_, st := get(t, base+"/sessions/"+id+"/state")
	if got := tickets(t, st); strings.Join(got, "|") != strings.Join(want, "|") {
		return fmt.Errorf("tickets %q, want its own %q", got, want)
	}
	_, end := post(t, base+"/sessions/"+id+"/step", map[string]any{"action": map[string]any{"answer": "done"}})
	obs, _ := end["observation"].(map[string]any)
	if obs["verdict"] != "failed" || int(obs["evidence"].(float64)) != len(want) {
		return fmt.Errorf("verdict %v, evidence %v; want failed (no lookup), its own %d calls", obs["verdict"], obs["evidence"], len(want))
	}
	return nil
}

// TestSessionsBounded: sessions past the bound are refused, naming it;
// an idle one ends.
func TestSessionsBounded(t *testing.T) {
	_, base := startSessions(t, SessionsOptions{Max: 2, Idle: 300 * time.Millisecond})
	var ids []string
	for range 2 {
		code, s := post(t, base+"/sessions", nil)
		if code != http.StatusCreated {
			t.Fatalf("create: %d %v", code, s)
		}
		ids = append(ids, s["session_id"].(string))
	}
	code, s := post(t, base+"/sessions", nil)
	e, _ := s["error"].(map[string]any)
	if code != http.StatusTooManyRequests || e["code"] != "TOO_MANY_SESSIONS" || !strings.Contains(e["message"].(string), "--max-session-worlds") {
		t.Errorf("past the bound: %d %v", code, s)
	}
	time.Sleep(700 * time.Millisecond)
	code, s = get(t, base+"/sessions/"+ids[0]+"/state")
	e, _ = s["error"].(map[string]any)
	if code != http.StatusGone || !strings.Contains(e["message"].(string), "idle") {
		t.Errorf("an idle session: %d %v", code, s)
	}
	if code, _ := post(t, base+"/sessions", nil); code != http.StatusCreated {
		t.Errorf("after the idle ones ended: %d", code)
	}
}

// TestSessionsRefuse: bad requests are answered with what is wrong.
func TestSessionsRefuse(t *testing.T) {
	_, base := startSessions(t, SessionsOptions{})
	for _, tc := range []struct {
		path string
		body any
		code int
		want string
	}{
		{"/sessions", map[string]any{"case": "no such drill"}, 404, "has no drill"},
		{"/sessions", map[string]any{"cases": "x"}, 400, `unknown key "cases"`},
		{"/sessions/nope/step", tool("open_ticket", nil), 404, "no session"},
	} {
		code, s := post(t, base+tc.path, tc.body)
		e, _ := s["error"].(map[string]any)
		if code != tc.code || !strings.Contains(fmt.Sprint(e["message"]), tc.want) {
			t.Errorf("%s %v: %d %v", tc.path, tc.body, code, s)
		}
	}
	_, s := post(t, base+"/sessions", nil)
	url := base + "/sessions/" + s["session_id"].(string)
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{}, "action is missing"},
		{map[string]any{"action": map[string]any{"tool": "x", "answer": "y"}}, "one of them"},
		{map[string]any{"action": map[string]any{"run": "x"}}, `unknown key "run"`},
	} {
		code, r := post(t, url+"/step", tc.body)
		e, _ := r["error"].(map[string]any)
		if code != 400 || !strings.Contains(fmt.Sprint(e["message"]), tc.want) {
			t.Errorf("step %v: %d %v", tc.body, code, r)
		}
	}
	// The server's own routes are the server's.
	res, _ := http.Get(base + "/world")
	if res.StatusCode != http.StatusTeapot {
		t.Errorf("GET /world reached %d, not the server's own world", res.StatusCode)
	}
}

// TestSessionsWebSocket: OpenEnv's protocol over /ws, as openenv-core's
// EnvClient speaks it: a session for the connection, reset, step, state,
// an error answered as one, close.
func TestSessionsWebSocket(t *testing.T) {
	_, base := startSessions(t, SessionsOptions{Case: sessionDrill})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	say := func(msg string) map[string]any {
		t.Helper()
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("%s: %v", data, err)
		}
		return m
	}
	r := say(`{"type": "reset", "data": {"seed": 5}}`)
	obs, _ := r["data"].(map[string]any)["observation"].(map[string]any)
	if r["type"] != "observation" || obs["seed"] != 5.0 || obs["drill"] != sessionDrill {
		t.Errorf("reset: %v", r)
	}
	for _, args := range []string{`{"order_id": "A-992"}`, `{"order_id": "A-992"}`} {
		say(`{"type": "step", "data": {"tool": "lookup_order", "arguments": ` + args + `}}`)
	}
	r = say(`{"type": "step", "data": {"tool": "open_ticket", "arguments": {"subject": "late order A-992"}}}`)
	if d := r["data"].(map[string]any); d["done"] != false || d["reward"] != nil {
		t.Errorf("step: %v", r)
	}
	r = say(`{"type": "state"}`)
	if d := r["data"].(map[string]any); r["type"] != "state" || d["step_count"] != 3.0 {
		t.Errorf("state: %v", r)
	}
	r = say(`{"type": "dance"}`)
	if d := r["data"].(map[string]any); r["type"] != "error" || d["code"] != "UNKNOWN_TYPE" {
		t.Errorf("an unknown type: %v", r)
	}
	r = say(`{"type": "step", "data": {"answer": "I opened ticket 1 for you."}}`)
	if d := r["data"].(map[string]any); d["done"] != true || d["reward"] != 1.0 {
		t.Errorf("the answer: %v", r)
	}
	c.Write(ctx, websocket.MessageText, []byte(`{"type": "close"}`))
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("after close: %v", err)
	}
}
