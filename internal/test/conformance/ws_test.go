package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wsProvider names the Responses API over a WebSocket in the artifacts.
const wsProvider = "openai-responses-ws"

// wsEvents sends a Responses request body over the endpoint's WebSocket
// (root is its http:// URL) as a response.create message and returns the
// messages that answer it, to the terminal one.
func wsEvents(t *testing.T, root string, body []byte) []json.RawMessage {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(root, "http")+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Fatal(err)
	}
	fields["type"] = json.RawMessage(`"response.create"`)
	msg, _ := json.Marshal(fields)
	if err := conn.Write(ctx, websocket.MessageText, msg); err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	for {
		_, ev, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, ev)
		var head struct{ Type string }
		json.Unmarshal(ev, &head)
		if head.Type == "response.completed" || head.Type == "error" {
			return out
		}
	}
}

// wsArtifacts are the messages of the Responses WebSocket for the
// requests the Responses client sent over HTTP (each to a fresh scripted
// endpoint at url), a warm-up (generate: false) and a refused request.
func wsArtifacts(t *testing.T, endpoint func() string, label string, requests [][]byte) []artifact {
	t.Helper()
	var out []artifact
	root := endpoint()
	for i, req := range requests {
		for j, ev := range wsEvents(t, root, req) {
			out = append(out, artifact{wsProvider, "chunk", fmt.Sprintf("%s, request %d over the WebSocket, event %d", label, i+1, j+1), ev})
		}
	}
	if len(requests) > 0 {
		var fields map[string]json.RawMessage
		json.Unmarshal(requests[0], &fields)
		fields["generate"] = json.RawMessage("false")
		warm, _ := json.Marshal(fields)
		for j, ev := range wsEvents(t, endpoint(), warm) {
			out = append(out, artifact{wsProvider, "chunk", fmt.Sprintf("%s, a warm-up (generate: false), event %d", label, j+1), ev})
		}
		// Past the script's last turn: refused.
		for j, ev := range wsEvents(t, root, requests[len(requests)-1]) {
			out = append(out, artifact{wsProvider, "chunk", fmt.Sprintf("%s, a request the script refuses, event %d", label, j+1), ev})
		}
	}
	return out
}
