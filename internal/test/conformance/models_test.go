package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// An artifact is one JSON body on the wire: a request the built-in loop
// sent, an answer a fake gave, one event of a stream.
type artifact struct {
	Provider string // anthropic, openai, openai-responses, openai-compatible
	Kind     string // request, answer, chunk
	Label    string // where it came from, for failures
	Body     json.RawMessage
}

// tools are the mocks every conversation may call.
const toolsSuite = `version: 1
agent: {provider: script}
mocks:
  lookup_order:
    - when: {order_id: A-991}
      return: {order_id: A-991, tier: gold, items: [{sku: X-1, qty: 2}]}
    - return: {tier: standard}
  issue_refund:
    - sequence: [{error: timeout}, {return: {ok: true, refund_id: R-1}}]
  opening_hours:
    - return: "9 to 5, Monday to Friday"
  send_email:
    - error: "bounced: mailbox full"
cases:
  - {name: c, input: x, script: [{text: ok}]}
`

var (
	lookupTool = model.ToolDef{Name: "lookup_order", Description: "Look up an order by its id.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"}}}
	refundTool = model.ToolDef{Name: "issue_refund", Description: "Refund an order.", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}, "amount": map[string]any{"type": "number", "minimum": 0}}}}
	hoursTool   = model.ToolDef{Name: "opening_hours"} // no input_schema: an open object
	untypedTool = model.ToolDef{Name: "send_email", Description: "Send an email.", InputSchema: map[string]any{
		"properties": map[string]any{"to": map[string]any{"type": "string"}, "body": map[string]any{"type": "string"}}}}
	nestedTool = model.ToolDef{Name: "lookup_order", Description: "Look up orders.", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"order_id": map[string]any{"type": "string", "pattern": "^[A-Z]-[0-9]+$"},
			"fields":   map[string]any{"type": "array", "items": map[string]any{"type": "string", "enum": []any{"tier", "items", "total"}}},
			"filter":   map[string]any{"type": "object", "properties": map[string]any{"since": map[string]any{"type": "string", "format": "date"}}, "additionalProperties": false},
		},
		"required": []any{"order_id"}, "additionalProperties": false, "$defs": map[string]any{"sku": map[string]any{"type": "string"}}}}
)

func call(name, args string) fakeapi.ToolCall { return fakeapi.ToolCall{Name: name, Args: args} }

// A conversation is one run of the built-in loop: the model's turns (the
// fake's brain), what it is shown, and the parameters per provider.
type conversation struct {
	name   string
	system string
	tools  []model.ToolDef
	turns  []fakeapi.Turn
	params map[string]string // provider → JSON object of agent.params
}

