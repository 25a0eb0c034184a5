package toolserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// askingClient is a go-sdk client that answers elicitations (accepting
// with a seat, or declining when decline is set; for the message "slow",
// too late) and sampling requests, or, without
// handlers, declares neither capability.
func askingClient(decline *atomic.Bool, handlers bool) *mcp.Client {
	var opts *mcp.ClientOptions
	if handlers {
		opts = &mcp.ClientOptions{
			ElicitationHandler: func(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				if req.Params.Message == "slow" {
					// Past the rule's timeout_s (100 ms).
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(400 * time.Millisecond):
						return &mcp.ElicitResult{Action: "accept"}, nil
					}
				}
				if decline.Load() {
					return &mcp.ElicitResult{Action: "decline"}, nil
				}
				return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"confirm": true, "seat": "aisle"}}, nil
			},
			CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				text := req.Params.Messages[0].Content.(*mcp.TextContent).Text
				return &mcp.CreateMessageResult{Role: "assistant", Model: "test-model", Content: &mcp.TextContent{Text: "Fire, " + strings.TrimPrefix(text, "Summarise: ")}}, nil
			},
		}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "asking", Version: "1"}, opts)
}

// TestMCPElicitAndSampleBothEras: go-sdk's client answers a rule's
// elicitation (accepting, then declining) and sampling request during
// tool calls, over HTTP and in memory, in both protocol eras (2025-11-25:
// requests from the server; 2026-07-28: input_required and a retry);
// each answer fills the rule's outcome and is recorded with the call,
// once. A client without the capabilities gets an error result saying
// so, and an answer that does not come within timeout_s ends the wait.
func TestMCPElicitAndSampleBothEras(t *testing.T) {
	for _, transport := range []string{"http", "memory"} {
		for _, version := range []string{"", legacyVersion} {
			t.Run(transport+"/version="+version, func(t *testing.T) {
				sc := NewScope(ScopeOptions{Suite: loadSuite(t, "asks.dryfire.yaml")})
				var url string
				if transport == "http" {
					url = startServer(t, New(sc, Options{})).URL + "/mcp"
				}
				session := func(c *mcp.Client) *mcp.ClientSession {
					var tr mcp.Transport
					if transport == "http" {
						tr = &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}
					} else {
						st, ct := mcp.NewInMemoryTransports()
						go sc.ServeMCP(testContext(t), st)
						tr = ct
					}
					var opts *mcp.ClientSessionOptions
					if version != "" {
						opts = &mcp.ClientSessionOptions{ProtocolVersion: version}
					}
					cs, err := c.Connect(testContext(t), tr, opts)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { cs.Close() })
					return cs
				}
				var decline atomic.Bool
				cs := session(askingClient(&decline, true))
				call := func(cs *mcp.ClientSession, name string, args any) string {
					t.Helper()
					res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: name, Arguments: args})
					if err != nil {
						return "rpc error: " + err.Error()
					}
					text := res.Content[0].(*mcp.TextContent).Text
					if res.IsError {
						return "error: " + text
					}
					return text
				}
				got := []string{
					call(cs, "book_flight", map[string]any{"to": "Paris"}),
					call(cs, "summarise", nil),
					call(cs, "lookup", nil),
				}
				decline.Store(true)
				got = append(got, call(cs, "book_flight", map[string]any{"to": "Paris"}))
				bare := session(askingClient(nil, false))
				got = append(got, call(bare, "book_flight", map[string]any{"to": "Paris"}), call(bare, "summarise", nil))
				want := []string{
					`{"booked":true,"seat":"aisle"}`,
					"Summary by test-model: Fire, the printer is on fire.",
					"plain",
					"error: The traveller said no (decline).",
					"error: dryfire: the rule at testdata/asks.dryfire.yaml:10 asks the MCP client (elicitation/create) and got no answer: the client does not declare the elicitation capability",
					"error: dryfire: the rule at testdata/asks.dryfire.yaml:26 asks the MCP client (sampling/createMessage) and got no answer: the client does not declare the sampling capability",
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("answers (-want +got):\n%s", diff)
				}
				slow := call(cs, "book_flight", map[string]any{"to": "Oslo"})
				if version == "" {
					// The wait ended before the client's retry came: the
					// retry is told so.
					if !strings.Contains(slow, "names no call waiting for the client's answer") {
						t.Errorf("a retry after timeout_s: %s", slow)
					}
				} else if slow != "error: dryfire: the rule at testdata/asks.dryfire.yaml:21 asks the MCP client (elicitation/create) and got no answer: no answer within 100ms (the rule's timeout_s)" {
					t.Errorf("an answer after timeout_s: %s", slow)
				}

				recs := sc.Records()
				var asked []string
				for _, r := range recs {
					a := r.Result.Asked
					if a == nil {
						asked = append(asked, r.Name+": -")
						continue
					}
					asked = append(asked, r.Name+": "+a.Method+" "+string(a.Answer)+a.Error)
				}
				wantAsked := []string{
					`book_flight: elicitation/create {"action":"accept","content":{"confirm":true,"seat":"aisle"}}`,
					`summarise: sampling/createMessage {"content":{"text":"Fire, the printer is on fire.","type":"text"},"model":"test-model","role":"assistant"}`,
					"lookup: -",
					`book_flight: elicitation/create {"action":"decline"}`,
					"book_flight: elicitation/create the client does not declare the elicitation capability",
					"summarise: sampling/createMessage the client does not declare the sampling capability",
					"book_flight: elicitation/create no answer within 100ms (the rule's timeout_s)",
				}
				if diff := cmp.Diff(wantAsked, asked); diff != "" {
					t.Errorf("recorded asks (-want +got):\n%s", diff)
				}
				if len(recs) > 0 {
					var req map[string]any
					json.Unmarshal(recs[0].Result.Asked.Request, &req)
					if req["message"] != "Book the 09:10 flight to Paris for 420 EUR?" || req["mode"] != "form" || at(req, "requestedSchema", "properties", "seat", "enum", 1) != "window" {
						t.Errorf("the elicitation as recorded: %s", recs[0].Result.Asked.Request)
					}
				}
				sc.Reset()
				if n := len(sc.Records()); n != 0 {
					t.Errorf("%d records after Reset", n)
				}
			})
		}
	}
}

