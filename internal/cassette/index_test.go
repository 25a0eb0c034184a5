package cassette

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/wire"
)

// indexOf writes a cassette of the given request bodies (each answered
// with its index) for the OpenAI Chat path, and opens it to be answered
// by content. A body that is not JSON is recorded as bytes.
func indexOf(t *testing.T, header map[string]string, bodies ...string) *tape {
	t.Helper()
	c := &Cassette{Suite: "s.dryfire.yaml", Case: "c", Rules: RulesFor(AnyAPI)}
	for i, b := range bodies {
		c.Interactions = append(c.Interactions, Interaction{
			Request:  Request{Method: "POST", Path: "/v1/chat/completions", Header: header, Body: []byte(b), JSON: json.Valid([]byte(b))},
			Response: Response{Status: 200, Body: []byte{byte('0' + i)}},
		})
	}
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, c.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	ix := mustOpen(t, Config{Mode: None, File: file, SuiteFile: "s.dryfire.yaml", Root: filepath.Dir(file), Case: "c", Provider: AnyAPI, ByContent: true})
	if !ix.ByContent() {
		t.Fatal("not by content")
	}
	return ix
}

// findAt is the interaction that answered a request, by its answer.
func findAt(t *testing.T, ix *tape, req *http.Request, body []byte) (int, error) {
	t.Helper()
	a := ix.rec.Answer(&model.Call{Wire: wire.OpenAIChat.Wire(), HTTP: req, Body: body})
	if a.Err != nil {
		return -1, a.Err
	}
	if len(a.Body) != 1 || !a.Replayed {
		t.Errorf("answered %q", a.Body) // Errorf: called from other goroutines too
		return -1, nil
	}
	return int(a.Body[0] - '0'), nil
}

func find(t *testing.T, ix *tape, body string, header ...string) (int, error) {
	t.Helper()
	return findAt(t, ix, newReq(t, "http://h/v1/chat/completions", "", header...), []byte(body))
}

// A request is answered by the first interaction whose canonical request
// equals it: in any order, any layout and key order, numbers by value,
// the dropped fields ignored; the headers that matter must agree.
func TestIndexFind(t *testing.T) {
	ix := indexOf(t, nil, `{"n": 1, "m": "a"}`, `{"n": 2}`, `{"n": 2.0, "user": "u-1"}`, `{"n": 1}`)
	for _, tt := range []struct {
		body string
		want int
	}{
		{`{"n":2}`, 1},
		{`{"m":"a","n":1.0}`, 0},
		{" {\n \"n\" : 1 , \"m\" : \"a\" }\n", 0},
		{`{"n":2,"user":"someone"}`, 1}, // openai-user drops user
		{`{"n":1}`, 3},
		{`{"n":2}`, 1}, // again: the same answer
	} {
		for range 2 { // the second time from the raw cache
			if got, err := find(t, ix, tt.body); err != nil || got != tt.want {
				t.Errorf("%s: interaction %d, %v; want %d", tt.body, got, err, tt.want)
			}
		}
	}
	_, err := find(t, ix, `{"n":3,"m":"a"}`)
	re, ok := err.(*ReplayError)
	if !ok || re.Kind != NoMatch || re.Request != 1 || len(re.Diffs) != 1 || re.Diffs[0] != "$.n: recorded 1, now 3" {
		t.Fatalf("miss: %#v", err)
	}
	if !strings.Contains(re.Error(), "the closest, interaction 1 of 4, differs") {
		t.Errorf("message: %s", re.Error())
	}
	// The headers kept must agree.
	hx := indexOf(t, map[string]string{"openai-beta": "assistants=v2"}, `{"n":1}`)
	if _, err := find(t, hx, `{"n":1}`); err == nil {
		t.Error("a request without the recorded header matched")
	}
	if i, err := find(t, hx, `{"n":1}`, "OpenAI-Beta", "assistants=v2"); err != nil || i != 0 {
		t.Errorf("with the header: %d %v", i, err)
	}
}

func TestMatchHeaderKeys(t *testing.T) {
	for i, name := range matchHeaders {
		if got := http.CanonicalHeaderKey(name); got != matchHeaderKeys[i] {
			t.Errorf("matchHeaderKeys[%d] = %q, want %q", i, matchHeaderKeys[i], got)
		}
	}
}

