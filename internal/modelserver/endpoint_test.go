package modelserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// record plays the conversation of f through an endpoint in mode, against
// the fake at upstream, and finishes the case.
func record(t *testing.T, o Options, f flavour) []reply {
	t.Helper()
	e := mustNew(t, o)
	root := serve(t, e, "/cases/1")
	var got []reply
	for _, body := range conversation(f.api, f.stream) {
		got = append(got, post(t, http.DefaultClient, root, f.api, body))
	}
	if p, fl := e.Problem(), e.Failure(); p != nil || fl != nil {
		t.Fatalf("recording: problem %v, failure %v", p, fl)
	}
	if _, err := e.Finish(); err != nil {
		t.Fatal(err)
	}
	return got
}

// Recorded against the fakes, then replayed with the fake stopped: the
// same bytes, and not one connection to where the upstream was.
func TestRecordThenReplay(t *testing.T) {
	for _, f := range flavours {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			fake := newFake(f.api)
			// What the fake answers when asked directly.
			var direct []reply
			for _, body := range conversation(f.api, f.stream) {
				direct = append(direct, post(t, fake.Client(), fake.URL, f.api, body))
			}
			o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
			recorded := record(t, o, f)
			fake.Close()
			for i := range direct {
				if recorded[i].status != 200 || !bytes.Equal(recorded[i].body, direct[i].body) {
					t.Fatalf("turn %d through the recording endpoint: %d\n%s\nthe fake directly:\n%s", i+1, recorded[i].status, recorded[i].body, direct[i].body)
				}
			}
			data, err := os.ReadFile(o.File)
			if err != nil {
				t.Fatal(err)
			}
			if f.stream != strings.Contains(string(data), `"events": [`) {
				t.Errorf("the cassette's answers are not what they should be (stream %v):\n%s", f.stream, data)
			}
			for _, secret := range []string{DummyKey, "u-42"} {
				if strings.Contains(string(data), secret) {
					t.Errorf("the cassette holds %q", secret)
				}
			}

			// Replay: upstream stopped, mode none.
			dead, accepted := deadUpstream(t)
			tr := newDialCounter()
			ro := upstreamOptions(caseOptions(dir, cassette.None), dead)
			ro.Transport = tr
			e := mustNew(t, ro)
			root := serve(t, e, "/cases/1")
			for i, body := range conversation(f.api, f.stream) {
				got := post(t, http.DefaultClient, root, f.api, body)
				if got.status != 200 || !bytes.Equal(got.body, direct[i].body) {
					t.Fatalf("turn %d replayed: %d\n%s\nrecorded:\n%s", i+1, got.status, got.body, direct[i].body)
				}
				if ct, want := got.header.Get("Content-Type"), direct[i].header.Get("Content-Type"); ct != want {
					t.Errorf("turn %d: Content-Type %q, want %q", i+1, ct, want)
				}
			}
			if n, d := accepted.Load(), tr.dials.Load(); n != 0 || d != 0 {
				t.Errorf("replay opened %d connections (%d dials)", n, d)
			}
			if u := e.Unplayed(); u != nil {
				t.Errorf("unplayed: %v", u)
			}
			if p, _, l := e.Stats(); p != 3 || l != 0 {
				t.Errorf("Stats: %d played, %d live", p, l)
			}
			if e.Turns() != 3 {
				t.Errorf("Turns = %d", e.Turns())
			}
			u := e.Usage()
			if u.InputTokens == 0 || u.OutputTokens == 0 {
				t.Errorf("usage %+v", u)
			}
			want := usageOfReplies(f.api, direct)
			if u != want {
				t.Errorf("usage %+v, the answers say %+v", u, want)
			}
			for _, c := range e.Calls() {
				if !c.Replayed || c.Streamed != f.stream || c.API != string(f.api) || c.Status != 200 || c.Err != nil {
					t.Errorf("call %+v", c)
				}
			}
			if wrote, err := e.Finish(); wrote || err != nil {
				t.Errorf("Finish after a replay = %v, %v", wrote, err)
			}
			// In one piece: the same bytes.
			ro.CoalesceStreams = true
			root = serve(t, mustNew(t, ro), "/cases/1")
			for i, body := range conversation(f.api, f.stream) {
				got := post(t, http.DefaultClient, root, f.api, body)
				if got.status != 200 || !bytes.Equal(got.body, direct[i].body) || got.header.Get("Content-Length") == "" {
					t.Fatalf("turn %d replayed in one piece: %d %v\n%s", i+1, got.status, got.header, got.body)
				}
			}

			// Re-recording the same traffic gives the same file, left alone.
			fake2 := newFake(f.api)
			defer fake2.Close()
			before, _ := os.Stat(o.File)
			ao := upstreamOptions(caseOptions(dir, cassette.All), fake2.URL)
			e2 := mustNew(t, ao)
			root2 := serve(t, e2, "/x")
			for _, body := range conversation(f.api, f.stream) {
				post(t, http.DefaultClient, root2, f.api, body)
			}
			wrote, err := e2.Finish()
			if err != nil || wrote {
				t.Errorf("re-recording: Finish = %v, %v; want an unchanged file", wrote, err)
			}
			again, _ := os.ReadFile(o.File)
			after, _ := os.Stat(o.File)
			if !bytes.Equal(again, data) || !after.ModTime().Equal(before.ModTime()) {
				t.Errorf("re-recorded cassette differs")
			}
		})
	}
}