var conversations = []conversation{
	{name: "text only", turns: []fakeapi.Turn{{Text: "Hello! How can I help?"}}},
	{name: "system prompt", system: "You are a support agent. Be brief.", turns: []fakeapi.Turn{{Text: "Hi."}}},
	{name: "one tool call", system: "Use the tools.", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}}, {Text: "Order A-991 is a gold order."}}},
	{name: "parallel tool calls", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{{Text: "Checking both.", ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`), call("lookup_order", `{"order_id":"B-2"}`)}}, {Text: "A-991 is gold, B-2 standard."}}},
	{name: "tool error and retry", system: "Refund when asked.", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{
			{ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991","amount":120.5}`)}},
			{Text: "The refund timed out; trying again.", ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991","amount":120.5}`)}},
			{Text: "Refunded: R-1."}}},
	{name: "thinking", system: "Think first.", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{
			{Thinking: "The order must be looked up before a refund.", Text: "Let me check.", ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}},
			{Thinking: "Gold orders are refundable.", ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991"}`)}},
			{Text: "Retrying.", ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991"}`)}},
			{Text: "Done."}},
		params: map[string]string{
			provider.Anthropic:       `{"thinking":{"type":"enabled","budget_tokens":1024}}`,
			provider.OpenAIResponses: `{"reasoning":{"effort":"low","summary":"auto"},"include":["reasoning.encrypted_content"],"store":false}`,
			provider.OpenAI:          `{"reasoning_effort":"low"}`,
		}},
	{name: "schema without type", tools: []model.ToolDef{untypedTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("send_email", `{"to":"a@example.com","body":"hi"}`)}}, {Text: "The email bounced."}}},
	{name: "nested schema", tools: []model.ToolDef{nestedTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991","fields":["tier"],"filter":{"since":"2026-01-01"}}`)}}, {Text: "Gold."}}},
	{name: "tool without schema", tools: []model.ToolDef{hoursTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("opening_hours", "")}}, {Text: "We are open 9 to 5."}}},
	{name: "sampling params", system: "Be brief.", tools: []model.ToolDef{lookupTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}}, {Text: "Gold."}},
		params: map[string]string{
			provider.Anthropic:        `{"max_tokens":512,"stop_sequences":["END"],"metadata":{"user_id":"u-1"},"service_tier":"auto"}`,
			provider.OpenAI:           `{"temperature":0.2,"top_p":0.9,"max_completion_tokens":512,"stop":["END"],"seed":7,"user":"u-1","frequency_penalty":0.1,"presence_penalty":0.1}`,
			provider.OpenAIResponses:  `{"temperature":0.2,"top_p":0.9,"max_output_tokens":512,"metadata":{"k":"v"},"user":"u-1"}`,
			provider.OpenAICompatible: `{"temperature":0.2,"top_p":0.9,"max_tokens":512,"stop":"END","seed":7}`,
		}},
	{name: "tool choice", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}}, {Text: "Gold."}},
		params: map[string]string{
			provider.Anthropic:        `{"tool_choice":{"type":"auto","disable_parallel_tool_use":true}}`,
			provider.OpenAI:           `{"tool_choice":"required","parallel_tool_calls":false}`,
			provider.OpenAIResponses:  `{"tool_choice":"required","parallel_tool_calls":false}`,
			provider.OpenAICompatible: `{"tool_choice":"auto"}`,
		}},
	{name: "named tool choice", tools: []model.ToolDef{lookupTool, refundTool},
		turns: []fakeapi.Turn{{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}}, {Text: "Gold."}},
		params: map[string]string{
			provider.Anthropic:        `{"tool_choice":{"type":"tool","name":"lookup_order"}}`,
			provider.OpenAI:           `{"tool_choice":{"type":"function","function":{"name":"lookup_order"}}}`,
			provider.OpenAIResponses:  `{"tool_choice":{"type":"function","name":"lookup_order"}}`,
			provider.OpenAICompatible: `{"tool_choice":{"type":"function","function":{"name":"lookup_order"}}}`,
		}},
	{name: "several turns", system: "Work through it.", tools: []model.ToolDef{lookupTool, refundTool, hoursTool, untypedTool},
		turns: []fakeapi.Turn{
			{ToolCalls: []fakeapi.ToolCall{call("opening_hours", "{}")}},
			{ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"A-991"}`)}},
			{ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991"}`), call("send_email", `{"to":"a@example.com","body":"Refund pending."}`)}},
			{ToolCalls: []fakeapi.ToolCall{call("issue_refund", `{"order_id":"A-991"}`)}},
			{Text: "All done: refunded and emailed."}}},
	{name: "text with tool call", tools: []model.ToolDef{lookupTool},
		turns: []fakeapi.Turn{{Text: "I will look that up.", ToolCalls: []fakeapi.ToolCall{call("lookup_order", `{"order_id":"Z-0"}`)}}, {Text: "A standard order."}}},
	{name: "unicode and markup", system: "Réponds <b>brièvement</b> — “merci” ☕",
		turns: []fakeapi.Turn{{Text: "D'accord: <ok> & \"fini\" \u2028 ✓"}}},
	{name: "tool errors twice", tools: []model.ToolDef{untypedTool},
		turns: []fakeapi.Turn{
			{ToolCalls: []fakeapi.ToolCall{call("send_email", `{"to":"a@example.com"}`)}},
			{ToolCalls: []fakeapi.ToolCall{call("send_email", `{"to":"b@example.com"}`)}},
			{Text: "Both emails bounced."}}},
}

