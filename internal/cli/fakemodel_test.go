package cli_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// fakemodel PROVIDER ANSWERS starts a local imitation of the provider's
// API (anthropic or openai) for the rest of the script and points
// PROVIDER's base URL variable at it, with a key set. ANSWERS holds lines
// `SUBSTRING => TEXT`: a request is answered with the TEXT of the first
// line whose SUBSTRING occurs in its last user message (\n in TEXT is a
// new line). Stop it with `fakemodel stop`, to replay offline.
func cmdFakeModel(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: fakemodel PROVIDER ANSWERS | fakemodel stop")
	}
	if args[0] == "stop" {
		fakeModels.Lock()
		srv := fakeModels.m[ts]
		fakeModels.Unlock()
		if srv == nil {
			ts.Fatalf("fakemodel stop: no fake model started")
		}
		srv.Close()
		return
	}
	if len(args) != 2 {
		ts.Fatalf("usage: fakemodel PROVIDER ANSWERS")
	}
	data, err := os.ReadFile(ts.MkAbs(args[1]))
	ts.Check(err)
	var b answers
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sub, text, ok := strings.Cut(line, " => ")
		if !ok {
			ts.Fatalf("%s: %q is not SUBSTRING => TEXT", args[1], line)
		}
		b = append(b, [2]string{sub, strings.ReplaceAll(text, `\n`, "\n")})
	}
	var srv *fakeapi.Server
	switch args[0] {
	case "anthropic":
		srv = fakeapi.NewAnthropic(b)
		ts.Setenv("ANTHROPIC_BASE_URL", srv.URL)
		ts.Setenv("ANTHROPIC_API_KEY", "sk-ant-docs-0123456789")
	case "openai":
		srv = fakeapi.NewOpenAIChat(b)
		ts.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
		ts.Setenv("OPENAI_API_KEY", "sk-docs-0123456789")
	default:
		ts.Fatalf("fakemodel: unknown provider %q", args[0])
	}
	ts.Defer(srv.Close)
	ts.Setenv("FAKEMODEL_URL", srv.URL)
	fakeModels.Lock()
	fakeModels.m[ts] = srv
	fakeModels.Unlock()
}

// fakeModels are the scripts' running fake models.
var fakeModels = struct {
	sync.Mutex
	m map[*testscript.TestScript]*fakeapi.Server
}{m: map[*testscript.TestScript]*fakeapi.Server{}}

// answers is a Brain answering by the last user message.
type answers [][2]string

func (a answers) Next(c fakeapi.Conversation) (fakeapi.Turn, error) {
	last := ""
	for _, m := range c.Messages {
		if m.Role == "user" {
			last = m.Text
		}
	}
	for _, x := range a {
		if strings.Contains(last, x[0]) {
			return fakeapi.Turn{Text: x[1]}, nil
		}
	}
	return fakeapi.Turn{}, fmt.Errorf("no answer for %q", last)
}

// providersScript is what the fake model says in examples/providers (as
// examples/providers_test.go records them), and in a streamed copy.
var providersScript = fakeapi.Script{
	"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{Text: "Order A-991 is a gold order; refunding it.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "The refund service timed out; trying again.", ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120.5}`}}},
		{Text: "Your refund R-1 for order A-991 is done."},
	},
	"When are you open?": {{Text: "We are open 9 to 5, Monday to Friday."}},
}

// fakeproviders MODE starts fake Anthropic, Chat Completions and
// Responses APIs answering as examples/providers recorded them, and
// points the base URL variables at them (with keys): MODE same, or
// drifted: renamed (Anthropic's stop_reason is stop_cause), no-stop (an
// Anthropic stream's message_stop event dropped).
func cmdFakeProviders(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakeproviders same|renamed|no-stop")
	}
	var anth []fakeapi.Option
	switch args[0] {
	case "same":
	case "renamed":
		anth = append(anth, fakeapi.Rewrite(func(b []byte) []byte { return bytes.ReplaceAll(b, []byte(`"stop_reason"`), []byte(`"stop_cause"`)) }))
	case "no-stop":
		drop := regexp.MustCompile(`event: message_stop\ndata: [^\n]*\n\n`)
		anth = append(anth, fakeapi.Rewrite(func(b []byte) []byte { return drop.ReplaceAll(b, nil) }))
	default:
		ts.Fatalf("fakeproviders: unknown mode %q", args[0])
	}
	a := fakeapi.NewAnthropic(providersScript, anth...)
	chat := fakeapi.NewOpenAIChat(providersScript)
	resp := fakeapi.NewOpenAIResponses(providersScript)
	for _, s := range []*fakeapi.Server{a, chat, resp} {
		ts.Defer(s.Close)
	}
	// One OpenAI base URL for both of its APIs.
	cu, _ := url.Parse(chat.URL)
	ru, _ := url.Parse(resp.URL)
	toChat, toResp := httputil.NewSingleHostReverseProxy(cu), httputil.NewSingleHostReverseProxy(ru)
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/responses") {
			toResp.ServeHTTP(w, r)
		} else {
			toChat.ServeHTTP(w, r)
		}
	}))
	ts.Defer(openai.Close)
	ts.Setenv("ANTHROPIC_BASE_URL", a.URL)
	ts.Setenv("OPENAI_BASE_URL", openai.URL+"/v1")
	ts.Setenv("ANTHROPIC_API_KEY", "sk-ant-verify-0123456789")
	ts.Setenv("OPENAI_API_KEY", "sk-verify-0123456789")
}
