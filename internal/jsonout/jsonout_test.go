package jsonout

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// AppendIndented indents as json.Indent does: empty objects and lists
// kept, strings copied whole (brackets, commas, colons, escaped quotes and
// backslashes in them), numbers and literals as they are.
func TestAppendIndentedIsJSONIndent(t *testing.T) {
	values := []any{
		nil, true, 1.5e-7, "", `a "quoted" \ back\slash, [not] {a: list}`, "\u2028 <&> \x01 é",
		[]any{}, map[string]any{}, []any{[]any{}, map[string]any{}, nil},
		map[string]any{"a": []any{1, "x", map[string]any{"b": map[string]any{}}}, `k"ey\`: "v"},
		map[string]any{"name": "c", "checks": []any{map[string]any{"check": "output", "message": `wanted "}"`}}, "tool_calls": []any{map[string]any{"tool": "t", "args": json.RawMessage(`{"a":[1,{}]}`)}}},
	}
	for _, v := range values {
		compact, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		checkIndented(t, compact)
	}
}

func checkIndented(t *testing.T, compact []byte) {
	t.Helper()
	var want bytes.Buffer
	if err := json.Indent(&want, compact, "    ", "  "); err != nil {
		return // not JSON: AppendIndented is only given encoding/json's output
	}
	var c bytes.Buffer
	if err := json.Compact(&c, compact); err != nil || !bytes.Equal(c.Bytes(), compact) {
		return // not compact
	}
	got := AppendIndented([]byte("x"), compact, "    ", "  ")
	if nesting(compact) > maxIndent-2 {
		// Deeper than the report indents: the same JSON.
		var back bytes.Buffer
		if err := json.Compact(&back, got[1:]); err != nil || !bytes.Equal(back.Bytes(), compact) {
			t.Errorf("%s indented:\n%s\nis not the same JSON", compact, got[1:])
		}
		return
	}
	if string(got[1:]) != want.String() {
		t.Errorf("%s indented:\n%s\nwant:\n%s", compact, got[1:], want.Bytes())
	}
}

// nesting is how deep compact JSON nests.
func nesting(compact []byte) int {
	depth, most, in := 0, 0, false
	for i := 0; i < len(compact); i++ {
		switch c := compact[i]; {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case !in && (c == '[' || c == '{'):
			depth++
			most = max(most, depth)
		case !in && (c == ']' || c == '}'):
			depth--
		}
	}
	return most
}

func FuzzAppendIndented(f *testing.F) {
	for _, s := range []string{`{}`, `[]`, `{"a":[1,{"b":"\"}"}],"c":[]}`, `"\\"`, `[[[]],{}]`, strings.Repeat(`{"a":[`, 20) + "1" + strings.Repeat("]}", 20)} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, compact []byte) { checkIndented(t, compact) })
}
