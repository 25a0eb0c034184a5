package toolserver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The tools/call bodies the official clients send, in both eras, and
// bodies scanCall must refuse (go-sdk answers those).
var scanBodies = []struct {
	body string
	ok   bool
}{
	// TypeScript SDK, 2025-11-25 (no _meta; with a progress token).
	{`{"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}},"jsonrpc":"2.0","id":2}`, true},
	{`{"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},"_meta":{"progressToken":2}},"jsonrpc":"2.0","id":2}`, true},
	// Python SDK (pydantic's dump: spaces none, id first).
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}}}`, true},
	{`{"jsonrpc":"2.0","id":"req-1","method":"tools/call","params":{"_meta":{"progressToken":"tok"},"name":"x","arguments":{}}}`, true},
	// 2026-07-28, with the era's _meta.
	{`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"one","arguments":{"k":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"},"io.modelcontextprotocol/logLevel":"info","progressToken":7}}}`, true},
	// Whitespace, nesting, escapes inside arguments, unknown members.
	{" {\n \"jsonrpc\" : \"2.0\", \"id\" : -1.5e3, \"method\":\"tools/call\", \"extra\": [1, {\"a\\\"b\": null}],\n \"params\": {\"name\":\"n\", \"arguments\": {\"s\": \"\\u00e9\\n\", \"l\": [true, false, null, 0, -0.1]}, \"other\": 1}} \r\n", true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n"}}`, true},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":null}}`, true},
	// Refused: unusual keys or strings, duplicates, wrong types, features, bad JSON.
	{`{"jsonrpc":"2.0","id":1,"Method":"tools/call","params":{"name":"n"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/call","params":{"name":"n"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"n"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"\u006e"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"na\u006de":"n"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","task":{}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","_meta":{"progressToken":1,"progressToken":2}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","_meta":null}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","_meta":{"io.modelcontextprotocol/protocolVersion":5}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`, false},
	{`{"jsonrpc":2,"id":1,"method":"tools/call","params":{"name":"n"}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n"}} x`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"a":01}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"a":"` + "\x01" + `"}}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"a":tru}}}`, false},
	{`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n"}}]`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n",}}`, false},
	{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + "\xff" + `"}}`, false},
}

func TestScanCall(t *testing.T) {
	for _, tt := range scanBodies {
		var req mcpCallRequest
		var meta requestMeta
		if got := scanCall([]byte(tt.body), &req, &meta); got != tt.ok {
			t.Errorf("scanCall(%s) = %v, want %v", tt.body, got, tt.ok)
			continue
		}
		if tt.ok {
			checkLikeUnmarshal(t, []byte(tt.body), &req, &meta)
		}
	}
}

// checkLikeUnmarshal fails unless encoding/json reads body as scanCall
// did: what the fast path read before it.
func checkLikeUnmarshal(t *testing.T, body []byte, req *mcpCallRequest, meta *requestMeta) {
	t.Helper()
	var wreq mcpCallRequest
	var wmeta requestMeta
	if json.Unmarshal(body, &wreq) != nil || wreq.Params.Meta != nil && json.Unmarshal(wreq.Params.Meta, &wmeta) != nil {
		t.Fatalf("scanCall took %q, which encoding/json refuses", body)
	}
	if !reflect.DeepEqual(normRaw(*req), normRaw(wreq)) || !reflect.DeepEqual(*meta, wmeta) {
		t.Fatalf("%q:\nscanCall  %+v %+v\nencoding/json %+v %+v", body, *req, *meta, wreq, wmeta)
	}
}

// normRaw makes empty and nil raw messages alike (encoding/json leaves an
// absent member nil, as scanCall does; the comparison is of bytes).
func normRaw(r mcpCallRequest) mcpCallRequest {
	for _, p := range []*json.RawMessage{&r.ID, &r.Params.Arguments, &r.Params.Meta, &r.Params.Task, &r.Params.InputResponses, &r.Params.RequestState} {
		if len(*p) == 0 {
			*p = nil
		}
	}
	return r
}

// FuzzScanCall: whatever scanCall takes, encoding/json takes and reads the
// same way.
func FuzzScanCall(f *testing.F) {
	for _, tt := range scanBodies {
		f.Add(tt.body)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var req mcpCallRequest
		var meta requestMeta
		if !scanCall([]byte(body), &req, &meta) {
			return
		}
		checkLikeUnmarshal(t, []byte(body), &req, &meta)
	})
}

// The fast path takes every tools/call shape the official clients send
// (the TypeScript SDK's member order, the Python SDK's, a progress token,
// the 2026-07-28 _meta, whitespace) and answers each as go-sdk does.
func TestWireFastPathTakesClientShapes(t *testing.T) {
	legacy := []string{
		`{"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"}},"jsonrpc":"2.0","id":%d}`,
		`{"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},"_meta":{"progressToken":%[1]d}},"jsonrpc":"2.0","id":%[1]d}`,
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"_meta":{"progressToken":"p-1"},"name":"lookup_order","arguments":{"order_id":"B-1"}}}`,
		"{\n  \"jsonrpc\": \"2.0\",\n  \"id\": \"r-%d\",\n  \"method\": \"tools/call\",\n  \"params\": {\"name\": \"issue_refund\", \"arguments\": {}}\n}\n",
	}
	modern := []string{
		`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},` + modernMeta(modernVersion) + `}}`,
		`{"method":"tools/call","params":{"name":"lookup_order","arguments":{"order_id":"A-991"},"_meta":{"progressToken":%[1]d,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"x","version":"1"}}},"jsonrpc":"2.0","id":%[1]d}`,
	}
	start := func(slow bool) (*Scope, string, string) {
		sc := newTestScope(t, "")
		sc.slowMCP = slow
		hs := startServer(t, New(sc, Options{}))
		init := rpc(t, hs.URL+"/mcp", nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
		return sc, hs.URL + "/mcp", init.header.Get("Mcp-Session-Id")
	}
	fastSc, fastURL, fastSID := start(false)
	_, slowURL, slowSID := start(true)
	n := 0
	for era, bodies := range map[string][]string{"legacy": legacy, "modern": modern} {
		for i, tmpl := range bodies {
			body := fmt.Sprintf(tmpl, 100+i)
			hf, hsl := modernHeaders("tools/call", "lookup_order"), modernHeaders("tools/call", "lookup_order")
			if era == "legacy" {
				hf = map[string]string{"Mcp-Session-Id": fastSID, "MCP-Protocol-Version": legacyVersion}
				hsl = map[string]string{"Mcp-Session-Id": slowSID, "MCP-Protocol-Version": legacyVersion}
			}
			a, b := rpc(t, fastURL, hf, body), rpc(t, slowURL, hsl, body)
			n++
			if a.status != b.status || a.header.Get("Content-Type") != b.header.Get("Content-Type") || !cmp.Equal(a.decoded, b.decoded) {
				t.Errorf("%s %s:\nfast %d %s %s\nsdk  %d %s %s", era, body, a.status, a.header.Get("Content-Type"), a.body, b.status, b.header.Get("Content-Type"), b.body)
			}
		}
	}
	if got := fastSc.fastCalls.Load(); got != int64(n) {
		t.Errorf("the fast path answered %d of %d calls", got, n)
	}
}