// usageOfReplies totals what the answers say, read independently.
func usageOfReplies(api wire.API, rs []reply) (u model.Usage) {
	for _, r := range rs {
		var evs []string
		if bytes.HasPrefix(r.body, []byte("{")) {
			evs = []string{string(r.body)}
		} else {
			for _, block := range strings.Split(string(r.body), "\n\n") {
				for _, line := range strings.Split(block, "\n") {
					if d, ok := strings.CutPrefix(line, "data: "); ok && d != "[DONE]" {
						evs = append(evs, d)
					}
				}
			}
		}
		for _, ev := range evs {
			var v map[string]any
			json.Unmarshal([]byte(ev), &v)
			obj := func(m map[string]any, k string) map[string]any { x, _ := m[k].(map[string]any); return x }
			num := func(m map[string]any, k string) int { f, _ := m[k].(float64); return int(f) }
			switch {
			case api == wire.OpenAIChat && obj(v, "usage") != nil:
				u.InputTokens += num(obj(v, "usage"), "prompt_tokens")
				u.OutputTokens += num(obj(v, "usage"), "completion_tokens")
			case api == wire.OpenAIResponses && (v["object"] == "response" || v["type"] == "response.completed"):
				us := obj(v, "usage")
				if us == nil {
					us = obj(obj(v, "response"), "usage")
				}
				u.InputTokens += num(us, "input_tokens")
				u.OutputTokens += num(us, "output_tokens")
			case api == wire.Anthropic && (v["type"] == "message" || v["type"] == "message_start"):
				us := obj(v, "usage")
				if us == nil {
					us = obj(obj(v, "message"), "usage")
				}
				u.InputTokens += num(us, "input_tokens") + num(us, "cache_creation_input_tokens") + num(us, "cache_read_input_tokens")
				if v["type"] == "message" {
					u.OutputTokens += num(us, "output_tokens")
				}
			case api == wire.Anthropic && v["type"] == "message_delta":
				u.OutputTokens += num(obj(v, "usage"), "output_tokens")
			}
		}
	}
	return u
}

