package runner_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

// The test binary is also the agent program of the agent.command tests:
// run with agentEnv set, it is testAgent instead of the tests.
const agentEnv = "DRYFIRE_RUNNER_TEST_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(agentEnv) == "1" {
		os.Exit(testAgent(os.Args[1:]))
	}
	code := m.Run()
	if dryfireBin != "" {
		os.RemoveAll(filepath.Dir(dryfireBin))
	}
	os.Exit(code)
}

// testAgent is a small agent of the kind agent.command runs: it reads the
// task on stdin, takes its tools from DRYFIRE_TOOLS_URL (HTTP) or
// DRYFIRE_MCP_URL (the go-sdk MCP client) and its model from
// OPENAI_BASE_URL (Chat Completions), and prints the final text. Modes:
//
//	loop TRANSPORT [prefetch]  the tool loop; TRANSPORT is http, mcp or
//	                           bycase (mcp when the case name says mcp);
//	                           prefetch calls get_policy before the model
//	fail                       25 lines on stderr, "partial" on stdout, exit 3
//	hang PIDFILE               starts a child that sleeps, writes its pid, sleeps
//	env                        prints what it was given, as JSON
//	world [differ]             a drill's agent without a model (worldAgent)
func testAgent(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "test agent: no mode")
		return 2
	}
	if args[0] == "sleep" {
		time.Sleep(time.Hour)
		return 0
	}
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reading stdin:", err)
		return 2
	}
	if os.Getenv("DRYFIRE_INPUT") != string(input) {
		fmt.Fprintf(os.Stderr, "DRYFIRE_INPUT %q is not the input on stdin %q\n", os.Getenv("DRYFIRE_INPUT"), input)
		return 2
	}
	switch args[0] {
	case "fail":
		for i := 1; i <= 25; i++ {
			fmt.Fprintf(os.Stderr, "line %d\n", i)
		}
		fmt.Print("partial")
		return 3
	case "hang":
		child := exec.Command(os.Args[0], "sleep")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		os.WriteFile(args[1], []byte(strconv.Itoa(child.Process.Pid)), 0o644)
		fmt.Fprintln(os.Stderr, "waiting")
		time.Sleep(time.Hour)
		return 0
	case "env":
		wd, _ := os.Getwd()
		out := map[string]string{"cwd": wd}
		for _, k := range []string{"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
			"DRYFIRE_MCP_URL", "DRYFIRE_TOOLS_URL", "DRYFIRE_CASE", "DRYFIRE_INPUT", "KEEP_ME", "NO_PROXY"} {
			out[k] = os.Getenv(k)
		}
		for _, k := range args[1:] { // more names to show, "" for unset
			out[k] = os.Getenv(k)
		}
		data, _ := json.Marshal(out)
		fmt.Println(string(data))
		return 0
	case "world":
		out, err := worldAgent(args[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			return 1
		}
		fmt.Println(out)
		return 0
	case "loop":
		out, err := agentLoop(string(input), args[1], len(args) > 2 && args[2] == "prefetch")
		if err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			return 1
		}
		fmt.Println(out)
		return 0
	}
	fmt.Fprintln(os.Stderr, "test agent: unknown mode", args[0])
	return 2
}

