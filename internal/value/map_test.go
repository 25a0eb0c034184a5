package value

import (
	"strings"
	"testing"
)

func TestMapCopiesAndRewritesLeaves(t *testing.T) {
	v := map[string]any{"a": []any{"x", map[string]any{"b": "y"}}, "n": nil}
	got := Map(v, func(v any) any {
		if s, ok := v.(string); ok {
			return strings.ToUpper(s)
		}
		return v
	})
	if Canonical(got) != `{"a":["X",{"b":"Y"}],"n":null}` {
		t.Errorf("got %s", Canonical(got))
	}
	cp := Map(v, nil).(map[string]any)
	cp["a"].([]any)[1].(map[string]any)["b"] = "z"
	if Canonical(v) != `{"a":["x",{"b":"y"}],"n":null}` {
		t.Errorf("the copy shares the original's maps: %s", Canonical(v))
	}
}
