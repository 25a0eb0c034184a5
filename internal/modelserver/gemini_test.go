package modelserver

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// geminiConversation is an agent's two Gemini requests: the question
// with two tools, then the model's two parallel calls and their
// responses (without ids, as google-genai's Part.from_function_response
// makes them).
var geminiConversation = []string{
	`{"contents":[{"role":"user","parts":[{"text":"Please refund order A-991."}]}],` + geminiTools + `,"systemInstruction":{"parts":[{"text":"You are a support agent."}],"role":"user"}}`,
	`{"contents":[{"role":"user","parts":[{"text":"Please refund order A-991."}]},` +
		`{"role":"model","parts":[{"text":"Let me look."},{"functionCall":{"name":"lookup_order","args":{"order_id":"A-991"}}},{"functionCall":{"name":"check_stock","args":{"sku":"S-1"}}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"name":"lookup_order","response":{"tier":"gold"}}},{"functionResponse":{"name":"check_stock","response":{"result":3}}}]}],` +
		geminiTools + `,"systemInstruction":{"parts":[{"text":"You are a support agent."}],"role":"user"}}`,
}

const geminiTools = `"tools":[{"functionDeclarations":[{"name":"lookup_order","parameters":{"type":"OBJECT","properties":{"order_id":{"type":"STRING"}}}},{"name":"check_stock"}]}]`

// geminiBrain is the fake Gemini model of geminiConversation.
var geminiBrain = fakeapi.Script{"Please refund order A-991.": {
	{Text: "Let me look.", ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}, {Name: "check_stock", Args: `{"sku":"S-1"}`}}},
	{Text: "Refunded: gold tier, 3 in stock."},
}}

func geminiScript() []*spec.Turn {
	return []*spec.Turn{
		{Text: "Let me look.", ToolCalls: []*spec.ScriptCall{{ID: "call_1_1", Name: "lookup_order", ArgsJSON: `{"order_id":"A-991"}`}, {ID: "call_1_2", Name: "check_stock", ArgsJSON: `{"sku":"S-1"}`}}},
		{Text: "Refunded: gold tier, 3 in stock."},
	}
}

// postGemini posts body to root's Gemini route of method, with header
// pairs after it.
func postGemini(t *testing.T, root, method, body string, header ...string) reply {
	t.Helper()
	u := root + "/v1beta/models/gemini-test:" + method
	if method == "streamGenerateContent" {
		u += "?alt=sse"
	}
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, data}
}

type geminiAnswer struct {
	Candidates []struct {
		Content struct {
			Parts []struct {
				Text         *string `json:"text"`
				FunctionCall *struct {
					ID   string          `json:"id"`
					Name string          `json:"name"`
					Args json.RawMessage `json:"args"`
				} `json:"functionCall"`
			} `json:"parts"`
			Role string `json:"role"`
		} `json:"content"`
		FinishReason string `json:"finishReason"`
	} `json:"candidates"`
	UsageMetadata struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
		TotalTokenCount      int `json:"totalTokenCount"`
	} `json:"usageMetadata"`
	ModelVersion string `json:"modelVersion"`
}

// geminiChunks reads an answer: one JSON object, or a stream's chunks
// (data: lines), merged into the text and calls a client would see.
func geminiChunks(t *testing.T, r reply) (text string, calls []string, last geminiAnswer) {
	t.Helper()
	var bodies []string
	if strings.HasPrefix(r.header.Get("Content-Type"), "text/event-stream") {
		for _, ev := range strings.Split(strings.ReplaceAll(string(r.body), "\r\n", "\n"), "\n\n") {
			if d, ok := strings.CutPrefix(ev, "data: "); ok {
				bodies = append(bodies, d)
			} else if ev != "" {
				t.Fatalf("not a data event: %q", ev)
			}
		}
	} else {
		bodies = []string{string(r.body)}
	}
	for _, b := range bodies {
		var a geminiAnswer
		if err := json.Unmarshal([]byte(b), &a); err != nil || len(a.Candidates) != 1 {
			t.Fatalf("chunk %s: %v", b, err)
		}
		for _, p := range a.Candidates[0].Content.Parts {
			if p.Text != nil {
				text += *p.Text
			}
			if fc := p.FunctionCall; fc != nil {
				calls = append(calls, fc.ID+" "+fc.Name+" "+string(fc.Args))
			}
		}
		last = a
	}
	return text, calls, last
}

