package yamlpos

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
)

// A format schema without Wording gets the generic messages, at the key or
// value they are about; the converter's own problems come first in line
// order and are not repeated by the schema.
func TestDocumentGenericMessages(t *testing.T) {
	fs, err := NewFormatSchema([]byte(`{
		"type": "object", "additionalProperties": false, "required": ["name"],
		"properties": {
			"name": {"type": "string"},
			"parts": {"type": "object", "minProperties": 1},
			"count": {"type": "integer", "minimum": 1}
		}}`), "mem://test/format.json", []SchemaContext{{Prefix: "", Label: "thing"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"ok", "name: a\nparts: {x: 1}\n", ""},
		{"unknown key", "name: a\nprats: {}\n", `f.yaml:2:1: unknown key "prats" in thing (did you mean "parts"?)`},
		{"missing", "count: 2\n", `f.yaml:1:1: thing is missing required key "name"`},
		{"empty mapping", "name: a\nparts: {}\n", "f.yaml:2:8: parts must not be empty"},
		{"type", "name: [1]\n", "f.yaml:1:7: name must be a string, not a list"},
		{"minimum", "name: a\ncount: 0\n", "f.yaml:2:8: count must be at least 1, not 0"},
		{"root", "- a\n", "f.yaml:1:1: the thing must be a mapping, not a list"},
		{"duplicate", "name: a\nname: b\n", `f.yaml:2:1: duplicate key "name" (first at line 1); remove one`},
		{"empty", "", "f.yaml:1:1: empty thing file"},
		{"second document", "name: a\n---\nname: b\n", "f.yaml:2:1: a thing file holds one YAML document; found a second one here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := ParseDocument("f.yaml", []byte(tc.src), "thing", "")
			doc.CheckSchema(fs)
			if got := doc.Diagnostics().Error(); got != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestNodeWalking(t *testing.T) {
	doc := ParseDocument("f.yaml", []byte("a:\n  b: [x, {c: 1}]\n  a: 2\n"), "thing", "")
	if ds := doc.Diagnostics(); len(ds) > 0 {
		t.Fatal(ds)
	}
	var keys []string
	for _, p := range Pairs(doc.Root, doc.Value) {
		for _, q := range Pairs(p.V, p.Val) {
			keys = append(keys, q.Key())
		}
	}
	if got := strings.Join(keys, ","); got != "b,a" {
		t.Errorf("pairs: %s", got)
	}
	v, k := At(doc.Root, "a", "b", "1", "c")
	if v == nil || k == nil || v.Value != "1" || k.Line != 2 || k.Column != 11 {
		t.Fatalf("At: %v %v", v, k)
	}
	steps, text, ok := PathAt(doc.Root, 2, 14)
	if !ok || strings.Join(steps, "/") != "a/b/1/c" || text != ".a.b[1].c" {
		t.Errorf("PathAt: %v %q %v", steps, text, ok)
	}
	bv, _ := At(doc.Root, "a", "b")
	var vals []string
	for i, it := range Items(bv, ValueAt(doc.Value, []string{"a", "b"})) {
		vals = append(vals, strconv.Itoa(i)+"="+Describe(it.Val))
	}
	if got := strings.Join(vals, ","); got != `0=a string ("x"),1=a mapping` {
		t.Errorf("items: %s", got)
	}
}

// A virtual line names a line of another file: the diagnostic is there.
func TestVirtualLines(t *testing.T) {
	d := &Collector{File: "suite.yaml", Sources: []string{"rows.jsonl"}}
	d.Add(Error, VirtualLine(0, 7), 3, "bad %s", "row")
	d.Add(Error, VirtualLine(0, 7), 3, "bad %s", "row") // once
	d.Add(Warning, 2, 0, "note")
	Sort(d.List, "suite.yaml", "rows.jsonl")
	if got, want := Diagnostics(d.List).Error(), "suite.yaml:2:1: warning: note\nrows.jsonl:7:3: bad row"; got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// isJSONNumber takes what JSON's grammar of a number takes.
func TestIsJSONNumber(t *testing.T) {
	whole := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	for _, s := range []string{"", "0", "-0", "00", "01", "1", "12", "-", "+1", "1.", "1.5", ".5", "1e", "1e5", "1E+5", "1e-05", "1.5e3x",
		"-12.25e-3", "1_000", "0x10", "1e+", "1.e5", "123456789012345678901234567890", "1 ", " 1", "NaN", "-.5", "2.5.1", "1ee5"} {
		if got, want := isJSONNumber(s), whole.MatchString(s); got != want {
			t.Errorf("isJSONNumber(%q) = %v, want %v", s, got, want)
		}
	}
}

// A part of a tree in Converter.Fixed is converted once and given again,
// with its count of values, only when converting it reported nothing.
func TestConverterFixed(t *testing.T) {
	d := &Collector{File: "f.yaml"}
	root := Parse([]byte("a: {b: 1, b: 2}\nc: [x, {y: 010}]\ne: [x, {y: z}]\n"), d)
	if root == nil || len(d.List) > 0 {
		t.Fatal(d.List)
	}
	m := Deref(root)
	fixed := map[*yaml.Node]*Fixed{}
	for i := 1; i < len(m.Content); i += 2 {
		fixed[m.Content[i]] = &Fixed{}
	}
	var first any
	for round := range 3 {
		d := &Collector{File: "f.yaml"}
		conv := NewConverter(d)
		conv.Fixed = fixed
		v := conv.Convert(root, 0)
		whole := NewConverter(&Collector{})
		want := whole.Convert(root, 0)
		if !reflect.DeepEqual(v, want) || conv.nodes != whole.nodes {
			t.Errorf("round %d: %#v (%d values), want %#v (%d)", round, v, conv.nodes, want, whole.nodes)
		}
		if len(d.List) != 2 { // the duplicate key and the octal number, every time
			t.Errorf("round %d: %v", round, d.List)
		}
		if round == 0 {
			first = v
		} else if e, f := v.(map[string]any)["e"], first.(map[string]any)["e"]; reflect.ValueOf(e).Pointer() != reflect.ValueOf(f).Pointer() {
			t.Errorf("round %d: the clean part was converted again", round)
		}
	}
	if fixed[m.Content[1]].done || fixed[m.Content[3]].done || !fixed[m.Content[5]].done {
		t.Errorf("kept: a %v, c %v, e %v; want only e", fixed[m.Content[1]].done, fixed[m.Content[3]].done, fixed[m.Content[5]].done)
	}
}
