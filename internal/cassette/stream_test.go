package cassette

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

const sseAnswer = "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" +
	"event: ping\ndata: {\"type\": \"ping\"}\n\n" +
	": a comment\n\n" +
	"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"

// A streamed answer is kept as its events and replays byte for byte.
func TestStreamsRecordAsEvents(t *testing.T) {
	dir := t.TempDir()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		io.WriteString(w, sseAnswer)
	}))
	defer api.Close()
	cfg := config(dir, Once, http.DefaultTransport)
	answers := record(t, cfg, api.URL+"/v1/messages", requests[:1])
	if string(answers[0]) != sseAnswer {
		t.Fatalf("recording: %q", answers[0])
	}
	file, _ := os.ReadFile(cfg.File)
	want := `        "headers": {
          "content-type": "text/event-stream; charset=utf-8"
        },
        "events": [
          {"event": "message_start", "data": {"type":"message_start"}},
          {"event": "ping", "data": {"type": "ping"}},
          {"raw": ": a comment\n\n"},
          {"event": "message_stop", "data": {"type":"message_stop"}}
        ]
      }`
	if !strings.Contains(string(file), want) {
		t.Errorf("the cassette:\n%s\nwant it to hold\n%s", file, want)
	}
	r := mustOpen(t, config(dir, None, nil))
	_, data, err := call(t, r, "http://elsewhere/v1/messages", requests[0])
	if err != nil || string(data) != sseAnswer {
		t.Errorf("replayed %q, %v", data, err)
	}
	c, _ := Load(cfg.File)
	if rs := c.Interactions[0].Response; !rs.Streamed() || len(rs.Events) != 4 || rs.Body != nil {
		t.Errorf("read back: %+v", rs)
	}
}

// A request seen before replays without being canonicalised again; one
// that differs in anything matched still fails, after a Reset as before.
func TestResetAndSeenRequests(t *testing.T) {
	dir := t.TempDir()
	api := newEcho(t)
	record(t, config(dir, Once, http.DefaultTransport), api.URL+"/v1/chat/completions", requests)
	r := mustOpen(t, config(dir, None, nil))
	play := func(body string, header ...string) error {
		return r.ask(newReq(t, "/v1/chat/completions", body, header...), body).Err
	}
	for round := range 3 {
		for i, b := range requests {
			if err := play(b); err != nil {
				t.Fatalf("round %d, request %d: %v", round, i+1, err)
			}
		}
		r.rec.Reset()
	}
	if len(r.seen) != 3 || len(r.seen[0]) != 1 {
		t.Errorf("seen: %d interactions, %d forms of the first", len(r.seen), len(r.seen[0]))
	}
	// Another spelling of the same request matches, and is remembered.
	spaced := strings.ReplaceAll(requests[0], ",", ", ")
	if err := play(spaced); err != nil {
		t.Fatal(err)
	}
	if len(r.seen[0]) != 2 {
		t.Errorf("%d forms of the first request remembered", len(r.seen[0]))
	}
	for _, tc := range []struct {
		name   string
		body   string
		header []string
	}{
		{"body", strings.Replace(requests[1], "gold", "silver", 1), nil},
		{"header", requests[1], []string{"OpenAI-Beta", "assistants=v2"}},
	} {
		r.rec.Reset()
		if err := play(requests[0]); err != nil {
			t.Fatal(err)
		}
		if err := play(tc.body, tc.header...); err == nil {
			t.Errorf("%s: a changed request replayed", tc.name)
		}
	}
	if a := r.ask(newReq(t, "/v1/responses", requests[0]), requests[0]); a.Err == nil {
		t.Error("a problem does not stick")
	}
	r.rec.Reset()
	if a := r.ask(newReq(t, "/v1/responses", requests[0]), requests[0]); a.Err == nil {
		t.Error("another path replayed")
	}
}

// Live answers are kept in the order their requests came, whatever order
// they end in (a stream ends as its client reads it), each as its API's
// rules say; the note names the first request's host.
func TestKeepOrder(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "data: "+r.URL.Path+"\n\n")
	}))
	defer api.Close()
	dir := t.TempDir()
	cfg := config(dir, Once, http.DefaultTransport)
	cfg.Provider = AnyAPI
	r := mustOpen(t, cfg)
	body1, body2 := `{"n":1,"user":"u"}`, `{"n":2,"metadata":{"user_id":"u"}}`
	first := r.ask(newReq(t, strings.Replace(api.URL, "127.0.0.1", "localhost", 1)+"/v1/chat/completions", body1), body1)
	second := r.ask(newReq(t, api.URL+"/v1/messages", body2), body2)
	if first.Live == nil || second.Live == nil {
		t.Fatalf("not live streams: %+v, %+v", first, second)
	}
	read(t, second)
	read(t, first)
	if wrote, err := r.Save(); !wrote || err != nil {
		t.Fatalf("Save = %v, %v", wrote, err)
	}
	c, _ := Load(cfg.File)
	if len(c.Interactions) != 2 || !bytes.Contains(c.Interactions[0].Request.Body, []byte(`"n": 1`)) || string(c.Interactions[1].Response.Bytes()) != "data: /v1/messages\n\n" {
		t.Errorf("order: %+v", c.Interactions)
	}
	// Rules by API: the OpenAI request loses user, the Anthropic one
	// metadata.user_id.
	if bytes.Contains(c.Interactions[0].Request.Body, []byte("user")) || bytes.Contains(c.Interactions[1].Request.Body, []byte("user_id")) {
		t.Errorf("rules not applied:\n%s\n%s", c.Interactions[0].Request.Body, c.Interactions[1].Request.Body)
	}
	if strings.Join([]string{string(c.Rules[2]), string(c.Rules[3])}, ",") != "openai-user,anthropic-metadata" {
		t.Errorf("rules %v", c.Rules)
	}
	if !strings.Contains(c.Note, "from localhost;") {
		t.Errorf("note %q", c.Note)
	}
}
