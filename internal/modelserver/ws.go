package modelserver

// The Responses API over a WebSocket (OpenAI's "WebSocket mode", Codex
// CLI's transport for a provider that supports it): GET /v1/responses
// upgraded; each text message the client sends is a request,
// {"type": "response.create", …the body of POST /v1/responses}, answered
// as that request with "stream": true is: each event of the stream one
// text message, in order, the connection kept for the next. It is one
// more route on the model seam: the message is read into a Call (the
// body as POST /v1/responses would carry it), Recorder.Answer answers it
// (the script, the cassette, or live over HTTP, recorded as such), and
// the answer is written as messages.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// serveWebSocket serves a Responses WebSocket until the client closes
// it. A message that is no request gets an error message; a
// response.processed message (the client saying it handled an answer)
// is read and dropped.
func (e *Endpoint) serveWebSocket(w http.ResponseWriter, r *http.Request, api wire.API) {
	if api != wire.OpenAIResponses {
		write(w, api.Error(http.StatusBadRequest, model.ErrorInfo{Type: "invalid_request_error", Code: "websocket_not_supported",
			Message: fmt.Sprintf("%s: only the Responses API (/v1/responses) is served over a WebSocket", r.URL.Path)}))
		return
	}
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		return // Accept wrote the refusal
	}
	defer conn.CloseNow()
	conn.SetReadLimit(maxBody)
	up := wire.NewWSUpstream() // its live calls' own WebSocket, if any
	defer up.Close()
	ctx := wire.WithWSUpstream(r.Context(), up)
	header := http.Header{} // less the upgrade's own headers: not a request's over HTTP
	for k, v := range r.Header {
		if c := http.CanonicalHeaderKey(k); !strings.HasPrefix(c, "Sec-Websocket-") && c != "Upgrade" && c != "Connection" {
			header[k] = v
		}
	}
	warm := 0
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil {
			return // closed, or past maxBody (the library closed it with 1009)
		}
		if typ != websocket.MessageText {
			conn.Close(websocket.StatusUnsupportedData, "the Responses WebSocket takes text messages")
			return
		}
		body, kind, err := wsRequest(msg)
		switch {
		case kind == "response.processed":
			continue
		case err == nil && warmUp(body):
			warm++
			if !writeWSAnswer(ctx, conn, warmUpAnswer(body, warm)) {
				return
			}
			continue
		case err != nil:
			if !writeWSError(ctx, conn, http.StatusBadRequest, nil, []byte(`{"error":{"type":"invalid_request_error","code":"invalid_websocket_message","message":`+quote(err.Error())+`}}`)) {
				return
			}
			continue
		}
		req := r.Clone(ctx)
		req.Method, req.Header, req.ContentLength = http.MethodPost, header, int64(len(body))
		req.Body = io.NopCloser(bytes.NewReader(body))
		c := &model.Call{Wire: api.Wire(), HTTP: req, Body: body}
		if !writeWSAnswer(ctx, conn, e.Answer(c)) {
			return
		}
	}
}

// wsRequest is the body of POST /v1/responses a message stands for: its
// fields less "type", streamed; kind is its type.
func wsRequest(msg []byte) (body []byte, kind string, err error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(msg, &fields); err != nil {
		return nil, "", fmt.Errorf("a message is a JSON object, {\"type\": \"response.create\", …}: %v", err)
	}
	if err := json.Unmarshal(fields["type"], &kind); err != nil || kind != "response.create" {
		if kind == "response.processed" {
			return nil, kind, nil
		}
		return nil, kind, fmt.Errorf("a message's type is response.create (or response.processed), not %s", fields["type"])
	}
	delete(fields, "type")
	fields["stream"] = json.RawMessage("true")
	body, err = json.Marshal(fields)
	return body, kind, err
}

// warmUp says whether a request only warms the connection up
// ("generate": false, which Codex CLI sends first with the turn's
// instructions and tools): no model call, no turn, nothing recorded.
func warmUp(body []byte) bool {
	var r struct {
		Generate *bool `json:"generate"`
	}
	return json.Unmarshal(body, &r) == nil && r.Generate != nil && !*r.Generate
}

