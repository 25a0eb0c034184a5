package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// Vertex AI in the built-in loop, its Gemini and its Anthropic models:
// recorded against the fake at agent.base_url with the access token of
// GOOGLE_OAUTH_ACCESS_TOKEN (never written) under one project, JSON and
// streamed, then replayed offline under another project and no token: a
// cassette keeps no project or location.
func TestVertexLoop(t *testing.T) {
	for _, c := range []struct{ provider, params, method string }{
		{"vertex-gemini", "{}", "generateContent"},
		{"vertex-gemini", "{stream: true}", "streamGenerateContent?alt=sse"},
		{"vertex-anthropic", "{max_tokens: 512}", "rawPredict"},
		{"vertex-anthropic", "{stream: true}", "streamRawPredict"},
	} {
		t.Run(c.provider+" "+c.params, func(t *testing.T) {
			srv := fakeapi.NewVertex(brain, fakeapi.RequireKey("ya29.token-of-the-test"))
			defer srv.Close()
			dir := t.TempDir()
			text := strings.Replace(realSuite(c.provider, "  base_url: "+srv.URL+"\n"), "params: {temperature: 0}", "params: "+c.params, 1)
			env := []string{"GOOGLE_OAUTH_ACCESS_TOKEN=ya29.token-of-the-test", "GOOGLE_CLOUD_PROJECT=acme-prod", "GOOGLE_CLOUD_LOCATION=europe-west4"}
			rep, err := runner.Run(context.Background(), writeSuite(t, dir, "support.dryfire.yaml", text), runner.Options{Record: cassette.Once, Env: env})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Summary.Passed != 3 || srv.Requests() != 6 || rep.Summary.Usage.InputTokens == 0 {
				t.Fatalf("%+v, %d requests\n%s", rep.Summary, srv.Requests(), stableJSON(t, rep))
			}
			file := filepath.Join(dir, "cassettes", "support", "refund-for-a-gold-customer.json")
			tape, err := cassette.Load(file)
			if err != nil {
				t.Fatal(err)
			}
			publisher := map[bool]string{true: "google", false: "anthropic"}[c.provider == "vertex-gemini"]
			if p := tape.Interactions[0].Request.Path; p != "/v1/projects/-/locations/-/publishers/"+publisher+"/models/test-model:"+c.method {
				t.Errorf("path %s", p)
			}
			data, _ := os.ReadFile(file)
			for _, bad := range []string{"ya29", "acme-prod", "europe-west4"} {
				if strings.Contains(string(data), bad) {
					t.Errorf("the cassette holds %q", bad)
				}
			}
			srv.Close()
			offline := strings.Replace(realSuite(c.provider, ""), "params: {temperature: 0}", "params: "+c.params, 1)
			again, err := runner.Run(context.Background(), writeSuite(t, dir, "support.dryfire.yaml", offline), runner.Options{Env: []string{"CI=true", "GOOGLE_CLOUD_PROJECT=another"}})
			if err != nil {
				t.Fatal(err)
			}
			if again.Summary.Passed != 3 || again.Summary.Usage != rep.Summary.Usage {
				t.Errorf("replay: %+v (recorded %+v)\n%s", again.Summary, rep.Summary, stableJSON(t, again))
			}
		})
	}
}
