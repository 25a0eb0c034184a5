package cassette

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// indexOf writes a cassette of the given request bodies (each answered
// with its index) for the OpenAI Chat path, and returns its Index.
func indexOf(t *testing.T, header map[string]string, bodies ...string) *Index {
	t.Helper()
	c := &Cassette{Suite: "s.dryfire.yaml", Case: "c", Rules: RulesFor(AnyAPI)}
	for i, b := range bodies {
		c.Interactions = append(c.Interactions, Interaction{
			Request:  Request{Method: "POST", Path: "/v1/chat/completions", Header: header, Body: []byte(b), JSON: true},
			Response: Response{Status: 200, Body: []byte{byte('0' + i)}},
		})
	}
	file := filepath.Join(t.TempDir(), "c.json")
	if err := os.WriteFile(file, c.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(Config{Mode: None, File: file, SuiteFile: "s.dryfire.yaml", Root: filepath.Dir(file), Case: "c", Provider: AnyAPI})
	if err != nil {
		t.Fatal(err)
	}
	ix := r.Index()
	if ix == nil {
		t.Fatal("no index")
	}
	return ix
}

func find(t *testing.T, ix *Index, body string, header ...string) (int, error) {
	t.Helper()
	req, _ := http.NewRequest("POST", "http://h/v1/chat/completions", nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	i, rs, err := ix.Find(req, []byte(body))
	if err == nil && string(rs.Body) != string(rune('0'+i)) {
		t.Fatalf("interaction %d answered %q", i, rs.Body)
	}
	return i, err
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
