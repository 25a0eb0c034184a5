package cassette

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
)

// Declared matching rules: a recording made once replays requests whose
// volatile values differ, in order and by content; the
// cassette lists the rules; with no rules the default stays strict.
func TestMatchRules(t *testing.T) {
	e := newEcho(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "c.json")
	rules := []reqmatch.Rule{{Preset: "uuid"}, {Ignore: "$.metadata.ts"}}
	body := func(id, ts string) string {
		return `{"model":"m","messages":[{"role":"user","content":"session ` + id + `: hi"}],"metadata":{"ts":` + ts + `}}`
	}
	rec := mustOpen(t, Config{Mode: All, File: file, SuiteFile: "s.dryfire.yaml", Root: dir, Case: "c", Provider: "openai", Live: liveClient(http.DefaultTransport), Match: rules})
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
	replayed := func(rules []reqmatch.Rule, byContent bool) error {
		r := mustOpen(t, Config{Mode: None, File: file, SuiteFile: "s.dryfire.yaml", Root: dir, Case: "c", Provider: "openai", Match: rules, ByContent: byContent})
		a, _, err := call(t, r, "/v1/chat/completions", replay)
		if err == nil && !a.Replayed {
			t.Errorf("by content %v: not replayed", byContent)
		}
		return err
	}
	for _, byContent := range []bool{false, true} {
		if err := replayed(rules, byContent); err != nil {
			t.Errorf("by content %v: %v", byContent, err)
		}
	}

	// Strict: the presets that would match are named; an ignored path
	// is not a preset, so it is still a difference.
	for _, byContent := range []bool{false, true} {
		name := map[bool]string{false: "in order", true: "by content"}[byContent]
		var re *ReplayError
		if err := replayed(nil, byContent); !errors.As(err, &re) {
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