// sseMessages are the JSON-RPC messages of an event stream's data lines.
func sseMessages(t *testing.T, body []byte) []any {
	t.Helper()
	var out []any
	for _, line := range strings.Split(string(body), "\n") {
		if data, ok := strings.CutPrefix(line, "data: "); ok && data != "" {
			var v any
			if err := json.Unmarshal([]byte(data), &v); err != nil {
				t.Fatalf("event data is not JSON: %v\n%s", err, body)
			}
			out = append(out, v)
		}
	}
	return out
}

// TestWireElicitationInTheCallsStream: in a 2025-11-25 session over
// streamable HTTP, the elicitation request comes in the tool call's own
// event stream (a client need not open the standalone one), the client's
// answer is a POST of its own, and the call's result follows in the same
// stream. Without a session the call gets an error result saying why.
func TestWireElicitationInTheCallsStream(t *testing.T) {
	hs := startServer(t, New(NewScope(ScopeOptions{Suite: loadSuite(t, "asks.dryfire.yaml")}), Options{}))
	url := hs.URL + "/mcp"
	init := rpc(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"raw","version":"0"}}}`)
	h := map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": legacyVersion}
	rpc(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The client answers the request as soon as it reads it from the
	// call's stream; the stream then ends with the call's result.
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"book_flight","arguments":{"to":"Paris"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "Mcp-Session-Id": h["Mcp-Session-Id"], "MCP-Protocol-Version": legacyVersion} {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("the call's answer is %s, want an event stream", ct)
	}
	sc := bufio.NewScanner(resp.Body)
	var stream []any
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || data == "" {
			continue
		}
		var msg any
		json.Unmarshal([]byte(data), &msg)
		stream = append(stream, msg)
		if at(msg, "method") == "elicitation/create" {
			answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"confirm":false}}}`, value.Canonical(at(msg, "id")))
			if ex := rpc(t, url, h, answer); ex.status != http.StatusAccepted {
				t.Fatalf("the client's answer: %d %s", ex.status, ex.body)
			}
		}
	}
	if len(stream) != 2 || at(stream[0], "method") != "elicitation/create" || at(stream[0], "params", "message") != "Book the 09:10 flight to Paris for 420 EUR?" ||
		at(stream[1], "id") != 7.0 || at(stream[1], "result", "content", 0, "text") != `{"booked":false,"seat":null}` {
		t.Errorf("the call's stream: %s", value.Canonical(stream))
	}

	// Without a session, a server has nowhere to send a request.
	ex := rpc(t, url, map[string]string{"MCP-Protocol-Version": legacyVersion}, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"book_flight","arguments":{"to":"Paris"}}}`)
	msgs := sseMessages(t, ex.body)
	if ex.decoded != nil {
		msgs = []any{ex.decoded}
	}
	if len(msgs) != 1 || at(msgs[0], "result", "isError") != true || !strings.Contains(at(msgs[0], "result", "content", 0, "text").(string), "without an MCP session (no Mcp-Session-Id)") {
		t.Errorf("a call without a session: %s", ex.body)
	}
}

// TestWireElicitationInputRequired: in the 2026-07-28 era a call whose
// rule elicits is answered input_required, its inputRequests holding the
// elicitation and its requestState what the retry gives back; the retry
// with the client's answer gets the call's result; the same requestState
// again is an invalid-params error, as is one that was never given.
func TestWireElicitationInputRequired(t *testing.T) {
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "asks.dryfire.yaml")})
	hs := startServer(t, New(sc, Options{}))
	url := hs.URL + "/mcp"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	call := func(extra string) exchange {
		return rpc(t, url, modernHeaders("tools/call", "book_flight"), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"book_flight","arguments":{"to":"Paris"},`+meta+extra+`}}`)
	}
	first := call("")
	res := at(first.decoded, "result")
	state, _ := at(res, "requestState").(string)
	if at(res, "resultType") != "input_required" || at(res, "inputRequests", "elicit", "method") != "elicitation/create" ||
		at(res, "inputRequests", "elicit", "params", "requestedSchema", "required", 0) != "confirm" || state == "" {
		t.Fatalf("the first answer: %s", first.body)
	}
	if n := len(sc.Records()); n != 0 {
		t.Errorf("%d calls recorded while the call waits for the client", n)
	}
	retry := call(`,"inputResponses":{"elicit":{"action":"accept","content":{"confirm":true,"seat":"window"}}},"requestState":"` + state + `"`)
	if at(retry.decoded, "result", "resultType") != "complete" || at(retry.decoded, "result", "content", 0, "text") != `{"booked":true,"seat":"window"}` {
		t.Errorf("the retry's answer: %s", retry.body)
	}
	again := call(`,"inputResponses":{"elicit":{"action":"decline"}},"requestState":"` + state + `"`)
	if at(again.decoded, "error", "code") != -32602.0 || !strings.Contains(at(again.decoded, "error", "message").(string), "names no call waiting") {
		t.Errorf("a second retry: %s", again.body)
	}
	if recs := sc.Records(); len(recs) != 1 || string(recs[0].Result.Asked.Answer) != `{"action":"accept","content":{"confirm":true,"seat":"window"}}` {
		t.Errorf("the record: %+v", recs)
	}
}

