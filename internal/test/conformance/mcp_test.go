package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// An mcpMessage is one JSON-RPC message of an MCP exchange, with what it
// answers (Method, for a result or error) and the era's protocol version.
type mcpMessage struct {
	Label   string          `json:"label"`
	Era     string          `json:"era"`
	From    string          `json:"from"` // client or server
	Method  string          `json:"method,omitempty"`
	Message json.RawMessage `json:"message"`
	// OffSpec marks a request the test sends off the protocol on
	// purpose (an unknown method): only its JSON-RPC envelope is checked.
	OffSpec bool `json:"offSpec,omitempty"`
}

// The eras dryfire serves and checks: 2025-06-18 and 2025-11-25 (the
// legacy handshake and sessions) and 2026-07-28 (stateless, _meta on
// every request).
const (
	era0618 = "2025-06-18"
	era1125 = "2025-11-25"
	era0728 = "2026-07-28"
)

// mcpCalls are the requests of every era after its opening: each tool,
// some twice (sequences), one unknown, one that matches no rule; the list
// methods; an unknown method.
var mcpCalls = []struct{ method, params string }{
	{"ping", `{}`},
	{"tools/list", `{}`},
	{"tools/call", `{"name":"lookup_order","arguments":{"order_id":"A-991"}}`},
	{"tools/call", `{"name":"lookup_order","arguments":{"order_id":"B-2"}}`},
	{"tools/call", `{"name":"issue_refund","arguments":{"order_id":"A-991"}}`},
	{"tools/call", `{"name":"issue_refund","arguments":{"order_id":"A-991"}}`},
	{"tools/call", `{"name":"issue_refund","arguments":{"order_id":"A-991"}}`},
	{"tools/call", `{"name":"lookup_order","arguments":{}}`},
	{"tools/call", `{"name":"opening_hours","arguments":{}}`},
	{"tools/call", `{"name":"screenshot","arguments":{"page":"home"}}`},
	{"tools/call", `{"name":"screenshot","arguments":{"page":"none"}}`},
	{"tools/call", `{"name":"export","arguments":{},"_meta":{"progressToken":"p1"}}`},
	{"tools/call", `{"name":"refund_order","arguments":{}}`},
	{"resources/list", `{}`},
	{"resources/templates/list", `{}`},
	{"prompts/list", `{}`},
	{"nope/nope", `{}`},
}

// mcpSession is a client of one era talking to /mcp over HTTP, keeping
// every message both ways.
type mcpSession struct {
	t       *testing.T
	url     string
	era     string
	label   string
	headers map[string]string
	logged  *[]mcpMessage
	id      int
}

func (s *mcpSession) send(method, params string, notify bool) {
	t := s.t
	t.Helper()
	var p map[string]json.RawMessage
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	modern := s.era >= era0728
	if modern && !notify {
		meta := map[string]json.RawMessage{}
		if m, ok := p["_meta"]; ok {
			json.Unmarshal(m, &meta)
		}
		meta["io.modelcontextprotocol/protocolVersion"] = json.RawMessage(`"` + s.era + `"`)
		meta["io.modelcontextprotocol/clientCapabilities"] = json.RawMessage(`{}`)
		meta["io.modelcontextprotocol/clientInfo"] = json.RawMessage(`{"name":"conformance","version":"1"}`)
		if method == "tools/call" && strings.Contains(params, `"export"`) {
			meta["io.modelcontextprotocol/logLevel"] = json.RawMessage(`"debug"`)
		}
		m, _ := json.Marshal(meta)
		p["_meta"] = m
	}
	msg := map[string]any{"jsonrpc": "2.0", "method": method, "params": p}
	if !notify {
		s.id++
		msg["id"] = s.id
	}
	body, _ := json.Marshal(msg)
	label := fmt.Sprintf("%s, %s", s.label, method)
	if method == "tools/call" {
		var c struct{ Name string }
		json.Unmarshal([]byte(params), &c)
		label += " " + c.Name
	}
	*s.logged = append(*s.logged, mcpMessage{label + " (request)", s.era, "client", "", body, method == "nope/nope"})

	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range s.headers {
		req.Header.Set(k, v)
	}
	if modern {
		req.Header.Set("MCP-Protocol-Version", s.era)
		req.Header.Set("Mcp-Method", method)
		var c struct{ Name string }
		if json.Unmarshal([]byte(params), &c) == nil && c.Name != "" {
			req.Header.Set("Mcp-Name", c.Name)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" && method == "initialize" {
		s.headers["Mcp-Session-Id"] = sid
		s.headers["MCP-Protocol-Version"] = s.era
	}
	if notify {
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s: HTTP %d, want 202: %s", label, resp.StatusCode, data)
		}
		return
	}
	var answers []json.RawMessage
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				answers = append(answers, json.RawMessage(d))
			}
		}
	} else if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		answers = append(answers, data)
	} else {
		t.Fatalf("%s: HTTP %d %q, not JSON-RPC: %s", label, resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	for i, a := range answers {
		kind := "answer"
		if i < len(answers)-1 {
			kind = fmt.Sprintf("notification %d", i+1)
		}
		*s.logged = append(*s.logged, mcpMessage{fmt.Sprintf("%s (%s)", label, kind), s.era, "server", method, a, false})
	}
}

// captureMCP runs the calls in every era against dryfire serve and
// returns every message.
func captureMCP(t *testing.T) []mcpMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "mcp.dryfire.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	su, ds := spec.Parse("testdata/mcp.dryfire.yaml", data, nil)
	if ds.HasErrors() {
		t.Fatalf("the suite does not load:\n%v", ds)
	}
	var out []mcpMessage
	for _, era := range []string{era0618, era1125, era0728} {
		for _, sessionless := range []bool{false, true} {
			if era >= era0728 && !sessionless {
				continue // the era has no sessions
			}
			srv := toolserver.New(toolserver.NewScope(toolserver.ScopeOptions{Suite: su}), toolserver.Options{})
			hs := httptest.NewServer(srv)
			label := era + ", session"
			if sessionless {
				label = era + ", no session"
			}
			s := &mcpSession{t: t, url: hs.URL + "/mcp", era: era, label: label, headers: map[string]string{}, logged: &out}
			switch {
			case era >= era0728:
				s.send("server/discover", `{}`, false)
			case sessionless:
				s.headers["MCP-Protocol-Version"] = era
			default:
				s.send("initialize", `{"protocolVersion":"`+era+`","capabilities":{},"clientInfo":{"name":"conformance","version":"1"}}`, false)
				s.send("notifications/initialized", `{}`, true)
				s.send("logging/setLevel", `{"level":"debug"}`, false)
			}
			for _, c := range mcpCalls {
				s.send(c.method, c.params, false)
			}
			srv.CloseSessions()
			hs.Close()
		}
	}
	return out
}