// errorBody is an error answer in either shape.
type errorBody struct {
	Type  string `json:"type"`
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

func checkErrorShape(t *testing.T, api wire.API, r reply, status int) errorBody {
	t.Helper()
	if r.status != status {
		t.Errorf("status %d, want %d: %s", r.status, status, r.body)
	}
	if r.header.Get("Content-Type") != "application/json" || (status/100 == 4 && r.header.Get("X-Should-Retry") != "false") {
		t.Errorf("headers %v", r.header)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &keys); err != nil {
		t.Fatalf("not JSON: %s", r.body)
	}
	var inner map[string]json.RawMessage
	json.Unmarshal(keys["error"], &inner)
	var b errorBody
	json.Unmarshal(r.body, &b)
	if api == wire.Anthropic {
		if len(keys) != 2 || b.Type != "error" || len(inner) != 2 || b.Error.Type == "" || b.Error.Message == "" {
			t.Errorf("not the wire.Anthropic error shape: %s", r.body)
		}
	} else {
		_, hasParam := inner["param"]
		_, hasCode := inner["code"]
		if len(keys) != 1 || len(inner) != 4 || !hasParam || !hasCode || b.Error.Type == "" || b.Error.Message == "" {
			t.Errorf("not the OpenAI error shape: %s", r.body)
		}
	}
	return b
}

// A request that differs from the recording, or goes beyond it, is
// refused in the API's own shape, naming the cassette, the first
// difference and the command that records the case again.
func TestReplayProblems(t *testing.T) {
	for _, f := range flavours {
		t.Run(f.String(), func(t *testing.T) {
			dir := t.TempDir()
			fake := newFake(f.api)
			o := upstreamOptions(caseOptions(dir, cassette.Once), fake.URL)
			record(t, o, f)
			fake.Close()
			conv := conversation(f.api, f.stream)

			t.Run("mismatch", func(t *testing.T) {
				e := mustNew(t, caseOptions(dir, cassette.None))
				root := serve(t, e, "/c")
				post(t, http.DefaultClient, root, f.api, conv[0])
				changed := strings.Replace(conv[1], `{\"tier\":\"gold\"}`, `{\"tier\":\"silver\"}`, 1)
				r := post(t, http.DefaultClient, root, f.api, changed)
				b := checkErrorShape(t, f.api, r, 400)
				msg := b.Error.Message
				for _, want := range []string{
					"model request 2 differs from the recording in " + o.File,
					`recorded "{\"tier\":\"gold\"}", now "{\"tier\":\"silver\"}"`,
					"dryfire run " + o.SuiteFile + " --filter '^refund$' --record all",
				} {
					if !strings.Contains(msg, want) {
						t.Errorf("message lacks %q:\n%s", want, msg)
					}
				}
				if f.api != wire.Anthropic {
					want := map[wire.API]string{wire.OpenAIChat: "messages[3].content", wire.OpenAIResponses: "input[2].output"}[f.api]
					if b.Error.Code == nil || *b.Error.Code != cassette.CodeMismatch || b.Error.Param == nil || *b.Error.Param != want {
						t.Errorf("code %v, param %v; want %s", str(b.Error.Code), str(b.Error.Param), want)
					}
				}
				// The case has strayed: later requests get the same answer.
				if again := post(t, http.DefaultClient, root, f.api, conv[2]); !bytes.Equal(again.body, r.body) {
					t.Errorf("after the mismatch: %s", again.body)
				}
				if p := e.Problem(); p == nil || p.Kind != cassette.Mismatch {
					t.Errorf("Problem = %v", p)
				}
				if c := e.Calls(); len(c) != 3 || c[1].Err == nil || c[1].Status != 400 || e.Turns() != 1 {
					t.Errorf("calls %+v", c)
				}
			})
			t.Run("beyond", func(t *testing.T) {
				e := mustNew(t, caseOptions(dir, cassette.None))
				root := serve(t, e, "/c")
				for _, body := range conv {
					post(t, http.DefaultClient, root, f.api, body)
				}
				r := post(t, http.DefaultClient, root, f.api, conv[2])
				b := checkErrorShape(t, f.api, r, 400)
				if !strings.Contains(b.Error.Message, "model request 4 goes beyond the recording in "+o.File+", which holds 3 interactions") {
					t.Errorf("message: %s", b.Error.Message)
				}
				if f.api != wire.Anthropic && (b.Error.Code == nil || *b.Error.Code != cassette.CodeBeyond) {
					t.Errorf("code %v", b.Error.Code)
				}
			})
			t.Run("unplayed", func(t *testing.T) {
				e := mustNew(t, caseOptions(dir, cassette.None))
				root := serve(t, e, "/c")
				post(t, http.DefaultClient, root, f.api, conv[0])
				u := e.Unplayed()
				if u == nil || !strings.Contains(u.Error(), "2 of 3 interactions recorded in "+o.File+" were not played") {
					t.Errorf("Unplayed = %v", u)
				}
			})
			t.Run("reset", func(t *testing.T) {
				e := mustNew(t, caseOptions(dir, cassette.None))
				root := serve(t, e, "/c")
				for range 2 {
					for _, body := range conv {
						if r := post(t, http.DefaultClient, root, f.api, body); r.status != 200 {
							t.Fatalf("%d %s", r.status, r.body)
						}
					}
					if e.Turns() != 3 {
						t.Errorf("Turns %d", e.Turns())
					}
					e.Reset()
				}
			})
		})
	}
}

func TestMissingCassette(t *testing.T) {
	dir := t.TempDir()
	o := caseOptions(dir, cassette.None)
	_, err := New(o)
	var me *cassette.MissingError
	if !errors.As(err, &me) {
		t.Fatalf("New = %v, want a MissingError", err)
	}
	root := serve(t, Refuse(err), "/c")
	for _, api := range []wire.API{wire.OpenAIChat, wire.OpenAIResponses, wire.Anthropic} {
		r := post(t, http.DefaultClient, root, api, `{}`)
		b := checkErrorShape(t, api, r, 400)
		if !strings.Contains(b.Error.Message, "no cassette for this case: "+o.File) {
			t.Errorf("%s: %s", api, b.Error.Message)
		}
	}
	// CI set and no mode: none.
	o.Mode = ""
	o.Env = []string{"CI=true"}
	if _, err := New(o); !errors.As(err, &me) {
		t.Errorf("New with CI set = %v, want a MissingError", err)
	}
}

func TestRoutes(t *testing.T) {
	fake := newFake(wire.OpenAIChat)
	defer fake.Close()
	e := mustNew(t, upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL))
	root := serve(t, e, "/c")
	for _, tc := range []struct {
		method, path string
		header       string
		status       int
		api          wire.API
	}{
		{"GET", "/v1/chat/completions", "", 405, wire.OpenAIChat},
		{"POST", "/v1/embeddings", "", 404, wire.OpenAIChat},
		{"POST", "/v1/messages/batches", "", 404, wire.Anthropic},
		{"POST", "/v2/x", "2023-06-01", 404, wire.Anthropic},
	} {
		req, _ := http.NewRequest(tc.method, root+tc.path, strings.NewReader("{}"))
		if tc.header != "" {
			req.Header.Set("Anthropic-Version", tc.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		buf.ReadFrom(resp.Body)
		resp.Body.Close()
		checkErrorShape(t, tc.api, reply{resp.StatusCode, resp.Header, buf.Bytes()}, tc.status)
	}
	if n := fake.Requests(); n != 0 {
		t.Errorf("%d requests reached the upstream", n)
	}
	if len(e.Calls()) != 0 {
		t.Errorf("calls %v", e.Calls())
	}
}

// Keys: the environment's replaces the client's; a client's own is
// forwarded; with neither, a public API is never dialled; no key is ever
// written.
func TestKeys(t *testing.T) {
	const envKey, clientKeyValue = "sk-env-key-123456", "sk-client-own-987654"
	for _, api := range []wire.API{wire.OpenAIChat, wire.Anthropic} {
		t.Run(string(api), func(t *testing.T) {
			body := conversation(api, false)[0]
			authHeader := func(k string) []string {
				if api == wire.Anthropic {
					return []string{"X-Api-Key", k}
				}
				return []string{"Authorization", "Bearer " + k}
			}
			t.Run("environment key replaces the client's", func(t *testing.T) {
				fake := newFake(api, fakeapi.RequireKey(envKey))
				defer fake.Close()
				o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL)
				o.Env = []string{"OPENAI_API_KEY=" + envKey, "ANTHROPIC_API_KEY=" + envKey}
				e := mustNew(t, o)
				r := post(t, http.DefaultClient, serve(t, e, "/c"), api, body)
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				e.Finish()
				data, _ := os.ReadFile(o.File)
				if len(data) == 0 || strings.Contains(string(data), envKey) || strings.Contains(string(data), "sk-") {
					t.Errorf("cassette:\n%s", data)
				}
			})
			t.Run("client's own key is forwarded", func(t *testing.T) {
				fake := newFake(api, fakeapi.RequireKey(clientKeyValue))
				defer fake.Close()
				o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL)
				e := mustNew(t, o)
				r := post(t, http.DefaultClient, serve(t, e, "/c"), api, body, authHeader(clientKeyValue)...)
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				e.Finish()
				if data, _ := os.ReadFile(o.File); strings.Contains(string(data), clientKeyValue) {
					t.Errorf("cassette holds the key:\n%s", data)
				}
			})
			// The client's key was learned after its first request was
			// canonicalised: a first request quoting it kept it in clear.
			t.Run("client's own key is redacted from its first request on", func(t *testing.T) {
				fake := newFake(api, fakeapi.RequireKey(clientKeyValue))
				defer fake.Close()
				o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL)
				e := mustNew(t, o)
				quoting := strings.Replace(body, "You are a support agent.", "my key is "+clientKeyValue, 1)
				if quoting == body {
					t.Fatal("the body has no user text to replace")
				}
				r := post(t, http.DefaultClient, serve(t, e, "/c"), api, quoting, authHeader(clientKeyValue)...)
				if r.status != 200 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				e.Finish()
				data, _ := os.ReadFile(o.File)
				if strings.Contains(string(data), clientKeyValue) || !strings.Contains(string(data), "my key is REDACTED") {
					t.Errorf("cassette:\n%s", data)
				}
			})
			t.Run("no key for a public wire.API", func(t *testing.T) {
				tr := newDialCounter()
				o := caseOptions(t.TempDir(), cassette.Once)
				o.Transport = tr
				e := mustNew(t, o)
				r := post(t, http.DefaultClient, serve(t, e, "/c"), api, body)
				b := checkErrorShape(t, api, r, 400)
				env := "OPENAI_API_KEY"
				if api == wire.Anthropic {
					env = "ANTHROPIC_API_KEY"
				}
				if !strings.Contains(b.Error.Message, "model request 1 is not in the recording "+o.File+", so it must go to the live model, but "+env+" is not set") {
					t.Errorf("message %s", b.Error.Message)
				}
				if tr.dials.Load() != 0 {
					t.Error("dialled")
				}
				if e.Failure() == nil {
					t.Error("no failure")
				}
				if wrote, _ := e.Finish(); wrote {
					t.Error("wrote a cassette")
				}
			})
			t.Run("a refused key records nothing", func(t *testing.T) {
				fake := newFake(api, fakeapi.RequireKey("sk-the-right-one-1234"))
				defer fake.Close()
				o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL)
				o.Env = []string{"OPENAI_API_KEY=" + envKey, "ANTHROPIC_API_KEY=" + envKey}
				e := mustNew(t, o)
				r := post(t, http.DefaultClient, serve(t, e, "/c"), api, body)
				if r.status != 401 {
					t.Fatalf("%d %s", r.status, r.body)
				}
				if e.Failure() == nil || !strings.Contains(e.Failure().Error(), "refused the key (401)") {
					t.Errorf("Failure = %v", e.Failure())
				}
				if wrote, _ := e.Finish(); wrote {
					t.Error("wrote a cassette")
				}
				if _, err := os.Stat(o.File); err == nil {
					t.Error("the cassette exists")
				}
			})
		})
	}
}