type chatMessage struct {
	Role       string         `json:"role"`
	Content    *string        `json:"content"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

func agentLoop(input, transport string, prefetch bool) (string, error) {
	ctx := context.Background()
	if transport == "bycase" {
		transport = "http"
		if strings.Contains(os.Getenv("DRYFIRE_CASE"), "mcp") {
			transport = "mcp"
		}
	}
	toolsURL := os.Getenv("DRYFIRE_TOOLS_URL")
	var listed struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := getJSON(toolsURL, &listed); err != nil {
		return "", err
	}
	var session *mcp.ClientSession
	if transport == "mcp" {
		client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: os.Getenv("DRYFIRE_MCP_URL"), MaxRetries: -1}, nil)
		if err != nil {
			return "", err
		}
		defer s.Close()
		session = s
	}
	var call func(name, args string) (string, error)
	call = func(name, args string) (string, error) {
		if session == nil {
			var res struct {
				Content string `json:"content"`
				IsError bool   `json:"is_error"`
			}
			err := postJSON(toolsURL+"/"+name, "", []byte(args), &res)
			if res.IsError {
				res.Content = "Error: " + res.Content
			}
			return res.Content, err
		}
		var a map[string]any
		if err := json.Unmarshal([]byte(args), &a); err != nil {
			return "", err
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: a})
		if err != nil {
			return "", err
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			text = "Error: " + text
		}
		return text, nil
	}
	// TEST_TITLE: first a token count and Claude Code's session title
	// request (model's sidecalls.go), as Claude Code makes them.
	if os.Getenv("TEST_TITLE") != "" {
		base := os.Getenv("ANTHROPIC_BASE_URL")
		var v any
		if err := postJSON(base+"/v1/messages/count_tokens", "", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), &v); err != nil {
			return "", err
		}
		title := `{"model":"claude-haiku-4-5","max_tokens":32000,"system":[{"type":"text","text":"You are naming a coding session so the user can pick it out."}],"messages":[{"role":"user","content":"Fix it"}]}`
		if err := postJSON(base+"/v1/messages", "", []byte(title), &v); err != nil {
			return "", err
		}
	}
	if prefetch {
		if _, err := call("get_policy", "{}"); err != nil {
			return "", err
		}
	}
	// TEST_PREFIX shows dryfire's tools to the model under a prefix (as
	// Mastra does); TEST_OWN names tools of the agent's own, which it
	// answers itself; TEST_REVERSE runs a turn's calls last first.
	prefix := os.Getenv("TEST_PREFIX")
	own := map[string]bool{}
	var tools []map[string]any
	for _, n := range strings.Split(os.Getenv("TEST_OWN"), ",") {
		if n != "" {
			own[n] = true
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": n, "parameters": map[string]any{"type": "object"}}})
		}
	}
	// TEST_HIDE names a served tool it does not offer; TEST_SCHEMA
	// (NAME=JSON) offers a served tool with another schema.
	hide := os.Getenv("TEST_HIDE")
	changed, schema, _ := strings.Cut(os.Getenv("TEST_SCHEMA"), "=")
	for _, t := range listed.Tools {
		if t.Name == changed {
			t.InputSchema = json.RawMessage(schema)
		}
		if t.Name != hide {
			tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": prefix + t.Name, "description": t.Description, "parameters": t.InputSchema}})
		}
	}
	served := call
	call = func(name, args string) (string, error) {
		if own[name] {
			return "own " + name + " " + args, nil
		}
		if !strings.HasPrefix(name, prefix) {
			return "", fmt.Errorf("the model called %q, a tool the agent does not have", name)
		}
		return served(strings.TrimPrefix(name, prefix), args)
	}
	messages := []chatMessage{{Role: "user", Content: &input}}
	for range 10 {
		body, _ := json.Marshal(map[string]any{"model": "test-model", "messages": messages, "tools": tools})
		var resp struct {
			Choices []struct {
				Message chatMessage `json:"message"`
			} `json:"choices"`
		}
		if err := postJSON(os.Getenv("OPENAI_BASE_URL")+"/chat/completions", os.Getenv("OPENAI_API_KEY"), body, &resp); err != nil {
			return "", err
		}
		msg := resp.Choices[0].Message
		messages = append(messages, chatMessage{Role: "assistant", Content: msg.Content, ToolCalls: msg.ToolCalls})
		if len(msg.ToolCalls) == 0 {
			if msg.Content == nil {
				return "", nil
			}
			return *msg.Content, nil
		}
		outs := make([]string, len(msg.ToolCalls))
		for k := range msg.ToolCalls {
			if os.Getenv("TEST_REVERSE") != "" {
				k = len(msg.ToolCalls) - 1 - k
			}
			tc := msg.ToolCalls[k]
			out, err := call(tc.Function.Name, tc.Function.Arguments)
			if err != nil {
				return "", err
			}
			outs[k] = out
		}
		for k, tc := range msg.ToolCalls {
			messages = append(messages, chatMessage{Role: "tool", ToolCallID: tc.ID, Content: &outs[k]})
		}
	}
	return "", errors.New("no answer after 10 model calls")
}

func getJSON(url string, v any) error {
	resp, err := http.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(v)
}

func postJSON(url, key string, body []byte, v any) error {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %s", url, resp.Status, data)
	}
	return json.Unmarshal(data, v)
}

// agentBinary is the test binary, the agent program of the suites here.
func agentBinary(t testing.TB) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// commandEnv is the run's environment for agent.command tests: the test
// agent switch, and whatever else is given. A test binary built with
// -race sleeps a second as it exits, unless GORACE says not to.
func commandEnv(more ...string) []string {
	return append([]string{agentEnv + "=1", "PATH=" + os.Getenv("PATH"), "GORACE=atexit_sleep_ms=0"}, more...)
}

var refundBrain = fakeapi.Script{
	"Please refund order A-991.": {
		{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991"}`}}},
		{Text: "Your refund R-1 is done.", InputTokens: 100, OutputTokens: 7},
	},
	"Say hi.": {{Text: "hi"}},
}