// TestWireInputRequiredIsBounded: the 2026-07-28 calls that wait for
// their client's retry at once are bounded, and the bound names itself.
func TestWireInputRequiredIsBounded(t *testing.T) {
	defer func(n int) { maxWaiting = n }(maxWaiting)
	maxWaiting = 1
	hs := startServer(t, New(NewScope(ScopeOptions{Suite: loadSuite(t, "asks.dryfire.yaml")}), Options{}))
	body := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"book_flight","arguments":{"to":"Paris"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}}}`
	first := rpc(t, hs.URL+"/mcp", modernHeaders("tools/call", "book_flight"), body)
	if at(first.decoded, "result", "resultType") != "input_required" {
		t.Fatalf("the first call: %s", first.body)
	}
	second := rpc(t, hs.URL+"/mcp", modernHeaders("tools/call", "book_flight"), body)
	if msg, _ := at(second.decoded, "error", "message").(string); !strings.Contains(msg, "the bound is 1 at once") {
		t.Errorf("a call past the bound: %s", second.body)
	}
}

// Hole 9 of issue 36: a 2026-07-28 retry with a valid requestState but
// another tool's name was refused, but took the waiting call out and put
// it back, starting a new waiter each time (30k retries: 19 → 191 MiB
// until timeout_s). The name is checked against the call waiting, which
// stays as it was: many such retries start nothing, and the right retry
// still gets the call's answer.
func TestWireRetryWithAnotherToolStartsNoWaiter(t *testing.T) {
	sc := NewScope(ScopeOptions{Suite: loadSuite(t, "asks.dryfire.yaml")})
	hs := startServer(t, New(sc, Options{}))
	url := hs.URL + "/mcp"
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"raw","version":"0"}}`
	call := func(name, extra string) exchange {
		return rpc(t, url, modernHeaders("tools/call", name), `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"`+name+`","arguments":{"to":"Paris"},`+meta+extra+`}}`)
	}
	first := call("book_flight", "")
	state, _ := at(first.decoded, "result", "requestState").(string)
	if state == "" {
		t.Fatalf("the first answer: %s", first.body)
	}
	before := runtime.NumGoroutine()
	for range 300 {
		wrong := call("summarise", `,"inputResponses":{"sample":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}},"requestState":"`+state+`"`)
		if msg, _ := at(wrong.decoded, "error", "message").(string); !strings.Contains(msg, `belongs to a call of "book_flight", not of "summarise"`) {
			t.Fatalf("a retry naming another tool: %s", wrong.body)
		}
	}
	if n := runtime.NumGoroutine() - before; n > 20 {
		t.Errorf("300 retries naming another tool left %d more goroutines", n)
	}
	sc.asks.mu.Lock()
	waiting := len(sc.asks.pending)
	sc.asks.mu.Unlock()
	if waiting != 1 {
		t.Errorf("%d calls wait, want 1", waiting)
	}
	retry := call("book_flight", `,"inputResponses":{"elicit":{"action":"accept","content":{"confirm":true,"seat":"aisle"}}},"requestState":"`+state+`"`)
	if at(retry.decoded, "result", "content", 0, "text") != `{"booked":true,"seat":"aisle"}` {
		t.Errorf("the right retry after them: %s", retry.body)
	}
}