// Answers the SDKs retry are passed on and not recorded; the retry is.
func TestRetriedAnswersAreNotRecorded(t *testing.T) {
	for _, api := range []wire.API{wire.OpenAIChat, wire.Anthropic} {
		fake := newFake(api)
		fake.Fail(fakeapi.Fault{Status: 429, RetryAfter: "0"}, fakeapi.Fault{Status: 529})
		o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), fake.URL)
		e := mustNew(t, o)
		root := serve(t, e, "/c")
		body := conversation(api, true)[0]
		r1 := post(t, http.DefaultClient, root, api, body)
		r2 := post(t, http.DefaultClient, root, api, body)
		r3 := post(t, http.DefaultClient, root, api, body)
		if r1.status != 429 || r1.header.Get("Retry-After") != "0" || r2.status != 529 || r3.status != 200 {
			t.Fatalf("%s: statuses %d %d %d", api, r1.status, r2.status, r3.status)
		}
		if wrote, err := e.Finish(); !wrote || err != nil {
			t.Fatalf("Finish = %v, %v", wrote, err)
		}
		c, err := cassette.Load(o.File)
		if err != nil || len(c.Interactions) != 1 || !c.Interactions[0].Response.Streamed() {
			t.Fatalf("cassette: %v, %+v", err, c)
		}
		if _, rec, live := e.Stats(); rec != 1 || live != 3 {
			t.Errorf("Stats: %d recorded, %d live", rec, live)
		}
		fake.Close()
	}
}