// providers are the built-in loop's real providers and the fake each is
// recorded against.
var providers = []struct {
	name  string
	model string
	fake  func(fakeapi.Brain) *fakeapi.Server
	path  string // the base URL's path
}{
	{provider.Anthropic, "claude-sonnet-4-5", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewAnthropic(b) }, ""},
	{provider.OpenAI, "gpt-4.1-mini", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewOpenAIChat(b) }, "/v1"},
	{provider.OpenAIResponses, "gpt-4.1-mini", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewOpenAIResponses(b) }, "/v1"},
	{provider.OpenAICompatible, "llama3.2", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewOpenAIChat(b) }, "/v1"},
	{provider.Gemini, "gemini-2.5-flash", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewGemini(b) }, ""},
	// Azure OpenAI: the endpoint is the resource's root; the model is the deployment.
	{provider.AzureOpenAI, "gpt-4.1-mini", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewOpenAIChat(b) }, ""},
	{provider.AzureOpenAIResponses, "gpt-4.1-mini", func(b fakeapi.Brain) *fakeapi.Server { return fakeapi.NewOpenAIResponses(b) }, ""},
}

// sameWire is the provider whose wire (bodies, params, official types) an
// Azure OpenAI provider shares.
func sameWire(p string) string {
	switch p {
	case provider.AzureOpenAI:
		return provider.OpenAI
	case provider.AzureOpenAIResponses:
		return provider.OpenAIResponses
	}
	return p
}

// paramsOf is a conversation's agent.params for a provider, as a JSON
// object ("" for none).
func paramsOf(cv conversation, p string) string { return cv.params[sameWire(p)] }

// capture keeps every request and answer body that passes through it.
type capture struct {
	mu   sync.Mutex
	seen []exchange
}

type exchange struct {
	path           string // and query (Azure's api-version)
	request, reply []byte
	status         int
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	resp, err := http.DefaultTransport.RoundTrip(r2)
	if err != nil {
		return nil, err
	}
	reply, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(reply))
	c.mu.Lock()
	c.seen = append(c.seen, exchange{r.URL.RequestURI(), body, reply, resp.StatusCode})
	c.mu.Unlock()
	return resp, nil
}

// captureModels runs every conversation with every provider against its
// fake and returns the requests and answers, then each request again with
// "stream": true, straight to the fake, as stream chunks.
func captureModels(t *testing.T) []artifact {
	t.Helper()
	script := fakeapi.Script{}
	for _, cv := range conversations {
		script[input(cv)] = cv.turns
	}
	var out []artifact
	for _, p := range providers {
		srv := p.fake(script)
		defer srv.Close()
		for _, cv := range conversations {
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
				t.Fatalf("%s, %s: the built-in loop failed: %v", p.name, cv.name, err)
			}
			if len(c.seen) != len(cv.turns) {
				t.Fatalf("%s, %s: %d requests, want %d", p.name, cv.name, len(c.seen), len(cv.turns))
			}
			for i, ex := range c.seen {
				label := fmt.Sprintf("conversation %q, request %d", cv.name, i+1)
				if ex.status != http.StatusOK {
					t.Fatalf("%s, %s: HTTP %d: %s", p.name, label, ex.status, ex.reply)
				}
				out = append(out, artifact{p.name, "request", label, ex.request}, artifact{p.name, "answer", label, ex.reply})
				for j, ev := range streamEvents(t, srv.URL+ex.path, p.name, ex.request) {
					out = append(out, artifact{p.name, "chunk", fmt.Sprintf("%s, streamed, event %d", label, j+1), ev})
				}
			}
		}
	}
	return out
}

func input(cv conversation) string { return "Conversation: " + cv.name + "." }

func toolSession(t *testing.T) *tool.Recorder {
	t.Helper()
	s, ds := spec.Parse("tools.dryfire.yaml", []byte(toolsSuite), nil)
	if ds.HasErrors() {
		t.Fatalf("the tools suite does not load:\n%v", ds)
	}
	return tool.NewRecorder(mock.NewSession(mock.Compile(s).ForCase(s.Cases[0]), nil), tool.RecorderOptions{})
}

