// Command setup writes what the serving benchmarks (bench/serve.sh) serve,
// into the directory given:
//
//	tools1.dryfire.yaml    one tool, one rule
//	tools100.dryfire.yaml  one tool, 100 rules; the benchmark's call matches the last
//	chat.dryfire.yaml      cases chat-json and chat-stream, with their cassettes
//	                       under cassettes/chat/, recorded here against the repo's
//	                       fake OpenAI Chat Completions server (internal/test/fakeapi)
//	chat-json.bodies.json, chat-stream.bodies.json
//	                       the 3 requests of each conversation, as bench/load -mode seq reads them
//
// The cassettes are recorded through dryfire's own model endpoint, as
// `dryfire serve --case NAME --record all` would record them.
package main

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// oneCase is the one case of tools1 and tools100.
const oneCase = "  - name: c\n    input: x\n    script: [{text: ok}]\n"

const chat = `version: 1
agent: {provider: openai, model: gpt-test}
cases:
  - name: chat-json
    input: Please refund order A-991.
  - name: chat-stream
    input: Please refund order A-991.
`

// The fake model's side of the 3-turn conversation.
var script = fakeapi.Script{
	"Please refund order A-991.": {
		{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "Your refund R-1 for order A-991 is done — 120.50 €."},
	},
}

// conversation is the 3 requests an OpenAI Chat Completions agent makes.
func conversation(stream bool) []string {
	tools := `"tools":[{"type":"function","function":{"name":"lookup_order","parameters":{"type":"object","properties":{"order_id":{"type":"string"}}}}},{"type":"function","function":{"name":"issue_refund"}}]`
	msgs := []string{`{"role":"system","content":"You are a support agent."}`, `{"role":"user","content":"Please refund order A-991."}`}
	turns := [][]string{nil,
		{`{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup_order","arguments":"{\"order_id\":\"A-991\"}"}}]}`, `{"role":"tool","tool_call_id":"call_1","content":"{\"tier\":\"gold\"}"}`},
		{`{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"issue_refund","arguments":"{\"order_id\":\"A-991\",\"amount\":120.5}"}}]}`, `{"role":"tool","tool_call_id":"call_2","content":"R-1"}`},
	}
	extra := ""
	if stream {
		extra = `,"stream":true,"stream_options":{"include_usage":true}`
	}
	var reqs []string
	for _, t := range turns {
		msgs = append(msgs, t...)
		reqs = append(reqs, `{"model":"gpt-test","messages":[`+strings.Join(msgs, ",")+`],`+tools+`,"tool_choice":"auto"`+extra+`}`)
	}
	return reqs
}

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: setup DIR")
	}
	dir := os.Args[1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		log.Fatal(err)
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	write("tools1.dryfire.yaml", suite.LookupHead+oneCase)
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  create_order:\n")
	for i := range 100 {
		fmt.Fprintf(&b, "    - when: {amount: 100, currency: EUR, sku: SKU-%d}\n      return: {ok: true, rule: %d}\n", i, i)
	}
	b.WriteString("cases:\n" + oneCase)
	write("tools100.dryfire.yaml", b.String())
	write("chat.dryfire.yaml", chat)

	fake := fakeapi.NewOpenAIChat(script)
	defer fake.Close()
	suite := filepath.Join(dir, "chat.dryfire.yaml")
	names := []string{"chat-json", "chat-stream"}
	files := cassette.Paths(suite, names)
	for i, name := range names {
		stream := name == "chat-stream"
		e, err := modelserver.New(modelserver.Options{Config: cassette.Config{File: files[i], SuiteFile: suite, Case: name, Mode: cassette.All}, Env: []string{}, BaseURLs: map[string]string{"OPENAI_BASE_URL": fake.URL + "/v1"}})
		if err != nil {
			log.Fatal(err)
		}
		srv := httptest.NewServer(e)
		conv := conversation(stream)
		for _, body := range conv {
			resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				log.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				log.Fatalf("recording %s: %d %s", name, resp.StatusCode, data)
			}
		}
		srv.Close()
		if _, err := e.Save(); err != nil {
			log.Fatal(err)
		}
		write(name+".bodies.json", "["+strings.Join(conv, ",")+"]")
	}
}
