package wire_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/agent"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The refund conversation through the Responses API.
func TestResponsesConversation(t *testing.T) {
	srv := fakeapi.NewOpenAIResponses(oaiBrain, fakeapi.RequireKey("sk-test"))
	defer srv.Close()
	m, c, _ := oaiModel(t, provider.OpenAIResponses, srv.URL+"/v1", "sk-test")
	sess := oaiSession(t)

	tr, err := agent.Run(context.Background(), m, sess, oaiConfig)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Output != "Your refund is on its way." || tr.Turns != 3 {
		t.Errorf("output %q after %d turns", tr.Output, tr.Turns)
	}
	if diff := cmp.Diff(oaiWantCalls, summarize(sess.Records())); diff != "" {
		t.Errorf("tool calls (-want +got):\n%s", diff)
	}
	exs := c.exchanges()
	if len(exs) != 3 {
		t.Fatalf("%d exchanges, want 3", len(exs))
	}
	if want := usageOf(t, exs, "input_tokens", "output_tokens"); tr.Usage != want || want.InputTokens == 0 {
		t.Errorf("usage %+v, want %+v", tr.Usage, want)
	}
	// Each assistant message keeps the output items as received.
	for i, n := 0, 0; i < len(tr.Messages); i++ {
		msg := tr.Messages[i]
		if msg.Role != model.Assistant {
			continue
		}
		var resp struct{ Output json.RawMessage }
		json.Unmarshal(exs[n].Response, &resp)
		if !bytes.Equal(msg.Raw, resp.Output) {
			t.Errorf("turn %d Raw\n%s\nwant the output as received\n%s", n+1, msg.Raw, resp.Output)
		}
		n++
	}
	// The wire shape, pinned: instructions, typed input items, earlier
	// output items as received (the reasoning item, which store: false
	// could not resolve, left out), the tool error prefixed, flat
	// non-strict tools, store false, params last.
	oaiGolden(t, "openai_responses_requests.golden", requestsGolden(t, exs))
}

