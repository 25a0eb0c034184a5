package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// scriptedSuite is the conversations as one suite on the script model:
// each conversation a case whose script is its turns, the tools it is
// shown declared, the mocks of toolsSuite. It is JSON, which YAML reads.
func scriptedSuite(t *testing.T) string {
	t.Helper()
	type call struct {
		Name string         `json:"name"`
		Args map[string]any `json:"args"`
	}
	type turn struct {
		Text      string `json:"text,omitempty"`
		ToolCalls []call `json:"tool_calls,omitempty"`
	}
	type kase struct {
		Name   string `json:"name"`
		Input  string `json:"input"`
		Script []turn `json:"script"`
	}
	tools := map[string]any{}
	var cases []kase
	for _, cv := range conversations {
		for _, td := range cv.tools {
			def := map[string]any{}
			if td.Description != "" {
				def["description"] = td.Description
			}
			if td.InputSchema != nil {
				def["input_schema"] = td.InputSchema
			}
			tools[td.Name] = def // nestedTool and lookupTool share a name: the last wins, as the suite's one declaration
		}
		c := kase{Name: cv.name, Input: input(cv)}
		for _, tn := range cv.turns {
			st := turn{Text: tn.Text}
			for _, tc := range tn.ToolCalls {
				args := map[string]any{}
				if tc.Args != "" {
					if err := json.Unmarshal([]byte(tc.Args), &args); err != nil {
						t.Fatalf("%s: %v", cv.name, err)
					}
				}
				st.ToolCalls = append(st.ToolCalls, call{tc.Name, args})
			}
			c.Script = append(c.Script, st)
		}
		cases = append(cases, c)
	}
	mocks := map[string]any{
		"lookup_order":  []any{map[string]any{"return": map[string]any{"order_id": "A-991", "tier": "gold"}}},
		"issue_refund":  []any{map[string]any{"sequence": []any{map[string]any{"error": "timeout"}, map[string]any{"return": map[string]any{"ok": true}}}}},
		"opening_hours": []any{map[string]any{"return": "9 to 5, Monday to Friday"}},
		"send_email":    []any{map[string]any{"error": "bounced: mailbox full"}},
	}
	data, err := json.MarshalIndent(map[string]any{
		"version": 1, "agent": map[string]any{"provider": "script"}, "tools": tools, "mocks": mocks, "cases": cases,
	}, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// captureScripted runs every conversation with every provider's client
// (the built-in loop's) against the model endpoint of its scripted case,
// and returns the endpoint's answers; then, against a fresh endpoint of the
// same case, each request again with "stream": true, as stream events.
func captureScripted(t *testing.T) []artifact {
	t.Helper()
	file := filepath.Join(t.TempDir(), "scripted.dryfire.yaml")
	if err := os.WriteFile(file, []byte(scriptedSuite(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	proj, err := dryfire.Load(nil, file)
	if err != nil {
		t.Fatalf("the scripted suite does not load: %v", err)
	}
	endpoint := func(name string) *httptest.Server {
		ep, err := proj.ModelEndpoint(name, nil)
		if err != nil {
			t.Fatalf("the model endpoint of scripted case %q: %v", name, err)
		}
		srv := httptest.NewServer(ep)
		t.Cleanup(srv.Close)
		return srv
	}
	var out []artifact
	for _, p := range providers {
		for _, cv := range conversations {
			srv := endpoint(cv.name)
			c := &capture{}
			m, err := wire.New(wire.Options{Provider: p.name, Model: p.model, BaseURL: srv.URL + p.path, APIKey: "sk-conformance",
				Client: &http.Client{Transport: c}, Timeout: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			cfg := agent.Config{Model: p.model, System: cv.system, Input: input(cv), Tools: cv.tools, MaxTurns: len(cv.turns)}
			if js := paramsOf(cv, p.name); js != "" {
				dec := json.NewDecoder(strings.NewReader(js))
				dec.UseNumber()
				if err := dec.Decode(&cfg.Params); err != nil {
					t.Fatalf("%s: params: %v", cv.name, err)
				}
			}
			if _, err := agent.Run(context.Background(), m, toolSession(t), cfg); err != nil {
				t.Fatalf("%s, scripted %s: the built-in loop failed: %v", p.name, cv.name, err)
			}
			if len(c.seen) != len(cv.turns) {
				t.Fatalf("%s, scripted %s: %d requests, want %d", p.name, cv.name, len(c.seen), len(cv.turns))
			}
			streamed := endpoint(cv.name)
			if p.name == "openai-responses" {
				var reqs [][]byte
				for _, ex := range c.seen {
					reqs = append(reqs, ex.request)
				}
				out = append(out, wsArtifacts(t, func() string { return endpoint(cv.name).URL }, fmt.Sprintf("scripted conversation %q", cv.name), reqs)...)
			}
			for i, ex := range c.seen {
				label := fmt.Sprintf("scripted conversation %q, request %d", cv.name, i+1)
				if ex.status != http.StatusOK {
					t.Fatalf("%s, %s: HTTP %d: %s", p.name, label, ex.status, ex.reply)
				}
				out = append(out, artifact{p.name, "answer", label, ex.reply})
				for j, ev := range streamEvents(t, streamed.URL+ex.path, p.name, ex.request) {
					out = append(out, artifact{p.name, "chunk", fmt.Sprintf("%s, streamed, event %d", label, j+1), ev})
				}
			}
		}
	}
	return out
}

// checkScripted checks the script model's answers and stream events as
// checkModels checks the fakes'.
func checkScripted(t *testing.T) modelResult {
	arts := captureScripted(t)
	res := modelResult{counts: map[string]map[string]int{}, gaps: map[gapOf]int{}}
	for _, a := range arts {
		if res.counts[a.Provider] == nil {
			res.counts[a.Provider] = map[string]int{}
		}
		res.counts[a.Provider][a.Kind]++
	}
	for _, f := range checkTypes(t, arts) {
		a := arts[f.Artifact]
		accepted := false
		for i, g := range knownGaps {
			if g.matches(a, f) {
				res.gaps[gapOf{i, a.Provider}]++
				accepted = true
				break
			}
		}
		if !accepted {
			t.Errorf("%s", describe(a, f))
		}
	}
	return res
}

// The scripted answers of a conversation with a tool call carry the
// script's tool-call id and arguments, and its stream the same, so that a
// change that answered something else (an empty turn, the fakes' ids)
// would not pass as well-typed.
func TestScriptedAnswersAreTheScripts(t *testing.T) {
	file := filepath.Join(t.TempDir(), "scripted.dryfire.yaml")
	if err := os.WriteFile(file, []byte(scriptedSuite(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	proj, err := dryfire.Load(nil, file)
	if err != nil {
		t.Fatalf("the scripted suite does not load: %v", err)
	}
	bodies := map[string]string{
		"/v1/chat/completions": `{"model":"gpt-4.1-mini","messages":[{"role":"user","content":"Conversation: one tool call."}],` +
			`"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object"}}},{"type":"function","function":{"name":"issue_refund","parameters":{"type":"object"}}}]}`,
		"/v1/responses": `{"model":"gpt-4.1-mini","input":[{"role":"user","content":"Conversation: one tool call."}],` +
			`"tools":[{"type":"function","name":"lookup_order","parameters":{"type":"object"}},{"type":"function","name":"issue_refund","parameters":{"type":"object"}}]}`,
		"/v1/messages": `{"model":"claude-sonnet-4-5","max_tokens":1024,"messages":[{"role":"user","content":"Conversation: one tool call."}],` +
			`"tools":[{"name":"lookup_order","input_schema":{"type":"object"}},{"name":"issue_refund","input_schema":{"type":"object"}}]}`,
	}
	for path, body := range bodies {
		for _, stream := range []bool{false, true} {
			ep, err := proj.ModelEndpoint("one tool call", nil)
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(ep)
			b := body
			if stream {
				b = strings.Replace(b, `{"model"`, `{"stream":true,"model"`, 1)
			}
			req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(b))
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			srv.Close()
			if err != nil {
				t.Fatal(err)
			}
			got := string(raw)
			if resp.StatusCode != http.StatusOK {
				t.Errorf("%s (stream %v): HTTP %d: %s", path, stream, resp.StatusCode, got)
				continue
			}
			for _, want := range []string{"call_1_1", "lookup_order", `order_id`, `A-991`} {
				if !strings.Contains(got, want) {
					t.Errorf("%s (stream %v): the answer does not hold %q:\n%s", path, stream, want, got)
				}
			}
		}
	}
}