func refundSuite(command, extra string) string {
	return `version: 1
agent:
  provider: openai
  command: ` + command + `
` + extra + `tools:
  lookup_order:
    description: Look up an order.
    input_schema: {type: object, properties: {order_id: {type: string}}, required: [order_id]}
  issue_refund:
    input_schema: {type: object, properties: {order_id: {type: string}}}
mocks:
  get_policy:
    - return: refunds within 30 days
  lookup_order:
    - when: {order_id: A-991}
      return: {tier: gold}
  issue_refund:
    - sequence: [{error: timeout}, {return: {refund_id: R-1}}]
cases:
  - name: refund over http
    input: Please refund order A-991.
    expect:
      - called: {tool: issue_refund, with: {order_id: A-991}, times: 2}
      - order: [get_policy, lookup_order, issue_refund]
      - max_turns: 4
      - output: {contains: R-1}
  - name: refund over mcp
    input: Please refund order A-991.
    expect:
      - called: {tool: issue_refund, with: {order_id: A-991}, times: 2}
      - output: {contains: R-1}
  - name: hi
    input: Say hi.
    expect:
      - not_called: issue_refund
      - output: {equals: hi}
`
}

// An existing agent, recorded once against the fake upstream, then
// replayed offline: the same report byte for byte (durations aside), no
// connection to the upstream, every tool call with its turn.
func TestCommandRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.NewOpenAIChat(refundBrain, fakeapi.RequireKey(testOpenAIKey))
	defer srv.Close()
	command := fmt.Sprintf("[%q, loop, bycase, prefetch]", agentBinary(t))
	suites := writeSuite(t, dir, "support.dryfire.yaml", refundSuite(command, ""))
	recorded, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once,
		Env: commandEnv("OPENAI_API_KEY="+testOpenAIKey, "OPENAI_BASE_URL="+srv.URL+"/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if recorded.Summary.Passed != 3 {
		t.Fatalf("recording: %+v\n%s", recorded.Summary, stableJSON(t, recorded))
	}
	if n := srv.Requests(); n != 9 {
		t.Errorf("%d requests while recording, want 9", n)
	}
	c := recorded.Cases[0]
	var got []string
	for _, tc := range c.ToolCalls {
		got = append(got, fmt.Sprintf("turn %d: %s %s -> %s (%s)", tc.Turn, tc.Tool, tc.Args, tc.Result, tc.Outcome))
	}
	want := []string{
		`turn 0: get_policy {} -> refunds within 30 days (return)`,
		`turn 1: lookup_order {"order_id":"A-991"} -> {"tier":"gold"} (return)`,
		`turn 2: issue_refund {"order_id":"A-991"} -> timeout (error)`,
		`turn 3: issue_refund {"order_id":"A-991"} -> {"refund_id":"R-1"} (return)`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	if c.Turns != 4 || c.Output != "Your refund R-1 is done." || c.Usage.InputTokens == 0 || c.Live != 4 {
		t.Errorf("turns %d, output %q, usage %+v, live %d", c.Turns, c.Output, c.Usage, c.Live)
	}
	if mcp := recorded.Cases[1]; len(mcp.ToolCalls) != 4 || mcp.ToolCalls[3].Result != `{"refund_id":"R-1"}` {
		t.Errorf("over MCP: %+v", mcp.ToolCalls)
	}
	for i, name := range []string{"refund-over-http", "refund-over-mcp", "hi"} {
		file := filepath.Join(dir, "cassettes", "support", name+".json")
		if recorded.Cases[i].Cassette != file {
			t.Errorf("case %d: cassette %q, want %q", i, recorded.Cases[i].Cassette, file)
		}
		if _, err := cassette.Load(file); err != nil {
			t.Error(err)
		}
	}
	if n := scanSecrets(t, dir); n != 3 {
		t.Errorf("%d cassettes, want 3", n)
	}
	conns := srv.Conns()
	replayed, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv("OPENAI_BASE_URL=" + srv.URL + "/v1")})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(stableJSON(t, withoutRecordedNotes(recorded)), stableJSON(t, replayed)); diff != "" {
		t.Errorf("replay differs from the recording run (-recorded +replayed):\n%s", diff)
	}
	if got := srv.Conns(); got != conns {
		t.Errorf("replaying opened %d connections to the upstream", got-conns)
	}
	if replayed.Cases[0].Live != 0 {
		t.Errorf("live calls while replaying: %d", replayed.Cases[0].Live)
	}

	// A changed agent fails against its recording: here it skips the
	// prefetch (its model requests are the same, its tool calls are not),
	// and a changed input is a request that differs from the recording.
	text := strings.Replace(refundSuite(fmt.Sprintf("[%q, loop, bycase]", agentBinary(t)), ""), "input: Say hi.", "input: Say hello.", 1)
	suites = writeSuite(t, dir, "support.dryfire.yaml", text)
	changed, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if c := changed.Cases[0]; c.Status != report.Failed || !strings.Contains(c.Reason, "1 of 4 checks failed") {
		t.Errorf("without the prefetch: %s %s", c.Status, c.Reason)
	}
	if c := changed.Cases[2]; c.Status != report.Failed || !strings.Contains(c.Replay, `$.messages[0].content: recorded "Say hi.", now "Say hello."`) || !strings.Contains(c.Stderr, "dryfire_cassette_mismatch") {
		t.Errorf("a changed input: %s %q\nreplay: %s\nstderr: %s", c.Status, c.Reason, c.Replay, c.Stderr)
	}
}

