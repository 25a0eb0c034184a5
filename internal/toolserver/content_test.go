package toolserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Content outcomes and a rule's notifications, served.

const redPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"

func contentScope(t testing.TB) *Scope {
	t.Helper()
	return NewScope(ScopeOptions{Suite: loadSuite(t, "content.dryfire.yaml")})
}

// wantBlocks is the screenshot rule's content, as a go-sdk client decodes it.
func wantBlocks(t *testing.T) []mcp.Content {
	t.Helper()
	png, err := base64.StdEncoding.DecodeString(redPNG)
	if err != nil {
		t.Fatal(err)
	}
	return []mcp.Content{
		&mcp.TextContent{Text: "Home page:"},
		&mcp.ImageContent{Data: png, MIMEType: "image/png"},
		&mcp.AudioContent{Data: []byte("RIFF"), MIMEType: "audio/wav"},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://page.json", MIMEType: "application/json", Text: `{"title":"Home"}`}},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "test://page.bin", MIMEType: "application/octet-stream", Blob: []byte{0, 1, 2, 3, 4}}},
		&mcp.ResourceLink{URI: "test://page.html", Name: "page", MIMEType: "text/html"},
	}
}

// The go-sdk client gets the blocks as written, over every path: in
// memory (stdio), and HTTP through the fast path, in both eras; no
// structuredContent, even for a text block that is a JSON object.
func TestMCPContentBlocks(t *testing.T) {
	check := func(t *testing.T, cs *mcp.ClientSession) {
		t.Helper()
		res, err := cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{"page": "home"}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(wantBlocks(t), res.Content); diff != "" {
			t.Errorf("content (-want +got):\n%s", diff)
		}
		if res.IsError || res.StructuredContent != nil {
			t.Errorf("isError %v, structuredContent %v", res.IsError, res.StructuredContent)
		}
		res, err = cs.CallTool(testContext(t), &mcp.CallToolParams{Name: "screenshot", Arguments: map[string]any{"page": "json"}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]mcp.Content{&mcp.TextContent{Text: `{"a":1}`}}, res.Content); diff != "" || res.StructuredContent != nil {
			t.Errorf("a JSON text block: structuredContent %v; content (-want +got):\n%s", res.StructuredContent, diff)
		}
	}
	for _, version := range []string{"", legacyVersion} {
		t.Run("in memory, version="+version, func(t *testing.T) {
			check(t, connectInMemory(t, contentScope(t), version))
		})
		t.Run("http, version="+version, func(t *testing.T) {
			sc := contentScope(t)
			hs := startServer(t, New(sc, Options{}))
			check(t, connectHTTP(t, hs.URL+"/mcp", version))
			if n := sc.fastCalls.Load(); n != 2 {
				t.Errorf("the fast path answered %d calls, want 2", n)
			}
		})
	}
}

// HTTP tools and the record get the text a model would.
func TestHTTPToolContentText(t *testing.T) {
	sc := contentScope(t)
	hs := startServer(t, New(sc, Options{}))
	got := post(t, hs.URL+"/tools/screenshot", `{"page":"home"}`, http.StatusOK)
	var ans struct {
		Content string `json:"content"`
		IsError bool   `json:"is_error"`
	}
	if err := json.Unmarshal([]byte(got), &ans); err != nil {
		t.Fatal(err)
	}
	want := "Home page:\n[image image/png, 69 bytes]\n[audio audio/wav, 4 bytes]\n[resource test://page.json, application/json]\n" +
		`{"title":"Home"}` + "\n[resource test://page.bin, application/octet-stream, 5 bytes]\n[resource_link test://page.html, page, text/html]"
	if ans.Content != want || ans.IsError {
		t.Errorf("POST /tools/screenshot: %q (is_error %v), want %q", ans.Content, ans.IsError, want)
	}
	recs := sc.Records()
	if len(recs) != 1 || recs[0].Result.Content != want || recs[0].Result.Outcome != "content" {
		t.Errorf("record: %+v", recs)
	}
}

// notices collects what a go-sdk client is sent during calls.
type notices struct {
	mu       sync.Mutex
	log      []string
	progress []string
}

func (n *notices) options() *mcp.ClientOptions {
	return &mcp.ClientOptions{
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			data, _ := json.Marshal(r.Params.Data)
			n.log = append(n.log, fmt.Sprintf("%s %s %s", r.Params.Level, r.Params.Logger, data))
		},
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			n.mu.Lock()
			defer n.mu.Unlock()
			n.progress = append(n.progress, fmt.Sprintf("%v %v/%v", r.Params.ProgressToken, r.Params.Progress, r.Params.Total))
		},
	}
}