// The script model answers google-genai's requests: two parallel calls,
// then the answer, as JSON and as a stream; a token count is no turn.
func TestGeminiScripted(t *testing.T) {
	for _, method := range []string{"generateContent", "streamGenerateContent"} {
		t.Run(method, func(t *testing.T) {
			e := mustNew(t, Options{Scripted: true, Script: geminiScript()})
			root := serve(t, e, "/c")
			n := postGemini(t, root, "countTokens", geminiConversation[0])
			if n.status != 200 || !strings.HasPrefix(string(n.body), `{"totalTokens":`) {
				t.Fatalf("countTokens: %d %s", n.status, n.body)
			}
			r := postGemini(t, root, method, geminiConversation[0])
			if r.status != 200 {
				t.Fatalf("%d %s", r.status, r.body)
			}
			text, calls, last := geminiChunks(t, r)
			want := []string{`call_1_1 lookup_order {"order_id":"A-991"}`, `call_1_2 check_stock {"sku":"S-1"}`}
			if text != "Let me look." || strings.Join(calls, "|") != strings.Join(want, "|") {
				t.Errorf("text %q calls %q", text, calls)
			}
			u := last.UsageMetadata
			if last.Candidates[0].FinishReason != "STOP" || last.ModelVersion != "gemini-test" || u.PromptTokenCount == 0 || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount {
				t.Errorf("last chunk %+v", last)
			}
			r = postGemini(t, root, method, geminiConversation[1])
			if text, calls, _ := geminiChunks(t, r); text != "Refunded: gold tier, 3 in stock." || len(calls) != 0 {
				t.Errorf("second answer %q %q", text, calls)
			}
			if e.Turns() != 2 || len(e.ScriptAnswers()) != 2 || e.ScriptError() != nil {
				t.Errorf("turns %d, answers %+v, error %v", e.Turns(), e.ScriptAnswers(), e.ScriptError())
			}
			// Past the script: refused in Gemini's error shape.
			r = postGemini(t, root, method, geminiConversation[1])
			var b struct {
				Error struct {
					Code    int
					Status  string
					Message string
					Details []struct{ Reason string }
				}
			}
			if json.Unmarshal(r.body, &b) != nil || r.status != 400 || b.Error.Code != 400 || b.Error.Status != "INVALID_ARGUMENT" ||
				len(b.Error.Details) != 1 || b.Error.Details[0].Reason != model.CodeNoTurn {
				t.Errorf("past the script: %d %s", r.status, r.body)
			}
		})
	}
}

// Recorded once against a strict Gemini server (the key from the
// environment in x-goog-api-key, the client's dummy ?key= dropped), then
// replayed offline from the cassette, byte for byte; the cassette holds
// no key.
func TestGeminiRecordReplay(t *testing.T) {
	const envKey = "AIza-env-key-0123456789"
	for _, method := range []string{"generateContent", "streamGenerateContent"} {
		t.Run(method, func(t *testing.T) {
			fake := fakeapi.NewGemini(geminiBrain, fakeapi.RequireKey(envKey))
			defer fake.Close()
			dir := t.TempDir()
			o := caseOptions(dir, cassette.Once)
			o.BaseURLs = map[string]string{"GOOGLE_GEMINI_BASE_URL": fake.URL}
			o.Env = []string{"GEMINI_API_KEY=" + envKey}
			e := mustNew(t, o)
			root := serve(t, e, "/c")
			var live []reply
			for _, body := range geminiConversation {
				r := postGemini(t, root+"", method, body, "X-Goog-Api-Key", DummyKey)
				if r.status != 200 {
					t.Fatalf("live: %d %s", r.status, r.body)
				}
				live = append(live, r)
			}
			if got := e.Usage(); got.InputTokens == 0 || got.OutputTokens == 0 {
				t.Errorf("usage %+v", got)
			}
			if ok, err := e.Finish(); !ok || err != nil {
				t.Fatalf("Finish: %v %v", ok, err)
			}
			data, _ := os.ReadFile(o.File)
			if strings.Contains(string(data), envKey) || strings.Contains(string(data), DummyKey) || !strings.Contains(string(data), "/v1beta/models/gemini-test:"+method) {
				t.Errorf("cassette:\n%s", data)
			}
			o.Mode, o.Env, o.BaseURLs = cassette.None, []string{"CI=true"}, map[string]string{"GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:1"}
			e = mustNew(t, o)
			root = serve(t, e, "/c")
			for i, body := range geminiConversation {
				r := postGemini(t, root, method, body, "X-Goog-Api-Key", DummyKey)
				if r.status != 200 || string(r.body) != string(live[i].body) {
					t.Errorf("replay %d: %d\n%s\nwant\n%s", i, r.status, r.body, live[i].body)
				}
			}
			if played, recorded, _ := e.Stats(); played != 2 || recorded != 0 || e.Problem() != nil {
				t.Errorf("played %d, recorded %d, problem %v", played, recorded, e.Problem())
			}
			// A request that differs is refused in Gemini's shape.
			e.Reset()
			r := postGemini(t, root, method, strings.Replace(geminiConversation[0], "A-991", "A-992", 1))
			if r.status != 400 || !strings.Contains(string(r.body), `"status":"INVALID_ARGUMENT"`) || !strings.Contains(string(r.body), cassette.CodeMismatch) {
				t.Errorf("mismatch: %d %s", r.status, r.body)
			}
		})
	}
}

