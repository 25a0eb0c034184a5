package modelserver

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/test/npm"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// nodeDir holds the Node project of the official SDK clients.
var nodeDir = filepath.Join("..", "..", "e2e", "node-models")

// runClients runs clients.mjs with urls (scenario → base URL) and returns
// its output.
func runClients(t *testing.T, urls map[string]string) string {
	t.Helper()
	u, _ := json.Marshal(urls)
	cmd := exec.Command("node", "clients.mjs")
	cmd.Dir = nodeDir
	cmd.Env = append(os.Environ(), "DRYFIRE_TEST_URLS="+string(u))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("node clients.mjs: %v\n%s\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.String()
}

// nodeScenarios are the scenarios of clients.mjs and their API.
var nodeScenarios = map[string]wire.API{
	"chat-json": wire.OpenAIChat, "chat-stream": wire.OpenAIChat,
	"responses-json": wire.OpenAIResponses, "responses-stream": wire.OpenAIResponses, "responses-helper": wire.OpenAIResponses,
	"anthropic-json": wire.Anthropic, "anthropic-stream": wire.Anthropic, "anthropic-helper": wire.Anthropic,
	"gemini-json": wire.Gemini, "gemini-stream": wire.Gemini,
	// openai's AzureOpenAI client, at Azure's paths (nodeURL).
	"azure-chat-json": wire.OpenAIChat, "azure-chat-stream": wire.OpenAIChat, "azure-responses-stream": wire.OpenAIResponses,
	"ollama-json": wire.Ollama, "ollama-stream": wire.Ollama,
	"bedrock-json": wire.Bedrock, "bedrock-stream": wire.Bedrock,
}

// nodeURL is the base URL clients.mjs gives a scenario's client for a
// server root: an AzureOpenAI client's endpoint is the root.
func nodeURL(name string, api wire.API, root string) string {
	if strings.HasPrefix(name, "azure-") {
		return root
	}
	return baseURL(api, root)
}

// The official openai (v6, its AzureOpenAI client too), @anthropic-ai/sdk and @google/genai Node clients, streaming
// and not, get through the endpoint exactly what the fake APIs give them
// directly: first while it records, then replaying with the fakes stopped.
func TestNodeClients(t *testing.T) {
	nodeReady(t)
	fakes := map[wire.API]*fakeapi.Server{}
	for _, api := range []wire.API{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic, wire.Gemini, wire.Ollama, wire.Bedrock} {
		fakes[api] = newFake(api)
	}
	start := time.Now()
	direct := map[string]string{}
	for name, api := range nodeScenarios {
		direct[name] = nodeURL(name, api, fakes[api].URL)
	}
	want := runClients(t, direct)
	if strings.Contains(want, `"error"`) || !strings.Contains(want, "Your refund R-1 for order A-991 is done") {
		t.Fatalf("against the fakes directly:\n%s", want)
	}

	dir := t.TempDir()
	suite := filepath.Join(dir, "node.dryfire.yaml")
	names := make([]string, 0, len(nodeScenarios))
	for name := range nodeScenarios {
		names = append(names, name)
	}
	files := cassette.Paths(suite, names)
	// run mounts one endpoint per scenario (a case each) and runs the
	// clients through them.
	run := func(mode cassette.Mode, transport http.RoundTripper) (string, []*Endpoint) {
		mux := http.NewServeMux()
		srv := httptest.NewUnstartedServer(mux)
		srv.Config.Protocols = Protocols() // the AWS SDK speaks HTTP/2 to an http:// endpoint
		srv.Start()
		defer srv.Close()
		urls := map[string]string{}
		var eps []*Endpoint
		for i, name := range names {
			api := nodeScenarios[name]
			o := Options{Config: cassette.Config{File: files[i], SuiteFile: suite, Case: name, Mode: mode}, Env: []string{"AWS_ACCESS_KEY_ID=AKIDTEST", "AWS_SECRET_ACCESS_KEY=s3cr3t-test"}, Transport: transport,
				BaseURLs: map[string]string{"OPENAI_BASE_URL": fakes[wire.OpenAIChat].URL + "/v1", "ANTHROPIC_BASE_URL": fakes[wire.Anthropic].URL, "GOOGLE_GEMINI_BASE_URL": fakes[wire.Gemini].URL,
					"OLLAMA_HOST": fakes[wire.Ollama].URL, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME": fakes[wire.Bedrock].URL}}
			if api == wire.OpenAIResponses {
				o.BaseURLs["OPENAI_BASE_URL"] = fakes[wire.OpenAIResponses].URL + "/v1"
			}
			if strings.HasPrefix(name, "azure-") {
				o.BaseURLs["AZURE_OPENAI_ENDPOINT"] = fakes[api].URL
			}
			e := mustNew(t, o)
			eps = append(eps, e)
			prefix := "/cases/" + name
			mux.Handle(prefix+"/", http.StripPrefix(prefix, e))
			urls[name] = nodeURL(name, api, srv.URL+prefix)
		}
		out := runClients(t, urls)
		for i, e := range eps {
			if p, f, u := e.Problem(), e.Failure(), e.Unplayed(); p != nil || f != nil || u != nil {
				t.Errorf("%s: problem %v, failure %v, unplayed %v", names[i], p, f, u)
			}
			if _, err := e.Finish(); err != nil {
				t.Fatal(err)
			}
		}
		return out, eps
	}

	recorded, _ := run(cassette.Once, nil)
	if recorded != want {
		t.Fatalf("through the recording endpoint:\n%s\ndirectly:\n%s", recorded, want)
	}
	for _, f := range fakes {
		f.Close()
	}
	for i, name := range names {
		data, err := os.ReadFile(files[i])
		if err != nil {
			t.Fatal(err)
		}
		if streamed := (strings.Contains(name, "stream") || strings.Contains(name, "helper")) && !strings.HasPrefix(name, "ollama") && !strings.HasPrefix(name, "bedrock"); streamed != strings.Contains(string(data), `"events": [`) {
			t.Errorf("%s: cassette streamed = %v:\n%s", name, !streamed, data)
		}
	}
	tr := newDialCounter()
	replayed, eps := run(cassette.None, tr)
	if replayed != want {
		t.Fatalf("replayed:\n%s\ndirectly:\n%s", replayed, want)
	}
	if n := tr.dials.Load(); n != 0 {
		t.Errorf("replay dialled %d times", n)
	}
	for i, e := range eps {
		if e.Turns() != 3 || e.Usage().InputTokens == 0 || e.Usage().OutputTokens == 0 {
			t.Errorf("%s: %d turns, usage %+v", names[i], e.Turns(), e.Usage())
		}
	}
	if os.Getenv("DRYFIRE_SHOW") != "" {
		t.Logf("%s", want)
	}
	// A request the recording does not hold: the SDKs, with their default
	// retries, get the error at once, in their own error classes.
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	defer srv.Close()
	urls := map[string]string{}
	var refusing []*Endpoint
	for _, m := range []struct{ scenario, recorded string }{{"mismatch-openai", "chat-json"}, {"mismatch-anthropic", "anthropic-json"}} {
		i := slices.Index(names, m.recorded)
		e := mustNew(t, Options{Config: cassette.Config{File: files[i], SuiteFile: suite, Case: m.recorded, Mode: cassette.None}, Env: []string{}})
		refusing = append(refusing, e)
		mux.Handle("/"+m.scenario+"/", http.StripPrefix("/"+m.scenario, e))
		urls[m.scenario] = baseURL(nodeScenarios[m.recorded], srv.URL+"/"+m.scenario)
	}
	var errs map[string]struct {
		Class, Type, Message string
		Status               int
		Code, Param          *string
	}
	if err := json.Unmarshal([]byte(runClients(t, urls)), &errs); err != nil {
		t.Fatal(err)
	}
	for name, e := range errs {
		wantMsg := "dryfire: model request 1 differs from the recording in " + files[slices.Index(names, strings.Replace(strings.Replace(name, "mismatch-openai", "chat-json", 1), "mismatch-anthropic", "anthropic-json", 1))]
		if e.Class != "BadRequestError" || e.Status != 400 || e.Type != "invalid_request_error" || !strings.Contains(e.Message, wantMsg) || !strings.Contains(e.Message, "--record all") {
			t.Errorf("%s: %+v", name, e)
		}
		if name == "mismatch-openai" && (e.Code == nil || *e.Code != cassette.CodeMismatch || e.Param == nil || *e.Param != "messages") {
			t.Errorf("%s: code %v, param %v", name, str(e.Code), str(e.Param))
		}
	}
	for _, e := range refusing {
		if n := len(e.Calls()); n != 1 {
			t.Errorf("%d calls reached the endpoint: the SDK retried", n)
		}
	}
	t.Logf("3 runs of %d scenarios in %s", len(names), time.Since(start).Round(time.Millisecond))
}

// nodeReady installs the pinned clients.
func nodeReady(t *testing.T) { npm.Ready(t, nodeDir, "the official SDK clients") }