// What the program is given: its directory, the case's URLs, dummy keys
// instead of the real ones, the case's name and input.
func TestCommandEnvironment(t *testing.T) {
	dir := t.TempDir()
	suite := `version: 1
agent:
  command: [` + strconv.Quote(agentBinary(t)) + `, env]
cases:
  - name: the env
    input: "two\nlines"
`
	suite = strings.Replace(suite, ", env]", ", env, GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY, GOOGLE_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY]", 1)
	suites := writeSuite(t, dir, "env.dryfire.yaml", suite)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None,
		Env: commandEnv("OPENAI_API_KEY="+testOpenAIKey, "ANTHROPIC_API_KEY="+testAnthropicKey, "OPENAI_BASE_URL=http://example.invalid/v1",
			"GOOGLE_API_KEY=AIza-run-own-key-0123", "GOOGLE_GENAI_USE_VERTEXAI=true",
			"DRYFIRE_CASE=outer", "KEEP_ME=kept", "HTTPS_PROXY=http://proxy.invalid:3128")})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Passed {
		t.Fatalf("%s: %s\n%s", c.Status, c.Reason, stableJSON(t, rep))
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(c.Output), &got); err != nil {
		t.Fatalf("output %q: %v", c.Output, err)
	}
	prefix := got["ANTHROPIC_BASE_URL"]
	if !strings.HasPrefix(prefix, "http://127.0.0.1:") || !strings.HasSuffix(prefix, "/cases/"+spec.CaseID("env.dryfire.yaml", "the env")) {
		t.Fatalf("ANTHROPIC_BASE_URL %q", prefix)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	want := map[string]string{
		"cwd":                realDir,
		"OPENAI_BASE_URL":    prefix + "/v1",
		"ANTHROPIC_BASE_URL": prefix,
		"OPENAI_API_KEY":     "dryfire-no-key",
		"ANTHROPIC_API_KEY":  "dryfire-no-key",
		// The Gemini SDKs add /v1beta/models/…; the run's key and its
		// Vertex AI setting never reach the program.
		"GOOGLE_GEMINI_BASE_URL":    prefix,
		"GEMINI_API_KEY":            "dryfire-no-key",
		"GOOGLE_API_KEY":            "dryfire-no-key",
		"GOOGLE_GENAI_USE_VERTEXAI": "false",
		"AZURE_OPENAI_ENDPOINT":     prefix,
		"AZURE_OPENAI_API_KEY":      "dryfire-no-key",
		"DRYFIRE_MCP_URL":           prefix + "/mcp",
		"DRYFIRE_TOOLS_URL":         prefix + "/tools",
		"DRYFIRE_CASE":              "the env",
		"DRYFIRE_INPUT":             "two\nlines",
		"KEEP_ME":                   "kept",
		"NO_PROXY":                  "127.0.0.1,localhost",
	}
	if got["cwd"] != realDir {
		if wd, _ := filepath.EvalSymlinks(got["cwd"]); wd == realDir {
			got["cwd"] = realDir
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("environment (-want +got):\n%s", diff)
	}
	// It made no model call: no cassette is needed, none is written.
	if _, err := os.Stat(filepath.Join(dir, "cassettes")); !os.IsNotExist(err) {
		t.Errorf("a cassette directory was made: %v", err)
	}
}

// A program gets the offline settings, replacing the run's values; the
// suite's agent.env replaces them, a setting it touches left out whole.
func TestCommandOfflineEnvironment(t *testing.T) {
	dir := t.TempDir()
	names := []string{"OPENAI_API_BASE", "ANTHROPIC_API_BASE", "OPENAI_AGENTS_DISABLE_TRACING", "LANGSMITH_TRACING", "LANGSMITH_TRACING_V2",
		"LANGCHAIN_TRACING_V2", "OTEL_SDK_DISABLED", "LITELLM_LOCAL_MODEL_COST_MAP", "GOOGLE_API_USE_CLIENT_CERTIFICATE", "DO_NOT_TRACK", "MINE"}
	suite := `version: 1
agent:
  command: [` + strconv.Quote(agentBinary(t)) + `, env, ` + strings.Join(names, ", ") + `]
  env:
    LANGSMITH_TRACING: "true"
    DO_NOT_TRACK: 0
    MINE: yes it is
cases:
  - name: the env
    input: hi
`
	suites := writeSuite(t, dir, "env.dryfire.yaml", suite)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None,
		Env: commandEnv("OTEL_SDK_DISABLED=false", "LANGCHAIN_TRACING_V2=true", "OPENAI_API_BASE=https://api.openai.com/v1", "MINE=the run's")})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Passed {
		t.Fatalf("%s: %s\n%s", c.Status, c.Reason, stableJSON(t, rep))
	}
	var got map[string]string
	if err := json.Unmarshal([]byte(c.Output), &got); err != nil {
		t.Fatalf("output %q: %v", c.Output, err)
	}
	prefix := got["ANTHROPIC_BASE_URL"]
	want := map[string]string{
		"OPENAI_API_BASE":                   prefix + "/v1",
		"ANTHROPIC_API_BASE":                prefix,
		"OPENAI_AGENTS_DISABLE_TRACING":     "1",
		"LANGSMITH_TRACING":                 "true", // the suite's; the rest of the LangSmith row left out
		"LANGSMITH_TRACING_V2":              "",
		"LANGCHAIN_TRACING_V2":              "", // the run's value dropped too
		"OTEL_SDK_DISABLED":                 "true",
		"LITELLM_LOCAL_MODEL_COST_MAP":      "True",
		"GOOGLE_API_USE_CLIENT_CERTIFICATE": "false",
		"DO_NOT_TRACK":                      "0",
		"MINE":                              "yes it is",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %q, want %q", k, got[k], w)
		}
	}
}

