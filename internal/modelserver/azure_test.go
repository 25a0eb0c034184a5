package modelserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

func TestAzurePaths(t *testing.T) {
	for path, want := range map[string]wire.API{
		"/openai/deployments/gpt-4o/chat/completions": wire.OpenAIChat,
		"/openai/deployments/gpt-4o/responses":        wire.OpenAIResponses,
		"/openai/v1/chat/completions":                 wire.OpenAIChat,
		"/openai/v1/responses":                        wire.OpenAIResponses,
		"/openai/responses":                           wire.OpenAIResponses,
		"/openai/deployments//chat/completions":       "",
		"/openai/deployments/gpt-4o/embeddings":       "",
		"/openai/chat/completions/x":                  "",
	} {
		if got, ok := wire.RouteOf(path); got != want || ok != (want != "") {
			t.Errorf("RouteOf(%s) = %q %v, want %q", path, got, ok, want)
		}
	}
}

// An AzureOpenAI client's calls: the script answers them as the OpenAI
// API of the path; recorded, they go to AZURE_OPENAI_ENDPOINT at the same
// path and api-version with AZURE_OPENAI_API_KEY in api-key, and replay
// offline; the cassette holds no key.
func TestAzureOpenAI(t *testing.T) {
	const path = "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21"
	body := conversation(wire.OpenAIChat, false)[0]
	postAzure := func(root string) reply {
		req, _ := http.NewRequest(http.MethodPost, root+path, strings.NewReader(body))
		req.Header.Set("Api-Key", DummyKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return reply{resp.StatusCode, resp.Header, data}
	}
	scripted := mustNew(t, Options{Scripted: true, Script: refundScript()})
	if r := postAzure(serve(t, scripted, "/c")); r.status != 200 || !strings.Contains(string(r.body), `"object":"chat.completion"`) || !strings.Contains(string(r.body), "lookup_order") {
		t.Errorf("scripted: %d %s", r.status, r.body)
	}

	const envKey = "azure-env-key-0123456789"
	var saw []string
	answer := `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		saw = append(saw, r.URL.RequestURI()+" "+r.Header.Get("Api-Key")+" "+r.Header.Get("Authorization"))
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(answer))
	}))
	defer up.Close()
	o := caseOptions(t.TempDir(), cassette.Once)
	o.Env = []string{"AZURE_OPENAI_ENDPOINT=" + up.URL, "AZURE_OPENAI_API_KEY=" + envKey}
	e := mustNew(t, o)
	if r := postAzure(serve(t, e, "/c")); r.status != 200 || string(r.body) != answer {
		t.Fatalf("recording: %d %s", r.status, r.body)
	}
	if want := path + " " + envKey + " "; len(saw) != 1 || saw[0] != want {
		t.Errorf("upstream saw %q, want %q", saw, want)
	}
	if u := e.Usage(); u.InputTokens != 5 || u.OutputTokens != 1 {
		t.Errorf("usage %+v", u)
	}
	e.Finish()
	data, _ := os.ReadFile(o.File)
	if strings.Contains(string(data), envKey) || !strings.Contains(string(data), "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21") {
		t.Errorf("cassette:\n%s", data)
	}
	o.Mode, o.Env = cassette.None, []string{"CI=true"}
	e = mustNew(t, o)
	if r := postAzure(serve(t, e, "/c")); r.status != 200 || string(r.body) != answer {
		t.Errorf("replay: %d %s", r.status, r.body)
	}
	if len(saw) != 1 {
		t.Errorf("the replay reached the upstream")
	}
	// Nowhere to record to.
	e = mustNew(t, caseOptions(t.TempDir(), cassette.Once))
	if r := postAzure(serve(t, e, "/c")); r.status != 400 || !strings.Contains(string(r.body), "AZURE_OPENAI_ENDPOINT is not set") {
		t.Errorf("no endpoint: %d %s", r.status, r.body)
	}
}
