package mcpbridge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A server that answers initialize in JSON with a session, tools/call in
// an event stream (a notification, then the answer), notifications with
// 202, and remembers the headers and the DELETE it got.
func TestBridgeRelays(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" session="+r.Header.Get("Mcp-Session-Id")+" version="+r.Header.Get("Mcp-Protocol-Version")+" "+string(body))
		mu.Unlock()
		switch {
		case r.Method == http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case bytes.Contains(body, []byte(`"initialize"`)):
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}`)
		case !bytes.Contains(body, []byte(`"id"`)):
			w.WriteHeader(http.StatusAccepted)
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\ndata: \"params\":{}}\n\nevent: message\ndata: {\"jsonrpc\": \"2.0\", \"id\": 2, \"result\": {}}\n\n")
		}
	}))
	defer srv.Close()
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		``,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`,
	}, "\n")
	var out bytes.Buffer
	if err := (&Bridge{URL: srv.URL}).Run(context.Background(), strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18"}}
{"jsonrpc":"2.0","method":"notifications/message","params":{}}
{"jsonrpc":"2.0","id":2,"result":{}}
`
	if out.String() != want {
		t.Errorf("out:\n%s\nwant:\n%s", out.String(), want)
	}
	wantSeen := []string{
		`POST session= version= {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`,
		`POST session=s1 version=2025-06-18 {"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`POST session=s1 version=2025-06-18 {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}`,
		`DELETE session=s1 version= `,
	}
	if strings.Join(seen, "\n") != strings.Join(wantSeen, "\n") {
		t.Errorf("the server got:\n%s\nwant:\n%s", strings.Join(seen, "\n"), strings.Join(wantSeen, "\n"))
	}
}

// What the bridge cannot relay: a request gets a JSON-RPC error saying
// why, a notification nothing; a message past the bound ends the run.
func TestBridgeFailures(t *testing.T) {
	refusing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such case", http.StatusNotFound)
	}))
	defer refusing.Close()
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close()
	for _, tt := range []struct {
		name, url, in, want string
	}{
		{"unreachable", goneURL, `{"jsonrpc":"2.0","id":"a","method":"tools/list"}` + "\n" + `{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32603,"message":"dryfire mcp-bridge: Post \"` + goneURL + `\": dial tcp`},
		{"refused", refusing.URL, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"dryfire mcp-bridge: ` + refusing.URL + ` answered 404 Not Found: no such case"}}` + "\n"},
	} {
		var out bytes.Buffer
		if err := (&Bridge{URL: tt.url}).Run(context.Background(), strings.NewReader(tt.in), &out); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), tt.want) || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("%s: %s", tt.name, out.String())
		}
	}
	var out bytes.Buffer
	err := (&Bridge{URL: refusing.URL}).Run(context.Background(), strings.NewReader(strings.Repeat("x", MaxMessage+1)), &out)
	if err == nil || !strings.Contains(err.Error(), "a message is at most 16 MiB") {
		t.Errorf("a message past the bound: %v", err)
	}
}
