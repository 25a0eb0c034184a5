package spec

import (
	"encoding/json"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// mustParse parses a suite that must load without errors.
func mustParse(t *testing.T, src string) (*Suite, yamlpos.Diagnostics) {
	t.Helper()
	s, ds := Parse("test.dryfire.yaml", []byte(src), nil)
	if ds.HasErrors() {
		t.Fatalf("unexpected errors:\n%v", ds)
	}
	return s, ds
}

func TestValidExamples(t *testing.T) {
	files, err := filepath.Glob("../../examples/*/*.dryfire.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// Every impl resolves, as if the python helper were there.
		s, ds := Parse(f, data, &Options{ResolveImpl: func(string) error { return nil }})
		if len(ds) > 0 {
			t.Errorf("%s: unexpected diagnostics:\n%v", f, ds)
		}
		if s == nil || len(s.Cases) == 0 {
			t.Errorf("%s: no suite", f)
		}
	}
}

func touch(t *testing.T, root string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestExpand(t *testing.T) {
	root := t.TempDir()
	touch(t, root,
		"b.dryfire.yaml",
		"a.dryfire.yml",
		"sub/c.dryfire.yaml",
		"sub/deeper/d.dryfire.yaml",
		"sub/notes.yaml",
		"sub/e.dryfire.yaml.bak",
		"B.dryfire.yaml",
		".hidden/h.dryfire.yaml",
		"sub/.git/g.dryfire.yaml",
		"node_modules/n.dryfire.yaml",
		"sub/node_modules/m.dryfire.yaml",
		"other/plain.yaml",
		"empty/.keep",
	)
	rel := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			r, err := filepath.Rel(root, p)
			if err != nil {
				t.Fatal(err)
			}
			out[i] = filepath.ToSlash(r)
		}
		return out
	}
	at := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	// On a file system that ignores case (Windows, macOS by default)
	// B.dryfire.yaml is b.dryfire.yaml: one suite, named as first written.
	suites := func(names ...string) []string {
		lower, _ := os.Stat(at("b.dryfire.yaml"))
		upper, _ := os.Stat(at("B.dryfire.yaml"))
		if lower == nil || upper == nil || !os.SameFile(lower, upper) {
			return names
		}
		return slices.DeleteFunc(names, func(n string) bool { return n == "B.dryfire.yaml" })
	}

	tests := []struct {
		name  string
		paths []string
		want  []string
	}{
		{"directory, lexical order, hidden and node_modules skipped", []string{root},
			suites("B.dryfire.yaml", "a.dryfire.yml", "b.dryfire.yaml", "sub/c.dryfire.yaml", "sub/deeper/d.dryfire.yaml")},
		{"a file stands for itself, whatever its name", []string{at("other/plain.yaml")},
			[]string{"other/plain.yaml"}},
		{"a hidden directory named explicitly is searched", []string{at(".hidden")},
			[]string{".hidden/h.dryfire.yaml"}},
		{"arguments keep their order; duplicates are dropped", []string{at("sub"), at("b.dryfire.yaml"), root, at("sub/../b.dryfire.yaml")},
			suites("sub/c.dryfire.yaml", "sub/deeper/d.dryfire.yaml", "b.dryfire.yaml", "B.dryfire.yaml", "a.dryfire.yml")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := ExpandSkipping(tt.paths)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rel(got)); diff != "" {
				t.Errorf("Expand (-want +got):\n%s", diff)
			}
		})
	}

	// The files are written with '/' on every OS, as a report names them.
	t.Run("relative directory", func(t *testing.T) {
		t.Chdir(root)
		got, _, err := ExpandSkipping([]string{"."})
		if err != nil {
			t.Fatal(err)
		}
		want := suites("B.dryfire.yaml", "a.dryfire.yml", "b.dryfire.yaml", "sub/c.dryfire.yaml", "sub/deeper/d.dryfire.yaml")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ExpandSkipping(.) (-want +got):\n%s", diff)
		}
	})

	for _, tt := range []struct{ name, path, want string }{
		{"missing path", at("nope.dryfire.yaml"), "nope.dryfire.yaml"},
		{"directory without suites", at("empty"), "no *.dryfire.yaml or *.dryfire.yml files under"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := ExpandSkipping([]string{root, tt.path})
			if err == nil {
				t.Fatalf("Expand gave %v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not mention %q", err, tt.want)
			}
		})
	}
	t.Run("only skipped suites", func(t *testing.T) {
		dir := t.TempDir()
		touch(t, dir, ".cache/x.dryfire.yaml", "node_modules/y.dryfire.yaml")
		if got, _, err := ExpandSkipping([]string{dir}); err == nil {
			t.Fatalf("Expand gave %v, want an error", got)
		}
	})
}

