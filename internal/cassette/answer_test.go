package cassette

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// echo is a deterministic API: it answers every request with what it got,
// so the same request always gets the same bytes.
type echo struct {
	*httptest.Server
	requests atomic.Int64
	fail     atomic.Int64 // the next N requests get a 429
}

func newEcho(t *testing.T) *echo {
	e := &echo{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.requests.Add(1)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Request-Id", "req_"+r.Header.Get("X-Attempt")) // varies: never stored
		if e.fail.Load() > 0 {
			e.fail.Add(-1)
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":"slow down"}`)
			return
		}
		io.WriteString(w, `{"path":"`+r.URL.Path+`","got":`+string(body)+"}\n")
	}))
	t.Cleanup(e.Close)
	return e
}

// tape is a case's cassette as a run has it: the answerer of the case's
// model.Recorder, which every call goes through.
type tape struct {
	*Answerer
	rec *model.Recorder
}

func open(cfg Config) (*tape, error) {
	a, err := Open(cfg, false)
	if err != nil {
		return nil, err
	}
	return &tape{a, model.NewRecorder(a, nil)}, nil
}

func mustOpen(t *testing.T, cfg Config) *tape {
	t.Helper()
	tp, err := open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return tp
}

// end is how the case's model calls went.
func (tp *tape) end() model.Outcome { return tp.rec.End() }

// unplayed is the interactions the case left unplayed, or nil.
func (tp *tape) unplayed() *ReplayError {
	u, _ := tp.end().Unplayed.(*ReplayError)
	return u
}

