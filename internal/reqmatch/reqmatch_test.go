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