func TestLoad(t *testing.T) {
	root := t.TempDir()
	good := "version: 1\nagent: {provider: script}\ncases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	bad := "version: 2\nagent: {provider: script}\ncases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	for name, src := range map[string]string{"a.dryfire.yaml": good, "b.dryfire.yaml": bad, "c.dryfire.yaml": good} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files, _, err := ExpandSkipping([]string{root})
	if err != nil {
		t.Fatal(err)
	}
	suites, ds := LoadFiles(files, nil)
	if len(suites) != 3 {
		t.Errorf("got %d suites, want 3 (a suite with errors still decodes)", len(suites))
	}
	want := filepath.ToSlash(filepath.Join(root, "b.dryfire.yaml")) + ":1:10: version must be 1, not a number (2)"
	if diff := cmp.Diff(want, ds.Error()); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
	if _, _, err := ExpandSkipping([]string{filepath.Join(root, "missing")}); err == nil {
		t.Error("a missing path: want an error")
	}

	// A file that cannot be read is a diagnostic of its own, and the
	// others still load.
	_, ds = LoadFiles([]string{filepath.Join(root, "a.dryfire.yaml"), root}, nil)
	if len(ds) != 1 || ds[0].Pos.Line != 1 || !strings.Contains(ds[0].Message, "reading suite") {
		t.Errorf("unreadable file: got %v", ds)
	}
}

func TestScalars(t *testing.T) {
	s, ds := mustParse(t, `version: 1
agent: {provider: script}
mocks:
  t:
    - return:
        hex: 0x1F
        octal: 0o17
        binary: 0b101
        underscores: 1_000
        big: 123456789012345678901234567890
        big_negative: -98765432109876543210
        plus: +5
        float: 1.5
        trailing_zero: 1.50
        exponent: 1e3
        exponent_sign: 6.02e+23
        leading_dot: .5
        trailing_dot: 1.
        plus_float: +1.5
        yes: yes
        no: no
        on: off
        "y": n
        "true": True
        "false": FALSE
        "null": null
        tilde: ~
        empty:
        quoted_number: "1.50"
        quoted_hex: '0x1F'
        date: 2026-01-01
        time: 12:30
        huge_hex: 0xFFFFFFFFFFFFFFFFFF
cases: [{name: a, input: hi, script: [{text: ok}]}]
`)
	if len(ds) > 0 {
		t.Errorf("unexpected diagnostics: %v", ds)
	}
	want := map[string]any{
		"hex":           json.Number("31"),
		"octal":         json.Number("15"),
		"binary":        json.Number("5"),
		"underscores":   json.Number("1000"),
		"big":           json.Number("123456789012345678901234567890"),
		"big_negative":  json.Number("-98765432109876543210"),
		"plus":          json.Number("5"),
		"float":         json.Number("1.5"),
		"trailing_zero": json.Number("1.50"),
		"exponent":      json.Number("1e3"),
		"exponent_sign": json.Number("6.02e+23"),
		"leading_dot":   json.Number("0.5"),
		"trailing_dot":  json.Number("1"),
		"plus_float":    json.Number("1.5"),
		"yes":           "yes", // YAML 1.2: yes/no/on/off are strings
		"no":            "no",
		"on":            "off",
		"y":             "n",
		"true":          true,
		"false":         false,
		"null":          nil,
		"tilde":         nil,
		"empty":         nil,
		"quoted_number": "1.50",
		"quoted_hex":    "0x1F",
		"date":          "2026-01-01", // timestamps stay text
		"time":          "12:30",
		"huge_hex":      "0xFFFFFFFFFFFFFFFFFF", // beyond uint64 the YAML library reads a string
	}
	if diff := cmp.Diff(want, s.Mocks["t"][0].Outcome.Value); diff != "" {
		t.Errorf("converted values (-want +got):\n%s", diff)
	}
}

