package modelserver

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// wsClient is a Responses WebSocket client as Codex CLI is one: a
// response.create message, then the events to the terminal one.
type wsClient struct {
	t    *testing.T
	conn *websocket.Conn
}

func dialWS(t *testing.T, root string) *wsClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(root, "http")+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.SetReadLimit(64 << 20)
	t.Cleanup(func() { conn.CloseNow() })
	return &wsClient{t, conn}
}

// create sends a request (its body's fields, type added) and reads its
// events: the last one's type says how it ended.
func (c *wsClient) create(fields string) (events []map[string]any, raw []string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.conn.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create",`+fields+`}`)); err != nil {
		c.t.Fatal(err)
	}
	for {
		_, msg, err := c.conn.Read(ctx)
		if err != nil {
			c.t.Fatalf("after %d events: %v", len(events), err)
		}
		var ev map[string]any
		if err := json.Unmarshal(msg, &ev); err != nil {
			c.t.Fatalf("event %q: %v", msg, err)
		}
		events, raw = append(events, ev), append(raw, string(msg))
		if typ := ev["type"]; typ == "response.completed" || typ == "error" {
			return events, raw
		}
	}
}

func (c *wsClient) send(msg string) {
	c.t.Helper()
	if err := c.conn.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// responseOf is the response of a terminal event: its id, and its output
// items' types and names.
func responseOf(t *testing.T, events []map[string]any) (id string, items []string) {
	t.Helper()
	last := events[len(events)-1]
	r, ok := last["response"].(map[string]any)
	if !ok {
		t.Fatalf("no response in %v", last)
	}
	for _, it := range r["output"].([]any) {
		m := it.(map[string]any)
		items = append(items, m["type"].(string)+" "+str2(m["name"])+str2(m["call_id"]))
	}
	return r["id"].(string), items
}

func str2(v any) string { s, _ := v.(string); return s }

const (
	wsTools = `"tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object"},"strict":false},{"type":"function","name":"issue_refund","parameters":{"type":"object"},"strict":false}],"store":false`
	wsFirst = `"model":"gpt-5.5","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Please refund order A-991."}]}],` + wsTools
)

// wsSecond is the second request of a conversation, as Codex sends it on
// its WebSocket: the answer before it named, only the tool's output new.
func wsSecond(prev, callID string) string {
	return `"model":"gpt-5.5","previous_response_id":"` + prev + `","input":[{"type":"function_call_output","call_id":"` + callID + `","output":"{\"tier\":\"gold\"}"}],` + wsTools
}

// The Responses API over a WebSocket, on the script model: a warm-up
// (generate: false) is answered with no output and is no turn; each
// request is answered as its stream, event by event, a later one naming
// the answer before it; response.processed is read and dropped; a
// message that is no request gets an error event and the connection
// goes on.
func TestResponsesWebSocketScripted(t *testing.T) {
	e := mustNew(t, Options{Scripted: true, Script: refundScript()})
	c := dialWS(t, serve(t, e, "/cases/1"))
	evs, _ := c.create(wsFirst + `,"generate":false`)
	if _, items := responseOf(t, evs); len(items) != 0 || evs[0]["type"] != "response.created" {
		t.Errorf("warm-up: %v, first event %v", items, evs[0]["type"])
	}
	evs, _ = c.create(wsFirst)
	id, items := responseOf(t, evs)
	if strings.Join(items, ",") != "message ,function_call lookup_ordercall_1_1" {
		t.Errorf("turn 1: %v", items)
	}
	c.send(`{"type":"response.processed","response_id":"` + id + `"}`)
	evs, _ = c.create(wsSecond(id, "call_1_1"))
	if _, items := responseOf(t, evs); strings.Join(items, ",") != "function_call issue_refundcall_2_1" {
		t.Errorf("turn 2: %v", items)
	}
	evs, raw := c.create(`"input":"hi"}, "x":{`)
	if len(evs) != 1 || !strings.HasPrefix(raw[0], `{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"invalid_websocket_message"`) {
		t.Errorf("a bad message: %s", raw)
	}
	if n := e.Turns(); n != 2 {
		t.Errorf("%d turns, want 2 (the warm-up is none)", n)
	}
}

// Recorded live over a WebSocket of its own to the upstream (the fake
// Responses API's WebSocket mode, which knows an earlier answer of the
// connection by its id), kept as streams in the cassette, replayed
// offline event for event; a request the recording does not hold gets
// an error event in the WebSocket's shape with the mismatch and the
// command that records again.
func TestResponsesWebSocketRecordReplay(t *testing.T) {
	const key = "sk-ws-test-key-123456"
	up := fakeapi.NewOpenAIResponses(fakeapi.Script{"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "A-991 is refunded."},
	}}, fakeapi.RequireKey(key))
	defer up.Close()
	dir := t.TempDir()
	talk := func(o Options) (*Endpoint, []string) {
		e := mustNew(t, o)
		c := dialWS(t, serve(t, e, "/cases/1"))
		var all []string
		evs, raw := c.create(wsFirst)
		all = append(all, raw...)
		if evs[len(evs)-1]["type"] == "error" {
			return e, all
		}
		id, items := responseOf(t, evs)
		if len(items) != 1 || !strings.HasPrefix(items[0], "function_call lookup_order") {
			t.Fatalf("turn 1: %v", items)
		}
		call := evs[len(evs)-1]["response"].(map[string]any)["output"].([]any)[0].(map[string]any)["call_id"].(string)
		evs, raw = c.create(wsSecond(id, call))
		all = append(all, raw...)
		if evs[len(evs)-1]["type"] == "error" {
			return e, all
		}
		if _, items := responseOf(t, evs); strings.Join(items, ",") != "message " {
			t.Fatalf("turn 2: %v", items)
		}
		c.conn.Close(websocket.StatusNormalClosure, "")
		return e, all
	}
	o := upstreamOptions(caseOptions(dir, cassette.Once), up.URL)
	o.Env = []string{"OPENAI_API_KEY=" + key}
	e, recorded := talk(o)
	deadline := time.Now().Add(5 * time.Second)
	for e.Failure() == nil && len(e.Calls()) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // the second answer's end, told as the client reads it
	}
	if wrote, err := e.Finish(); !wrote || err != nil {
		t.Fatalf("recording: Finish = %v, %v (failure: %v)", wrote, err, e.Failure())
	}
	tape, err := cassette.Load(o.File)
	if err != nil {
		t.Fatal(err)
	}
	if len(tape.Interactions) != 2 || len(tape.Interactions[1].Response.Events) == 0 || !strings.Contains(string(tape.Interactions[1].Request.Body), "previous_response_id") {
		t.Fatalf("the cassette: %d interactions, %+v", len(tape.Interactions), tape.Interactions)
	}
	sent := up.Requests()
	if sent != 1 {
		t.Errorf("the upstream got %d HTTP requests, want 1 (the WebSocket's upgrade)", sent)
	}
	e, replayed := talk(caseOptions(dir, cassette.None))
	if strings.Join(replayed, "\n") != strings.Join(recorded, "\n") {
		t.Errorf("replayed events differ:\n%s\nrecorded:\n%s", replayed, recorded)
	}
	if up.Requests() != sent {
		t.Errorf("the replay reached the upstream")
	}
	if e.Problem() != nil {
		t.Errorf("replay problem: %v", e.Problem())
	}
	// Another conversation: refused with the mismatch, as an error event.
	e = mustNew(t, caseOptions(dir, cassette.None))
	c := dialWS(t, serve(t, e, "/cases/1"))
	evs, raw := c.create(strings.Replace(wsFirst, "A-991", "A-992", 1))
	if len(evs) != 1 || evs[0]["status"] != float64(400) {
		t.Fatalf("mismatch: %s", raw)
	}
	msg := evs[0]["error"].(map[string]any)
	if msg["code"] != "dryfire_cassette_mismatch" || !strings.Contains(msg["message"].(string), "differs from the recording") || !strings.Contains(msg["message"].(string), "--record all") {
		t.Errorf("mismatch event: %s", raw)
	}
}

