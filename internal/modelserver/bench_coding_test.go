package modelserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// sessionBrain answers a coding session: a Bash call each turn until the
// last, then the answer.
type sessionBrain struct{ turns int }

func (s sessionBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	if n := c.Turns(); n < s.turns-1 {
		return fakeapi.Turn{ToolCalls: []fakeapi.ToolCall{{Name: "Bash", Args: fmt.Sprintf(`{"command":"python3 -m unittest -q # %d"}`, n)}}}, nil
	}
	return fakeapi.Turn{Text: "The tests pass."}, nil
}

// codingSession is the n requests of a Claude Code session as it sends
// them (in shape: a system prompt of ~40 KB naming its workspace and home
// and the date, 16 tools with schemas, the conversation growing by a Bash
// call and its result each turn), in workspace ws on date day; each
// answer's tool_use id is toolu_K, as the fake answers. Every request is
// 50 KB or more.
func codingSession(n int, ws, home, day string, ids []string) [][]byte {
	var sys strings.Builder
	for i := 0; sys.Len() < 40<<10; i++ {
		fmt.Fprintf(&sys, "Rule %d: prefer the dedicated tools over shell commands; keep edits small and explain each. ", i)
	}
	fmt.Fprintf(&sys, "You have a persistent memory at `%s/.claude/projects/-tmp-%s/memory/`.", home, strings.TrimPrefix(ws, "/tmp/"))
	var tools []any
	for i := range 16 {
		tools = append(tools, map[string]any{"name": fmt.Sprintf("Tool%d", i), "description": strings.Repeat("Does one thing well. ", 30),
			"input_schema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string", "description": strings.Repeat("what to run ", 10)}}}})
	}
	tools = append(tools, map[string]any{"name": "Bash", "input_schema": map[string]any{"type": "object"}})
	msgs := []any{map[string]any{"role": "user", "content": []any{
		map[string]any{"type": "text", "text": "<env>\n - Primary working directory: " + ws + "\n - Platform: linux\n - Shell: bash\n - OS Version: Linux 6.18.44\nToday's date is " + day + ".\n</env>"},
		map[string]any{"type": "text", "text": "The test of calc.py fails. Fix it and run the tests."},
	}}}
	var out [][]byte
	for k := range n {
		body, _ := json.Marshal(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 32000, "stream": false,
			"system": []any{map[string]any{"type": "text", "text": sys.String()}}, "tools": tools, "messages": msgs,
			"metadata": map[string]any{"user_id": "session_" + day}})
		out = append(out, body)
		if k < len(ids) {
			msgs = append(msgs,
				map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": ids[k], "name": "Bash", "input": map[string]any{"command": fmt.Sprintf("python3 -m unittest -q # %d", k)}}}},
				map[string]any{"role": "user", "content": []any{map[string]any{"type": "tool_result", "tool_use_id": ids[k], "content": "Ran 1 test in 0.00" + fmt.Sprint(k%10) + "s\n\nOK in " + ws}}})
		}
	}
	return out
}

// BenchmarkReplayCodingSession replays a 30-turn coding session whose
// requests are 50 KB or more, recorded in one workspace on one date and
// replayed from another workspace on another date under the claude-code
// preset: one op is the whole session on a new endpoint (the cassette
// read, each request read, canonicalised, normalised, compared with its
// recording, answered). ns/request is dryfire's cost per model call of
// such a session (issue 38 point 10; docs/performance.md).
func BenchmarkReplayCodingSession(b *testing.B) {
	// Recorded and replayed in the same place without rules: the cost of
	// the seam alone, for comparison.
	b.Run("same-place-no-rules", func(b *testing.B) {
		benchSession(b, nil, "/tmp/dryfire-workspace-1111", "/tmp/dryfire-home-2222", "2026-12-08")
	})
	b.Run("another-place-claude-code-preset", func(b *testing.B) {
		benchSession(b, []reqmatch.Rule{{Preset: "claude-code"}}, "/tmp/dryfire-workspace-987654", "/var/tmp/x/dryfire-home-5", "2026-12-07")
	})
}

func benchSession(b *testing.B, rules []reqmatch.Rule, ws, home, day string) {
	const turns = 30
	dir := b.TempDir()
	fake := fakeapi.NewAnthropic(sessionBrain{turns})
	o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
	o.Match = rules
	e := mustNew(b, o)
	root := serve(b, e, "")
	var ids []string
	var size int
	for k := range turns {
		body := codingSession(k+1, "/tmp/dryfire-workspace-1111", "/tmp/dryfire-home-2222", "2026-12-08", ids)[k]
		size += len(body)
		r := post(b, http.DefaultClient, root, wire.Anthropic, string(body))
		if r.status != 200 {
			b.Fatalf("turn %d: %d %s", k+1, r.status, r.body)
		}
		var ans struct {
			Content []struct{ ID string } `json:"content"`
		}
		json.Unmarshal([]byte(r.body), &ans)
		if k < turns-1 {
			ids = append(ids, ans.Content[len(ans.Content)-1].ID)
		}
	}
	if _, err := e.Finish(); err != nil {
		b.Fatal(err)
	}
	fake.Close()
	replay := caseOptions(dir, cassette.None)
	replay.Match = o.Match
	bodies := codingSession(turns, ws, home, day, ids)
	if len(bodies[0]) < 50<<10 {
		b.Fatalf("the first request is %d bytes", len(bodies[0]))
	}
	w := &discard{h: http.Header{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		e := mustNew(b, replay)
		for k, body := range bodies {
			req := httptest.NewRequest(http.MethodPost, "/v1/messages", bytes.NewReader(body))
			req.Header.Set("Anthropic-Version", "2023-06-01")
			clear(w.h)
			e.ServeHTTP(w, req)
			if w.status != 200 {
				b.Fatalf("request %d: status %d: %v", k+1, w.status, e.Problem())
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*turns), "ns/request")
	b.ReportMetric(float64(size)/turns/1024, "KB/request")
}
