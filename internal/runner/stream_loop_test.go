package runner_test

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// TestStreamedLoopEveryProvider: agent.params.stream: true in the built-in
// loop streams each call (the fake APIs answer in their exact stream
// shapes), records the streams as events, and gives the same report as
// the unstreamed run; the replay, with the server gone, gives it again,
// and re-recording gives byte-identical cassettes.
var requestDerived = regexp.MustCompile(`("id": "call_|"input_tokens": )[0-9a-f]+`)

func TestStreamedLoopEveryProvider(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			run := func(dir, params string, mode cassette.Mode, base string) string {
				t.Helper()
				text := strings.Replace(realSuite(p.name, ""), "params: {temperature: 0}", "params: "+params, 1)
				suites := writeSuite(t, dir, "support.dryfire.yaml", text)
				env := []string{baseEnv(p.name) + "=" + base}
				if mode != cassette.None {
					env = append(env, keyEnv(p.name)+"="+p.key)
				}
				rep, err := runner.Run(context.Background(), suites, runner.Options{Record: mode, Env: env})
				if err != nil {
					t.Fatal(err)
				}
				if rep.Summary.Passed != 3 {
					t.Fatalf("%s %s: %+v\n%s", params, mode, rep.Summary, stableJSON(t, rep))
				}
				return strings.ReplaceAll(stableJSON(t, withoutRecordedNotes(rep)), dir, "DIR")
			}
			srv := p.start(brain, fakeapi.RequireKey(p.key))
			defer srv.Close()
			plainDir, streamDir := t.TempDir(), t.TempDir()
			plain := run(plainDir, "{temperature: 0}", cassette.Once, p.base(srv))
			stream := run(streamDir, "{temperature: 0, stream: true}", cassette.Once, p.base(srv))
			// The fake API derives call ids and input token counts from the
			// request's bytes, which differ by "stream": true; all else of
			// the transcript is the same.
			if diff := cmp.Diff(requestDerived.ReplaceAllString(plain, "$1…"), requestDerived.ReplaceAllString(stream, "$1…")); diff != "" {
				t.Errorf("the streamed run's report differs from the unstreamed one (-plain +streamed):\n%s", diff)
			}
			if !strings.Contains(stream, `"output_tokens": 50`) || strings.Contains(stream, `"input_tokens": 0`) {
				t.Errorf("the streamed run's usage is not counted:\n%s", stream)
			}
			c, err := cassette.Load(filepath.Join(streamDir, "cassettes", "support", "refund-for-a-gold-customer.json"))
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Interactions) != 3 {
				t.Fatalf("%d interactions, want 3", len(c.Interactions))
			}
			for i, it := range c.Interactions {
				// Gemini streams at another path, not by a body field.
				asked := strings.Contains(string(it.Request.Body), `"stream": true`)
				if p.name == provider.Gemini {
					asked = strings.Contains(it.Request.Path, ":streamGenerateContent?alt=sse")
				}
				if !it.Response.Streamed() || !asked {
					t.Errorf("interaction %d: streamed answer %v, request %s", i, it.Response.Streamed(), it.Request.Body)
				}
			}
			before := readAll(t, streamDir)
			srv.Close()
			if replay := run(streamDir, "{temperature: 0, stream: true}", cassette.None, p.base(srv)); replay != stream {
				t.Errorf("the replay differs from the recording run:\n%s", cmp.Diff(stream, replay))
			}
			srv2 := p.start(brain)
			defer srv2.Close()
			run(streamDir, "{temperature: 0, stream: true}", cassette.All, p.base(srv2))
			if diff := cmp.Diff(before, readAll(t, streamDir)); diff != "" {
				t.Errorf("re-recording the streams changed the cassettes:\n%s", diff)
			}
		})
	}
}
