package fakeapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/coder/websocket"

	"github.com/dryfire-dev/dryfire/internal/wire"
)

// serveWebSocket is the Responses API's WebSocket mode: each text
// message {"type": "response.create", …} is answered as the same body
// posted with "stream": true is, each event one text message; an error
// as {"type": "error", "status": N, "error": …}. A request may name an
// earlier answer of the same connection by previous_response_id (with
// store false, as Codex CLI does): its input is that answer's input and
// output, then its own. The key is checked at the upgrade.
func serveWebSocket(h http.Handler, key string, w http.ResponseWriter, r *http.Request) {
	if e := checkBearer(r, key); e != nil {
		refuse(w, wire.OpenAIResponses, e)
		return
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	conn.SetReadLimit(64 << 20)
	ctx := r.Context()
	history := map[string][]any{} // response id → its input and output
	for {
		_, msg, err := conn.Read(ctx)
		if err != nil {
			return
		}
		req := decodeObject(msg)
		if req["type"] != "response.create" {
			if req["type"] == "response.processed" {
				continue
			}
			conn.Write(ctx, websocket.MessageText, []byte(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"invalid_message","message":"a message is {\"type\": \"response.create\", …}","param":null}}`))
			continue
		}
		delete(req, "type")
		req["stream"] = true
		input, _ := req["input"].([]any)
		if prev, ok := req["previous_response_id"].(string); ok {
			before, known := history[prev]
			if !known {
				conn.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"type":"error","status":400,"error":{"type":"invalid_request_error","code":"previous_response_not_found","message":"Previous response with id '%s' not found.","param":"previous_response_id"}}`, prev)))
				continue
			}
			input = append(append([]any{}, before...), input...)
			delete(req, "previous_response_id")
		}
		req["input"] = input
		body, _ := json.Marshal(req)
		post := httptest.NewRequest(http.MethodPost, responsesPath, bytes.NewReader(body))
		post.Header = r.Header.Clone()
		post.Header.Del("Upgrade")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, post)
		if rec.Code != http.StatusOK {
			var e struct {
				Error json.RawMessage `json:"error"`
			}
			json.Unmarshal(rec.Body.Bytes(), &e)
			conn.Write(ctx, websocket.MessageText, []byte(fmt.Sprintf(`{"type":"error","status":%d,"error":%s}`, rec.Code, e.Error)))
			continue
		}
		for _, ev := range strings.Split(rec.Body.String(), "\n\n") {
			for _, line := range strings.Split(ev, "\n") {
				data, ok := strings.CutPrefix(line, "data: ")
				if !ok {
					continue
				}
				var done struct {
					Type     string `json:"type"`
					Response struct {
						ID     string `json:"id"`
						Output []any  `json:"output"`
					} `json:"response"`
				}
				if json.Unmarshal([]byte(data), &done) == nil && done.Type == "response.completed" {
					history[done.Response.ID] = append(append([]any{}, input...), done.Response.Output...)
				}
				if err := conn.Write(ctx, websocket.MessageText, []byte(data)); err != nil {
					return
				}
			}
		}
	}
}
