package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// A row's integer, boolean or null filled in without the YAML encoder is
// the node the encoder makes of it.
func TestScalarOfIsWhatEncodeGives(t *testing.T) {
	for _, v := range []any{json.Number("0"), json.Number("-17"), json.Number("9223372036854775807"), json.Number("-9223372036854775808"), true, false, nil} {
		tag, text, ok := scalarOf(v)
		if !ok {
			t.Fatalf("%v: not filled directly", v)
		}
		var enc yaml.Node
		if err := enc.Encode(jsonish(v)); err != nil {
			t.Fatal(err)
		}
		got := yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: text}
		if got.Kind != enc.Kind || got.Tag != enc.Tag || got.Value != enc.Value || got.Style != enc.Style || len(enc.Content) != 0 {
			t.Errorf("%v: filled as %+v, the encoder gives %+v", v, got, enc)
		}
	}
	// Beyond int64, fractions and composites go through the encoder.
	for _, v := range []any{json.Number("9223372036854775808"), json.Number("1.5"), json.Number("1e3"), map[string]any{}, []any{}} {
		if _, _, ok := scalarOf(v); ok {
			t.Errorf("%v: filled directly", v)
		}
	}
}

// What is found of a data row's case against the rest of the suite is at
// the row, as what is found of the case itself is.
func TestRowWarningsAreAtTheRow(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte("{\"n\": \"a\"}\n\n{\"n\": \"b\"}\n"), 0o644)
	file := filepath.Join(dir, "s.dryfire.yaml")
	data := []byte("version: 1\nagent: {provider: script}\ncases:\n  - from: rows.jsonl\n    name: \"{{n}}\"\n    input: hi\n    script: [{text: one}, {tool_calls: [{name: nothing}]}]\n    expect: [{called: {tool: nowhere}}]\n")
	_, ds := Parse(file, data, &Options{Root: dir})
	rows := filepath.Join(dir, "rows.jsonl")
	want := strings.Join([]string{
		rows + ":1:1: warning: check names tool \"nowhere\", which is neither declared nor mocked",
		rows + ":1:1: warning: no mock rule for tool \"nothing\" in this case: the call will be unmatched and the case will fail",
		rows + ":1:1: warning: script turn 2 is never reached: turn 1 has no tool calls, so the case ends there",
		rows + ":3:1: warning: check names tool \"nowhere\", which is neither declared nor mocked",
		rows + ":3:1: warning: no mock rule for tool \"nothing\" in this case: the call will be unmatched and the case will fail",
		rows + ":3:1: warning: script turn 2 is never reached: turn 1 has no tool calls, so the case ends there",
	}, "\n")
	if got := ds.Error(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