// A reasoning item comes back verbatim in the next input when the API can
// use it: carried by value (encrypted_content) or stored. Without either,
// it is left out, as the API asks; the fake answers 404 otherwise.
func TestResponsesReasoningRoundTrip(t *testing.T) {
	tests := []struct {
		name      string
		params    map[string]any
		reasoning bool // the reasoning item is in the second input
	}{
		{"by value", map[string]any{"include": []any{"reasoning.encrypted_content"}}, true},
		{"stored", map[string]any{"store": true}, true},
		{"neither", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := fakeapi.NewOpenAIResponses(oaiBrain)
			defer srv.Close()
			m, c, _ := oaiModel(t, provider.OpenAIResponses, srv.URL+"/v1", "")
			cfg := oaiConfig
			cfg.Params = tt.params
			if _, err := agent.Run(context.Background(), m, oaiSession(t), cfg); err != nil {
				t.Fatal(err)
			}
			exs := c.exchanges()
			var first struct{ Output []json.RawMessage }
			if err := json.Unmarshal(exs[0].Response, &first); err != nil || len(first.Output) != 3 || !strings.Contains(string(first.Output[0]), `"type":"reasoning"`) {
				t.Fatalf("first answer's output: %s (%v)", exs[0].Response, err)
			}
			var second struct{ Input []json.RawMessage }
			if err := json.Unmarshal(exs[1].Body, &second); err != nil {
				t.Fatal(err)
			}
			want := first.Output
			if !tt.reasoning {
				want = want[1:]
			}
			// The input: the user message, the earlier output items, the
			// two tool results.
			got := second.Input[1 : len(second.Input)-2]
			if len(got) != len(want) {
				t.Fatalf("%d earlier items in the input, want %d:\n%s", len(got), len(want), exs[1].Body)
			}
			for i := range want {
				if !bytes.Equal(got[i], want[i]) {
					t.Errorf("item %d\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
}

// A turn without Raw (from elsewhere) is rebuilt as a message and
// function_call items.
func TestResponsesWithoutRaw(t *testing.T) {
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		io.WriteString(w, `{"status":"completed","output":[]}`)
	}))
	defer srv.Close()
	m, _, _ := oaiModel(t, provider.OpenAIResponses, srv.URL, "")
	_, err := m.Generate(context.Background(), &model.Request{Model: "m", Messages: []model.Message{
		{Role: model.User, Text: "hi"},
		{Role: model.Assistant, Text: "Checking.", ToolCalls: []tool.Call{{ID: "c1", Name: "a", Args: ""}}},
		{Role: model.ToolRole, CallID: "c1", Text: "Error: already failed", IsError: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]},` +
		`{"type":"message","role":"assistant","content":"Checking."},{"type":"function_call","call_id":"c1","name":"a","arguments":"{}"},` +
		`{"type":"function_call_output","call_id":"c1","output":"Error: already failed"}],"store":false}`
	if string(body) != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
}

// Statuses other than completed are errors that say why; compatible
// servers may leave out status and call ids.
func TestResponsesParsing(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *model.Response
		err  string
	}{
		{"incomplete", `{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`, nil,
			"openai-responses: the response is incomplete (incomplete_details.reason: max_output_tokens); raise max_output_tokens in agent.params"},
		{"content filter", `{"status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}`, nil,
			"openai-responses: the response is incomplete (incomplete_details.reason: content_filter)"},
		{"failed", `{"status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}`, nil,
			"openai-responses: the response failed: server_error: The model failed."},
		{"background", `{"status":"queued","output":[]}`, nil,
			"openai-responses: the response is queued, not completed; dryfire's loop needs the whole answer (remove background from agent.params)"},
		{"no status, no call_id, no usage", `{"output":[{"type":"message","content":[{"type":"output_text","text":"a"},{"type":"refusal","refusal":"b"}]},
			{"type":"function_call","name":"f","arguments":""}]}`,
			&model.Response{Text: "ab", ToolCalls: []tool.Call{{ID: "call_1_1", Name: "f", Args: "{}"}}, Notes: []string{"openai-responses refused to answer (refusal): b"}}, ""},
		{"two messages", `{"status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"a"}]},{"type":"message","content":[{"type":"output_text","text":"b"}]}],"usage":{"input_tokens":5,"output_tokens":2}}`,
			&model.Response{Text: "a\nb", Usage: model.Usage{InputTokens: 5, OutputTokens: 2},
				Raw: json.RawMessage(`[{"type":"message","content":[{"type":"output_text","text":"a"}]},{"type":"message","content":[{"type":"output_text","text":"b"}]}]`)}, ""},
		{"chat completion instead", `{"id":"chatcmpl-1","object":"chat.completion","choices":[]}`, nil,
			`openai-responses: the answer is not a response object (it has no output; does the server speak the Responses API?): {"id":"chatcmpl-1","object":"chat.completion","choices":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) }))
			defer srv.Close()
			m, _, _ := oaiModel(t, provider.OpenAIResponses, srv.URL+"/", "")
			got, err := m.Generate(context.Background(), &model.Request{Model: "m", Messages: []model.Message{{Role: model.User, Text: "hi"}}})
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v\nwant %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Running the same case twice sends and receives the same bytes: what
// re-recording a cassette relies on.
func TestOpenAIRunsAreByteIdentical(t *testing.T) {
	for _, tt := range []struct {
		provider string
		start    func(fakeapi.Brain, ...fakeapi.Option) *fakeapi.Server
	}{
		{provider.OpenAI, fakeapi.NewOpenAIChat},
		{provider.OpenAIResponses, fakeapi.NewOpenAIResponses},
	} {
		t.Run(tt.provider, func(t *testing.T) {
			var runs [2][]exchange
			for i := range runs {
				srv := tt.start(oaiBrain)
				m, c, _ := oaiModel(t, tt.provider, srv.URL+"/v1", "")
				if _, err := agent.Run(context.Background(), m, oaiSession(t), oaiConfig); err != nil {
					t.Fatal(err)
				}
				srv.Close()
				runs[i] = c.exchanges()
				for j := range runs[i] {
					runs[i][j].URL, runs[i][j].Header = "", nil // the port differs
				}
			}
			if diff := cmp.Diff(runs[0], runs[1]); diff != "" {
				t.Errorf("second run (-first +second):\n%s", diff)
			}
		})
	}
}