func newReq(t *testing.T, url, body string, header ...string) *http.Request {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// ask sends a request as the model endpoint hands it on (a URL without a
// host) or the built-in loop does (with one: a live call goes there),
// and returns the answer, unread.
func (tp *tape) ask(req *http.Request, body string) *model.Answer {
	return tp.rec.Answer(&model.Call{Wire: wire.APIOf(req.URL.Path).Wire(), HTTP: req, Body: []byte(body)})
}

// read reads an answer to its end.
func read(t *testing.T, a *model.Answer) []byte {
	t.Helper()
	if a.Live == nil {
		return a.Bytes()
	}
	defer a.Live.Close()
	data, err := io.ReadAll(a.Live)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// call sends one JSON request through the case's model calls and reads
// its answer; the error is why dryfire refused it.
func call(t *testing.T, tp *tape, url, body string, header ...string) (*model.Answer, []byte, error) {
	t.Helper()
	req := newReq(t, url, body, header...)
	req.Header.Set("Content-Type", "application/json")
	a := tp.ask(req, body)
	return a, read(t, a), a.Err
}

// config is a case's cassette; live, when set, carries its live calls.
func config(dir string, mode Mode, live http.RoundTripper) Config {
	cfg := Config{
		Mode:      mode,
		File:      filepath.Join(dir, "cassettes", "support", "refund.json"),
		SuiteFile: filepath.Join(dir, "support.dryfire.yaml"),
		Case:      "refund",
		Provider:  "openai",
	}
	if live != nil {
		cfg.Live = liveClient(live)
	}
	return cfg
}

// liveClient is a live client that sends calls over rt, with no key of
// its own: the tests' calls name their upstream, as the built-in loop's.
func liveClient(rt http.RoundTripper) *wire.Live {
	l, err := wire.NewLive(wire.LiveOptions{Getenv: func(string) string { return "" }, Transport: rt})
	if err != nil {
		panic(err)
	}
	return l
}

var requests = []string{
	`{"model":"m","messages":[{"role":"user","content":"hi"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"call"},{"role":"tool","content":"{\"tier\":\"gold\"}"}]}`,
	`{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"call"},{"role":"tool","content":"{\"tier\":\"gold\"}"},{"role":"assistant","content":"again"},{"role":"tool","content":"ok"}]}`,
}

// record runs the requests live in mode (Once: a new cassette) and saves.
func record(t *testing.T, cfg Config, url string, reqs []string) [][]byte {
	t.Helper()
	r := mustOpen(t, cfg)
	var answers [][]byte
	for _, b := range reqs {
		_, data, err := call(t, r, url, b, "Authorization", "Bearer sk-test-secret-1234", "X-Api-Key", "sk-test-secret-1234")
		if err != nil {
			t.Fatal(err)
		}
		answers = append(answers, data)
	}
	if u := r.unplayed(); u != nil {
		t.Fatalf("unplayed while recording: %v", u)
	}
	if _, err := r.Save(); err != nil {
		t.Fatal(err)
	}
	return answers
}

// noNetwork fails the test if a request goes live.
type noNetwork struct{ t *testing.T }

func (n noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	n.t.Error("a request went to the network")
	return nil, errors.New("no network")
}

func TestRecordOnceThenReplay(t *testing.T) {
	dir := t.TempDir()
	api := newEcho(t)
	cfg := config(dir, Once, http.DefaultTransport)
	answers := record(t, cfg, api.URL+"/v1/chat/completions", requests)
	if n := api.requests.Load(); n != 3 {
		t.Fatalf("%d requests reached the API while recording, want 3", n)
	}
	// Replay in every replaying mode, against another host: the same bytes,
	// and nothing reaches the network.
	for _, mode := range []Mode{None, Once, New} {
		t.Run(string(mode), func(t *testing.T) {
			live := http.RoundTripper(noNetwork{t})
			if mode == None {
				live = nil
			}
			r := mustOpen(t, config(dir, mode, live))
			for i, b := range requests {
				resp, data, err := call(t, r, "https://elsewhere.invalid:9/v1/chat/completions", b, "Authorization", "Bearer other")
				if err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				if !bytes.Equal(data, answers[i]) {
					t.Errorf("request %d: replayed %q, recorded %q", i+1, data, answers[i])
				}
				if !resp.Replayed || resp.Status != 200 || resp.Header.Get("Content-Type") != "application/json" {
					t.Errorf("request %d: replayed %v, status %d, content-type %q", i+1, resp.Replayed, resp.Status, resp.Header.Get("Content-Type"))
				}
			}
			o := r.end()
			if o.Unplayed != nil {
				t.Errorf("Unplayed = %v", o.Unplayed)
			}
			if wrote, err := r.Save(); wrote || err != nil {
				t.Errorf("Save after a pure replay = %v, %v; want nothing written", wrote, err)
			}
			if o.Played != 3 || o.Recorded != 0 || o.Sent != 0 {
				t.Errorf("played, recorded, sent = %d, %d, %d; want 3 played", o.Played, o.Recorded, o.Sent)
			}
		})
	}
	if n := api.requests.Load(); n != 3 {
		t.Errorf("%d requests reached the API, want the 3 of the recording", n)
	}
}

func TestRerecordIsByteIdentical(t *testing.T) {
	dir := t.TempDir()
	api := newEcho(t)
	cfg := config(dir, All, http.DefaultTransport)
	record(t, cfg, api.URL+"/v1/chat/completions", requests)
	first, err := os.ReadFile(cfg.File)
	if err != nil {
		t.Fatal(err)
	}
	// Another server, another port: the same file.
	api2 := newEcho(t)
	r := mustOpen(t, cfg)
	for _, b := range requests {
		if _, _, err := call(t, r, api2.URL+"/v1/chat/completions", b); err != nil {
			t.Fatal(err)
		}
	}
	if wrote, err := r.Save(); wrote || err != nil {
		t.Errorf("Save of identical traffic = %v, %v; want the file left alone", wrote, err)
	}
	second, _ := os.ReadFile(cfg.File)
	if !bytes.Equal(first, second) {
		t.Errorf("re-recording changed the file:\n%s\n---\n%s", first, second)
	}
	os.Remove(cfg.File)
	record(t, cfg, api2.URL+"/v1/chat/completions", requests)
	third, _ := os.ReadFile(cfg.File)
	if !bytes.Equal(first, third) {
		t.Errorf("a fresh recording differs:\n%s\n---\n%s", first, third)
	}
	if strings.Contains(string(first), "sk-test-secret") || strings.Contains(string(first), "Bearer") {
		t.Errorf("the file holds the auth header:\n%s", first)
	}
}

func TestModes(t *testing.T) {
	url := func(api *echo) string { return api.URL + "/v1/chat/completions" }
	t.Run("none without a cassette", func(t *testing.T) {
		dir := t.TempDir()
		_, err := Open(config(dir, None, nil), false)
		var me *MissingError
		if !errors.As(err, &me) {
			t.Fatalf("Open = %v, want a MissingError", err)
		}
		want := "no cassette for this case: " + filepath.Join(dir, "cassettes/support/refund.json") +
			" does not exist, and --record none (the default when CI is set) only replays; record it, with the provider's key set, with: dryfire run " +
			filepath.Join(dir, "support.dryfire.yaml") + " --filter '^refund$' --record once"
		if err.Error() != want {
			t.Errorf("error\n got %s\nwant %s", err, want)
		}
	})
	t.Run("new appends beyond the recording", func(t *testing.T) {
		dir, api := t.TempDir(), newEcho(t)
		record(t, config(dir, Once, http.DefaultTransport), url(api), requests[:2])
		r := mustOpen(t, config(dir, New, http.DefaultTransport))
		for _, b := range requests {
			if _, _, err := call(t, r, url(api), b); err != nil {
				t.Fatal(err)
			}
		}
		if n := api.requests.Load(); n != 3 {
			t.Errorf("%d requests reached the API, want 2 recording + 1 new", n)
		}
		if wrote, err := r.Save(); !wrote || err != nil {
			t.Fatalf("Save = %v, %v", wrote, err)
		}
		c, err := Load(r.cfg.File)
		if err != nil || len(c.Interactions) != 3 {
			t.Fatalf("Load = %v, %v; want 3 interactions", c, err)
		}
		if o := r.end(); o.Played != 2 || o.Recorded != 1 || o.Sent != 1 {
			t.Errorf("played, recorded, sent = %d, %d, %d; want 2 played, 1 recorded", o.Played, o.Recorded, o.Sent)
		}
	})
	t.Run("new records from the first difference", func(t *testing.T) {
		dir, api := t.TempDir(), newEcho(t)
		record(t, config(dir, Once, http.DefaultTransport), url(api), requests)
		changed := []string{requests[0], strings.Replace(requests[1], "gold", "silver", 1), requests[2]}
		r := mustOpen(t, config(dir, New, http.DefaultTransport))
		for _, b := range changed {
			if _, _, err := call(t, r, url(api), b); err != nil {
				t.Fatal(err)
			}
		}
		if n := api.requests.Load(); n != 5 {
			t.Errorf("%d requests reached the API, want 3 + 2", n)
		}
		r.Save()
		c, _ := Load(r.cfg.File)
		if len(c.Interactions) != 3 || !strings.Contains(string(c.Interactions[1].Request.Body), "silver") {
			t.Errorf("cassette after new: %d interactions, second %s", len(c.Interactions), c.Interactions[1].Request.Body)
		}
	})
	t.Run("new without a way to go live", func(t *testing.T) {
		dir, api := t.TempDir(), newEcho(t)
		record(t, config(dir, Once, http.DefaultTransport), url(api), requests[:1])
		cfg := config(dir, New, http.DefaultTransport)
		cfg.LiveUnavailable = "OPENAI_API_KEY is not set"
		r := mustOpen(t, cfg)
		if _, _, err := call(t, r, url(api), requests[0]); err != nil {
			t.Fatal(err)
		}
		_, _, err := call(t, r, url(api), requests[1])
		var le *LiveError
		if !errors.As(err, &le) || !le.Permanent() {
			t.Fatalf("err = %v, want a permanent LiveError", err)
		}
		want := "model request 2 is not in the recording " + cfg.File + ", so it must go to the live model, but OPENAI_API_KEY is not set"
		if o := r.end(); o.Live == nil || o.Live.Error() != want {
			t.Errorf("Outcome.Live\n got %v\nwant %s", o.Live, want)
		}
		if wrote, _ := r.Save(); wrote {
			t.Error("a failed case was saved")
		}
	})
	t.Run("all overwrites", func(t *testing.T) {
		dir, api := t.TempDir(), newEcho(t)
		record(t, config(dir, Once, http.DefaultTransport), url(api), requests)
		record(t, config(dir, All, http.DefaultTransport), url(api), requests[:1])
		if n := api.requests.Load(); n != 4 {
			t.Errorf("%d requests, want 4", n)
		}
		c, _ := Load(filepath.Join(dir, "cassettes/support/refund.json"))
		if len(c.Interactions) != 1 {
			t.Errorf("%d interactions after all, want 1", len(c.Interactions))
		}
	})
	t.Run("passthrough", func(t *testing.T) {
		dir, api := t.TempDir(), newEcho(t)
		cfg := config(dir, None, nil)
		cfg.Passthrough = true
		if _, err := Open(cfg, false); !errors.As(err, new(*PassthroughError)) {
			t.Errorf("Open in none = %v, want a PassthroughError", err)
		}
		cfg = config(dir, Once, http.DefaultTransport)
		cfg.Passthrough = true
		r := mustOpen(t, cfg)
		for _, b := range requests {
			if _, _, err := call(t, r, url(api), b); err != nil {
				t.Fatal(err)
			}
		}
		if wrote, err := r.Save(); wrote || err != nil {
			t.Errorf("Save = %v, %v; a passthrough case is never recorded", wrote, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "cassettes")); err == nil {
			t.Error("a cassette directory was made for a passthrough case")
		}
		if o := r.end(); o.Sent != 3 {
			t.Errorf("%d live calls, want 3", o.Sent)
		}
	})
}

func TestRetriedAnswersAreNotRecorded(t *testing.T) {
	dir, api := t.TempDir(), newEcho(t)
	cfg := config(dir, Once, http.DefaultTransport)
	r := mustOpen(t, cfg)
	api.fail.Store(2)
	for attempt := 0; ; attempt++ {
		resp, _, err := call(t, r, api.URL+"/v1/chat/completions", requests[0])
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status == 200 {
			break
		}
		if attempt > 3 {
			t.Fatal("no success")
		}
	}
	r.Save()
	c, err := Load(cfg.File)
	if err != nil || len(c.Interactions) != 1 || c.Interactions[0].Response.Status != 200 {
		t.Fatalf("cassette %+v, %v; want the one successful exchange", c, err)
	}
}

func TestReplayProblems(t *testing.T) {
	dir, api := t.TempDir(), newEcho(t)
	url := api.URL + "/v1/chat/completions"
	record(t, config(dir, Once, http.DefaultTransport), url, requests)
	cfg := config(dir, None, nil)
	var out strings.Builder
	show := func(title string, err error) {
		var re *ReplayError
		if errors.As(err, &re) {
			err = re
		}
		out.WriteString("== " + title + "\n" + strings.ReplaceAll(err.Error(), dir, "DIR") + "\n")
	}

	// Key order, whitespace, the auth header and the user field do not
	// matter.
	r := mustOpen(t, cfg)
	same := `{ "messages" : [{"content":"hi","role":"user"}], "user": "someone", "model":"m" }`
	if _, _, err := call(t, r, url, same, "Authorization", "Bearer x"); err != nil {
		t.Fatalf("an equivalent request: %v", err)
	}

	// The second request differs.
	changed := strings.Replace(requests[1], `{\"tier\":\"gold\"}`, `{\"tier\":\"silver\",\"note\":\"a much longer text that goes on and on so that only a window of it shows\"}`, 1)
	changed = strings.Replace(changed, `"model":"m"`, `"model":"m2","temperature":0.5`, 1)
	_, _, err := call(t, r, url, changed)
	var re *ReplayError
	if !errors.As(err, &re) || re.Kind != Mismatch || !re.Permanent() {
		t.Fatalf("err = %v, want a permanent mismatch", err)
	}
	show("mismatch", re)
	if _, _, err := call(t, r, url, requests[2]); !errors.As(err, &re) {
		t.Errorf("after a mismatch: %v", err)
	}
	if o := r.end(); o.Replay != re || o.Unplayed != nil {
		t.Errorf("the outcome's replay problem %v, unplayed %v; want the mismatch alone", o.Replay, o.Unplayed)
	}

	// Path, header and many differences.
	r = mustOpen(t, cfg)
	many := `{"model":"x","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"tools":[{"name":"a"}],"n":2,"top_p":1}`
	_, _, err = call(t, r, api.URL+"/v1/responses", many, "OpenAI-Beta", "assistants=v2")
	show("many differences", err)

	// Beyond the end.
	r = mustOpen(t, cfg)
	for _, b := range requests {
		if _, _, err := call(t, r, url, b); err != nil {
			t.Fatal(err)
		}
	}
	_, _, err = call(t, r, url, requests[2])
	show("beyond", err)

	// Unplayed.
	r = mustOpen(t, cfg)
	if _, _, err := call(t, r, url, requests[0]); err != nil {
		t.Fatal(err)
	}
	u := r.unplayed()
	if u == nil || u.Kind != Unplayed {
		t.Fatalf("Unplayed = %v", u)
	}
	show("unplayed", u)
	show("unplayed summary", errors.New(u.Summary()))

	// A non-JSON body.
	r = mustOpen(t, cfg)
	_, _, err = call(t, r, url, "hello")
	show("not JSON", err)

	golden(t, "problems.txt", []byte(out.String()))
}

func TestCorruptCassettes(t *testing.T) {
	dir := t.TempDir()
	cfg := config(dir, Once, nil)
	os.MkdirAll(filepath.Dir(cfg.File), 0o755)
	for _, tc := range []struct{ name, data, want string }{
		{"torn", `{"dryfire_cassette": 1, "interactions": [`, "cassette " + cfg.File + ": not valid JSON: unexpected EOF; fix it, or delete it and record the case again"},
		{"version", `{"dryfire_cassette": 9, "case": "refund", "interactions": []}`, "cassette " + cfg.File + ": cassette format 9 is newer than this dryfire reads (1); upgrade dryfire or re-record; fix it, or delete it and record the case again"},
		{"other case", `{"dryfire_cassette": 1, "case": "refund!!", "interactions": []}`, "cassette " + cfg.File + `: it was recorded for case "refund!!", not "refund" (a case was renamed, or cases whose names give one file name were reordered); re-record it with: dryfire run ` + cfg.SuiteFile + ` --filter '^refund$' --record all`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.WriteFile(cfg.File, []byte(tc.data), 0o644)
			for _, mode := range []Mode{None, Once, New} {
				cfg.Mode = mode
				_, err := Open(cfg, false)
				var fe *FileError
				if !errors.As(err, &fe) || err.Error() != tc.want {
					t.Errorf("%s: Open = %v\nwant %s", mode, err, tc.want)
				}
			}
			cfg.Mode = All // all never reads it
			if _, err := Open(cfg, false); err != nil {
				t.Errorf("all: %v", err)
			}
		})
	}
}

func TestRedaction(t *testing.T) {
	dir := t.TempDir()
	const key, token, other = "sk-live-abcdef123456", "tok-9876543210", "pw-short"
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; key="+key)
		io.WriteString(w, `{"echo":"your key `+key+` and `+token+`"}`)
	}))
	defer api.Close()
	cfg := config(dir, Once, http.DefaultTransport)
	cfg.Secrets = redact.FromEnv([]string{"OPENAI_API_KEY=" + key, "GITHUB_TOKEN=" + token, "PATH=/usr/bin:/bin", "DB_PASSWORD=" + other[:7], "HOME=" + key + "x"})
	if len(cfg.Secrets) != 2 {
		t.Fatalf("secrets %q, want the key and the token", cfg.Secrets)
	}
	cfg.Secrets = append(cfg.Secrets, "")
	r := mustOpen(t, cfg)
	body := `{"messages":[{"content":"my key is ` + key + `"}],"` + token + `":1}`
	_, data, err := call(t, r, api.URL+"/v1/chat/completions?key=abc&api-version=2024&q="+token, body,
		"Authorization", "Bearer "+key, "X-Api-Key", key, "Api-Key", key, "Anthropic-Version", key, "Anthropic-Beta", "b")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), key) {
		t.Errorf("the agent got %s, not the real answer", data)
	}
	r.Save()
	file, _ := os.ReadFile(cfg.File)
	for _, s := range []string{key, token, "Bearer", "abc", "x-api-key", "authorization", "api-key\""} {
		if strings.Contains(strings.ToLower(string(file)), strings.ToLower(s)) {
			t.Errorf("the cassette holds %q:\n%s", s, file)
		}
	}
	for _, s := range []string{`"path": "/v1/chat/completions?api-version=2024&key=REDACTED&q=REDACTED"`, `"anthropic-version": "REDACTED"`, `"anthropic-beta": "b"`, `"content": "my key is REDACTED"`, `"REDACTED": 1`, `your key REDACTED and REDACTED`, `"content-type": "application/json; key=REDACTED"`} {
		if !strings.Contains(string(file), s) {
			t.Errorf("the cassette lacks %s:\n%s", s, file)
		}
	}
	// It replays with the same secrets in the environment.
	cfg.Mode, cfg.Live = None, nil
	r = mustOpen(t, cfg)
	if _, _, err := call(t, r, "http://x/v1/chat/completions?key=zzz&api-version=2024&q="+token, body, "Anthropic-Version", key, "Anthropic-Beta", "b"); err != nil {
		t.Errorf("replay: %v", err)
	}
}

