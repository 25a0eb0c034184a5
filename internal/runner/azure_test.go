package runner_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// Azure OpenAI in the built-in loop: each provider and api_version calls
// its path (the deployment's, the resource's Responses, the v1 API's),
// the key in api-key; the endpoint comes from agent.base_url or
// AZURE_OPENAI_ENDPOINT; the replay needs neither endpoint nor key, and a
// recording without the endpoint is refused before the run, naming it.
func TestAzureOpenAIPaths(t *testing.T) {
	for _, c := range []struct {
		provider, extra, path string
		start                 func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
	}{
		{"azure-openai", "", "/openai/deployments/test-model/chat/completions?api-version=2024-10-21", fakeapi.NewOpenAIChat},
		{"azure-openai", "  api_version: 2025-04-01-preview\n", "/openai/deployments/test-model/chat/completions?api-version=2025-04-01-preview", fakeapi.NewOpenAIChat},
		{"azure-openai", "  api_version: v1\n", "/openai/v1/chat/completions", fakeapi.NewOpenAIChat},
		{"azure-openai-responses", "", "/openai/responses?api-version=2025-04-01-preview", fakeapi.NewOpenAIResponses},
		{"azure-openai-responses", "  api_version: v1\n", "/openai/v1/responses", fakeapi.NewOpenAIResponses},
	} {
		t.Run(c.provider+" "+c.path, func(t *testing.T) {
			srv := c.start(brain, fakeapi.RequireKey(testAzureKey))
			defer srv.Close()
			dir := t.TempDir()
			// The endpoint in the suite, the key in the environment.
			text := realSuite(c.provider, c.extra+"  base_url: "+srv.URL+"\n")
			suites := writeSuite(t, dir, "support.dryfire.yaml", text)
			rep, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: []string{"AZURE_OPENAI_API_KEY=" + testAzureKey}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Summary.Passed != 3 || srv.Requests() != 6 {
				t.Fatalf("%+v, %d requests\n%s", rep.Summary, srv.Requests(), stableJSON(t, rep))
			}
			tape, err := cassette.Load(filepath.Join(dir, "cassettes", "support", "refund-for-a-gold-customer.json"))
			if err != nil {
				t.Fatal(err)
			}
			for i, it := range tape.Interactions {
				if it.Request.Path != c.path {
					t.Errorf("interaction %d: path %s, want %s", i, it.Request.Path, c.path)
				}
			}
			scanSecrets(t, dir)
			// The replay: no endpoint (not even the suite's), no key, CI.
			srv.Close()
			offline := writeSuite(t, dir, "support.dryfire.yaml", realSuite(c.provider, c.extra))
			again, err := runner.Run(context.Background(), offline, runner.Options{Env: []string{"CI=true"}})
			if err != nil {
				t.Fatal(err)
			}
			if again.Summary.Passed != 3 {
				t.Errorf("replay: %+v\n%s", again.Summary, stableJSON(t, again))
			}
		})
	}

	// A recording needs the endpoint, then the key; each is named before
	// the run starts.
	dir := t.TempDir()
	suites := writeSuite(t, dir, "support.dryfire.yaml", realSuite("azure-openai", ""))
	for env, want := range map[string]string{
		"AZURE_OPENAI_API_KEY=" + testAzureKey:               "AZURE_OPENAI_ENDPOINT is not set, and these 3 cases need the live model:",
		"AZURE_OPENAI_ENDPOINT=https://res.openai.azure.com": "AZURE_OPENAI_API_KEY is not set, and these 3 cases need the live model:",
	} {
		_, err := runner.Run(context.Background(), suites, runner.Options{Record: cassette.Once, Env: []string{env}})
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), testAzureKey) {
			t.Errorf("with %s: %v, want %q", env, err, want)
		}
	}
}

// judgeBrain answers the agent's conversations as brain does, and a
// judge's (whose first message is the rubric and the conversation) with a
// passing verdict.
type judgeBrain struct{}

func (judgeBrain) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	if strings.HasPrefix(c.FirstUser(), "The rubric:") {
		return fakeapi.Turn{Text: `{"pass": true, "score": 0.9, "reasoning": "polite"}`}, nil
	}
	return brain.Next(c)
}

// A judge on the agent's Azure provider takes its deployment, endpoint
// and api_version; its calls are recorded into its own cassette and
// replayed offline.
func TestAzureOpenAIJudge(t *testing.T) {
	srv := fakeapi.NewOpenAIChat(judgeBrain{}, fakeapi.RequireKey(testAzureKey))
	defer srv.Close()
	dir := t.TempDir()
	suites := writeSuite(t, dir, "judged.dryfire.yaml", `version: 1
agent:
  provider: azure-openai
  model: test-model
  api_version: 2025-04-01-preview
cases:
  - name: hi
    input: Say hi.
    expect:
      - judge: {rubric: The agent greets the user.}
`)
	env := []string{"AZURE_OPENAI_API_KEY=" + testAzureKey, "AZURE_OPENAI_ENDPOINT=" + srv.URL}
	for _, o := range []runner.Options{{Record: cassette.Once, Env: env}, {Record: cassette.None, Env: []string{"CI=true"}}} {
		rep, err := runner.Run(context.Background(), suites, o)
		if err != nil {
			t.Fatal(err)
		}
		if c := rep.Cases[0]; c.Status != "passed" || c.Checks[0].Judge == nil || c.Checks[0].Judge.Provider != "azure-openai" {
			t.Fatalf("%s: %s\n%s", o.Record, c.Reason, stableJSON(t, rep))
		}
	}
	tape, err := cassette.Load(filepath.Join(dir, "cassettes", "judged", "hi.judge-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := tape.Interactions[0].Request.Path; p != "/openai/deployments/test-model/chat/completions?api-version=2025-04-01-preview" {
		t.Errorf("the judge called %s", p)
	}
	if srv.Requests() != 2 {
		t.Errorf("%d requests, want the agent's and the judge's", srv.Requests())
	}
}