func TestAliases(t *testing.T) {
	s, ds := mustParse(t, `version: 1
agent: {provider: script}
mocks:
  lookup: &rules
    - when: &who {id: 1}
      return: &answer {tier: gold, tags: [a, b]}
    - return: null
  search: *rules
cases:
  - name: &n first
    input: &in hi
    script:
      - tool_calls: [{name: lookup, args: *who}]
      - text: *in
    expect:
      - called: {tool: lookup, with: *who}
  - name: second
    input: *in
    mocks:
      lookup:
        - return: *answer
    script: [{text: *n}]
`)
	if len(ds) > 0 {
		t.Errorf("unexpected diagnostics: %v", ds)
	}
	gold := map[string]any{"tier": "gold", "tags": []any{"a", "b"}}
	if diff := cmp.Diff(gold, s.Mocks["search"][0].Outcome.Value); diff != "" {
		t.Errorf("aliased rule list (-want +got):\n%s", diff)
	}
	if got := s.Mocks["search"][0].Pos; got.Line != 5 || got.Col != 7 {
		t.Errorf("aliased rule at %v, want its anchor's place 5:7", got)
	}
	if !s.Mocks["search"][0].When.Match(map[string]any{"id": json.Number("1"), "x": "y"}) {
		t.Error("aliased when does not match")
	}
	c0, c1 := s.Cases[0], s.Cases[1]
	if c0.Script[0].ToolCalls[0].ArgsJSON != `{"id":1}` {
		t.Errorf("aliased args = %s", c0.Script[0].ToolCalls[0].ArgsJSON)
	}
	if c0.Script[1].Text != "hi" || c1.Input != "hi" || c1.Script[0].Text != "first" {
		t.Errorf("aliased scalars: %q %q %q", c0.Script[1].Text, c1.Input, c1.Script[0].Text)
	}
	if diff := cmp.Diff(gold, c1.Mocks["lookup"][0].Outcome.Value); diff != "" {
		t.Errorf("aliased return (-want +got):\n%s", diff)
	}
	if got := c0.Expect[0].Source; got != "called: {tool: lookup, with: {id: 1}}" {
		t.Errorf("aliased check source = %q", got)
	}
}