// A program that exits non-zero, or outlives its timeout, is a case
// error with the end of its stderr; on a timeout its process group is
// killed, children included.
func TestCommandFailures(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	exe := strconv.Quote(agentBinary(t))
	fail := writeSuite(t, dir, "fail.dryfire.yaml", `version: 1
agent:
  command: [`+exe+`, fail]
cases:
  - name: fails
    input: go
`)
	hang := writeSuite(t, dir, "hang.dryfire.yaml", `version: 1
agent:
  command: [`+exe+`, hang, `+strconv.Quote(pidFile)+`]
  timeout_s: 3
cases:
  - name: hangs
    input: go
`)
	missing := writeSuite(t, dir, "missing.dryfire.yaml", `version: 1
agent:
  command: [./no-such-agent, --flag]
cases:
  - name: cannot start
    input: go
`)
	start := time.Now()
	rep, err := runner.Run(context.Background(), append(append(fail, hang...), missing...), runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("the run took %s", d)
	}
	var lines []string
	for i := 6; i <= 25; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	f := rep.Cases[0]
	if f.Status != report.Errored || f.Reason != "the agent exited with status 3" || f.Infra || f.Output != "partial" || f.Stderr != strings.Join(lines, "\n") {
		t.Errorf("fails: %s %q infra=%v output %q stderr %q", f.Status, f.Reason, f.Infra, f.Output, f.Stderr)
	}
	details := strings.Join(f.Details(), "\n")
	if !strings.Contains(details, "stderr of the agent (its last lines):\n  | line 6\n") {
		t.Errorf("details:\n%s", details)
	}
	h := rep.Cases[1]
	if h.Status != report.Errored || h.Reason != "the agent did not finish within 3 s (agent.timeout_s), and was killed" || h.Stderr != "waiting" || h.Infra {
		t.Errorf("hangs: %s %q infra=%v stderr %q", h.Status, h.Reason, h.Infra, h.Stderr)
	}
	m := rep.Cases[2]
	if m.Status != report.Errored || !m.Infra || !strings.HasPrefix(m.Reason, "the agent could not start: ./no-such-agent --flag: ") {
		t.Errorf("cannot start: %s %q infra=%v", m.Status, m.Reason, m.Infra)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the hanging agent's child %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// alive says whether pid is a running process (not a zombie).
func alive(pid int) bool {
	if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !os.IsNotExist(err)
	}
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z' && stat[i+2] != 'X'
	}
	return true
}

