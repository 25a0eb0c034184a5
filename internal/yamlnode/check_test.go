package yamlnode

import (
	"errors"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// hostile are strings from outside that have broken generated files: a
// tool name that adds rules, a title with a newline, YAML's other types,
// indicators, control characters.
var hostile = []string{
	"x: [{impl: \"subprocess:run\"}]\n  y:",
	"title\nextra: key",
	"- item", "? key", "# comment", "&anchor", "*alias", "!tag", "|", ">",
	"'single'", "\"double\"", "a: b", "a #b", "true", "no", "null", "~", "1e3", "0x1F", "01", ".inf",
	"", " lead", "trail ", "tab\there", "\x1b[31mred", "nul\x00", "bom\ufeff", "line\u2028sep",
	"\u0085nel", "emoji 😀", "back\\slash", "%percent", "@at", "`tick", "{flow}", "[list]", "a,b",
	strings.Repeat("long ", 100),
}

func TestEncodeReadsBackEveryString(t *testing.T) {
	for _, s := range hostile {
		n := Mapping(KV(s, Mapping(KV("description", Scalar(s)), KV("list", FlowSeq(s, s)))), KV("flow", Flow(map[string]any{s: []any{s}})))
		data, err := Encode(n)
		if err != nil {
			t.Errorf("%q: %v\n%s", s, err, data)
		}
	}
}

func TestKeyAndInlineTextReadBack(t *testing.T) {
	for _, s := range hostile {
		text := "m:\n  " + KeyText(s) + ":\n    - {return: " + InlineText(s) + "}\n# " + CommentText(s) + "\nafter: 1\n"
		want := Mapping(KV("m", Mapping(KV(s, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{Mapping(KV("return", Scalar(s)))}}))), KV("after", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}))
		if err := Check([]byte(text), want); err != nil {
			t.Errorf("%q: %v\n%s", s, err, text)
		}
		if strings.ContainsAny(KeyText(s)+CommentText(s), "\n\r") {
			t.Errorf("%q: a line break in %q / %q", s, KeyText(s), CommentText(s))
		}
	}
}

// A name written unquoted adds a rule: Check says so.
func TestCheckFindsAnInjectedKey(t *testing.T) {
	name := "x: [{impl: \"subprocess:run\"}]\n  y"
	text := "mocks:\n  " + name + ":\n    - return: 1\n"
	want := Mapping(KV("mocks", Mapping(KV(name, &yaml.Node{Kind: yaml.SequenceNode, Content: []*yaml.Node{Mapping(KV("return", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: "1"}))}}))))
	err := Check([]byte(text), want)
	if !errors.Is(err, ErrNotMeant) {
		t.Fatalf("got %v", err)
	}
	if err := Check([]byte("mocks:\n  "+KeyText(name)+":\n    - return: 1\n"), want); err != nil {
		t.Error(err)
	}
}
