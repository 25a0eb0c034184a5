package toolserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

const stdioInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// A line that is not a JSON-RPC message is answered with a JSON-RPC error
// and the server goes on: the initialize before it and the request after
// it are both answered (go-sdk alone ended the connection at the bad
// line, losing even the initialize answer).
func TestStdioBadLineKeepsServing(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"not JSON", `not json`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'o' in literal null (expecting 'u')"}}`},
		{"trailing garbage", `{"jsonrpc":"2.0","id":9,"method":"tools/list"} x`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character 'x' after top-level value"}}`},
		{"two messages on a line", `{"jsonrpc":"2.0","id":9,"method":"tools/list"}{"jsonrpc":"2.0","id":10,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character '{' after top-level value"}}`},
		{"a number", `42`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a JSON-RPC message is an object (or a batch of them)"}}`},
		{"empty batch", `[]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: an empty batch"}}`},
		{"batch of numbers", `[1,2]`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a batch holds JSON-RPC messages (objects)"}}`},
		{"no version", `{"id":8,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":8,"error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`},
		{"version 1.0", `{"jsonrpc":"1.0","id":"a","method":"tools/list"}`, `{"jsonrpc":"2.0","id":"a","error":{"code":-32600,"message":"invalid request: \"jsonrpc\" must be \"2.0\""}}`},
		{"object id", `{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: id must be a string, a number or null"}}`},
		{"method not a string", `{"jsonrpc":"2.0","id":5,"method":7}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: method must be a string"}}`},
		{"nothing to do", `{"jsonrpc":"2.0","id":5}`, `{"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"invalid request: neither a method, nor a result or an error"}}`},
		{"over the bound", `{"jsonrpc":"2.0","id":5,"method":"` + strings.Repeat("x", maxBody) + `"}`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a line over 4194304 bytes"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml")})
			in := strings.NewReader(stdioInit + "\n" + tt.line + "\n" + `{"jsonrpc":"2.0","id":2,"method":"tools/list"}` + "\n")
			var out bytes.Buffer
			if err := sc.ServeStdio(testContext(t), in, &out); err != nil {
				t.Fatalf("ServeStdio: %v\n%s", err, out.String())
			}
			var refusal string
			ids := map[string]bool{}
			for line := range strings.Lines(out.String()) {
				var m struct {
					ID     json.RawMessage `json:"id"`
					Result json.RawMessage `json:"result"`
				}
				if err := json.Unmarshal([]byte(line), &m); err != nil {
					t.Fatalf("output line %q: %v", line, err)
				}
				if m.Result != nil {
					ids[string(m.ID)] = true
				} else {
					refusal = strings.TrimSpace(line)
				}
			}
			if !ids["1"] || !ids["2"] || len(ids) != 2 {
				t.Errorf("answered %v, want ids 1 and 2\n%s", ids, out.String())
			}
			if refusal != tt.want {
				t.Errorf("refusal\n%s\nwant\n%s", refusal, tt.want)
			}
		})
	}
}

// An HTTP body with anything after its one JSON-RPC message is refused
// with a parse error (go-sdk accepted it).
func TestHTTPBodyWithTrailingGarbage(t *testing.T) {
	hs := startServer(t, New(NewScope(ScopeOptions{Suite: loadSuite(t, "support.dryfire.yaml")}), Options{}))
	for _, body := range []string{
		stdioInit + ` garbage`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ping"}}]`,
	} {
		req, _ := http.NewRequest(http.MethodPost, hs.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		got.ReadFrom(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(got.String(), `"code":-32700,"message":"parse error: invalid character`) {
			t.Errorf("%.40s…: %d %s", body, res.StatusCode, got.String())
		}
	}
}
