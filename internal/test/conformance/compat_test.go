package conformance

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var updateCompat = flag.Bool("update-compat", false, "rewrite docs/compatibility.md from the conformance results")

var compatPage = filepath.Join("..", "..", "..", "docs", "compatibility.md")

// installed is the installed version of an npm package of nodeDir.
func installed(name string) string {
	data, err := os.ReadFile(filepath.Join(nodeDir, "node_modules", name, "package.json"))
	var p struct{ Version string }
	if err != nil || json.Unmarshal(data, &p) != nil || p.Version == "" {
		return "(version unknown)"
	}
	return p.Version
}

// TestConformance checks the model wire and the MCP messages against the
// official definitions and keeps docs/compatibility.md true to what was
// checked: it fails when the committed page is stale (regenerate with
// go test ./internal/test/conformance -update-compat).
func TestConformance(t *testing.T) {
	nodeReady(t)
	var models modelResult
	t.Run("models", func(t *testing.T) {
		models = checkModels(t)
		for p, kinds := range models.counts {
			if kinds["request"] < 30 {
				t.Errorf("%s: %d request shapes checked, want at least 30", p, kinds["request"])
			}
		}
	})
	var scripted modelResult
	t.Run("scripted", func(t *testing.T) {
		scripted = checkScripted(t)
		for _, p := range providers {
			chunks := 100
			if p.name == "gemini" {
				chunks = 50 // a Gemini stream sends each function call whole, in one chunk
			}
			if c := scripted.counts[p.name]; c["answer"] < 30 || c["chunk"] < chunks {
				t.Errorf("%s: %d scripted answers and %d stream events checked, want at least 30 and %d", p.name, c["answer"], c["chunk"], chunks)
			}
		}
	})
	var msgs []mcpMessage
	t.Run("mcp", func(t *testing.T) {
		msgs = captureMCP(t)
		for _, f := range checkMCP(t, msgs) {
			t.Errorf("%s", describeMCP(msgs[f.Index], f))
		}
		server := 0
		for _, sides := range mcpCounts(msgs) {
			server += sides["server"]
		}
		if server < 100 {
			t.Errorf("%d server messages checked, want at least 100", server)
		}
	})
	if t.Failed() {
		return
	}
	broken := brokenShapes()
	var example []string
	for _, f := range checkTypes(t, broken[:1]) {
		example = append(example, describe(broken[f.Artifact], f))
	}
	page := compatibility(t, models, scripted, mcpCounts(msgs), strings.Join(example, "\n"))
	if *updateCompat {
		if err := os.WriteFile(compatPage, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(compatPage)
	if err != nil {
		t.Fatalf("%v (write it with go test ./internal/test/conformance -update-compat)", err)
	}
	if diff := cmp.Diff(string(want), page); diff != "" {
		t.Errorf("docs/compatibility.md is stale; regenerate it with go test ./internal/test/conformance -update-compat (-committed +now):\n%s", diff)
	}
}

var providerAPI = map[string]string{
	"anthropic":              "Messages (`POST /v1/messages`)",
	"openai":                 "Chat Completions (`POST /v1/chat/completions`)",
	"openai-responses":       "Responses (`POST /v1/responses`)",
	"openai-compatible":      "Chat Completions, as servers like Ollama or vLLM take it",
	"gemini":                 "Gemini (`POST /v1beta/models/MODEL:generateContent`, `:streamGenerateContent?alt=sse`)",
	"azure-openai":           "Chat Completions at an Azure OpenAI deployment (`POST /openai/deployments/DEPLOYMENT/chat/completions?api-version=…`, `api-key`)",
	"azure-openai-responses": "Responses at an Azure OpenAI resource (`POST /openai/responses?api-version=…`, `api-key`)",
	wsProvider:               "Responses over a WebSocket (`GET /v1/responses` upgraded, a `response.create` message a request, an event a message)",
}

// nodeClients are the pinned clients of e2e/node-models, "name version
// (the classes clients.mjs imports from it)" in name order.
func nodeClients(t *testing.T) string {
	t.Helper()
	dir := filepath.Join("..", "..", "..", "e2e", "node-models")
	data, err := os.ReadFile(filepath.Join(dir, "package.json"))
	var p struct{ Dependencies map[string]string }
	if err != nil || json.Unmarshal(data, &p) != nil {
		t.Fatalf("e2e/node-models/package.json: %v", err)
	}
	src, err := os.ReadFile(filepath.Join(dir, "clients.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	classes := map[string][]string{}
	for _, m := range importLine.FindAllStringSubmatch(string(src), -1) {
		for _, name := range strings.FieldsFunc(m[1], func(r rune) bool { return r == ',' || r == '{' || r == '}' || r == ' ' }) {
			classes[m[2]] = append(classes[m[2]], "`"+name+"`")
		}
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.Dependencies)) {
		if len(classes[name]) == 0 {
			t.Fatalf("e2e/node-models/clients.mjs imports nothing of %s, a dependency of its package.json", name)
		}
		out = append(out, name+" "+p.Dependencies[name]+" ("+strings.Join(classes[name], ", ")+")")
	}
	return strings.Join(out, ", ")
}

// pythonClients are the distributions and versions of the Python
// ecosystem tests' table (sdk/python/compatibility.md, which those tests
// write from what they ran), in its order.
func pythonClients(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "sdk", "python", "compatibility.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) < 3 || strings.HasPrefix(line, "| client") {
			continue
		}
		dv := strings.TrimPrefix(cells[0], "| ") + " " + cells[1]
		if !slices.Contains(out, dv) {
			out = append(out, dv)
		}
	}
	if len(out) == 0 {
		t.Fatal("sdk/python/compatibility.md lists no client")
	}
	return strings.Join(out, ", ")
}

// importLine is an ES import of clients.mjs: what, and from which package.
var importLine = regexp.MustCompile(`(?m)^import (.+) from '([^']+)';$`)

// mcpClients are the pinned MCP TypeScript SDK clients of e2e/node,
// "name version" in name order.
func mcpClients(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "e2e", "node", "package.json"))
	var p struct{ Dependencies map[string]string }
	if err != nil || json.Unmarshal(data, &p) != nil {
		t.Fatalf("e2e/node/package.json: %v", err)
	}
	var out []string
	for _, name := range slices.Sorted(maps.Keys(p.Dependencies)) {
		if name == "@modelcontextprotocol/sdk" || name == "@modelcontextprotocol/client" {
			out = append(out, name+" "+p.Dependencies[name])
		}
	}
	return strings.Join(out, " and ")
}