// A request seen before is found by its body, but only with the head it
// was answered with: the same bytes sent with another method, path, query
// or kept header are looked up afresh, however often each comes.
func TestIndexSeenNeedsTheSameHead(t *testing.T) {
	ix := indexOf(t, map[string]string{"openai-beta": "assistants=v2"}, `{"n":1}`)
	try := func(method, url string, beta bool) error {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if beta {
			req.Header.Set("OpenAI-Beta", "assistants=v2")
		}
		i, err := findAt(t, ix, req, []byte(`{"n":1}`))
		if err == nil && i != 0 {
			t.Fatalf("%s %s: interaction %d answered", method, url, i)
		}
		return err
	}
	const url = "http://h/v1/chat/completions"
	for round := range 3 {
		if err := try("POST", url, true); err != nil {
			t.Fatalf("round %d: the recorded request: %v", round, err)
		}
		for _, c := range []struct {
			method, url string
			beta        bool
		}{
			{"POST", url, false},
			{"PUT", url, true},
			{"POST", url + "?x=1", true},
			{"POST", "http://h/v1/chat/completion%73", true}, // another path as sent
			{"POST", "http://h/v1/responses", true},
		} {
			if err := try(c.method, c.url, c.beta); err == nil {
				t.Errorf("round %d: %s %s (header %v) matched", round, c.method, c.url, c.beta)
			}
		}
	}
	if got := len(*ix.index.seen.Load()); got != 1 {
		t.Errorf("%d bodies seen, want 1", got)
	}
}

// Requests seen before and new ones, from many goroutines at once, each
// get their own interaction (go test -race checks the lock-free reads).
func TestIndexFindConcurrent(t *testing.T) {
	bodies := []string{`{"n":0}`, `{"n":1}`, `{"n":2}`, `{"n":3}`}
	ix := indexOf(t, nil, bodies...)
	layouts := []func(string) string{
		func(b string) string { return b },
		func(b string) string { return " " + b },
		func(b string) string { return strings.ReplaceAll(b, ":", " : ") },
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 200 {
				want := (g + k) % len(bodies)
				body := layouts[k%len(layouts)](bodies[want])
				req, _ := http.NewRequest("POST", "http://h/v1/chat/completions", nil)
				i, err := findAt(t, ix, req, []byte(body))
				if err != nil || i != want {
					t.Errorf("%s: interaction %d, %v; want %d", body, i, err, want)
					return
				}
			}
		}()
	}
	wg.Wait()
	if got := ix.index.n; got != len(bodies)*len(layouts) {
		t.Errorf("%d heads remembered, want %d", got, len(bodies)*len(layouts))
	}
}

// The caller's buffer is its own again once it is answered: what the Index
// remembers and what its error says do not change when it is reused.
func TestIndexKeepsNothingOfTheBody(t *testing.T) {
	ix := indexOf(t, nil, `{"n":1}`, "not json")
	req, _ := http.NewRequest("POST", "http://h/v1/chat/completions", nil)
	for _, body := range []string{`{"n":1}`, "not json"} {
		buf := []byte(body)
		i, err := findAt(t, ix, req, buf)
		if err != nil {
			t.Fatal(err)
		}
		copy(buf, strings.Repeat("x", len(buf)))
		if j, err := findAt(t, ix, req, []byte(body)); err != nil || j != i {
			t.Errorf("%s again: interaction %d, %v; want %d", body, j, err, i)
		}
		if _, err := findAt(t, ix, req, buf); err == nil {
			t.Errorf("%s overwritten: matched", buf)
		}
	}
	for _, body := range []string{`{"n":2}`, "not json either"} {
		buf := []byte(body)
		_, err := findAt(t, ix, req, buf)
		if err == nil {
			t.Fatalf("%s matched", body)
		}
		msg := err.Error()
		copy(buf, strings.Repeat("x", len(buf)))
		if err.Error() != msg {
			t.Errorf("the error changed with the buffer:\n%s\n%s", msg, err.Error())
		}
	}
}

// The bodies the index remembers are bounded by their bytes as well as by
// their count: requests padded to match one recording, each a MiB, are
// answered alike, and what is kept of them stays under MaxSeenBytes.
func TestIndexSeenIsBoundedByBytes(t *testing.T) {
	ix := indexOf(t, nil, `{"n":1}`)
	req, _ := http.NewRequest("POST", "http://h/v1/chat/completions", nil)
	n := 2*MaxSeenBytes/(1<<20) + 1
	for k := range n {
		body := `{"n":1}` + strings.Repeat(" ", 1<<20+k)
		if i, err := findAt(t, ix, req, []byte(body)); err != nil || i != 0 {
			t.Fatalf("padded body %d: interaction %d, %v", k, i, err)
		}
	}
	kept := 0
	for body := range *ix.index.seen.Load() {
		kept += len(body)
	}
	if kept > MaxSeenBytes || kept == 0 {
		t.Errorf("seen keeps %d bytes of bodies, want some and at most %d", kept, MaxSeenBytes)
	}
}