// streamEvents posts body with "stream": true (and, for Chat, the usage
// chunk asked for) and returns the data of each event. Anthropic's ping
// events, which the SDK skips rather than types, and Chat's [DONE] are
// left out.
func streamEvents(t *testing.T, url, prov string, body []byte) []json.RawMessage {
	t.Helper()
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if prov == provider.Gemini {
		// Gemini streams at another method of the same path.
		url = strings.Replace(url, ":generateContent", ":streamGenerateContent", 1) + "?alt=sse"
	} else {
		req["stream"] = json.RawMessage("true")
	}
	if prov == provider.OpenAI || prov == provider.OpenAICompatible || prov == provider.AzureOpenAI {
		req["stream_options"] = json.RawMessage(`{"include_usage":true}`)
	}
	data, _ := json.Marshal(req)
	r, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer sk-conformance")
	r.Header.Set("X-Api-Key", "sk-conformance")
	r.Header.Set("Anthropic-Version", "2023-06-01")
	r.Header.Set("X-Goog-Api-Key", "sk-conformance")
	r.Header.Set("Api-Key", "sk-conformance")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("streamed %s: HTTP %d: %s", url, resp.StatusCode, raw)
	}
	var out []json.RawMessage
	for _, block := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n") {
		if strings.HasPrefix(block, "event: ping\n") {
			continue
		}
		for _, line := range strings.Split(block, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
				out = append(out, json.RawMessage(d))
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("streamed %s: no events in %q", url, raw)
	}
	return out
}

// A gap is a disagreement with the official types that the tests accept,
// because the official type is not what the API does or because it is a
// known open defect of the fakes; each is listed on the compatibility page.
type gap struct {
	provider, kind string         // "" matches any; provider may list several, ", " between
	path           *regexp.Regexp // the JSON path
	code           string         // the TypeScript diagnostic, or its prefix
	words          string         // words the diagnostic holds ("" for any)
	why            string
	open           bool // a defect of dryfire's to fix, not of the type
}

var knownGaps = []gap{
	{"openai-responses, azure-openai-responses, openai-responses-ws", "", regexp.MustCompile(`^\$(\.response)?\.store$`), "TS2353", "",
		"The Responses API sends `store` in every response object; openai 6.49.0's `Response` type does not declare it.", false},
	{"openai-responses, azure-openai-responses, openai-responses-ws", "chunk", regexp.MustCompile(`^\$\.response\.usage$`), "TS2322", "",
		"Stream events before `response.completed` carry `\"usage\": null`, as the API sends them; openai 6.49.0 types `usage` as optional, not nullable.", false},
	{"openai-responses-ws", "chunk", regexp.MustCompile(`^\$\.(status|error|headers)$`), "TS2353", "",
		"A request refused over the Responses WebSocket (a cassette mismatch, max_turns) is an `error` event that also carries `status` and `error` (`{type, code, message, param}`), the HTTP error it stands for, which is how Codex CLI reads a refusal there; openai 6.49.0's `ResponseErrorEvent` has only `code`, `message`, `param` and `sequence_number`, which the event carries too.", false},
	{"azure-openai", "chunk", regexp.MustCompile(`^\$\.object$`), "TS2322", `Type '""' is not assignable to type '"chat.completion.chunk"'`,
		"Azure OpenAI's first stream chunk carries its verdict on the prompt alone: no choices, and `id`, `model` and `object` empty (`\"\"`); openai 6.49.0 types `object` as `\"chat.completion.chunk\"`, and its client passes the chunk on as it is.", false},
	{"anthropic", "", regexp.MustCompile(`^\$(\.content\[\d+\]|\.content_block)$`), "TS2322", "Property 'citations' is missing",
		"A text block without citations leaves `citations` out, as the API sends it; @anthropic-ai/sdk 1.14.0 types it as always present (null when empty), and @ai-sdk/anthropic 3.0.140, which the example agents use, refuses a null.", false},
}