// A client's own key in ?key= is forwarded, and never written: not in
// the cassette's path, nor where the request quotes it.
func TestGeminiQueryKey(t *testing.T) {
	const clientKey = "AIza-client-own-987654"
	fake := fakeapi.NewGemini(geminiBrain, fakeapi.RequireKey(clientKey))
	defer fake.Close()
	o := caseOptions(t.TempDir(), cassette.Once)
	o.BaseURLs = map[string]string{"GOOGLE_GEMINI_BASE_URL": fake.URL}
	e := mustNew(t, o)
	root := serve(t, e, "/c")
	quoting := strings.Replace(geminiConversation[0], "You are a support agent.", "my key is "+clientKey, 1)
	req, _ := http.NewRequest(http.MethodPost, root+"/v1beta/models/gemini-test:streamGenerateContent?alt=sse&key="+clientKey, strings.NewReader(quoting))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
	e.Finish()
	data, _ := os.ReadFile(o.File)
	if strings.Contains(string(data), clientKey) || !strings.Contains(string(data), "my key is REDACTED") || !strings.Contains(string(data), "key=REDACTED") {
		t.Errorf("cassette:\n%s", data)
	}
	// No key at all for the public API: refused before anything is dialled.
	tr := newDialCounter()
	o = caseOptions(t.TempDir(), cassette.Once)
	o.Transport = tr
	e = mustNew(t, o)
	r := postGemini(t, serve(t, e, "/c"), "generateContent", geminiConversation[0], "X-Goog-Api-Key", DummyKey)
	if r.status != 400 || !strings.Contains(string(r.body), "GEMINI_API_KEY is not set") || tr.dials.Load() != 0 {
		t.Errorf("%d %s (dials %d)", r.status, r.body, tr.dials.Load())
	}
}

// A declared fault is answered in Gemini's shape; the retry gets the turn.
func TestGeminiFault(t *testing.T) {
	e := mustNew(t, Options{Scripted: true, Script: geminiScript(), Faults: []model.Fault{{Request: 1, Status: 429, RetryAfter: -1}}})
	root := serve(t, e, "/c")
	r := postGemini(t, root, "generateContent", geminiConversation[0])
	if r.status != 429 || !strings.HasPrefix(string(r.body), `{"error":{"code":429,"message":"Resource has been exhausted`) || !strings.Contains(string(r.body), `"status":"RESOURCE_EXHAUSTED"`) {
		t.Errorf("fault: %d %s", r.status, r.body)
	}
	if r = postGemini(t, root, "generateContent", geminiConversation[0]); r.status != 200 {
		t.Errorf("retry: %d %s", r.status, r.body)
	}
}

func TestGeminiPaths(t *testing.T) {
	for path, want := range map[string]wire.API{
		"/v1beta/models/gemini-2.5-flash:generateContent":                                       wire.Gemini,
		"/v1beta/models/gemini-2.5-flash:streamGenerateContent":                                 wire.Gemini,
		"/v1/models/gemini-2.5-flash:generateContent":                                           wire.Gemini,
		"/v1beta/models/gemini-2.5-flash:countTokens":                                           wire.GeminiCountTokens,
		"/v1beta/tunedModels/mine-1:generateContent":                                            wire.Gemini,
		"/v1beta/models/gemini-2.5-flash:embedContent":                                          "",
		"/v1beta/models/a/b:generateContent":                                                    "",
		"/v1beta/models/:generateContent":                                                       "",
		"/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:generateContent":  wire.Gemini, // Vertex AI's
		"/v1beta1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:countTokens": wire.GeminiCountTokens,
		"/v1/projects/p/locations/l/publishers/anthropic/models/claude:rawPredict":              wire.Anthropic,
		"/v1/projects/p/locations/l/publishers/meta/models/llama:rawPredict":                    "",
		"/v1/projects/p/locations/l/publishers/google/models/gemini-2.5-flash:embedContent":     "",
	} {
		got, ok := wire.RouteOf(path)
		if got != want || ok != (want != "") {
			t.Errorf("RouteOf(%s) = %q %v, want %q", path, got, ok, want)
		}
		if want != "" && want != wire.Anthropic && !wire.IsGeminiPath(path) || strings.HasSuffix(path, ":embedContent") && wire.IsGeminiPath(path) {
			t.Errorf("wire.IsGeminiPath(%s) = %v", path, wire.IsGeminiPath(path))
		}
	}
}
