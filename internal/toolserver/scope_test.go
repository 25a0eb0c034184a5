package toolserver

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

func TestInputSchema(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
		note string
	}{
		{nil, `{"type":"object"}`, ""},
		{map[string]any{"type": "object", "properties": map[string]any{}}, `{"properties":{},"type":"object"}`, ""},
		{map[string]any{"properties": map[string]any{"a": map[string]any{"type": "string"}}}, `{"properties":{"a":{"type":"string"}},"type":"object"}`, ""},
		{map[string]any{"type": "string"}, `{"type":"object"}`, `input_schema has type "string", not object: MCP clients are shown {"type": "object"}`},
		{true, `{"type":"object"}`, `input_schema is boolean, not a mapping: MCP clients are shown {"type": "object"}`},
	} {
		got, note := inputSchema(tt.in)
		if string(got) != tt.want || note != tt.note {
			t.Errorf("inputSchema(%v) = %s, %q; want %s, %q", tt.in, got, note, tt.want, tt.note)
		}
	}
	// The suite's value is not changed.
	m := map[string]any{"properties": map[string]any{}}
	inputSchema(m)
	if _, ok := m["type"]; ok {
		t.Error("inputSchema changed the suite's schema")
	}
}

func TestToolsOrderAndNotes(t *testing.T) {
	data := []byte(`version: 1
agent: {provider: script}
tools:
  b: {description: B, input_schema: {type: string}}
  a: {description: A}
mocks:
  z: [{return: 1}]
  a: [{return: 2}]
  b: [{return: 3}]
cases:
  - name: c
    input: x
    mocks:
      y: [{return: 4}]
      z: [{return: 5}]
    script: [{text: ok}]
`)
	su, ds := spec.Parse("order.dryfire.yaml", data, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	sc := NewScope(ScopeOptions{Suite: su, Case: su.Cases[0]})
	var names []string
	for _, tl := range sc.Tools() {
		names = append(names, tl.Name)
		if !json.Valid(tl.InputSchema) {
			t.Errorf("%s: schema %s", tl.Name, tl.InputSchema)
		}
	}
	if got, want := names, []string{"b", "a", "z", "y"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
	if got := sc.Notes(); len(got) != 1 || got[0] != `order.dryfire.yaml:4:3: warning: tool "b": input_schema has type "string", not object: MCP clients are shown {"type": "object"}` {
		t.Errorf("notes %q", got)
	}
}

// A connection of a Bound listener (a case's, in its network namespace)
// reaches only its scope's routes: another case's, one not served and the
// root's are answered 403 naming its own, and no call is recorded there
// (hole 2 of issue 36). A connection of the server's own listener reaches
// every case, as before.
func TestBoundConnectionReachesOnlyItsScope(t *testing.T) {
	suite := loadSuite(t, "support.dryfire.yaml")
	srv := New(nil, Options{})
	a := NewScope(ScopeOptions{Suite: suite, Case: suite.Cases[0], ID: "a"})
	b := NewScope(ScopeOptions{Suite: suite, Case: suite.Cases[0], ID: "b"})
	for _, sc := range []*Scope{a, b} {
		if err := srv.Add(sc); err != nil {
			t.Fatal(err)
		}
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Config.ConnContext = ConnContext
	hs.Start()
	defer hs.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Config.Serve(Bound(ln, a))
	post := func(base, path string) (int, string) {
		res, err := http.Post(base+path, "application/json", strings.NewReader(`{"order_id": "A-1"}`))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(body)
	}
	jailed := "http://" + ln.Addr().String()
	if code, body := post(jailed, "/cases/a/tools/lookup_order"); code != http.StatusOK {
		t.Errorf("its own route: %d %s", code, body)
	}
	for _, path := range []string{"/cases/b/tools/lookup_order", "/cases/b/mcp", "/cases/b/v1/chat/completions", "/cases/nobody/tools/x", "/tools/lookup_order"} {
		code, body := post(jailed, path)
		if code != http.StatusForbidden || !strings.Contains(body, `a case's program reaches only its own routes (through its network namespace); its own are case `) || !strings.Contains(body, `/cases/a/`) {
			t.Errorf("%s: %d %s", path, code, body)
		}
	}
	if code, body := post(jailed, "/cases/a%2f..%2fb/tools/lookup_order"); code == http.StatusOK {
		t.Errorf("an escaped path: %d %s", code, body)
	}
	if n := len(b.Records()); n != 0 {
		t.Errorf("b recorded %d calls", n)
	}
	if code, body := post(hs.URL, "/cases/b/tools/lookup_order"); code != http.StatusOK || len(b.Records()) != 1 {
		t.Errorf("the server's own listener: %d %s", code, body)
	}
}
