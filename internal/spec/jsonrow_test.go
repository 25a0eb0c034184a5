package spec

import (
	"bytes"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// decoderRow is a line read by encoding/json alone, as jsonLines read
// every line before the parser of jsonrow.go: the reference.
func decoderRow(line string) (map[string]any, string) {
	text := bytes.TrimSpace([]byte(line))
	if len(text) == 0 {
		return nil, ""
	}
	return rowByDecoder(text)
}

// sameRow fails t unless jsonRow, and readRow keeping only keys, read
// line as encoding/json does.
func sameRow(t *testing.T, line string) {
	t.Helper()
	want, wantProblem := decoderRow(line)
	got, problem := jsonRow([]byte(line))
	if problem != wantProblem || !reflect.DeepEqual(got, want) {
		t.Errorf("%q: got %#v %q, want %#v %q", line, got, problem, want, wantProblem)
	}
	keys, keysProblem := readRow([]byte(line), newRowKeys())
	if keysProblem != wantProblem || !slices.Equal(slices.Sorted(maps.Keys(keys)), slices.Sorted(maps.Keys(want))) {
		t.Errorf("%q: keys only: got %v %q, want the keys of %v %q", line, keys, keysProblem, want, wantProblem)
	}
}

// The parser of JSON Lines rows gives what encoding/json gives, values,
// types and problems, and takes the common rows on itself.
func TestJSONRowIsEncodingJSON(t *testing.T) {
	fast := []string{
		`{"name": "case-0000001", "id": "O-1", "amount": 1}`,
		`{}`, ` { } `, "\t{\"a\":1}\r",
		`{"a": [], "b": {}, "c": [1, [2, [3]], {"d": null}], "e": true, "f": false, "g": null}`,
		`{"n": -0, "m": 0.5, "o": 1e5, "p": 1E+5, "q": -12.25e-3, "r": 123456789012345678901234567890, "s": 1e400}`,
		`{"a": "x", "a": "y"}`,
		`{"é": "ü — 日本"}`,
		`{"a":{"b":{"c":{"d":[[[[]]]]}}}}`,
	}
	ask := []string{
		// for encoding/json: escapes, invalid UTF-8, anything wrong
		`{"a": "line\nbreak", "b": "q\"uote", "c": "\u00e9\ud83d\ude00", "d": "\ud800"}`,
		`{"k\"ey": 1}`, `{"k": "\u007f"}`, "{\"a\": \"\xff\xfe\"}", "{\"\xffk\": 1}",
		`{"a": "\x"}`, `{"a": "\u12"}`, "{\"a\": \"tab\there\"}",
		`{"a":1}}`, `{"a":1}]`, `{"a":1} {"b":2}`, `{"a":1}x`, `{"a":1},`,
		`{"a":1,}`, `{"a":[1,]}`, `{"a":}`, `{"a" 1}`, `{a: 1}`, `{"a":1`, `{"a":"x`, `{`,
		`{"a": 01}`, `{"a": 1.}`, `{"a": .5}`, `{"a": -}`, `{"a": +1}`, `{"a": 1e}`, `{"a": 0x10}`,
		`{"a": tru}`, `{"a": truex}`, `{"a": nul}`, `{"a": NaN}`,
		`[1, 2]`, `"row"`, `12`, `12x`, `null`, `true`, "\ufeff{\"a\": 1}", "\u00a0{\"a\": 1}\u00a0",
		`{"a":` + string(bytes.Repeat([]byte("["), 150)) + string(bytes.Repeat([]byte("]"), 150)) + `}`,
		`{"a":` + string(bytes.Repeat([]byte("["), 10001)) + string(bytes.Repeat([]byte("]"), 10001)) + `}`,
		``, `   `,
	}
	for _, line := range append(fast, ask...) {
		sameRow(t, line)
	}
	for _, line := range fast {
		b := bytes.TrimSpace([]byte(line))
		if _, fast, _ := value.ParseChecked(string(b)); !fast || !scanKeys(b, newRowKeys()) {
			t.Errorf("%q went to encoding/json (values %v)", line, fast)
		}
	}
}

// FuzzJSONRow: the parser of rows reads every line as encoding/json does.
func FuzzJSONRow(f *testing.F) {
	for _, s := range []string{`{"a": 1, "b": [true, null, "x"]}`, `{"a": "\n"}`, `{"a":1}}`, `{"a": 1e9, "b": {}}`, `[1]`, "{\"\xff\": 1}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sameRow(t, line)
	})
}

// A JSON Lines file's passes agree: the raw pass hands on exactly the
// lines the first found good, each of which decodes, at the same lines.
func TestJSONLinesPassesAgree(t *testing.T) {
	data := []byte("{\"a\": 1}\n\n  \nnot json\r\n{\"b\": \"\\n\"}\r\n[1]\n{\"a\":1}}\n{\"c\": 2} x\n{\"d\": 3}")
	f := &jsonLinesFile{keys: newRowKeys()}
	var good, bad []int
	f.read(data, func(line int, format string, args ...any) { bad = append(bad, line) }, func(r row) bool {
		good = append(good, r.line)
		return true
	}, false)
	var raw []int
	f.read(data, func(int, string, ...any) { t.Error("the raw pass reported a problem") }, func(r row) bool {
		raw = append(raw, r.line)
		if m, problem := jsonRow(r.text); m == nil {
			t.Errorf("line %d: %q does not decode: %s", r.line, r.text, problem)
		}
		return true
	}, true)
	if want := []int{1, 5, 7, 9}; !slices.Equal(good, want) || !slices.Equal(raw, want) {
		t.Errorf("good rows at %v, raw at %v; want %v", good, raw, want)
	}
	if want := []int{4, 6, 8}; !slices.Equal(bad, want) {
		t.Errorf("bad rows at %v, want %v", bad, want)
	}
}