func TestCanonicalRules(t *testing.T) {
	for _, tc := range []struct {
		provider, a, b string
		same           bool
	}{
		{"openai", `{"a":1,"b":[1,2]}`, "{\n \"b\": [1, 2],\n \"a\": 1\n}\n", true},
		{"openai", `{"a":1,"user":"u1","safety_identifier":"s","prompt_cache_key":"p"}`, `{"a":1,"user":"u2"}`, true},
		{"openai", `{"a":1}`, `{"a":1.0}`, true},
		{"openai", `{"a":"x"}`, `{"a":"y"}`, false},
		{"openai", `{"metadata":{"user_id":"1"}}`, `{"metadata":{"user_id":"2"}}`, false},
		{"anthropic", `{"metadata":{"user_id":"1"},"m":1}`, `{"metadata":{"user_id":"2"},"m":1}`, true},
		{"anthropic", `{"metadata":{"user_id":"1"},"m":1}`, `{"m":1}`, true},
		{"anthropic", `{"metadata":{"user_id":"1","x":1}}`, `{"metadata":{"user_id":"2","x":2}}`, false},
		{"anthropic", `{"user":"u1"}`, `{"user":"u2"}`, false},
		{"anthropic", `{"s":"\u00e9\u003c"}`, `{"s":"é<"}`, true},
	} {
		rules := RulesFor(tc.provider)
		a, b := canonicalBody([]byte(tc.a), rules, nil), canonicalBody([]byte(tc.b), rules, nil)
		rq, nq := Request{Body: a.bytes, JSON: true}, Request{Body: b.bytes, JSON: true}
		diffs, _, _ := compare(&rq, &nq, b, nil)
		if got := len(diffs) == 0; got != tc.same {
			t.Errorf("%s: %s vs %s: same = %v, want %v (%q)", tc.provider, tc.a, tc.b, got, tc.same, diffs)
		}
	}
}

