package engine

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/coder/websocket"
)

// OpenEnv's sessions ride a WebSocket (/ws): each connection is a
// session of its own, made when it opens and ended when it closes, and
// its messages are OpenEnv's: {"type": "reset" | "step" | "state" |
// "close", "data": …}, answered {"type": "observation" | "state" |
// "error", "data": …} (openenv-core's EnvClient, docs/serving.md).

// wsOrigins are the browser pages that may open a WebSocket (as Allowed
// lets them call the other routes): pages on this machine.
var wsOrigins = []string{"localhost", "localhost:*", "127.0.0.1", "127.0.0.1:*", "[::1]", "[::1]:*"}

type wsMessage struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// wsCode is OpenEnv's error code for one of dryfire's.
func wsCode(e *apiError) string {
	switch {
	case e.code == "UNKNOWN_TYPE":
		return e.code
	case e.status == http.StatusTooManyRequests:
		return "CAPACITY_REACHED"
	case e.status >= 400 && e.status < 500:
		return "VALIDATION_ERROR"
	}
	return "EXECUTION_ERROR"
}

func (s *Sessions) serveWS(w http.ResponseWriter, r *http.Request) {
	// The server's read deadline bounds a request; a WebSocket lives on.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{OriginPatterns: wsOrigins})
	if err != nil {
		return // Accept answered
	}
	defer c.CloseNow()
	c.SetReadLimit(MaxBody)
	ctx := r.Context()
	send := func(typ string, data []byte) error {
		return c.Write(ctx, websocket.MessageText, marshal(wsMessage{Type: typ, Data: data}))
	}
	fail := func(code, message, ours string) error {
		return send("error", marshal(map[string]string{"message": message, "code": code, "dryfire_code": ours}))
	}
	ss, aerr := s.create(&sessionStart{})
	if aerr != nil {
		fail(wsCode(aerr), aerr.message, aerr.code)
		c.Close(websocket.StatusTryAgainLater, "no session")
		return
	}
	defer s.end(ss, "its WebSocket closed")
	for {
		typ, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		if _, aerr := s.lookup(ss.id); aerr != nil {
			fail("SESSION_ERROR", aerr.message, aerr.code)
			c.Close(websocket.StatusNormalClosure, "session ended")
			return
		}
		var m wsMessage
		if typ != websocket.MessageText || json.Unmarshal(data, &m) != nil {
			if fail("INVALID_JSON", "a message is a JSON object {\"type\", \"data\"} in a text frame", "INVALID_REQUEST") != nil {
				return
			}
			continue
		}
		var ans []byte
		kind := "observation"
		switch m.Type {
		case "reset":
			ans, aerr = s.reset(ss, m.Data)
		case "step":
			ans, aerr = s.act(ss, m.Data)
		case "state":
			kind, ans = "state", s.state(ss)
		case "close":
			c.Close(websocket.StatusNormalClosure, "")
			return
		default:
			aerr = &apiError{http.StatusBadRequest, "UNKNOWN_TYPE", "unknown message type " + string(marshal(m.Type)) + ": the types are reset, step, state and close"}
		}
		if aerr != nil {
			err = fail(wsCode(aerr), aerr.message, aerr.code)
		} else {
			err = send(kind, ans)
		}
		if err != nil {
			return
		}
	}
}
