package jsonrpc

import (
	"encoding/json"
	"testing"
)

func TestError(t *testing.T) {
	for _, tt := range []struct {
		id   json.RawMessage
		code int
		msg  string
		want string
	}{
		{nil, -32600, `line over "max"`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"line over \"max\""}}`},
		{json.RawMessage(`7`), -32603, "x", `{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"x"}}`},
		{json.RawMessage(`"a"`), -32601, "<no>", `{"jsonrpc":"2.0","id":"a","error":{"code":-32601,"message":"\u003cno\u003e"}}`},
	} {
		if got := string(Error(tt.id, tt.code, tt.msg)); got != tt.want {
			t.Errorf("Error(%s, %d, %q) =\n %s\nwant\n %s", tt.id, tt.code, tt.msg, got, tt.want)
		}
	}
}