func (g gap) matches(a artifact, f typeFailure) bool {
	return g.of(a.Provider) && (g.kind == "" || g.kind == a.Kind) &&
		g.path.MatchString(f.Path) && strings.HasPrefix(f.Message, g.code) && strings.Contains(f.Message, g.words)
}

// of says whether the gap is one of provider p's.
func (g gap) of(p string) bool {
	return g.provider == "" || slices.Contains(strings.Split(g.provider, ", "), p)
}

// gapOf is a known gap (its index in knownGaps) met by a provider.
type gapOf struct {
	gap      int
	provider string
}

// modelResult is what the model wire check found.
type modelResult struct {
	counts map[string]map[string]int // provider → kind → artifacts checked
	gaps   map[gapOf]int             // disagreements each gap accepted, per provider
}

func checkModels(t *testing.T) modelResult {
	arts := captureModels(t)
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

// describe is a disagreement as a failure shows it.
func describe(a artifact, f typeFailure) string {
	return fmt.Sprintf("%s %s (%s) at %s:\n%s\n[official rule: %s]", a.Provider, a.Kind, a.Label, f.Path, f.Message, officialName(a))
}

// officialName is the type an artifact was checked as, with its package.
func officialName(a artifact) string {
	ty := typeOf(a)
	switch {
	case strings.HasPrefix(ty, "Anthropic."):
		return "@anthropic-ai/sdk " + installed("@anthropic-ai/sdk") + " " + ty
	case strings.HasPrefix(ty, "WireAzure"):
		return "openai " + installed("openai") + " OpenAI." + strings.TrimPrefix(ty, "WireAzure") + " with Azure OpenAI's content filter results (typed from Azure's REST reference, 2024-10-21)"
	case strings.HasPrefix(ty, "WireGemini"):
		return "@google/genai " + installed("@google/genai") + " " + geminiRule[ty]
	case strings.HasPrefix(ty, "Wire"):
		return "openai " + installed("openai") + " OpenAI.Responses." + strings.TrimPrefix(ty, "Wire") + " (without output_text)"
	}
	return "openai " + installed("openai") + " " + ty
}

// brokenShapes are requests broken on purpose: a tool_result without its
// tool_use_id, a Chat tool message without its tool_call_id.
func brokenShapes() []artifact {
	return []artifact{
		{"anthropic", "request", "a tool result without its id", json.RawMessage(`{"model":"claude-sonnet-4-5","max_tokens":4096,"messages":[
			{"role":"user","content":"Refund A-991."},
			{"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"issue_refund","input":{"order_id":"A-991"}}]},
			{"role":"user","content":[{"type":"tool_result","content":"timeout","is_error":true}]}]}`)},
		{"openai", "request", "a tool message without its id", json.RawMessage(`{"model":"gpt-4.1-mini","messages":[
			{"role":"user","content":"Refund A-991."},
			{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"issue_refund","arguments":"{}"}}]},
			{"role":"tool","content":"timeout"}]}`)},
	}
}

// A request with a broken shape fails with its JSON path and the rule:
// here a tool_result without its tool_use_id, and a Chat tool message
// without its tool_call_id.
func TestBrokenShapeFailsReadably(t *testing.T) {
	nodeReady(t)
	arts := brokenShapes()
	fails := checkTypes(t, arts)
	var got []string
	for _, f := range fails {
		got = append(got, describe(arts[f.Artifact], f))
	}
	t.Logf("the failures as CI shows them:\n%s", strings.Join(got, "\n"))
	want := []struct {
		art         int
		path, words string
	}{
		{0, "$.messages[2].content[0]", "'tool_use_id' is missing"},
		{1, "$.messages[2]", "'tool_call_id' is missing"},
	}
	for _, w := range want {
		found := false
		for _, f := range fails {
			found = found || f.Artifact == w.art && f.Path == w.path && strings.Contains(f.Message, w.words)
		}
		if !found {
			t.Errorf("no failure at %s saying %q; got:\n%s", w.path, w.words, strings.Join(got, "\n"))
		}
	}
}
