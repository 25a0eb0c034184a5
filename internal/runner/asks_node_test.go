package runner_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/report"
)

// asksSuite is e2e/node/asks.dryfire.yaml with its agent's command.
func asksSuite(t *testing.T, command string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "e2e", "node", "asks.dryfire.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const own = "command: [node, mcp-asks-agent.mjs]"
	if !bytes.Contains(data, []byte(own)) {
		t.Fatalf("e2e/node/asks.dryfire.yaml has no %q", own)
	}
	return strings.Replace(string(data), own, "command: "+command, 1)
}

// TestMCPAsksNode: the MCP TypeScript SDK's clients, v1
// (@modelcontextprotocol/sdk, 2025-11-25; over streamable HTTP, and over
// stdio through dryfire mcp-bridge) and v2
// (@modelcontextprotocol/client, in both eras: the 2025-11-25 handshake,
// and 2026-07-28, where elicitation and sampling come as input_required
// results), each under agent.command: it reads a declared resource, gets
// a prompt with its arguments, answers an elicitation and a sampling
// request sent during tool calls; the report holds each, the results use
// the answers, and elicited / sampled / read / prompted checks pass and
// fail on them with their messages, the same when re-checked from the
// report.
func TestMCPAsksNode(t *testing.T) {
	dir := filepath.Join("..", "..", "e2e", "node")
	npm.Ready(t, dir, "the Node MCP clients")
	for _, client := range []struct{ name, script, era, who string }{
		{"v1", "mcp-asks-agent.mjs", "", "v1"},
		{"v1-stdio", "mcp-asks-agent.mjs", "stdio", "v1"},
		{"v2-legacy", "mcp-asks-agent-v2.mjs", "legacy", "v2"},
		{"v2-modern", "mcp-asks-agent-v2.mjs", "modern", "v2"},
	} {
		t.Run(client.name, func(t *testing.T) {
			script, err := filepath.Abs(filepath.Join(dir, client.script))
			if err != nil {
				t.Fatal(err)
			}
			command := "[node, " + script + "]"
			if client.era != "" {
				command = "[node, " + script + ", " + client.era + "]"
			}
			suites := writeSuite(t, t.TempDir(), "asks.dryfire.yaml", asksSuite(t, command))
			opts := runner.Options{Record: cassette.None, Env: commandEnv()}
			if client.era == "stdio" {
				opts.MCPBridge = []string{dryfire(t), "mcp-bridge"}
			}
			rep, err := runner.Run(context.Background(), suites, opts)
			if err != nil {
				t.Fatal(err)
			}
			checkAsksReport(t, rep, "ts-"+client.who+"-model", client.who+" says: ")
			// The stored report holds what the MCP checks read: re-checked,
			// no verdict changes.
			again, err := runner.Recheck(context.Background(), suites, rep, "report.json", opts)
			if err != nil {
				t.Fatal(err)
			}
			if rc := again.Recheck; rc == nil || rc.Cases != 2 || rc.Changed != 0 {
				t.Errorf("re-checked: %+v", rc)
			}
		})
	}
}

// checkAsksReport checks the report of asksSuite run by a client whose
// sampling answers name model and start with says.
func checkAsksReport(t *testing.T, rep *report.Report, model, says string) {
	t.Helper()
	ok, bad := rep.Cases[0], rep.Cases[1]
	if ok.Status != report.Passed {
		t.Errorf("%s: %s %s\n%+v\n%s\n%s", ok.Name, ok.Status, ok.Reason, ok.Checks, ok.Output, ok.Stderr)
	}
	var uses []string
	for _, u := range ok.MCP {
		uses = append(uses, u.Method+" "+u.URI+u.Name)
	}
	if got, want := strings.Join(uses, "; "), "resources/read docs://refund-policy; prompts/get refund_request"; got != want {
		t.Errorf("mcp record:\n got %s\nwant %s", got, want)
	}
	var asked []string
	for _, tc := range ok.ToolCalls {
		if tc.Asked == nil {
			asked = append(asked, tc.Tool+": nothing asked")
			continue
		}
		asked = append(asked, tc.Tool+": "+tc.Asked.Method+" "+string(tc.Asked.Answer)+tc.Asked.Error+" → "+tc.Result)
	}
	answer := says + "Summarise: the printer is on fire."
	wantAsked := []string{
		`book_flight: elicitation/create {"action":"accept","content":{"confirm":true,"seat":"window"}} → Booked: seat window.`,
		`summarise: sampling/createMessage {"content":{"text":"` + answer + `","type":"text"},"model":"` + model + `","role":"assistant"} → Summary (` + model + "): " + answer,
	}
	if strings.Join(asked, "\n") != strings.Join(wantAsked, "\n") {
		t.Errorf("asked:\n got %s\nwant %s", strings.Join(asked, "\n     "), strings.Join(wantAsked, "\n     "))
	}
	if bad.Status != report.Failed {
		t.Fatalf("%s: %s %s, want failed", bad.Name, bad.Status, bad.Reason)
	}
	var verdicts []string
	for _, c := range bad.Checks {
		verdicts = append(verdicts, c.Check+" → "+c.Message)
	}
	want := []string{
		"elicited: {tool: book_flight, action: accept} → expected an elicitation during a call of book_flight answered accept; the client answered: decline",
		"sampled: {tool: summarise, model: another-model} → expected a sampling request during a call of summarise answered by model another-model; the client answered: " + model + ": ",
		`not_read: "docs://refund-policy" → expected no read of resource docs://refund-policy; it was read 1 time`,
		`output: {contains: "book_flight: error: The traveller said no."} → `,
	}
	for i, w := range want {
		if i >= len(verdicts) || !strings.HasPrefix(verdicts[i], w) {
			t.Errorf("check %d: %q, want %q", i, verdicts[i], w)
		}
	}
	if len(bad.Checks) == 4 && !bad.Checks[3].Passed {
		t.Errorf("the output check failed: %+v\n%s", bad.Checks[3], bad.Output)
	}
}
