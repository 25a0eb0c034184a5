// Package jsonrpc writes the one JSON-RPC 2.0 message dryfire builds by
// hand: an error answer, which the tool server's stdio transport, its HTTP
// transport's refusals and the MCP bridge send when no MCP library does.
package jsonrpc

import "encoding/json"

// Error is the JSON-RPC error message answering the request with id
// (null when nil), compact, without a line end.
func Error(id json.RawMessage, code int, msg string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type rpcError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	data, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   rpcError        `json:"error"`
	}{"2.0", id, rpcError{code, msg}})
	return data
}
