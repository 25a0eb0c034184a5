// Package frameworks_test serves the repository's fake model APIs for the
// Python ecosystem tests (sdk/python/tests/test_ecosystem.py), which record
// the frameworks' cassettes against them once, then replay offline. It is a
// test so that it may use the test-only fakes; it runs only when the Python
// tests ask for it.
package frameworks_test

import (
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// TestServeFakeUpstreams serves the fakes until DRYFIRE_FAKE_UPSTREAMS_STOP
// exists (or 10 minutes pass). DRYFIRE_FAKE_UPSTREAMS names a JSON file of
// the fake model's script (first user message → turns); their URLs are
// written to that file with ".ready" appended.
func TestServeFakeUpstreams(t *testing.T) {
	scriptFile := os.Getenv("DRYFIRE_FAKE_UPSTREAMS")
	if scriptFile == "" {
		t.Skip("run by sdk/python/tests/test_ecosystem.py")
	}
	data, err := os.ReadFile(scriptFile)
	if err != nil {
		t.Fatal(err)
	}
	var script fakeapi.Script
	if err := json.Unmarshal(data, &script); err != nil {
		t.Fatalf("reading the script %s: %v", scriptFile, err)
	}
	key := fakeapi.RequireKey("fake-key-for-the-ecosystem")
	chat, responses, anthropic := fakeapi.NewOpenAIChat(script, key), fakeapi.NewOpenAIResponses(script, key), fakeapi.NewAnthropic(script, key)
	gemini, ollama, bedrock := fakeapi.NewGemini(script, key), fakeapi.NewOllama(script), fakeapi.NewBedrock(script, fakeapi.RequireKey("fake-key-for-the-ecosystem"))
	vertex := fakeapi.NewVertex(script, key)
	defer vertex.Close()
	defer ollama.Close()
	defer bedrock.Close()
	defer chat.Close()
	defer responses.Close()
	defer anthropic.Close()
	defer gemini.Close()
	ready, err := json.Marshal(map[string]string{"openai_chat": chat.URL, "openai_responses": responses.URL, "anthropic": anthropic.URL, "gemini": gemini.URL, "ollama": ollama.URL, "bedrock": bedrock.URL, "vertex": vertex.URL})
	if err != nil {
		t.Fatal(err)
	}
	tmp := scriptFile + ".ready.tmp"
	if err := os.WriteFile(tmp, ready, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, scriptFile+".ready"); err != nil {
		t.Fatal(err)
	}
	stop := os.Getenv("DRYFIRE_FAKE_UPSTREAMS_STOP")
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(stop); err == nil {
			break
		}
	}
	t.Logf("requests: chat %d, responses %d, anthropic %d, gemini %d, ollama %d, bedrock %d, vertex %d", chat.Requests(), responses.Requests(), anthropic.Requests(), gemini.Requests(), ollama.Requests(), bedrock.Requests(), vertex.Requests())
}