// Mode new replays what matches and records the rest; one cassette holds
// the calls of every API an agent uses.
func TestNewModeAndMixedAPIs(t *testing.T) {
	dir := t.TempDir()
	chat, anth := newFake(wire.OpenAIChat), newFake(wire.Anthropic)
	defer chat.Close()
	defer anth.Close()
	o := caseOptions(dir, cassette.Once)
	o.BaseURLs = map[string]string{"OPENAI_BASE_URL": chat.URL + "/v1", "ANTHROPIC_BASE_URL": anth.URL}
	cc, ac := conversation(wire.OpenAIChat, false), conversation(wire.Anthropic, true)
	e := mustNew(t, o)
	root := serve(t, e, "/c")
	post(t, http.DefaultClient, root, wire.OpenAIChat, cc[0])
	post(t, http.DefaultClient, root, wire.Anthropic, ac[0])
	e.Finish()

	o.Mode = cassette.New
	e = mustNew(t, o)
	root = serve(t, e, "/c")
	var got []reply
	for _, step := range []struct {
		api  wire.API
		body string
	}{{wire.OpenAIChat, cc[0]}, {wire.Anthropic, ac[0]}, {wire.OpenAIChat, cc[1]}, {wire.Anthropic, ac[1]}} {
		got = append(got, post(t, http.DefaultClient, root, step.api, step.body))
	}
	for i, r := range got {
		if r.status != 200 {
			t.Fatalf("call %d: %d %s", i+1, r.status, r.body)
		}
	}
	if wrote, err := e.Finish(); !wrote || err != nil {
		t.Fatalf("Finish = %v, %v", wrote, err)
	}
	if p, rec, _ := e.Stats(); p != 2 || rec != 2 {
		t.Errorf("Stats: %d played, %d recorded", p, rec)
	}
	c, _ := cassette.Load(o.File)
	var paths []string
	for _, it := range c.Interactions {
		paths = append(paths, it.Request.Path)
	}
	if strings.Join(paths, " ") != "/v1/chat/completions /v1/messages /v1/chat/completions /v1/messages" {
		t.Errorf("paths %v", paths)
	}
	if strings.Join(ruleNames(c.Rules), ",") != "json,drop-auth,openai-user,anthropic-metadata" {
		t.Errorf("rules %v", c.Rules)
	}
	// The Anthropic metadata.user_id is dropped, not the OpenAI body's.
	if strings.Contains(string(c.Interactions[1].Request.Body), "user_id") {
		t.Errorf("anthropic request keeps metadata.user_id:\n%s", c.Interactions[1].Request.Body)
	}
}

