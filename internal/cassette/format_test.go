package cassette

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/value"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func sample() *Cassette {
	return &Cassette{
		Suite: "support.dryfire.yaml",
		Case:  "refund for a gold customer",
		Note:  "Recorded by dryfire from 127.0.0.1; dryfire run replays it offline.",
		Rules: RulesFor("anthropic"),
		Interactions: []Interaction{
			{
				Request: Request{
					Method: "POST", Path: "/v1/messages",
					Header: map[string]string{"anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024"},
					Body:   []byte(`{"max_tokens":4096,"messages":[{"content":"Refund A-991 \"now\"\n","role":"user"}],"model":"claude","tools":[]}`),
					JSON:   true,
				},
				Response: Response{
					Status: 200,
					Header: map[string]string{"content-type": "application/json"},
					Body:   []byte("{\"id\":\"msg_1\",\"content\":[{\"type\":\"text\",\"text\":\"ok \\u00e9 <b>\"}],\n  \"usage\": {\"input_tokens\": 10}}\n"),
				},
			},
			{
				Request:  Request{Method: "POST", Path: "/v1/messages?beta=true", Body: []byte("plain text body"), JSON: false},
				Response: Response{Status: 529, Body: []byte(" \t{\"type\":\"error\"}\r\n\n")},
			},
			{
				Request:  Request{Method: "GET", Path: "/v1/models"},
				Response: Response{Status: 200, Header: map[string]string{"content-type": "text/plain"}, Body: []byte("not json {\n")},
			},
			{
				Request:  Request{Method: "POST", Path: "/bin", Body: []byte{0xff, 0x00, 0x01}},
				Response: Response{Status: 200, Body: []byte{0x89, 'P', 'N', 'G', 0, 0xfe}},
			},
		},
	}
}

func TestMarshalGolden(t *testing.T) {
	golden(t, "sample.json", sample().Marshal())
}

func TestRoundTripExactBytes(t *testing.T) {
	c := sample()
	data := c.Marshal()
	got, err := Unmarshal(data)
	if err != nil {
		t.Fatalf("Unmarshal: %v\n%s", err, data)
	}
	if got.Suite != c.Suite || got.Case != c.Case || got.Note != c.Note || len(got.Rules) != len(c.Rules) {
		t.Errorf("header fields: got %+v", got)
	}
	if len(got.Interactions) != len(c.Interactions) {
		t.Fatalf("%d interactions, want %d", len(got.Interactions), len(c.Interactions))
	}
	for i, want := range c.Interactions {
		g := got.Interactions[i]
		if !bytes.Equal(g.Response.Body, want.Response.Body) {
			t.Errorf("interaction %d: response body %q, want %q", i+1, g.Response.Body, want.Response.Body)
		}
		gb := g.Request.Body
		if g.Request.JSON {
			var c bytes.Buffer
			json.Compact(&c, gb)
			gb = c.Bytes()
		}
		if !bytes.Equal(gb, want.Request.Body) || g.Request.JSON != want.Request.JSON {
			t.Errorf("interaction %d: request body %q (json %v), want %q (json %v)", i+1, g.Request.Body, g.Request.JSON, want.Request.Body, want.Request.JSON)
		}
		if g.Request.Method != want.Request.Method || g.Request.Path != want.Request.Path || g.Response.Status != want.Response.Status {
			t.Errorf("interaction %d: %+v", i+1, g)
		}
		if len(g.Request.Header) != len(want.Request.Header) || len(g.Response.Header) != len(want.Response.Header) {
			t.Errorf("interaction %d: headers %v %v", i+1, g.Request.Header, g.Response.Header)
		}
	}
	// And once more: the same bytes.
	if again := got.Marshal(); !bytes.Equal(again, data) {
		t.Errorf("a second Marshal differs:\n%s\n---\n%s", again, data)
	}
}

// A cassette with a model-driven user's part: written after the agent's
// interactions, read back as it was, and the same bytes again.
func TestUserPart(t *testing.T) {
	c := sample()
	c.Interactions = c.Interactions[:1]
	c.User = &Part{Rules: RulesFor("openai"), Interactions: sample().Interactions[2:3]}
	data := c.Marshal()
	golden(t, "sample-user.json", data)
	got, err := Unmarshal(data)
	if err != nil {
		t.Fatalf("Unmarshal: %v\n%s", err, data)
	}
	if got.User == nil || len(got.User.Interactions) != 1 || got.User.Interactions[0].Request.Path != "/v1/models" || len(got.User.Rules) != len(c.User.Rules) || len(got.Interactions) != 1 {
		t.Fatalf("read back: %+v", got)
	}
	if again := got.Marshal(); !bytes.Equal(again, data) {
		t.Errorf("a second Marshal differs:\n%s\n---\n%s", again, data)
	}
	// An empty part is a part: the user was recorded saying nothing.
	c.User = &Part{}
	got, err = Unmarshal(c.Marshal())
	if err != nil || got.User == nil || len(got.User.Interactions) != 0 {
		t.Errorf("an empty user part: %v %+v\n%s", err, got, c.Marshal())
	}
	// No part: none read.
	c.User = nil
	if got, err = Unmarshal(c.Marshal()); err != nil || got.User != nil {
		t.Errorf("no user part: %v %+v", err, got)
	}
}

