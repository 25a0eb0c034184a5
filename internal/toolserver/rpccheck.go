package toolserver

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/jsonrpc"
)

// checkRPC says what is wrong with a JSON-RPC message or batch before
// go-sdk sees it: go-sdk ends a stdio connection on the first line that is
// not JSON-RPC, and accepts an HTTP body with garbage after the message.
// A problem is a JSON-RPC error: -32700 for what is not JSON (or has
// anything after its one value), -32600 for JSON that is no JSON-RPC
// message; id is the request's when it has a valid one, else nil.
func checkRPC(data []byte) (problem bool, id json.RawMessage, code int, msg string) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		var v json.RawMessage
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = fmt.Errorf("not a JSON value")
		}
		return true, nil, -32700, "parse error: " + err.Error()
	}
	switch data[0] {
	case '{':
		return checkMessage(data)
	case '[':
		var batch []json.RawMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			return true, nil, -32700, "parse error: " + err.Error()
		}
		if len(batch) == 0 {
			return true, nil, -32600, "invalid request: an empty batch"
		}
		for _, m := range batch {
			if m = bytes.TrimSpace(m); len(m) == 0 || m[0] != '{' {
				return true, nil, -32600, "invalid request: a batch holds JSON-RPC messages (objects)"
			}
			if p, _, code, msg := checkMessage(m); p {
				return true, nil, code, msg
			}
		}
		return false, nil, 0, ""
	}
	return true, nil, -32600, "invalid request: a JSON-RPC message is an object (or a batch of them)"
}

func checkMessage(data []byte) (bool, json.RawMessage, int, string) {
	var m struct {
		JSONRPC json.RawMessage `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Result  json.RawMessage `json:"result"`
		Error   json.RawMessage `json:"error"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return true, nil, -32600, "invalid request: " + err.Error()
	}
	hasID := len(m.ID) > 0 && string(m.ID) != "null"
	if hasID && !validRPCID(m.ID) {
		return true, nil, -32600, "invalid request: id must be a string, a number or null"
	}
	var id json.RawMessage
	if hasID {
		id = m.ID
	}
	switch {
	case string(m.JSONRPC) != `"2.0"`:
		return true, id, -32600, `invalid request: "jsonrpc" must be "2.0"`
	case len(m.Method) > 0 && m.Method[0] != '"':
		return true, id, -32600, "invalid request: method must be a string"
	case len(m.Method) == 0 && m.Result == nil && m.Error == nil:
		return true, id, -32600, "invalid request: neither a method, nor a result or an error"
	}
	return false, nil, 0, ""
}

// rpcErrorLine is a JSON-RPC error message as one line of stdio.
func rpcErrorLine(id json.RawMessage, code int, msg string) []byte {
	return append(jsonrpc.Error(id, code, msg), '\n')
}