func ruleNames(rs []cassette.Rule) []string {
	var out []string
	for _, r := range rs {
		out = append(out, string(r))
	}
	return out
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

// A live stream reaches the client as it arrives; a client that leaves
// mid-stream records nothing.
func TestLiveStreamPassesThrough(t *testing.T) {
	first := "data: {\"n\":1}\n\n"
	rest := "data: {\"n\":2}\n\ndata: [DONE]\n\n"
	release := make(chan struct{})
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, first)
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		case <-time.After(10 * time.Second):
		}
		io.WriteString(w, rest)
	}))
	defer upstream.Close()
	body := conversation(wire.OpenAIChat, true)[0]
	for _, leave := range []bool{false, true} {
		o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), upstream.URL)
		e := mustNew(t, o)
		root := serve(t, e, "/c")
		req, _ := http.NewRequest(http.MethodPost, root+"/v1/chat/completions", strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, len(first))
		if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != first {
			t.Fatalf("first event %q, %v", buf, err)
		}
		if leave {
			resp.Body.Close()
			if wrote, _ := e.Finish(); wrote {
				t.Error("a stream cut short was recorded")
			}
			if e.Failure() == nil {
				t.Error("no failure after the client left")
			}
			continue
		}
		release <- struct{}{}
		tail, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(tail) != rest {
			t.Errorf("rest %q", tail)
		}
		if wrote, err := e.Finish(); !wrote || err != nil {
			t.Fatalf("Finish = %v, %v", wrote, err)
		}
		c, _ := cassette.Load(o.File)
		if evs := c.Interactions[0].Response.Events; len(evs) != 3 {
			t.Errorf("events %q", evs)
		}
	}
}