func TestEmptyCassette(t *testing.T) {
	c := &Cassette{Suite: "s.dryfire.yaml", Case: "c", Rules: []Rule{RuleJSON}}
	data := c.Marshal()
	got, err := Unmarshal(data)
	if err != nil || len(got.Interactions) != 0 {
		t.Fatalf("%v %+v\n%s", err, got, data)
	}
}

func TestUnmarshalErrors(t *testing.T) {
	valid := string(sample().Marshal())
	for _, tc := range []struct{ name, data, want string }{
		{"empty", "", "not valid JSON: EOF"},
		{"torn", valid[:len(valid)/2], "not valid JSON: unexpected EOF"},
		{"garbage", "{\n  \"dryfire_cassette\": 1,\n  oops\n}", "not valid JSON: line 3: invalid character 'o' looking for beginning of object key string"},
		{"two values", `{"dryfire_cassette": 1} {}`, "more than one value"},
		{"no version", `{"suite": "x", "interactions": []}`, `not a dryfire cassette: it has no "dryfire_cassette" field`},
		{"newer", `{"dryfire_cassette": 2}`, "cassette format 2 is newer than this dryfire reads (1); upgrade dryfire or re-record"},
		{"zero", `{"dryfire_cassette": 0}`, "unknown cassette format 0"},
		{"string version", `{"dryfire_cassette": "1"}`, `line 1: "dryfire_cassette" holds string, want int`},
		{"unknown field", `{"dryfire_cassette": 1, "interactons": []}`, `unknown field "interactons"`},
		{"no response", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}}]}`, `interaction 1 needs both "request" and "response"`},
		{"no path", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST"}, "response": {"status": 200}}]}`, `interaction 1: the request needs "method" and "path"`},
		{"bad status", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 2}}]}`, "response status 2 is not an HTTP status"},
		{"two bodies", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "body": {}, "body_text": "x"}}]}`, `interaction 1: response has more than one of "body", "body_text", "body_base64"`},
		{"bad base64", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "body_base64": "!!"}}]}`, `"body_base64" is not base64`},
		{"bad trailing", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "body": 1, "body_trailing": "x"}}]}`, `may hold only whitespace`},
		{"events and body", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "body": {}, "events": []}}]}`, `interaction 1: a response has "events" or a body, not both`},
		{"events not a list", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": {}}}]}`, `interaction 1: response "events" is not a list`},
		{"event unknown field", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": [{"evnt": "x"}]}}]}`, `interaction 1: response event 1: unknown field "evnt"`},
		{"event empty", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": [{}]}}]}`, `event 1: needs "event", "data", "data_text", "raw" or "raw_base64"`},
		{"event raw and data", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": [{"data": 1}, {"raw": "x", "data": 1}]}}]}`, `event 2: "raw" or "raw_base64" goes alone`},
		{"event two data", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": [{"data": 1, "data_text": "1"}]}}]}`, `has both "data" and "data_text"`},
		{"user part bad", `{"dryfire_cassette": 1, "interactions": [], "user_interactions": [{"request": {"method": "POST", "path": "/"}}]}`, `user interaction 1 needs both "request" and "response"`},
		{"user rules alone", `{"dryfire_cassette": 1, "interactions": [], "user_rules": ["json"]}`, `"user_rules" without "user_interactions"`},
		{"event name line break", `{"dryfire_cassette": 1, "interactions": [{"request": {"method": "POST", "path": "/"}, "response": {"status": 200, "events": [{"event": "a\nb"}]}}]}`, `"event" may not hold a line break`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Unmarshal([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// A request in canonical form has the bytes a cassette holds for it, so
// that replay compares bytes, not trees.
func TestCanonicalLayoutIsTheFiles(t *testing.T) {
	for _, body := range []string{
		`{"b":[1,{"z":[],"a":{}}],"a":"x\u00e9\n\"<>&\u2028","c":[[]],"d":{"e":{"f":null}},"n":-1.5e10,"t":true}`,
		`[]`, `{}`, `"s"`, `12345678901234567890`, `[{"a":[{"b":[]}]}]`,
	} {
		cb := canonicalBody([]byte(body), nil, nil)
		if !cb.json {
			t.Fatalf("%s is not JSON?", body)
		}
		var compact, indented bytes.Buffer
		compact.WriteString(value.Canonical(cb.value))
		json.Indent(&indented, compact.Bytes(), bodyPrefix, bodyIndent)
		if indented.String() != string(cb.bytes) {
			t.Errorf("%s:\nwriteIndented %s\njson.Indent   %s", body, cb.bytes, indented.Bytes())
		}
		c := &Cassette{Interactions: []Interaction{{Request: Request{Method: "POST", Path: "/", Body: cb.bytes, JSON: true}, Response: Response{Status: 200}}}}
		got, err := Unmarshal(c.Marshal())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Interactions[0].Request.Body, cb.bytes) {
			t.Errorf("%s: the file holds\n%s\nnot\n%s", body, got.Interactions[0].Request.Body, cb.bytes)
		}
	}
}
