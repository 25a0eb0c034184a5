package wire

// A Responses WebSocket's live calls. A request that came on a client's
// WebSocket (modelserver's Responses WebSocket: the call's context carries
// its WSUpstream) goes live on a WebSocket of its own to the upstream,
// one per client connection, as OpenAI's WebSocket mode wants: a later
// request names an earlier answer of the same connection by
// previous_response_id, which only that connection knows. Its events are
// read to the terminal one and passed on as the stream they would be over
// HTTP (event: TYPE, data: EVENT), so that the cassette keeps them as it
// keeps any stream.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/coder/websocket"

	"github.com/dryfire-dev/dryfire/internal/model"
)

// WebSocketBeta is the OpenAI-Beta header of the Responses WebSocket.
const WebSocketBeta = "responses_websockets=2026-02-06"

// WSUpstream is the upstream WebSocket of one client's Responses
// WebSocket, dialled at its first live call; Close ends it.
type WSUpstream struct {
	ctx    context.Context // ends with Close
	cancel context.CancelFunc
	mu     sync.Mutex // held while an answer passes
	conn   *websocket.Conn
}

// NewWSUpstream is the upstream of a client's WebSocket, not dialled yet.
func NewWSUpstream() *WSUpstream {
	ctx, cancel := context.WithCancel(context.Background())
	return &WSUpstream{ctx: ctx, cancel: cancel}
}

type wsKey struct{}

// WithWSUpstream is ctx carrying u: the calls of a client's WebSocket.
func WithWSUpstream(ctx context.Context, u *WSUpstream) context.Context {
	return context.WithValue(ctx, wsKey{}, u)
}

// Close closes the upstream connection, if any, an answer under way
// cut.
func (u *WSUpstream) Close() {
	u.cancel()
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.conn != nil {
		u.conn.Close(websocket.StatusNormalClosure, "")
		u.conn = nil
	}
}

// terminal are the Responses events that end an answer (foldResponses
// reads an error's before).
var terminal = map[string]bool{"response.completed": true, "response.failed": true, "response.incomplete": true, "error": true}

// answerWS sends call c on the upstream WebSocket u (dialled first when
// it is not yet) and answers with its events as a stream.
func (l *Live) answerWS(c *model.Call, u *WSUpstream) *model.Answer {
	api := c.Wire.(API)
	out, target, err := l.request(c)
	if err != nil {
		return l.failed(api, err)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(c.Body, &fields); err != nil {
		return l.failed(api, err)
	}
	delete(fields, "stream") // a WebSocket request streams anyway
	fields["type"] = json.RawMessage(`"response.create"`)
	msg, _ := json.Marshal(fields)
	u.mu.Lock() // one answer at a time on a connection; unlocked when it has passed
	if u.conn == nil {
		if a := l.dialWS(u, out.Header, *target); a != nil {
			u.mu.Unlock()
			return a
		}
	}
	first, err := u.send(msg)
	if err != nil {
		u.mu.Unlock()
		return l.failed(api, err)
	}
	var head struct {
		Type   string          `json:"type"`
		Status int             `json:"status"`
		Error  json.RawMessage `json:"error"`
	}
	json.Unmarshal(first, &head)
	if head.Type == "error" && head.Status >= 400 {
		u.mu.Unlock()
		return &model.Answer{Status: head.Status, Header: http.Header{"Content-Type": {"application/json"}},
			Body: []byte(`{"error":` + string(head.Error) + `}`), From: target.Hostname(), Cut: -1}
	}
	pr, pw := io.Pipe()
	go u.pump(pw, first, head.Type)
	return &model.Answer{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}}, From: target.Hostname(),
		Live: pr, Streamed: true, Cut: -1}
}

// dialWS opens u's connection to target (the request's URL, its scheme
// made ws or wss) with the request's headers; an answer when it cannot
// (the upstream's refusal, or a 502).
func (l *Live) dialWS(u *WSUpstream, header http.Header, target url.URL) *model.Answer {
	target.Scheme = strings.Replace(strings.Replace(target.Scheme, "https", "wss", 1), "http", "ws", 1)
	h := header.Clone()
	h.Del("Content-Type")
	if !strings.Contains(h.Get("OpenAI-Beta"), "responses_websockets") {
		h.Add("OpenAI-Beta", WebSocketBeta)
	}
	conn, resp, err := websocket.Dial(u.ctx, target.String(), &websocket.DialOptions{HTTPHeader: h, HTTPClient: &http.Client{Transport: l.Transport}})
	if err != nil {
		if resp != nil && resp.StatusCode >= 400 {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
			return &model.Answer{Status: resp.StatusCode, Header: http.Header{"Content-Type": {"application/json"}}, Body: body, From: target.Hostname(), Cut: -1}
		}
		return l.failed(OpenAIResponses, fmt.Errorf("the Responses WebSocket %s: %w", target.Redacted(), err))
	}
	conn.SetReadLimit(64 << 20)
	u.conn = conn
	return nil
}

// send sends a request on u's connection and reads the first event of
// its answer; an error ends the connection.
func (u *WSUpstream) send(msg []byte) ([]byte, error) {
	err := u.conn.Write(u.ctx, websocket.MessageText, msg)
	var first []byte
	if err == nil {
		_, first, err = u.conn.Read(u.ctx)
	}
	if err != nil {
		u.conn.CloseNow()
		u.conn = nil
	}
	return first, err
}

// pump passes an answer's events on to w as a stream (event: TYPE, data:
// EVENT), from the first, of type typ, to the terminal one; then u's
// connection is free for the next request.
func (u *WSUpstream) pump(w *io.PipeWriter, ev []byte, typ string) {
	defer u.mu.Unlock()
	conn := u.conn
	for {
		if _, err := w.Write(Frame(typ, ev)); err != nil {
			conn.CloseNow() // the client left mid-answer
			u.conn = nil
			return
		}
		if terminal[typ] {
			w.Close()
			return
		}
		var err error
		if _, ev, err = conn.Read(u.ctx); err != nil {
			u.conn = nil
			w.CloseWithError(err)
			return
		}
		var t struct {
			Type string `json:"type"`
		}
		json.Unmarshal(ev, &t)
		typ = t.Type
	}
}

// wsUpstreamOf is the upstream WebSocket a call came with, if any.
func wsUpstreamOf(ctx context.Context) *WSUpstream {
	u, _ := ctx.Value(wsKey{}).(*WSUpstream)
	return u
}
