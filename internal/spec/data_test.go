package spec

import (
	"encoding/json"
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
