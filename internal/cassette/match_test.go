package cassette

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
)

// Declared matching rules: a recording made once replays requests whose
// volatile values differ, in order (Begin) and by content (Index); the
// cassette lists the rules; with no rules the default stays strict.
func TestMatchRules(t *testing.T) {
	e := newEcho(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	rules := []reqmatch.Rule{{Preset: "uuid"}, {Ignore: "$.metadata.ts"}}
	body := func(id, ts string) string {
		return `{"model":"m","messages":[{"role":"user","content":"session ` + id + `: hi"}],"metadata":{"ts":` + ts + `}}`
	}
	rec, err := Open(Config{Mode: All, File: file, SuiteFile: "s.dryfire.yaml", Root: dir, Case: "c", Provider: "openai", Live: http.DefaultTransport, Match: rules})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := call(t, rec, e.URL+"/v1/chat/completions", body("3f2504e0-4f89-41d3-9a0c-0305e82c3301", "1")); err != nil {
		t.Fatal(err)
	}
	if _, err := rec.Save(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)
	if want := `  "match": [{"preset":"uuid"}, {"ignore":"$.metadata.ts"}],` + "\n"; !bytes.Contains(data, []byte(want)) {
		t.Errorf("the cassette does not list its rules as %q:\n%s", want, data)
	}
	tape, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rules, tape.Match); diff != "" {
		t.Errorf("rules read back (-want +got):\n%s", diff)
	}
	if !bytes.Contains(data, []byte("3f2504e0-4f89-41d3-9a0c-0305e82c3301")) {
		t.Errorf("the cassette should keep the request as sent:\n%s", data)
	}

	replay := body("6ba7b810-9dad-11d1-80b4-00c04fd430c8", "2")
	req := func() *http.Request {
		r, _ := http.NewRequest("POST", "http://x/v1/chat/completions", strings.NewReader(replay))
		return r
	}
	rec, err = Open(Config{Mode: None, File: file, SuiteFile: "s.dryfire.yaml", Root: dir, Case: "c", Provider: "openai", Match: rules})
	if err != nil {
		t.Fatal(err)
	}
	if x, err := rec.Begin(req(), []byte(replay), ""); err != nil || x.Recorded == nil {
		t.Fatalf("in order: %v", err)
	}
	if _, _, err := rec.Index().Find(req(), []byte(replay)); err != nil {
		t.Errorf("by content: %v", err)
	}

	// Strict: the presets that would match are named; an ignored path
	// is not a preset, so it is still a difference.
	strict, err := Open(Config{Mode: None, File: file, SuiteFile: "s.dryfire.yaml", Root: dir, Case: "c", Provider: "openai"})
	if err != nil {
		t.Fatal(err)
	}
	for name, find := range map[string]func() error{
		"in order":   func() error { _, err := strict.Begin(req(), []byte(replay), ""); return err },
		"by content": func() error { _, _, err := strict.Index().Find(req(), []byte(replay)); return err },
	} {
		var re *ReplayError
		if err := find(); !errors.As(err, &re) {
			t.Fatalf("%s: %v, want a replay error", name, err)
		}
		want := []string{
			`$.messages[0].content: recorded "session 3f2504e0-4f89-41d3-9a0c-0305e82c3301: hi", now "session 6ba7b810-9dad-11d1-80b4-00c04fd430c8: hi" (preset uuid would match these)`,
			`$.metadata.ts: recorded 1, now 2`,
		}
		if diff := cmp.Diff(want, re.Diffs); diff != "" || !cmp.Equal(re.Presets, []string{"uuid"}) {
			t.Errorf("%s: presets %v, diffs (-want +got):\n%s", name, re.Presets, diff)
		}
	}
}
