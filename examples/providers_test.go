package examples_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/report"
)

var recordExamples = flag.Bool("record-examples", false, "re-record examples/providers/cassettes against the fake servers")

// script is what the fake model says in the provider examples, for each
// conversation (found by its first user message).
var script = fakeapi.Script{
	"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "Order A-991 is a gold order; refunding it.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "The refund service timed out; trying again.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "Your refund R-1 for order A-991 is done."},
	},
	"When are you open?": {
		{Text: "We are open 9 to 5, Monday to Friday."},
	},
}

// TestProviderExamples replays the committed cassettes of
// examples/providers offline, as CI does: no key, no network. With
// -record-examples it first records them again against dryfire's own fake
// servers (internal/test/fakeapi).
func TestProviderExamples(t *testing.T) {
	suites := map[string]func(...fakeapi.Option) *fakeapi.Server{
		"anthropic":         func(o ...fakeapi.Option) *fakeapi.Server { return fakeapi.NewAnthropic(script, o...) },
		"openai":            func(o ...fakeapi.Option) *fakeapi.Server { return fakeapi.NewOpenAIChat(script, o...) },
		"openai-responses":  func(o ...fakeapi.Option) *fakeapi.Server { return fakeapi.NewOpenAIResponses(script, o...) },
		"openai-compatible": func(o ...fakeapi.Option) *fakeapi.Server { return fakeapi.NewOpenAIChat(script, o...) },
	}
	for name, newServer := range suites {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join("providers", name+".dryfire.yaml")
			if *recordExamples {
				var opts []fakeapi.Option
				if name == "openai-compatible" {
					opts = append(opts, fakeapi.ListenOn("127.0.0.1:11434")) // the suite's base_url
				}
				srv := newServer(opts...)
				env := []string{
					"ANTHROPIC_BASE_URL=" + srv.URL,
					"OPENAI_BASE_URL=" + srv.URL + "/v1",
					"ANTHROPIC_API_KEY=fake-key-for-the-example",
					"OPENAI_API_KEY=fake-key-for-the-example",
				}
				rep := run(t, file, dryfire.RecordAll, env)
				srv.Close()
				if rep.Summary.Passed != 2 {
					t.Fatalf("recording: %+v", rep.Summary)
				}
			}
			// Replay as CI does: no key, no base URL, never the network.
			rep := run(t, file, dryfire.RecordNone, []string{"CI=true"})
			if rep.Summary != (report.Summary{Passed: 2, Usage: rep.Summary.Usage}) {
				for _, c := range rep.Cases {
					t.Logf("%s: %s %s", c.Name, c.Status, c.Reason)
				}
				t.Fatalf("replay: %+v", rep.Summary)
			}
			if rep.Summary.Usage.InputTokens == 0 || rep.Summary.Usage.OutputTokens == 0 {
				t.Errorf("replayed usage is empty: %+v", rep.Summary.Usage)
			}
			refund := rep.Cases[0]
			var results []string
			for _, tc := range refund.ToolCalls {
				results = append(results, tc.Tool+" → "+tc.Result)
			}
			want := "lookup_order → {\"order_id\":\"A-991\",\"tier\":\"gold\",\"total\":120.5}\n" +
				"issue_refund → refund service timed out\n" +
				"issue_refund → {\"refund_id\":\"R-1\",\"status\":\"done\"}"
			if got := strings.Join(results, "\n"); got != want {
				t.Errorf("tool calls:\n%s\nwant:\n%s", got, want)
			}
			// The cassettes hold no key.
			err := filepath.WalkDir(filepath.Join("providers", "cassettes", name), func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				for _, bad := range []string{"fake-key-for-the-example", "x-api-key", "authorization", "Authorization"} {
					if strings.Contains(string(data), bad) {
						t.Errorf("%s contains %q", p, bad)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}

func run(t *testing.T, file string, mode dryfire.RecordMode, env []string) *report.Report {
	t.Helper()
	p, err := dryfire.Load(nil, file)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background(), nil)
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Record: mode, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