func TestCheckSource(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"called: lookup", "called: lookup"},
		{"called: {tool: lookup, with: {order_id: A-991}, times: 1}", "called: {tool: lookup, with: {order_id: A-991}, times: 1}"},
		{"called:\n          tool: lookup\n          min: 1\n          max: 3", "called: {tool: lookup, min: 1, max: 3}"},
		{"not_called: {tool: refund, with: {amount: 1.50, ok: true, note: null}}", "not_called: {tool: refund, with: {amount: 1.50, ok: true, note: null}}"},
		{"order: [lookup, refund]", "order: [lookup, refund]"},
		{`output: {regex: 'order [A-Z]-\d+'}`, `output: {regex: "order [A-Z]-\\d+"}`},
		{`output: {contains: "yes", equals: "true"}`, `output: {contains: "yes", equals: "true"}`},
		{`output: {contains: "1.50"}`, `output: {contains: "1.50"}`},
		{`output: {contains: " padded "}`, `output: {contains: " padded "}`},
		{`output: {contains: "say \"hi\"\n"}`, `output: {contains: "say \"hi\"\n"}`},
		{"output: {contains: ünïcödé}", `output: {contains: "ünïcödé"}`},
		{"output:\n          json_schema: {type: object, required: [a]}", "output: {json_schema: {type: object, required: [a]}}"},
		{"max_turns: 4", "max_turns: 4"},
		{"no_errors: true", "no_errors: true"},
		{"called: {tool: \"odd: name\", with: {\"key with space\": [1, [2]]}}", `called: {tool: "odd: name", with: {key with space: [1, [2]]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			src := "version: 1\nagent: {provider: script}\ncases:\n  - name: a\n    input: hi\n    script: [{text: ok}]\n    expect:\n      - " + tt.yaml + "\n"
			s, ds := Parse("test.dryfire.yaml", []byte(src), nil)
			if ds.HasErrors() || s == nil || len(s.Cases[0].Expect) != 1 {
				t.Fatalf("did not load: %v", ds)
			}
			if got := s.Cases[0].Expect[0].Source; got != tt.want {
				t.Errorf("Source = %s\nwant     %s", got, tt.want)
			}
		})
	}
}

// TestPositions pins where rules, checks, cases, turns and calls of the
// quickstart example are: reports quote them as file:line.
func TestPositions(t *testing.T) {
	const file = "../../examples/quickstart/support.dryfire.yaml"
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	s, ds := Parse(file, data, nil)
	if len(ds) > 0 {
		t.Fatalf("unexpected diagnostics: %v", ds)
	}
	lines := strings.Split(string(data), "\n")
	// at checks that a position points at the given text.
	at := func(what string, p yamlpos.Pos, text string) {
		t.Helper()
		if p.File != file {
			t.Errorf("%s: file %q", what, p.File)
		}
		if p.Line < 1 || p.Line > len(lines) {
			t.Fatalf("%s: line %d out of range", what, p.Line)
		}
		line := []rune(lines[p.Line-1])
		if p.Col < 1 || p.Col > len(line) || !strings.HasPrefix(string(line[p.Col-1:]), text) {
			t.Errorf("%s at %d:%d is %q, want it at %q", what, p.Line, p.Col, lines[p.Line-1], text)
		}
	}
	at("agent", s.Agent.Pos, "agent:")
	at("tool lookup_order", s.Tools[0].Pos, "lookup_order:")
	at("rule 1 of lookup_order", s.Mocks["lookup_order"][0].Pos, "when: {order_id: A-991}")
	at("its outcome", s.Mocks["lookup_order"][0].Outcome.Pos, "{order_id: A-991, tier: gold")
	at("rule 2 of lookup_order", s.Mocks["lookup_order"][1].Pos, "return: {tier: standard}")
	at("rule of issue_refund", s.Mocks["issue_refund"][0].Pos, "error: refund service unavailable")
	at("rule of find_coupon", s.Mocks["find_coupon"][0].Pos, "return: null")
	c := s.Cases[0]
	at("case", c.Pos, "name: gold customer")
	at("case rule", c.Mocks["issue_refund"][0].Pos, "sequence:")
	at("sequence entry 1", c.Mocks["issue_refund"][0].Outcome.Sequence[0].Pos, "timeout")
	at("sequence entry 2", c.Mocks["issue_refund"][0].Outcome.Sequence[1].Pos, "{refund_id: R-1")
	at("turn", c.Script[0].Pos, "tool_calls:")
	at("call", c.Script[0].ToolCalls[0].Pos, "{name: lookup_order")
	at("check called", c.Expect[0].Pos, "called: {tool: lookup_order")
	at("check order", c.Expect[2].Pos, "order: [lookup_order")
	at("check output", c.Expect[3].Pos, "output: {contains: R-1")
	at("check max_turns", c.Expect[4].Pos, "max_turns: 4")
	c = s.Cases[2]
	at("block call", c.Script[0].ToolCalls[1].Pos, "{name: find_coupon")
	at("block check", c.Expect[2].Pos, "output:")

	if got := s.Mocks["lookup_order"][0].Pos.FileLine(); got != file+":34" {
		t.Errorf("FileLine = %s", got)
	}
}

func TestDecode(t *testing.T) {
	s, ds := mustParse(t, `version: 1
agent:
  provider: openai-compatible
  base_url: http://localhost:11434/v1
  model: llama3
  max_turns: 2.0
  params: {temperature: 0}
tools:
  lookup: {description: Look up., input_schema: {type: object, properties: {id: {type: string}}}}
cases:
  - name: a
    input: hi
    skip: not yet
    max_turns: 3
    expect:
      - called: {tool: lookup, min: 1, max: 2}
      - called: {tool: lookup, times: 0}
      - output: {contains: x, regex: "^x", equals: x, json_schema: true}
      - order: [lookup, lookup]
`)
	if len(ds) > 0 {
		t.Errorf("unexpected diagnostics: %v", ds)
	}
	a := s.Agent
	if a.Provider != provider.OpenAICompatible || a.BaseURL == "" || a.Model != "llama3" || a.MaxTurns != 2 || a.Params["temperature"] != json.Number("0") {
		t.Errorf("agent = %+v", a)
	}
	if s.Name != "test" {
		t.Errorf("default name = %q, want the file's base name", s.Name)
	}
	c := s.Cases[0]
	if !c.Skip || c.SkipReason != "not yet" || c.EffectiveMaxTurns(&a) != 3 {
		t.Errorf("case = %+v", c)
	}
	ch := c.Expect
	if ch[0].Kind != CheckCalled || *ch[0].Min != 1 || *ch[0].Max != 2 || ch[0].Times != nil {
		t.Errorf("called min/max = %+v", ch[0])
	}
	if *ch[1].Times != 0 {
		t.Errorf("times 0 = %+v", ch[1])
	}
	if ch[2].Contains == nil || ch[2].Regex == nil || ch[2].Equals == nil || ch[2].JSONSchema == nil {
		t.Errorf("output = %+v", ch[2])
	}
	if diff := cmp.Diff([]string{"lookup", "lookup"}, ch[3].Order); diff != "" {
		t.Errorf("order: %s", diff)
	}
}

// TestResolveImpl: with a resolver, a well-formed impl is checked by it and
// its error is reported at the impl value.
func TestResolveImpl(t *testing.T) {
	src := "version: 1\nagent: {provider: script}\nmocks:\n  t:\n    - impl: shop.mocks:ok\n    - impl: shop.mocks:missing\ncases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	var asked []string
	opts := &Options{ResolveImpl: func(ref string) error {
		asked = append(asked, ref)
		if strings.HasSuffix(ref, "missing") {
			return os.ErrNotExist
		}
		return nil
	}}
	s, ds := Parse("x.dryfire.yaml", []byte(src), opts)
	if diff := cmp.Diff([]string{"shop.mocks:ok", "shop.mocks:missing"}, asked); diff != "" {
		t.Errorf("resolver calls (-want +got):\n%s", diff)
	}
	if got, want := ds.Error(), `x.dryfire.yaml:6:13: impl "shop.mocks:missing": file does not exist`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if s.Mocks["t"][0].Outcome.Kind != Impl || s.Mocks["t"][0].Outcome.Impl != "shop.mocks:ok" {
		t.Errorf("impl outcome = %+v", s.Mocks["t"][0].Outcome)
	}
}

func TestDiagnostics(t *testing.T) {
	ds := yamlpos.Diagnostics{
		{Pos: yamlpos.Pos{File: "a.yaml", Line: 1, Col: 2}, Message: "bad"},
		{Pos: yamlpos.Pos{File: "a.yaml", Line: 3, Col: 4}, Severity: yamlpos.Warning, Message: "odd"},
	}
	if got, want := ds.Error(), "a.yaml:1:2: bad\na.yaml:3:4: warning: odd"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if e, w := ds.Count(); e != 1 || w != 1 || !ds.HasErrors() {
		t.Errorf("Count = %d, %d", e, w)
	}
	if ds[1:].HasErrors() {
		t.Error("warnings only: HasErrors")
	}
}