// take returns what came, once nLog messages and nProgress notifications
// have (go-sdk's client may run its handlers after the call returns), or
// after wait.
func (n *notices) take(nLog, nProgress int, wait time.Duration) (log, progress []string) {
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		n.mu.Lock()
		done := len(n.log) >= nLog && len(n.progress) >= nProgress
		n.mu.Unlock()
		if done {
			break
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	log, progress = n.log, n.progress
	n.log, n.progress = nil, nil
	return log, progress
}

// Log messages at or above the client's level and progress for a
// request with a progress token, before the answer, over every path.
func TestMCPNotices(t *testing.T) {
	for _, tt := range []struct {
		name    string
		http    bool
		version string
	}{
		{"in memory, legacy", false, legacyVersion},
		{"in memory, 2026-07-28", false, modernVersion},
		{"http, legacy", true, legacyVersion},
		{"http, 2026-07-28", true, modernVersion},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sc := contentScope(t)
			var n notices
			client := mcp.NewClient(&mcp.Implementation{Name: "dryfire-test", Version: "1"}, n.options())
			var tr mcp.Transport
			if tt.http {
				hs := startServer(t, New(sc, Options{}))
				tr = &mcp.StreamableClientTransport{Endpoint: hs.URL + "/mcp", MaxRetries: -1}
			} else {
				st, ct := mcp.NewInMemoryTransports()
				done := make(chan error, 1)
				go func() { done <- sc.ServeMCP(testContext(t), st) }()
				t.Cleanup(func() { <-done })
				tr = ct
			}
			cs, err := client.Connect(testContext(t), tr, &mcp.ClientSessionOptions{ProtocolVersion: tt.version})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cs.Close() })
			modern := tt.version == modernVersion
			call := func(level string, token any) {
				t.Helper()
				p := &mcp.CallToolParams{Name: "export", Arguments: map[string]any{}}
				if level != "" && modern {
					p.Meta = mcp.Meta{"io.modelcontextprotocol/logLevel": level}
				}
				if token != nil {
					p.SetProgressToken(token)
				}
				res, err := cs.CallTool(testContext(t), p)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff([]mcp.Content{&mcp.TextContent{Text: "exported"}}, res.Content); diff != "" {
					t.Errorf("answer (-want +got):\n%s", diff)
				}
			}

			// No level set, no token: nothing.
			call("", nil)
			if log, progress := n.take(1, 1, 50*time.Millisecond); log != nil || progress != nil {
				t.Errorf("without a level or a token: log %q, progress %q", log, progress)
			}
			if !modern {
				if err := cs.SetLoggingLevel(testContext(t), &mcp.SetLoggingLevelParams{Level: "info"}); err != nil {
					t.Fatal(err)
				}
			}
			call("info", "tok-1")
			wantLog := []string{`info  "Export started"`, `warning exporter {"rows":3}`}
			wantProgress := []string{"tok-1 0/100", "tok-1 50/100", "tok-1 100/100"}
			log, progress := n.take(len(wantLog), len(wantProgress), 5*time.Second)
			if diff := cmp.Diff(wantLog, log); diff != "" {
				t.Errorf("log at level info (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantProgress, progress); diff != "" {
				t.Errorf("progress (-want +got):\n%s", diff)
			}
			if tt.http {
				if got := sc.fastCalls.Load(); got != 2 {
					t.Errorf("the fast path answered %d calls, want 2", got)
				}
			}
		})
	}
}

// On the wire (the fast path): the notifications, then the answer, as one
// event stream; a JSON answer when there is nothing to send first.
func TestWireNotices(t *testing.T) {
	sc := contentScope(t)
	hs := startServer(t, New(sc, Options{}))
	url := hs.URL + "/mcp"
	init := rpc(t, url, nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	h := map[string]string{"Mcp-Session-Id": init.header.Get("Mcp-Session-Id"), "MCP-Protocol-Version": legacyVersion}
	rpc(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"export","arguments":{},"_meta":{"progressToken":7}}}`
	answer := `{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"exported"}]}}`
	event := func(data string) string { return "event: message\ndata: " + data + "\n\n" }
	progress := func(p string) string {
		return event(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":7,"progress":` + p + `,"total":100}}`)
	}

	// No level yet: progress only.
	ex := rpc(t, url, h, call)
	want := progress("0") + progress("50") + progress("100") + event(answer)
	if ct := ex.header.Get("Content-Type"); ct != "text/event-stream" || string(ex.body) != want {
		t.Errorf("progress only: %s\n%s\nwant\n%s", ct, ex.body, want)
	}

	// Level warning: the warning too, first.
	if ex := rpc(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"warning"}}`); ex.status != 200 {
		t.Fatalf("logging/setLevel: %d %s", ex.status, ex.body)
	}
	ex = rpc(t, url, h, call)
	want = event(`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":{"rows":3},"level":"warning","logger":"exporter"}}`) +
		progress("0") + progress("50") + progress("100") + event(answer)
	if string(ex.body) != want {
		t.Errorf("level warning:\n%s\nwant\n%s", ex.body, want)
	}

	// No token, and a level nothing reaches: a plain JSON answer.
	rpc(t, url, h, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"error"}}`)
	ex = rpc(t, url, h, strings.Replace(call, `,"_meta":{"progressToken":7}`, "", 1))
	if ct := ex.header.Get("Content-Type"); ct != "application/json" || string(ex.body) != answer {
		t.Errorf("nothing to send first: %s %s", ct, ex.body)
	}

	// 2026-07-28: the level comes with the request.
	meta := strings.TrimSuffix(modernMeta(modernVersion), "}") + `,"progressToken":"p","io.modelcontextprotocol/logLevel":"debug"}`
	ex = rpc(t, url, modernHeaders("tools/call", "export"), `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"export","arguments":{},`+meta+`}}`)
	body := string(ex.body)
	for _, part := range []string{`"data":"starting","level":"debug"`, `"data":"Export started","level":"info"`, `"level":"warning"`,
		`"progressToken":"p","progress":0,"total":100`, `"progressToken":"p","progress":100,"total":100`, `"resultType":"complete"`} {
		if !strings.Contains(body, part) {
			t.Errorf("2026-07-28: no %s in\n%s", part, body)
		}
	}
	if strings.Index(body, `"id":4`) < strings.LastIndex(body, "notifications/") {
		t.Errorf("2026-07-28: the answer is not last:\n%s", body)
	}
	if got := sc.fastCalls.Load(); got != 4 {
		t.Errorf("the fast path answered %d calls, want 4", got)
	}
}
