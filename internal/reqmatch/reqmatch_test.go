package reqmatch

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parse(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestPresets(t *testing.T) {
	tests := []struct {
		preset, in, want string
	}{
		{"timestamp", "now 2026-12-01T10:04:58Z.", "now <timestamp>."},
		{"timestamp", "at 2026-12-01T10:04:58.123456+01:00 ok", "at <timestamp> ok"},
		{"timestamp", "at 2026-12-01 10:04:58,5 ok", "at <timestamp> ok"},
		{"timestamp", "at 2026-12-01 10:04 ok", "at <timestamp> ok"},
		{"timestamp", "Date: Tue, 01 Dec 2026 10:04:58 GMT", "Date: <timestamp>"},
		{"timestamp", "Tue Dec  1 10:04:58 UTC 2026", "<timestamp>"},
		{"timestamp", "Tue Dec 11 10:04:58 2026", "<timestamp>"},
		{"timestamp", "only a date 2026-12-01", "only a date 2026-12-01"},
		{"iso-date", "on 2026-12-01, not 2026-13-01", "on <date>, not 2026-13-01"},
		{"uuid", "id 3F2504E0-4F89-41D3-9A0C-0305E82C3301 and 3f2504e0-4f89-41d3-9a0c-0305e82c3301", "id <uuid> and <uuid>"},
		{"uuid", "not 3f2504e0-4f89-41d3-9a0c-0305e82c33011", "not 3f2504e0-4f89-41d3-9a0c-0305e82c33011"},
		{"epoch-s", "(now 1796111701.339)", "(now <epoch-s>)"},
		{"epoch-s", "ts=1796111701", "ts=<epoch-s>"},
		{"epoch-s", "ms=1796111701339", "ms=1796111701339"},
		{"epoch-s", "order 123456789", "order 123456789"},
		{"epoch-ms", "ms=1796111701339", "ms=<epoch-ms>"},
		{"epoch-ms", "ts=1796111701", "ts=1796111701"},
	}
	for _, tt := range tests {
		s, err := Compile([]Rule{{Preset: tt.preset}})
		if err != nil {
			t.Fatal(err)
		}
		got, _ := s.Apply(tt.in)
		if got != tt.want {
			t.Errorf("%s on %q: %q, want %q", tt.preset, tt.in, got, tt.want)
		}
	}
}

func TestApply(t *testing.T) {
	body := `{"a": {"b": 1, "c": 2}, "l": [{"id": "x"}, {"id": "y", "k": 3}], "n": 1796111701339, "s": "req 7 at 2026-12-01"}`
	s, err := Compile([]Rule{
		{Ignore: "$.a.b"},
		{Ignore: "$.l[*].id"},
		{Ignore: "$.missing.x"},
		{Preset: "epoch-ms"},
		{Regex: `req (\d+)`, Replace: "req #"},
		{Preset: "iso-date"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got, ap := s.Apply(parse(t, body))
	want := parse(t, `{"a": {"c": 2}, "l": [{}, {"k": 3}], "n": "<epoch-ms>", "s": "req # at <date>"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("applied (-want +got):\n%s", diff)
	}
	wantAp := Applied{
		"$.a.b":     {"ignore $.a.b"},
		"$.l[0].id": {"ignore $.l[*].id"},
		"$.l[1].id": {"ignore $.l[*].id"},
		"$.n":       {"preset epoch-ms"},
		"$.s":       {`regex "req (\\d+)" -> "req #"`, "preset iso-date"},
	}
	if diff := cmp.Diff(wantAp, ap); diff != "" {
		t.Errorf("applied paths (-want +got):\n%s", diff)
	}

	s, _ = Compile([]Rule{{Ignore: "$.l[1]"}, {Ignore: `$["a"].*`}})
	got, _ = s.Apply(parse(t, body))
	want = parse(t, `{"a": {}, "l": [{"id": "x"}, "<ignored>"], "n": 1796111701339, "s": "req 7 at 2026-12-01"}`)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ignored (-want +got):\n%s", diff)
	}
	var none *Set
	if v, ap := none.Apply("x"); v != "x" || ap != nil {
		t.Errorf("a nil set changed %v: %v", v, ap)
	}
}

func TestParsePath(t *testing.T) {
	good := map[string]Path{
		"$.a":              {{key: "a", index: -1}},
		`$.a["b]c"][2].*`:  {{key: "a", index: -1}, {key: "b]c", index: -1}, {index: 2}, {any: true, index: -1}},
		"$.messages[*].id": {{key: "messages", index: -1}, {any: true, index: -1}, {key: "id", index: -1}},
		"$.x-y_1":          {{key: "x-y_1", index: -1}},
	}
	for in, want := range good {
		got, err := ParsePath(in)
		if err != nil {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(step{})); diff != "" {
			t.Errorf("%s (-want +got):\n%s", in, diff)
		}
	}
	bad := []struct{ in, want string }{
		{"metadata.id", `column 1: a JSON path starts with $ (the body), e.g. $.metadata.request_id`},
		{"$", `column 1: $ alone is the whole body: name a part of it, e.g. $.metadata`},
		{"$.", `column 3: a member name after "." (letters, digits, _ or -; write ["…"] for others)`},
		{"$.a[x]", `column 5: "x" is not an index: write [N] (from 0), [*], or ["name"]`},
		{"$.a[-1]", `column 5: "-1" is not an index: write [N] (from 0), [*], or ["name"]`},
		{"$.a[1", `column 4: "[" without a closing "]"`},
		{`$["a`, `column 3: an unterminated or malformed quoted member name`},
		{`$["a"x`, `column 6: want ] after the quoted member name`},
		{"$a", `column 2: unexpected 'a': steps are .name, ["name"], [N], .* and [*]`},
	}
	for _, tt := range bad {
		_, err := ParsePath(tt.in)
		var pe *PathError
		if !errors.As(err, &pe) || err.Error() != tt.want {
			t.Errorf("%s: %v, want %s", tt.in, err, tt.want)
		}
	}
}

func TestFixing(t *testing.T) {
	tests := []struct {
		rec, now string
		want     []string
	}{
		{"now 1796111701.339", "now 1796111701.695", []string{"epoch-s"}},
		{"id 3f2504e0-4f89-41d3-9a0c-0305e82c3301", "id 6ba7b810-9dad-11d1-80b4-00c04fd430c8", []string{"uuid"}},
		{"at 2026-12-01T10:00:00Z id 3f2504e0-4f89-41d3-9a0c-0305e82c3301", "at 2026-12-02T11:00:00Z id 6ba7b810-9dad-11d1-80b4-00c04fd430c8", []string{"timestamp", "uuid"}},
		{"Say hi.", "Say hello.", nil},
		{"same", "same", nil},
	}
	for _, tt := range tests {
		if got := Fixing(tt.rec, tt.now); !cmp.Equal(got, tt.want) {
			t.Errorf("Fixing(%q, %q) = %v, want %v", tt.rec, tt.now, got, tt.want)
		}
	}
}

// A CLI's preset: what one coding-agent CLI's requests hold that changes
// from case to case and machine to machine becomes the same text, the
// rest stays; the set lists it as one rule. The strings are as the
// pinned CLIs write them (recorded against the test fakes).
func TestCLIPresets(t *testing.T) {
	for _, tc := range []struct{ preset, a, b, want string }{
		{"claude-code",
			"You have a persistent file-based memory at `/tmp/dryfire-home-1937538530/.claude/projects/-tmp-dryfire-workspace-1039587692/memory/`.\n - Primary working directory: /tmp/dryfire-workspace-1039587692\n - Platform: linux\n - Shell: bash\n - OS Version: Linux 6.18.44-fc-v1300\nToday's date is 2026-12-08.\nRan 1 test in 0.001s",
			"You have a persistent file-based memory at `/var/folders/x/T/dryfire-home-1/.claude/projects/-var-folders-x-T-dryfire-workspace-22/memory/`.\n - Primary working directory: /var/folders/x/T/dryfire-workspace-22\n - Platform: darwin\n - Shell: zsh\n - OS Version: Darwin 24.1.0\nToday's date is 2026-12-07.\nRan 1 test in 0.000s",
			"You have a persistent file-based memory at `<home>/.claude/projects/<workspace>/memory/`.\n - Primary working directory: <workspace>\n - Platform: <platform>\n - Shell: <shell>\n - OS Version: <os-version>\nToday's date is <date>.\nRan 1 test in <duration>"},
		{"codex",
			`<cwd>/tmp/dryfire-workspace-3562589695</cwd> <current_date>2026-12-08</current_date> <shell>bash</shell> msg_01a25075-03dd-77b1-884c-f0d5d0b5bc5d {"turn_started_at_unix_ms":1796646178888} Chunk ID: 4a9c4b Wall time: 0.0012 seconds`,
			`<cwd>/tmp/dryfire-workspace-7</cwd> <current_date>2026-12-07</current_date> <shell>zsh</shell> msg_6aea57f2-9c81-5934-b2b9-ffaac3e4298e {"turn_started_at_unix_ms":1796646189381} Chunk ID: 690fe4 Wall time: 0.0000 seconds`,
			`<cwd><workspace></cwd> <current_date><date></current_date> <shell><shell></shell> msg_<uuid> {"turn_started_at_unix_ms":<epoch-ms>} Chunk ID: <id> Wall time: <duration>`},
		{"gemini-cli",
			"Today's date is Tuesday, December 8, 2026. The project's temporary directory is: /tmp/dryfire-home-3243769266/.gemini/tmp/dryfire-workspace-97826231 <location>/work/x/node_modules/@google/gemini-cli/bundle/builtin/skill-creator/SKILL.md</location> read_file_1796646178888_0 My operating system is: linux",
			"Today's date is Monday, December 7, 2026. The project's temporary directory is: /tmp/dryfire-home-1/.gemini/tmp/dryfire-workspace-2 <location>/usr/lib/node_modules/@google/gemini-cli/bundle/builtin/skill-creator/SKILL.md</location> read_file_1796646189381_0 My operating system is: darwin",
			"Today's date is <date>. The project's temporary directory is: <home>/.gemini/tmp/<workspace> <location><node_modules>/@google/gemini-cli/bundle/builtin/skill-creator/SKILL.md</location> read_file_<epoch-ms>_0 My operating system is: <os>"},
	} {
		s, err := Compile([]Rule{{Preset: tc.preset}, {Ignore: "$.x"}})
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Rules(); len(got) != 2 || got[0] != (Rule{Preset: tc.preset}) {
			t.Errorf("%s: rules %v", tc.preset, got)
		}
		for _, in := range []string{tc.a, tc.b} {
			got, ap := s.Apply(map[string]any{"text": in})
			if text := got.(map[string]any)["text"]; text != tc.want {
				t.Errorf("%s:\n%s\nbecame\n%s\nwant\n%s", tc.preset, in, text, tc.want)
			}
			if l := ap["$.text"]; len(l) != 1 || l[0] != "preset "+tc.preset {
				t.Errorf("%s: applied %v", tc.preset, ap)
			}
		}
	}
}

// A long string's normal form is kept for the set: a second request with
// it gets the same text and the same rules named at its path, from the
// memo; a short one is normalised each time the same way.
func TestApplyRemembersStrings(t *testing.T) {
	s, err := Compile([]Rule{{Preset: "uuid"}, {Regex: "secret-[0-9]+", Replace: "secret-N"}})
	if err != nil {
		t.Fatal(err)
	}
	long := "id 3f2504e0-4f89-41d3-9a0c-0305e82c3301 and secret-42, " + string(bytes.Repeat([]byte("padding "), 40))
	for i := range 2 {
		got, ap := s.Apply(map[string]any{"a": []any{long, "secret-7"}})
		items := got.(map[string]any)["a"].([]any)
		if want := "id <uuid> and secret-N, "; !bytes.HasPrefix([]byte(items[0].(string)), []byte(want)) || items[1] != "secret-N" {
			t.Errorf("request %d: %q", i+1, items)
		}
		if diff := cmp.Diff(Applied{"$.a[0]": {"preset uuid", `regex "secret-[0-9]+" -> "secret-N"`}, "$.a[1]": {`regex "secret-[0-9]+" -> "secret-N"`}}, ap); diff != "" {
			t.Errorf("request %d applied (-want +got):\n%s", i+1, diff)
		}
	}
	if len(s.memo) != 2 {
		t.Errorf("memo holds %d strings, want 2 (the long one and the short)", len(s.memo))
	}
}
