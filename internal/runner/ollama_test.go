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

// Ollama's own API in the built-in loop: recorded against the fake at
// agent.base_url (a host without a scheme, as OLLAMA_HOST may be), JSON
// and streamed, then replayed offline with no server at all.
func TestOllamaLoop(t *testing.T) {
	for _, params := range []string{"{}", "{stream: true}"} {
		t.Run(params, func(t *testing.T) {
			srv := fakeapi.NewOllama(brain)
			defer srv.Close()
			dir := t.TempDir()
			text := realSuite("ollama", "  base_url: "+srv.Listener.Addr().String()+"\n")
			text = replaceOnce(text, "params: {temperature: 0}", "params: "+params)
			rep, err := runner.Run(context.Background(), writeSuite(t, dir, "support.dryfire.yaml", text), runner.Options{Record: cassette.Once, Env: []string{}})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Summary.Passed != 3 || srv.Requests() != 6 || rep.Summary.Usage.InputTokens == 0 {
				t.Fatalf("%+v, %d requests\n%s", rep.Summary, srv.Requests(), stableJSON(t, rep))
			}
			tape, err := cassette.Load(filepath.Join(dir, "cassettes", "support", "refund-for-a-gold-customer.json"))
			if err != nil {
				t.Fatal(err)
			}
			if p := tape.Interactions[0].Request.Path; p != "/api/chat" {
				t.Errorf("path %s", p)
			}
			srv.Close()
			offline := replaceOnce(realSuite("ollama", ""), "params: {temperature: 0}", "params: "+params)
			again, err := runner.Run(context.Background(), writeSuite(t, dir, "support.dryfire.yaml", offline), runner.Options{Env: []string{"CI=true"}})
			if err != nil {
				t.Fatal(err)
			}
			if again.Summary.Passed != 3 || again.Summary.Usage != rep.Summary.Usage {
				t.Errorf("replay: %+v (recorded %+v)\n%s", again.Summary, rep.Summary, stableJSON(t, again))
			}
		})
	}
}

func replaceOnce(s, old, new string) string { return strings.Replace(s, old, new, 1) }
