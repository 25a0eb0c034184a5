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

// Bedrock's Converse in the built-in loop: recorded against the fake at
// agent.base_url, signed with the environment's AWS credentials (the
// signature, the session token and the secret never written), JSON and
// streamed (the AWS event stream), then replayed offline with no
// credentials at all.
func TestBedrockLoop(t *testing.T) {
	for _, params := range []string{"{inferenceConfig: {maxTokens: 512}}", "{stream: true}"} {
		t.Run(params, func(t *testing.T) {
			srv := fakeapi.NewBedrock(brain, fakeapi.RequireKey("AKIDDRYFIRE"))
			defer srv.Close()
			dir := t.TempDir()
			text := strings.Replace(realSuite("bedrock", "  base_url: "+srv.URL+"\n"), "params: {temperature: 0}", "params: "+params, 1)
			env := []string{"AWS_ACCESS_KEY_ID=AKIDDRYFIRE", "AWS_SECRET_ACCESS_KEY=secret-of-the-test-1234", "AWS_SESSION_TOKEN=token-of-the-test-5678", "AWS_REGION=eu-west-1"}
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
			method := "converse"
			if strings.Contains(params, "stream") {
				method = "converse-stream"
			}
			if p := tape.Interactions[0].Request.Path; p != "/model/test-model/"+method {
				t.Errorf("path %s", p)
			}
			data, _ := os.ReadFile(file)
			for _, bad := range []string{"AWS4-HMAC", "AKIDDRYFIRE", "secret-of-the-test", "token-of-the-test", "x-amz"} {
				if strings.Contains(strings.ToLower(string(data)), strings.ToLower(bad)) {
					t.Errorf("the cassette holds %q", bad)
				}
			}
			srv.Close()
			offline := strings.Replace(realSuite("bedrock", ""), "params: {temperature: 0}", "params: "+params, 1)
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