// mcpFailure is one disagreement the MCP SDK schemas found.
type mcpFailure struct {
	Index  int    `json:"index"`
	Path   string `json:"path"`
	Rule   string `json:"rule"`
	Detail string `json:"message"`
}

// checkMCP validates the messages with mcp-check.mjs.
func checkMCP(t *testing.T, msgs []mcpMessage) []mcpFailure {
	t.Helper()
	in, _ := json.Marshal(msgs)
	cmd := exec.Command("node", "mcp-check.mjs")
	cmd.Dir = nodeDir
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node mcp-check.mjs: %v\n%s", err, stderr.Bytes())
	}
	var fails []mcpFailure
	if err := json.Unmarshal(out, &fails); err != nil {
		t.Fatalf("mcp-check.mjs answered %v: %s", err, out)
	}
	return fails
}

func describeMCP(m mcpMessage, f mcpFailure) string {
	return fmt.Sprintf("MCP %s message (%s) at %s: %s\n[official rule: %s]\n%s", m.From, m.Label, f.Path, f.Detail, f.Rule, m.Message)
}

// mcpCounts counts messages by era and by side.
func mcpCounts(msgs []mcpMessage) map[string]map[string]int {
	n := map[string]map[string]int{}
	for _, m := range msgs {
		if n[m.Era] == nil {
			n[m.Era] = map[string]int{}
		}
		n[m.Era][m.From]++
	}
	return n
}

// Broken MCP shapes fail with their path and the schema: a 2026 field in
// a 2025-11-25 answer, a tool result without content, an error without
// its code.
func TestMCPBrokenShapeFailsReadably(t *testing.T) {
	nodeReady(t)
	msgs := []mcpMessage{
		{Label: "tools/list with a 2026 field", Era: era1125, From: "server", Method: "tools/list",
			Message: json.RawMessage(`{"jsonrpc":"2.0","id":2,"result":{"ttlMs":0,"tools":[{"name":"a","inputSchema":{"type":"object"}}]}}`)},
		{Label: "tools/call with a content block without its type", Era: era0728, From: "server", Method: "tools/call",
			Message: json.RawMessage(`{"jsonrpc":"2.0","id":3,"result":{"content":[{"text":"x"}],"isError":true}}`)},
		{Label: "an error without its code", Era: era1125, From: "server",
			Message: json.RawMessage(`{"jsonrpc":"2.0","id":4,"error":{"message":"no"}}`)},
	}
	fails := checkMCP(t, msgs)
	var got []string
	for _, f := range fails {
		got = append(got, describeMCP(msgs[f.Index], f))
	}
	t.Logf("the failures as CI shows them:\n%s", strings.Join(got, "\n"))
	for _, w := range []struct {
		index      int
		path, rule string
	}{
		{0, "$.result.ttlMs", "@modelcontextprotocol/sdk"},
		{1, "$.result.content[0]", "@modelcontextprotocol/core"},
		{2, "$.error.code", "JSONRPCErrorResponseSchema"},
	} {
		found := false
		for _, f := range fails {
			found = found || f.Index == w.index && strings.HasPrefix(f.Path, w.path) && strings.Contains(f.Rule, w.rule)
		}
		if !found {
			t.Errorf("no failure at %s under %s; got:\n%s", w.path, w.rule, strings.Join(got, "\n"))
		}
	}
}