// max_turns bounds the model calls of a program: the one past it is
// refused, and the case is an error that records nothing. Replaying
// without a cassette is an infrastructure error when the program calls
// the model.
func TestCommandMaxTurnsAndMissingCassette(t *testing.T) {
	dir := t.TempDir()
	srv := fakeapi.NewOpenAIChat(refundBrain)
	defer srv.Close()
	suite := `version: 1
agent:
  provider: openai
  command: [` + strconv.Quote(agentBinary(t)) + `, loop, http]
  max_turns: 2
mocks:
  lookup_order:
    - return: {tier: gold}
  issue_refund:
    - return: {ok: true}
cases:
  - name: too long
    input: Please refund order A-991.
`
	suites := writeSuite(t, dir, "turns.dryfire.yaml", suite)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: commandEnv("OPENAI_BASE_URL=" + srv.URL + "/v1")})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Errored || c.Reason != "max_turns (2) reached: the agent asked for model call 3, which dryfire refused" || c.Turns != 2 || c.Infra {
		t.Errorf("%s %q turns %d infra %v", c.Status, c.Reason, c.Turns, c.Infra)
	}
	if !strings.Contains(c.Stderr, "max_turns (2) reached") {
		t.Errorf("stderr %q: the program should have been told why", c.Stderr)
	}
	if srv.Requests() != 2 {
		t.Errorf("%d requests reached the upstream, want 2", srv.Requests())
	}
	if _, err := os.Stat(c.Cassette); !os.IsNotExist(err) {
		t.Errorf("cassette written for a case that erred: %v", err)
	}

	rep, err = runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	c = rep.Cases[0]
	if c.Status != report.Errored || !c.Infra || !strings.HasPrefix(c.Reason, "no cassette for this case: ") || len(rep.Cases) != 1 {
		t.Errorf("no cassette: %s %q infra %v", c.Status, c.Reason, c.Infra)
	}
}

// Claude Code's title side call (and a token count) takes no turn of
// max_turns and shifts no tool call's turn: a case of max_turns 3 whose
// agent asks for a title, then calls a tool of its own accord (turn 0),
// then takes 3 turns passes, its tool calls in turns 0, 1, 2. Before, the
// title was admitted as model call 1 (the third turn refused: "max_turns
// (3) reached") and get_policy was put in turn 1.
func TestCommandSideCallIsNoTurn(t *testing.T) {
	dir := t.TempDir()
	suite := `version: 1
agent:
  provider: script
  command: [` + strconv.Quote(agentBinary(t)) + `, loop, http, prefetch]
  max_turns: 3
  side_calls: claude-code
  env: {TEST_TITLE: "1"}
mocks:
  get_policy:
    - return: {refunds: allowed}
  lookup_order:
    - return: {tier: gold}
  issue_refund:
    - return: {ok: true}
cases:
  - name: titled
    input: Refund A-1.
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: A-1}}]
      - tool_calls: [{name: issue_refund, args: {order_id: A-1}}]
      - text: done
`
	suites := writeSuite(t, dir, "title.dryfire.yaml", suite)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Passed || c.Turns != 3 {
		t.Fatalf("%s %q turns %d, want passed in 3 turns\n%s", c.Status, c.Reason, c.Turns, stableJSON(t, rep))
	}
	var got []string
	for _, tc := range c.ToolCalls {
		got = append(got, fmt.Sprintf("%d %s", tc.Turn, tc.Tool))
	}
	if want := "0 get_policy|1 lookup_order|2 issue_refund"; strings.Join(got, "|") != want {
		t.Errorf("tool calls' turns %q, want %q", got, want)
	}
	if !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.Contains(n, "model call 2 (Claude Code's session title)") }) {
		t.Errorf("notes %q: the title side call is not listed", c.Notes)
	}
}