func TestSlug(t *testing.T) {
	for name, want := range map[string]string{
		"refund for a gold customer":   "refund-for-a-gold-customer",
		"  Refund: A-991 (gold)!  ":    "refund-a-991-gold",
		"Ünïcode naïve café":           "n-code-na-ve-caf",
		"日本語":                          "case",
		"":                             "case",
		strings.Repeat("abc ", 30):     strings.TrimRight(strings.Repeat("abc-", 15), "-"),
		strings.Repeat("x", 70):        strings.Repeat("x", 60),
		"a/../../etc/passwd":           "a-etc-passwd",
		"x" + strings.Repeat("-", 100): "x",
	} {
		if got := Slug(name); got != want {
			t.Errorf("Slug(%q) = %q, want %q", name, got, want)
		}
		if got := Slug(name); len(got) > 60 {
			t.Errorf("Slug(%q) is %d long", name, len(got))
		}
	}
}

func TestPaths(t *testing.T) {
	got := Paths("suites/support.dryfire.yaml", []string{"Refund!", "refund", "other", "REFUND", "refund-" + nameHash("refund")})
	want := []string{
		"suites/cassettes/support/refund.json",
		"suites/cassettes/support/refund-" + nameHash("refund") + ".json",
		"suites/cassettes/support/other.json",
		"suites/cassettes/support/refund-" + nameHash("REFUND") + ".json",
		"suites/cassettes/support/refund-" + nameHash("refund") + "-" + nameHash("refund-"+nameHash("refund")) + ".json",
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("path %d = %s, want %s", i, got[i], want[i])
		}
	}
	// Deterministic, and independent of the other suites.
	if again := Paths("suites/support.dryfire.yaml", []string{"Refund!", "refund", "other", "REFUND", "refund-" + nameHash("refund")}); strings.Join(again, " ") != strings.Join(got, " ") {
		t.Error("Paths is not deterministic")
	}
	if p := Paths("a.dryfire.yml", []string{"x"})[0]; p != "cassettes/a/x.json" {
		t.Errorf("yml suite: %s", p)
	}
}