// A client that leaves once the stream's last event has passed, before
// the upstream ends it (Codex CLI after response.completed), got the
// answer whole: it is recorded.
func TestLiveStreamLeftAfterItsLastEvent(t *testing.T) {
	stream := "data: {\"n\":1}\n\ndata: [DONE]\n\n"
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, stream)
		w.(http.Flusher).Flush()
		select { // the connection held open after the last event
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer upstream.Close()
	o := upstreamOptions(caseOptions(t.TempDir(), cassette.Once), upstream.URL)
	e := mustNew(t, o)
	root := serve(t, e, "/c")
	resp, err := http.Post(root+"/v1/chat/completions", "application/json", strings.NewReader(conversation(wire.OpenAIChat, true)[0]))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len(stream))
	if _, err := io.ReadFull(resp.Body, buf); err != nil || string(buf) != stream {
		t.Fatalf("stream %q, %v", buf, err)
	}
	resp.Body.Close()
	if wrote, err := e.Finish(); !wrote || err != nil {
		t.Fatalf("Finish = %v, %v (failure: %v)", wrote, err, e.Failure())
	}
	c, _ := cassette.Load(o.File)
	if evs := c.Interactions[0].Response.Events; len(evs) != 2 {
		t.Errorf("events %q", evs)
	}
}

func TestPathsAreTheRoutes(t *testing.T) {
	if len(wire.Paths) != len(wire.Routes) {
		t.Fatalf("Paths %v, wire.Routes %v", wire.Paths, wire.Routes)
	}
	for _, p := range wire.Paths {
		if _, ok := wire.Routes[p]; !ok {
			t.Errorf("Paths has %s, which wire.Routes does not", p)
		}
	}
}

// A body over 64 MiB on the model endpoint was a 400; it is a 413.
func TestHostileHugeBodyIs413(t *testing.T) {
	e := mustNew(t, caseOptions(t.TempDir(), cassette.Once))
	url := serve(t, e, "/c") + "/v1/messages"
	resp, err := http.Post(url, "application/json", io.LimitReader(zeros{}, maxBody+1))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "larger than 64 MiB") {
		t.Errorf("%d %s", resp.StatusCode, b)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A base URL with a query (an api-version, say) keeps it on every live
// call, before the client's own query.
func TestBaseURLQueryIsKept(t *testing.T) {
	var got []string
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Path+"?"+r.URL.RawQuery)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer up.Close()
	o := caseOptions(t.TempDir(), cassette.Once)
	o.BaseURLs = map[string]string{"OPENAI_BASE_URL": up.URL + "/openai/deployments/d?api-version=2024-02-01", "ANTHROPIC_BASE_URL": up.URL + "/proxy?key=k"}
	root := serve(t, mustNew(t, o), "/c")
	post(t, http.DefaultClient, root, wire.OpenAIChat, conversation(wire.OpenAIChat, false)[0])
	post(t, http.DefaultClient, root, wire.Anthropic, conversation(wire.Anthropic, false)[0])
	req, _ := http.NewRequest(http.MethodPost, root+path(wire.OpenAIChat)+"?trace=1", strings.NewReader(conversation(wire.OpenAIChat, false)[0]))
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err == nil {
		res.Body.Close()
	}
	want := []string{
		"/openai/deployments/d/chat/completions?api-version=2024-02-01",
		"/proxy/v1/messages?key=k",
		"/openai/deployments/d/chat/completions?api-version=2024-02-01&trace=1",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("upstream saw\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestRouteIsRoutes(t *testing.T) {
	for p, api := range wire.Routes {
		if p == wire.GeminiRoute {
			continue // a pattern: TestGeminiPaths
		}
		if got, ok := wire.RouteOf(p); !ok || got != api {
			t.Errorf("RouteOf(%q) = %q, %v; wire.Routes has %q", p, got, ok, api)
		}
	}
	for _, p := range []string{"", "/v1", "/v1/models", "/v1/chat/completions/"} {
		if _, ok := wire.RouteOf(p); ok != (wire.Routes[p] != "") {
			t.Errorf("RouteOf(%q): %v", p, ok)
		}
	}
}
