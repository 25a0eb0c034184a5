package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
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

// A data file's rows fill their columns and leave a rule's {{elicit.…}}
// and {{sample.…}} for the call, whole or inside a longer string.
func TestRowsLeaveTheAnswersPlaceholders(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte("{\"to\": \"Paris\"}\n"), 0o644)
	file := filepath.Join(dir, "s.dryfire.yaml")
	data := []byte(`version: 1
agent: {command: [agent]}
cases:
  - from: rows.jsonl
    name: "{{to}}"
    input: hi
    mocks:
      book:
        - elicit: {message: "Fly to {{to}}?", schema: {type: object, properties: {seat: {type: string}}}}
          return: {seat: "{{elicit.content.seat}}", text: "{{to}}: {{ elicit.action }}"}
`)
	s, ds := Parse(file, data, &Options{Root: dir})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	r := s.Cases[0].Mocks["book"][0]
	if r.Ask.Message != "Fly to Paris?" {
		t.Errorf("message %q", r.Ask.Message)
	}
	want := map[string]any{"seat": "{{elicit.content.seat}}", "text": "Paris: {{ elicit.action }}"}
	if got := r.Outcome.Value; !reflect.DeepEqual(got, want) {
		t.Errorf("return %v, want %v", got, want)
	}
}