// A suite named "...dryfire.yaml" had the base ".." and its cassettes
// landed beside the suite: a case named "package" overwrote package.json.
func TestHostileSuiteNameKeepsCassettesInsideCassettesDir(t *testing.T) {
	for _, suite := range []string{"p/...dryfire.yaml", "p/..dryfire.yaml", "p/.dryfire.yaml", "p/...dryfire.yml", "p/.."} {
		for _, name := range []string{"package", "..", "../../x", "/etc/passwd"} {
			p := Paths(suite, []string{name})[0]
			rel, err := filepath.Rel("p/cassettes", p)
			if err != nil || strings.HasPrefix(rel, "..") || filepath.Dir(rel) == "." {
				t.Errorf("suite %q case %q: cassette %s is not inside p/cassettes/SUITE/", suite, name, p)
			}
		}
	}
}

func TestDefaultMode(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	if m := DefaultMode(get); m != Once {
		t.Errorf("without CI: %s", m)
	}
	env["CI"] = "true"
	if m := DefaultMode(get); m != None {
		t.Errorf("with CI: %s", m)
	}
	for _, m := range Modes {
		if got, err := ParseMode(string(m)); got != m || err != nil {
			t.Errorf("ParseMode(%s) = %s, %v", m, got, err)
		}
	}
	if _, err := ParseMode("sometimes"); err == nil {
		t.Error("ParseMode accepted sometimes")
	}
}