// warmUpAnswer is the answer to the nth warm-up: a response with no
// output, streamed.
func warmUpAnswer(body []byte, n int) *model.Answer {
	var echo map[string]any
	json.Unmarshal(body, &echo)
	m, _ := echo["model"].(string)
	_, events := wire.OpenAIResponses.Reply(&wire.Reply{ID: fmt.Sprintf("dryfire_warmup_%d", n), Model: m, Stream: true, NoOutput: true, Echo: echo})
	return &model.Answer{Status: http.StatusOK, Events: events, Cut: -1}
}

// writeWSAnswer writes an answer as messages: a stream's events (a live
// one as they arrive), each event's data one text message; an error
// answer as an error message. A fault's drop closes the connection, its
// cut after the events it lets through. false: the connection is over.
func writeWSAnswer(ctx context.Context, conn *websocket.Conn, a *model.Answer) bool {
	switch {
	case a.Drop:
		return false
	case a.Status/100 != 2:
		data := a.Bytes()
		if a.Live != nil {
			data, _ = io.ReadAll(io.LimitReader(a.Live, maxBody))
			a.Live.Close()
		}
		return writeWSError(ctx, conn, a.Status, a.Header, data)
	case a.Live != nil:
		defer a.Live.Close()
		ok := true
		err := eachEvent(bufio.NewReader(a.Live), func(data []byte) error {
			if ok {
				ok = conn.Write(ctx, websocket.MessageText, data) == nil
			}
			return nil // read on: the recording is kept once the stream passed whole
		})
		return ok && err == nil
	}
	data := a.Bytes()
	if a.Cut >= 0 {
		data = data[:a.Cut]
	}
	err := eachEvent(bufio.NewReader(bytes.NewReader(data)), func(d []byte) error {
		return conn.Write(ctx, websocket.MessageText, d)
	})
	return err == nil && a.Cut < 0
}

// eachEvent calls f with the data of each server-sent event of r, in
// order (its data: lines joined; none, or [DONE], is no message).
func eachEvent(r *bufio.Reader, f func(data []byte) error) error {
	var data []byte
	has := false
	for {
		line, err := r.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && has:
			if !bytes.Equal(data, []byte("[DONE]")) {
				if ferr := f(data); ferr != nil {
					return ferr
				}
			}
			data, has = data[:0], false
		case bytes.HasPrefix(line, []byte("data:")):
			d := bytes.TrimPrefix(bytes.TrimPrefix(line, []byte("data:")), []byte(" "))
			if has {
				data = append(data, '\n')
			}
			data, has = append(data, d...), true
		}
		if err == io.EOF {
			if has && !bytes.Equal(data, []byte("[DONE]")) {
				return f(data)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// writeWSError writes an error answer (an API error body, {"error": …})
// as the Responses WebSocket's error message: {"type": "error", "status":
// N, "error": …}, the HTTP error it stands for (how Codex CLI reads a
// refusal), with the error's code, message and param beside them (the
// official ResponseErrorEvent's), and the answer's retry headers
// (Retry-After, retry-after-ms) as "headers".
func writeWSError(ctx context.Context, conn *websocket.Conn, status int, header http.Header, body []byte) bool {
	var b struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &b) != nil || len(b.Error) == 0 || b.Error[0] != '{' {
		b.Error = json.RawMessage(`{"type":"server_error","code":null,"message":` + quote(string(body)) + `,"param":null}`)
	}
	var e struct {
		Code    *string `json:"code"`
		Message string  `json:"message"`
		Param   *string `json:"param"`
	}
	json.Unmarshal(b.Error, &e)
	retry := map[string]string{} // left out when empty
	for _, k := range []string{"Retry-After", "Retry-After-Ms"} {
		if v := header.Get(k); v != "" {
			retry[strings.ToLower(k)] = v
		}
	}
	msg, _ := json.Marshal(struct {
		Type    string            `json:"type"`
		Status  int               `json:"status"`
		Error   json.RawMessage   `json:"error"`
		Headers map[string]string `json:"headers,omitempty"`
		Code    *string           `json:"code"`
		Message string            `json:"message"`
		Param   *string           `json:"param"`
		Seq     int               `json:"sequence_number"`
	}{"error", status, b.Error, retry, e.Code, e.Message, e.Param, 0})
	return conn.Write(ctx, websocket.MessageText, msg) == nil
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