// Keys are checked before anything runs: a case that will call the live
// model needs a key of its API, unless its calls go to another upstream.
func TestCommandKeysCheckedFirst(t *testing.T) {
	dir := t.TempDir()
	suite := func(provider string) string {
		return `version: 1
agent:
` + provider + `  command: [` + strconv.Quote(agentBinary(t)) + `, fail]
cases:
  - name: a
    input: go
`
	}
	for _, tc := range []struct {
		provider string
		env      []string
		want     string
	}{
		{"", nil, "OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY is not set"},
		{"", []string{"ANTHROPIC_API_KEY=x"}, ""},
		{"", []string{"GEMINI_API_KEY=x"}, ""},
		{"", []string{"GOOGLE_API_KEY=x"}, ""},
		{"", []string{"AZURE_OPENAI_API_KEY=x"}, ""},
		{"", []string{"AZURE_OPENAI_ENDPOINT=http://127.0.0.1:9"}, ""},
		{"", []string{"OPENAI_BASE_URL=http://127.0.0.1:9/v1"}, ""},
		{"  provider: anthropic\n", []string{"OPENAI_API_KEY=x"}, "ANTHROPIC_API_KEY is not set"},
		{"  provider: anthropic\n", []string{"ANTHROPIC_API_KEY=x"}, ""},
		{"  provider: openai-compatible\n  base_url: http://127.0.0.1:9/v1\n", nil, ""},
		{"  provider: azure-openai\n", []string{"AZURE_OPENAI_API_KEY=x"}, "AZURE_OPENAI_ENDPOINT is not set"},
		{"  provider: azure-openai\n", []string{"AZURE_OPENAI_ENDPOINT=https://r.openai.azure.com"}, "AZURE_OPENAI_API_KEY is not set"},
		{"  provider: azure-openai-responses\n", []string{"AZURE_OPENAI_ENDPOINT=https://r.openai.azure.com", "AZURE_OPENAI_API_KEY=x"}, ""},
		{"  provider: azure-openai\n  base_url: http://127.0.0.1:9\n", nil, ""},
	} {
		suites := writeSuite(t, dir, "keys.dryfire.yaml", suite(tc.provider))
		rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: commandEnv(tc.env...)})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%q %v: %v", tc.provider, tc.env, err)
		case tc.want == "" && rep.Cases[0].Reason != "the agent exited with status 3":
			t.Errorf("%q %v: %s", tc.provider, tc.env, rep.Cases[0].Reason)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%q %v: err %v, want %q", tc.provider, tc.env, err, tc.want)
		}
	}
}