// The agent's and the model-driven user's recorders share the case's
// file, each its own part: saving one keeps the other, each replays only
// its own, and a part that is missing is missing in mode none.
func TestUserSection(t *testing.T) {
	dir := t.TempDir()
	api := newEcho(t)
	agent := config(dir, Once, http.DefaultTransport)
	user := agent
	user.Section, user.Provider = UserSection, "anthropic"
	url := api.URL + "/v1/chat/completions"
	userReqs := []string{`{"model":"u","messages":[{"role":"user","content":"say something"}]}`}

	// Recorded as a case does: the user's part is saved first.
	ur, ar := mustOpen(t, user), mustOpen(t, agent)
	for _, b := range requests[:2] {
		call(t, ar, url, b)
	}
	call(t, ur, url, userReqs[0])
	if wrote, err := ur.Save(); !wrote || err != nil {
		t.Fatalf("user Save = %v, %v", wrote, err)
	}
	if wrote, err := ar.Save(); !wrote || err != nil {
		t.Fatalf("agent Save = %v, %v", wrote, err)
	}
	c, err := Load(agent.File)
	if err != nil || len(c.Interactions) != 2 || c.User == nil || len(c.User.Interactions) != 1 {
		t.Fatalf("the file: %v %+v", err, c)
	}
	if strings.Contains(string(c.Interactions[0].Request.Body), "say something") || !strings.Contains(string(c.User.Interactions[0].Request.Body), "say something") {
		t.Errorf("the parts are mixed up: %+v", c)
	}
	if got, want := c.User.Rules, RulesFor("anthropic"); len(got) != len(want) || got[len(got)-1] != want[len(want)-1] {
		t.Errorf("user rules %v, want %v", got, want)
	}

	// Replayed offline: each recorder plays its own part only.
	for _, cfg := range []Config{agent, user} {
		cfg.Mode, cfg.Live = None, nil
		r := mustOpen(t, cfg)
		reqs := requests[:2]
		if cfg.Section == UserSection {
			reqs = userReqs
		}
		for i, b := range reqs {
			if _, _, err := call(t, r, url, b); err != nil {
				t.Fatalf("section %q, request %d: %v", cfg.Section, i+1, err)
			}
		}
		if u := r.unplayed(); u != nil {
			t.Errorf("section %q: %v", cfg.Section, u)
		}
	}

	// The user asks something else: the error names its part.
	u2 := user
	u2.Mode, u2.Live = None, nil
	r := mustOpen(t, u2)
	_, _, err = call(t, r, url, `{"model":"u","messages":[]}`)
	var re *ReplayError
	if !errors.As(err, &re) || !strings.Contains(re.Error(), "the simulated user's model request 1 differs from the recording in "+agent.File+" (the simulated user's part)") ||
		!strings.Contains(re.Error(), "the simulated user sent something else") {
		t.Errorf("a stray user request: %v", err)
	}
	// Unplayed user calls name the part too.
	r = mustOpen(t, u2)
	if u := r.unplayed(); u == nil || !strings.Contains(u.Summary(), "1 of 1 interaction recorded in "+agent.File+" (the simulated user's part) was not played") {
		t.Errorf("unplayed: %v", u)
	}

	// Re-recording the agent alone keeps the user's part, byte for byte;
	// with DropUser (the case lost its model-driven user) it goes.
	before, _ := os.ReadFile(agent.File)
	all := agent
	all.Mode = All
	record(t, all, url, requests)
	c, _ = Load(agent.File)
	if len(c.Interactions) != 3 || c.User == nil || len(c.User.Interactions) != 1 {
		t.Fatalf("after re-recording the agent: %+v", c)
	}
	after, _ := os.ReadFile(agent.File)
	if i := strings.Index(string(before), `"user_rules"`); i < 0 || !strings.HasSuffix(string(after), string(before[i:])) {
		t.Errorf("the user's part changed:\n%s\n---\n%s", before, after)
	}
	all.DropUser = true
	record(t, all, url, requests[:1])
	if c, _ = Load(agent.File); c.User != nil || len(c.Interactions) != 1 {
		t.Errorf("DropUser kept %+v", c.User)
	}

	// A file without the user's part: mode none says it is missing, mode
	// once records it and keeps the agent's.
	u2 = user
	u2.Mode, u2.Live = None, nil
	var me *MissingError
	if _, err := Open(u2, false); !errors.As(err, &me) || !strings.Contains(err.Error(), "no recording of the simulated user: "+agent.File+" holds none") {
		t.Errorf("Open in mode none: %v", err)
	}
	record(t, user, url, userReqs)
	if c, _ = Load(agent.File); c.User == nil || len(c.User.Interactions) != 1 || len(c.Interactions) != 1 {
		t.Errorf("recorded into a file without a user part: %+v", c)
	}
	// A user's part recorded where no agent's was: the agent's part is
	// empty.
	os.Remove(agent.File)
	record(t, user, url, userReqs)
	if c, err = Load(agent.File); err != nil || c.User == nil || len(c.Interactions) != 0 || c.Case != "refund" {
		t.Errorf("a user's part alone: %v %+v", err, c)
	}
}