// compatibility is the text of docs/compatibility.md.
func compatibility(t *testing.T, models, scripted modelResult, mcp map[string]map[string]int, example string) string {
	t.Helper()
	v := func(name string) string { return name + " " + installed(name) }
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Compatibility\n\n")
	w("<!-- Generated by go test ./internal/test/conformance -update-compat from what the tests checked; do not edit. -->\n\n")
	w("dryfire cannot call the real model APIs from CI, so what shows that its requests and its fakes' answers\n")
	w("are right is a check against the official definitions, installed pinned from npm at test time\n")
	w("(`e2e/conformance/package-lock.json`), never copied into the repository. The tests are\n")
	w("`internal/test/conformance`; they run in CI with `go test ./...`. A disagreement fails with the JSON\n")
	w("path and the official rule, for example:\n\n")
	w("```text\n%s\n```\n\n", example)

	w("## Model APIs\n\n")
	w("Each body is written as a TypeScript object literal of the SDK's own type and checked with\n")
	w("`tsc --strict` (%s), whose excess property checks catch keys the type does not declare.\n", v("typescript"))
	w("Requests are what the built-in loop sends in %d conversations run against the fake servers\n", len(conversations))
	w("(tools with and without schemas, system prompts, parameters, tool errors, thinking and reasoning,\n")
	w("parallel calls, several turns); answers are the fake servers' (`internal/test/fakeapi`, which the\n")
	w("example cassettes are recorded against), and stream events are the same requests answered with\n")
	w("`\"stream\": true`.\n\n")
	w("| Provider | API | Checked against | Requests | Answers | Stream events |\n")
	w("|---|---|---|---:|---:|---:|\n")
	for _, p := range providers {
		pkg, types := v("openai"), "`ChatCompletionCreateParamsNonStreaming`, `ChatCompletion`, `ChatCompletionChunk`"
		wire := sameWire(p.name)
		if p.name == "azure-openai" {
			wire = p.name // its answers are typed with Azure's additions
		}
		switch wire {
		case "anthropic":
			pkg, types = v("@anthropic-ai/sdk"), "`MessageCreateParamsNonStreaming`, `Message`, `RawMessageStreamEvent`"
		case "openai-responses":
			types = "`ResponseCreateParamsNonStreaming`, `Response` (without the SDK's own `output_text`), `ResponseStreamEvent`"
		case "azure-openai":
			types = "`ChatCompletionCreateParamsNonStreaming`; `ChatCompletion` and `ChatCompletionChunk` with Azure's content filter results (`prompt_filter_results`, `content_filter_results`: no official TypeScript type declares them, so they are typed after Azure's REST reference, 2024-10-21)"
		case "gemini":
			pkg, types = v("@google/genai"), "the request body as `Content`, `Tool`, `ToolConfig`, `SafetySetting`, `GenerationConfig`; `GenerateContentResponse` (without the SDK's getters) for answers and each stream chunk"
		}
		c := models.counts[p.name]
		w("| %s | %s | %s: %s | %d | %d | %d |\n", p.name, providerAPI[p.name], pkg, types, c["request"], c["answer"], c["chunk"])
	}
	w("\n")
	for _, open := range []bool{false, true} {
		if !slices.ContainsFunc(knownGaps, func(g gap) bool { return g.open == open }) {
			continue
		}
		if open {
			w("### Open defects (accepted until fixed)\n\n")
		} else {
			w("### Where the official types differ from the APIs\n\n")
		}
		for i, g := range knownGaps {
			if g.open == open {
				var met []string
				for _, p := range strings.Split(g.provider, ", ") {
					n := models.gaps[gapOf{i, p}]
					if p == wsProvider {
						n = scripted.gaps[gapOf{i, p}] // the script model alone speaks it
					}
					met = append(met, fmt.Sprintf("%s (%d disagreements)", p, n))
				}
				w("- %s: %s\n", strings.Join(met, ", "), g.why)
			}
		}
		w("\n")
	}

	w("## Scripted answers\n\n")
	w("With `agent.provider: script` the model endpoint answers from a case's script, for the built-in loop,\n")
	w("`agent.command` programs, `dryfire serve --case` and SDK drills alike. The %d conversations above, each\n", len(conversations))
	w("a scripted case (its turns the script), are run by each provider's client against its case's endpoint;\n")
	w("every answer, and every event of the same requests sent again with `\"stream\": true` to a fresh endpoint,\n")
	w("is checked as above, against the same types.\n\n")
	w("| Provider | API | Answers | Stream events | Known differences accepted |\n")
	w("|---|---|---:|---:|---:|\n")
	for _, p := range providers {
		c, n := scripted.counts[p.name], 0
		for i, g := range knownGaps {
			if g.of(p.name) {
				n += scripted.gaps[gapOf{i, p.name}]
			}
		}
		w("| %s | %s | %d | %d | %d |\n", p.name, providerAPI[p.name], c["answer"], c["chunk"], n)
	}
	c, n := scripted.counts[wsProvider], 0
	for i := range knownGaps {
		n += scripted.gaps[gapOf{i, wsProvider}]
	}
	w("| %s | %s | — | %d | %d |\n", wsProvider, providerAPI[wsProvider], c["chunk"], n)
	w("\n")
	w("Over the WebSocket (`%s`) every Responses request of the conversations is sent again as a message to a\n", wsProvider)
	w("fresh endpoint, with a warm-up (`generate: false`) and a request the script refuses; each message of the\n")
	w("answers is checked as openai's `ResponsesServerEvent` (without `output_text`).\n\n")

	w("## MCP\n\n")
	w("Every message of a session with `dryfire serve` over streamable HTTP (the opening, each tool with\n")
	w("results, errors, content blocks, log and progress notifications, an unknown tool, the list methods,\n")
	w("an unknown method), in and out of a session, is parsed with the MCP TypeScript SDKs' own zod schemas:\n\n")
	w("| Protocol version | Checked against | Server messages | Client messages |\n")
	w("|---|---|---:|---:|\n")
	eras := slices.Sorted(func(yield func(string) bool) {
		for e := range mcp {
			if !yield(e) {
				return
			}
		}
	})
	for _, e := range eras {
		against := v("@modelcontextprotocol/sdk") + " (it implements up to 2025-11-25); keys its schemas do not declare fail"
		if e >= era0728 {
			against = v("@modelcontextprotocol/core") + "; keys its schemas do not declare are not checked"
		}
		w("| %s | %s | %d | %d |\n", e, against, mcp[e]["server"], mcp[e]["client"])
	}
	w("\n")
	w("The official MCP clients run against the tool server in CI, each as an `agent.command` agent\n")
	w("(`internal/runner`'s `TestMCPAsksNode` and `TestMCPResourcesNode`), pinned in `e2e/node`:\n")
	w("%s.\n", mcpClients(t))
	w("They read resources, complete arguments, fill prompts and answer the elicitation and sampling\n")
	w("requests of tool calls (the v2 client in both eras); the Python SDK's client (`mcp`) does the same\n")
	w("in both eras (`sdk/python/compatibility.md`).\n\n")

	w("## Not covered\n\n")
	for _, s := range []string{
		"The real APIs' own validation beyond their published types: which models take which parameters, limits on sizes and counts, tool name and schema rules the types do not state. (For example, @anthropic-ai/sdk 1.14.0 declares no `temperature`, `top_p` or `top_k`; a suite that sets them is sent as written.)",
		"Anthropic `ping` stream events (the SDK skips them rather than types them) and Chat's closing `data: [DONE]`.",
		"For a recorded case, the model endpoint (`agent.command`, `dryfire serve --case`, drills) replays recorded bytes, so its answers are the fakes' checked here; its own error bodies (no recorded interaction matches, a request no script turn answers) are not checked.",
		"Requests that agents run through `agent.command` send themselves (their SDK's); `internal/modelserver` runs the official Node clients (" + nodeClients(t) + ", pinned in `e2e/node-models`) against the endpoint, each with tool calls, streamed and not, recorded and replayed; the Python clients and frameworks run in CI are " + pythonClients(t) + " (`sdk/python/compatibility.md` says how each ran).",
		"MCP 2025-06-18 is checked with the 2025-11-25 schemas, so a 2025-11-25 field in a 2025-06-18 session would pass.",
		"MCP 2026-07-28: @modelcontextprotocol/core does not declare `resultType`, `ttlMs`, `cacheScope` or the `serverInfo` of `_meta`, so they are not checked; `internal/toolserver` tests them.",
		"MCP over standard input and output, and the HTTP tool routes (`POST /tools/NAME`): the same results through another transport, not captured here.",
		"MCP elicitation and sampling (the server's `elicitation/create` and `sampling/createMessage`, 2026-07-28's `input_required` results and their retries) are not captured here: the clients above parse them with their own schemas.",
		"The Python SDKs' pydantic models: not used yet.",
		"Gemini: @google/genai types the SDK's own parameters, not the REST body, so the body is checked as composed of its official types; its enumerations are checked as the unions of their values. Vertex AI's paths and bodies are not served or checked.",
		"Azure OpenAI: the fakes give the Responses API's answers as OpenAI's (no content filter results), and the script model answers Azure's paths as the OpenAI API's; the v1 API's paths (`agent.api_version: v1`) carry the same bodies. Azure's own error bodies and its content filter's refusals (`finish_reason: content_filter`, a filtered prompt's 400) are not checked.",
	} {
		w("- %s\n", s)
	}
	return b.String()
}