// Over the WebSocket, a declared fault is what it is over HTTP: a status
// an error message with that status (the client retries on the same
// connection), a cut the events it lets through and the connection
// closed; and the case's max_turns (Options.Admit) refuses a request with
// an error message, the connection kept.
func TestResponsesWebSocketFaultsAndTurns(t *testing.T) {
	turns := 0
	e := mustNew(t, Options{Scripted: true, Script: refundScript(), Faults: []model.Fault{
		{Request: 1, Status: 429, RetryAfter: time.Second, CutAfter: -1},
		{Request: 3, CutAfter: 2},
	}, Admit: func() error {
		if turns++; turns > 3 {
			return errors.New("max_turns (2) reached")
		}
		return nil
	}})
	root := serve(t, e, "/cases/1")
	c := dialWS(t, root)
	evs, raw := c.create(wsFirst)
	if len(evs) != 1 || evs[0]["status"] != float64(429) || !strings.Contains(raw[0], `"headers":{"retry-after":"1","retry-after-ms":"1000"}`) {
		t.Fatalf("a 429: %s", raw)
	}
	evs, _ = c.create(wsFirst) // the retry
	id, items := responseOf(t, evs)
	if len(items) != 2 {
		t.Fatalf("the retry: %v", items)
	}
	// Request 3 is cut after 2 events: they come, then the connection ends.
	c.send(`{"type":"response.create",` + wsSecond(id, "call_1_1") + `}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n := 0
	for {
		if _, _, err := c.conn.Read(ctx); err != nil {
			break
		}
		n++
	}
	if n != 2 {
		t.Errorf("the cut request: %d events before the connection closed, want 2", n)
	}
	// A new connection: past max_turns, refused with an error message.
	c = dialWS(t, root)
	evs, raw = c.create(wsSecond(id, "call_1_1"))
	if len(evs) != 1 || evs[0]["type"] != "error" || !strings.Contains(raw[0], "max_turns (2) reached") {
		t.Errorf("past max_turns: %s", raw)
	}
}