// Concurrent cases never see each other's tool state or cassettes: 16
// cases at concurrency 8, each calling the same sequence tool over HTTP
// or MCP and the model, get exactly their own outcomes, recording and
// replaying.
func TestCommandConcurrentCasesAreIsolated(t *testing.T) {
	const n = 16
	dir := t.TempDir()
	brain := fakeapi.Script{}
	var cases strings.Builder
	for i := range n {
		transport := "http"
		if i%2 == 1 {
			transport = "mcp"
		}
		input := fmt.Sprintf("Count for case %d.", i)
		brain[input] = []fakeapi.Turn{
			{ToolCalls: []fakeapi.ToolCall{{Name: "counter", Args: "{}"}, {Name: "whoami", Args: "{}"}}},
			{ToolCalls: []fakeapi.ToolCall{{Name: "counter", Args: "{}"}}},
			{ToolCalls: []fakeapi.ToolCall{{Name: "counter", Args: "{}"}}},
			{Text: fmt.Sprintf("case %d counted", i)},
		}
		fmt.Fprintf(&cases, `  - name: case %d over %s
    input: %s
    mocks:
      whoami:
        - return: me %d
    expect:
      - called: {tool: counter, times: 3}
      - output: {equals: case %d counted}
`, i, transport, input, i, i)
	}
	suite := `version: 1
agent:
  provider: openai
  command: [` + strconv.Quote(agentBinary(t)) + `, loop, bycase]
mocks:
  counter:
    - sequence: [{return: 1}, {return: 2}, {return: 3}, {return: 4}, {return: 5}, {return: 6}, {return: 7}, {return: 8}]
cases:
` + cases.String()
	suites := writeSuite(t, dir, "count.dryfire.yaml", suite)
	srv := fakeapi.NewOpenAIChat(brain)
	defer srv.Close()
	check := func(rep *report.Report, what string) {
		t.Helper()
		if rep.Summary.Passed != n {
			t.Fatalf("%s: %+v\n%s", what, rep.Summary, stableJSON(t, rep))
		}
		for i, c := range rep.Cases {
			var got []string
			for _, tc := range c.ToolCalls {
				got = append(got, fmt.Sprintf("%d %s=%s", tc.Turn, tc.Tool, tc.Result))
			}
			want := []string{"1 counter=1", fmt.Sprintf("1 whoami=me %d", i), "2 counter=2", "3 counter=3"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: case %d (-want +got):\n%s", what, i, diff)
			}
		}
	}
	recorded, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 8, Record: cassette.Once, Env: commandEnv("OPENAI_BASE_URL=" + srv.URL + "/v1")})
	if err != nil {
		t.Fatal(err)
	}
	check(recorded, "recording")
	for i, c := range recorded.Cases {
		data, err := os.ReadFile(c.Cassette)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		for j := range n {
			mine := strings.Contains(text, fmt.Sprintf("Count for case %d.", j)) || strings.Contains(text, fmt.Sprintf("me %d\"", j))
			if mine != (i == j) {
				t.Errorf("cassette of case %d: mentions case %d: %v", i, j, mine)
			}
		}
		cs, err := cassette.Load(c.Cassette)
		if err != nil {
			t.Fatal(err)
		}
		if cs.Case != c.Name || len(cs.Interactions) != 4 {
			t.Errorf("cassette of case %d: case %q, %d interactions", i, cs.Case, len(cs.Interactions))
		}
	}
	srv.Close()
	replayed, err := runner.Run(context.Background(), suites, runner.Options{Concurrency: 8, Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	check(replayed, "replay")
	if diff := cmp.Diff(stableJSON(t, withoutRecordedNotes(recorded)), stableJSON(t, replayed)); diff != "" {
		t.Errorf("replay differs (-recorded +replayed):\n%s", diff)
	}
}

// A program path with a slash is relative to the suite's directory, which
// is the program's working directory; what it prints loses one line end.
func TestCommandRelativeProgram(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\ncat\nprintf ' from %s\\n\\n' \"$(basename \"$PWD\")\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bin", "agent.sh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	suites := writeSuite(t, dir, "sh.dryfire.yaml", `version: 1
agent:
  command: [bin/agent.sh]
cases:
  - name: echo
    input: hello
    expect:
      - output: {equals: "hello from `+filepath.Base(dir)+`\n"}
`)
	rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if c := rep.Cases[0]; c.Status != report.Passed {
		t.Errorf("%s %s: output %q", c.Status, c.Reason, c.Output)
	}
}

// Ctrl-C (the run's context done) kills the program's whole process
// group at once, and the case is reported as interrupted.
func TestCommandInterrupted(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	suites := writeSuite(t, dir, "hang.dryfire.yaml", `version: 1
agent:
  command: [`+strconv.Quote(agentBinary(t))+`, hang, `+strconv.Quote(pidFile)+`]
cases:
  - name: hangs
    input: go
`)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	rep, err := runner.Run(ctx, suites, runner.Options{Record: cassette.None, Env: commandEnv()})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the run took %s", d)
	}
	if c := rep.Cases[0]; c.Status != report.Errored || c.Reason != "interrupted" || !c.Infra {
		t.Errorf("%s %q infra %v", c.Status, c.Reason, c.Infra)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(string(data))
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the agent's child %d is still running", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// agent.port serves the run on that port (the program's URLs name it), and
// Options.Port (dryfire run --port) wins over it; a port that is taken is
// a clear error before any case runs, naming who asked for it.
func TestCommandFixedPort(t *testing.T) {
	free := func() int {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().(*net.TCPAddr).Port
	}
	dir := t.TempDir()
	suitePort := free()
	suite := `version: 1
agent:
  command: [` + strconv.Quote(agentBinary(t)) + `, env]
  port: ` + strconv.Itoa(suitePort) + `
cases:
  - name: the env
    input: hi
`
	suites := writeSuite(t, dir, "port.dryfire.yaml", suite)
	url := func(opts runner.Options) (string, error) {
		opts.Record, opts.Env = cassette.None, commandEnv()
		rep, err := runner.Run(context.Background(), suites, opts)
		if err != nil {
			return "", err
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(rep.Cases[0].Output), &got); err != nil {
			t.Fatalf("output %q: %v", rep.Cases[0].Output, err)
		}
		return got["OPENAI_BASE_URL"], nil
	}
	if got, err := url(runner.Options{}); err != nil || got != fmt.Sprintf("http://127.0.0.1:%d/cases/%s/v1", suitePort, spec.CaseID("port.dryfire.yaml", "the env")) {
		t.Errorf("agent.port %d: %q, %v", suitePort, got, err)
	}
	runPort := free()
	if got, err := url(runner.Options{Port: runPort}); err != nil || got != fmt.Sprintf("http://127.0.0.1:%d/cases/%s/v1", runPort, spec.CaseID("port.dryfire.yaml", "the env")) {
		t.Errorf("--port %d: %q, %v", runPort, got, err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(suitePort))
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	_, err = url(runner.Options{})
	want := fmt.Sprintf("agent.port %d: the port is taken (listen tcp 127.0.0.1:%d: bind: address already in use): stop what listens there, or choose another port (agent.port, dryfire run --port)", suitePort, suitePort)
	if err == nil || err.Error() != want {
		t.Errorf("a taken port: %v\nwant %s", err, want)
	}
}
