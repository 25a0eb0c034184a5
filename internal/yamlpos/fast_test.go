package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v4"
	"golang.org/x/tools/txtar"

	"github.com/dryfire-dev/dryfire/bench/gensuite/suite"
)

// goYAML is what go-yaml's Loader reads from src, as Parse loads it: the
// root node of the one document, or an error.
func goYAML(src []byte) (*yaml.Node, error) {
	ld, err := yaml.NewLoader(bytes.NewReader(src))
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := ld.Load(&doc); err != nil {
		return nil, err
	}
	var second yaml.Node
	if err := ld.Load(&second); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("a second document (%v)", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, errors.New("no root node")
	}
	return doc.Content[0], nil
}

// nodeDiff names the first difference between two trees, at its path, in
// every field but the comments ("" when they are equal).
func nodeDiff(path string, a, b *yaml.Node) string {
	if a == nil || b == nil {
		if a != b {
			return fmt.Sprintf("%s: node %v vs %v", path, a, b)
		}
		return ""
	}
	for _, f := range []struct {
		name string
		x, y any
	}{
		{"Kind", a.Kind, b.Kind}, {"Style", a.Style, b.Style}, {"Tag", a.Tag, b.Tag},
		{"Value", a.Value, b.Value}, {"Anchor", a.Anchor, b.Anchor},
		{"Line", a.Line, b.Line}, {"Column", a.Column, b.Column},
		{"Alias", a.Alias != nil, b.Alias != nil},
		{"Content nil", a.Content == nil, b.Content == nil},
		{"len(Content)", len(a.Content), len(b.Content)},
	} {
		if f.x != f.y {
			return fmt.Sprintf("%s: %s %#v vs %#v", path, f.name, f.x, f.y)
		}
	}
	for i := range a.Content {
		p := path + "/" + strconv.Itoa(i)
		if a.Kind == yaml.MappingNode && i%2 == 1 {
			p = path + "/" + a.Content[i-1].Value
		}
		if d := nodeDiff(p, a.Content[i], b.Content[i]); d != "" {
			return d
		}
	}
	return ""
}

// noComments reports a node of the fast reader's with a comment field set.
func noComments(n *yaml.Node) bool {
	if n.HeadComment != "" || n.LineComment != "" || n.FootComment != "" {
		return false
	}
	for _, c := range n.Content {
		if !noComments(c) {
			return false
		}
	}
	return true
}

// sameAsGoYAML checks that the fast reader declines src or reads what
// go-yaml reads; it reports whether it read it.
func sameAsGoYAML(t testing.TB, name string, src []byte) bool {
	t.Helper()
	fast := readFastIn(src, nil)
	if fast == nil {
		return false
	}
	slow, err := goYAML(src)
	if err != nil {
		t.Errorf("%s: the fast reader reads what go-yaml refuses (%v):\n%s", name, err, src)
		return true
	}
	if d := nodeDiff("", fast, slow); d != "" {
		t.Errorf("%s: fast vs go-yaml: %s\n%s", name, d, src)
	}
	if !noComments(fast) {
		t.Errorf("%s: the fast reader filled in a comment", name)
	}
	// Read again into the arena the texts before it were read into: its
	// nodes were theirs.
	if d := nodeDiff("", readFastIn(src, testArena), slow); d != "" {
		t.Errorf("%s: fast, in an arena used before, vs go-yaml: %s\n%s", name, d, src)
	}
	return true
}

// testArena is the arena sameAsGoYAML reads every text into again.
var testArena = new(Arena)

// repoYAML is every YAML text of the repository: .yaml/.yml files, the
// YAML files of txtar archives (testscripts, the hostile corpus) and the
// yaml code blocks of the docs.
func repoYAML(t testing.TB) map[string][]byte {
	files := map[string][]byte{}
	root := filepath.Join("..", "..")
	block := regexp.MustCompile("(?ms)^```ya?ml[^\n]*\n(.*?)^```")
	isYAML := func(name string) bool { return strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml") }
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path != root && d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch {
		case d.IsDir():
		case isYAML(path):
			data, _ := os.ReadFile(path)
			files[path] = data
		case strings.HasSuffix(path, ".txtar"):
			a, err := txtar.ParseFile(path)
			if err != nil {
				return nil
			}
			for _, f := range a.Files {
				if isYAML(f.Name) {
					files[path+"/"+f.Name] = f.Data
				}
			}
		case strings.HasSuffix(path, ".md"):
			data, _ := os.ReadFile(path)
			for i, m := range block.FindAllSubmatch(data, -1) {
				files[path+"#"+strconv.Itoa(i)] = m[1]
			}
		}
		return nil
	})
	if len(files) < 300 {
		t.Fatalf("only %d YAML texts found", len(files))
	}
	return files
}

// Every YAML text of the repository, and generated suites (inline, and
// the template of a JSON Lines one), whole and as the loader cuts their
// cases: the fast reader declines or reads go-yaml's tree.
func TestFastReaderIsGoYAML(t *testing.T) {
	files := repoYAML(t)
	read := 0
	for name, data := range files {
		if sameAsGoYAML(t, name, data) {
			read++
		}
	}
	t.Logf("%d of %d YAML texts read by the fast reader", read, len(files))
	// Most of the repository's YAML is in its subset; if it declined
	// everything, this test would show nothing.
	if read < len(files)/2 {
		t.Errorf("the fast reader read only %d of %d texts", read, len(files))
	}
	for _, jsonl := range []bool{false, true} {
		path, err := suite.Write(t.TempDir(), 300, jsonl)
		if err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsGoYAML(t, path, data) {
			t.Errorf("the fast reader declined the generated suite %s", path)
		}
		// The items as the loader cuts them: a sequence at column 3.
		i := bytes.Index(data, []byte("\n  - "))
		if !sameAsGoYAML(t, path+" items", data[i+1:]) {
			t.Errorf("the fast reader declined the generated items of %s", path)
		}
	}
}

// Snippets at the edges of the subset: each is declined or read as
// go-yaml reads it, and the ones marked are read (not declined).
func TestFastReaderSnippets(t *testing.T) {
	for _, tc := range fastSnippets {
		t.Run(tc.src, func(t *testing.T) {
			if got := sameAsGoYAML(t, "snippet", []byte(tc.src)); got != tc.read {
				t.Errorf("read = %v, want %v", got, tc.read)
			}
			// With CRLF line ends: the same, as go-yaml takes CRLF as LF.
			crlf := strings.ReplaceAll(tc.src, "\n", "\r\n")
			if got := sameAsGoYAML(t, "snippet with CRLF", []byte(crlf)); got != tc.read && !strings.Contains(tc.src, "\r") {
				t.Errorf("with CRLF: read = %v, want %v", got, tc.read)
			}
		})
	}
}

var fastSnippets = []struct {
	src  string
	read bool
}{
	{"a: 1\n", true},
	{"a: 1", true},
	{"  a: 1\n  b: 2\n", true},
	{"a:\n  b: 1\n  c: [x, y]\nd: {e: f}\n", true},
	{"- a\n- b\n", true},
	{"- - a\n  - b\n- c\n", true},
	{"key: - x\n", false},
	{"? complex\n: value\n", false},
	{"a:\n- x\n- y\nb: 1\n", true},
	{"a:\n  - x\n  b: 1\n", false},
	{"- name: x\n  input: y\n- name: z\n", true},
	{"a: \"\\u00e9\\x41\\n\\t\\\"\\\\ \\/\"\n", true},
	{"a: \"\\q\"\n", false},
	{"a: \"\\ud800\"\n", false},
	{"a: 'it''s'\n", true},
	{"a: \"é ü 日本\"\nb: é: x\n", false},
	{"é: 日本\nü: [α, β]\n", true},
	{"n: [0x1F, 0o17, 017, 1e3, .5, +1, -1, -.inf, .NaN, 1_000, 0b101, 0x_1F, 1.5e+3, -0, -0.0, +0, 9223372036854775808, 18446744073709551616, 1e400, 0x, 1.]\n", true},
	{"b: [yes, no, on, off, y, n, true, True, TRUE, tRue, false, FALSE]\n", true},
	{"z: [null, Null, NULL, nUll, ~, '~', \"null\"]\n", true},
	{"a: a:b\nc: http://x.y/z?q=1#f\n", true},
	{"a: b #c\nd: e#f\n", true},
	{"a: 'b'#c\n", false},
	{"a: b   \nc: d  # x  \n", true},
	{"a: 1\r\nb: 2\r\n", true},
	{"a: 1\rb: 2\r", false},
	{"a: b\r\r\n", false},
	{"\ufeffa: 1\n", false},
	{"a: \"x\ry\"\n", false},
	{"a:\tb\n", false},
	{"a: b\n  c\n", false},
	{"a: b\n\n  c\n", false},
	{"a: 2024-01-01\n", false},
	{"a: &x 1\nb: *x\n", false},
	{"a: !!str 1\n", false},
	{"<<: {a: 1}\n", false},
	{"a: <<\n", false},
	{"---\na: 1\n", false},
	{"a: 1\n...\n", false},
	{"%YAML 1.2\n---\na: 1\n", false},
	{"a:\nb: 1\n", true},
	{"a:\n", true},
	{"a:", true},
	{"a:\n  # c\nb:\n", true},
	{"a: # c\nb: 1\n", true},
	{"a  :\nb: 1\n", true},
	{"é:\nü: 1\n", true},
	{"x:\n  a:\nb: 1\n", true},
	{"- \n- x\n-\n", true},
	{"- # c\n- x\n", true},
	{"a:\n- b:\n- c:\n-\nd:\n", true},
	{"k:\n  -\n  b: 1\n", false},
	{"- a:\n  b:\n- - \n  -\n", true},
	{"a: [b, c,]\n", false},
	{"a: [b,, c]\n", false},
	{"a: {b}\n", false},
	{"a: {b: }\n", false},
	{"a: {\"b\":c}\n", false},
	{"a: {b: c, d: [e, {f: g}], h: 'i', j: \"k\"}\n", true},
	{"a: [b,\n  c, # x\n  d]\ne: 1\n", true},
	{"a: [b\n  c]\n", false},
	{"a: [b,\nc]\n", false},
	{"a: [b c, d e]\n", true},
	{"a: [b: c]\n", false},
	{"a: [-1, -x, - x]\n", false},
	{"a: [-1, -x]\n", true},
	{"a: |\n  line 1\n\n  line 2\n    more\nb: 1\n", true},
	{"a: |-\n  line 1\n  line 2\n\n\nb: 1\n", true},
	{"a: >\n  folded\n  text\n\n  para\nb: >-\n  x\n  y\n", true},
	{"a: >\n  folded\n    more\n", false},
	{"a: |+\n  keep\n\n", false},
	{"a: |2\n   x\n", false},
	{"a: |\n  x\n  \n  y\n", false},
	{"a: |\n  no break", false},
	{"a: | # c\n  x\n", true},
	{"a: |#c\n  x\n", false},
	{"- |\n  x\n  # not a comment\n# a comment\n- y\n", true},
	{"- a: |\n    x\n  b: 1\n", true},
	{"a: |\nb\n", false},
	{"\"q\": 1\n'r': 2\n\"s\" : 3\n", true},
	{"a: \"multi\n  line\"\n", false},
	{"a b: c d\n", true},
	{"a  : b\n", true},
	{"a: b: c\n", false},
	{"a: b:\n", false},
	{"- a\nb: 1\n", false},
	{"a: 1\n- b\n", false},
	{"a: 1\na: 2\n", true},
	{"1: a\ntrue: b\nnull: c\n", true},
	{"[a, b]\n", true},
	{"{a: 1}\n", true},
	{"{a: 1}: b\n", false},
	{"plain root\n", true},
	{"'quoted root'\n", true},
	{"", false},
	{"# only a comment\n", false},
	{"a: 1 # c\n# c\n\n  # c\nb: 2\n", true},
	{"a: [\"\\u00e9\", '\\n']\n", true},
	{"a: -\n", false},
	{"-\n  a: 1\n", true},
	{"- # c\n  a: 1\n", true},
	{"a: # c\n  b: 1\n", true},
	{"a:\n  b\n", true},
	{"a:\n  b\n  c\n", false},
	{"- a\n -b\n", false},
	{"a: {b: 1,\nc: 2}\n", false},
	{"x:\n  a: {b: 1,\n    c: 2}\n", true},
	{"a: `b`\n", false},
	{"a: @b\n", false},
	{"a: %b\n", false},
	{"a: b\u2028c\n", false},
	{"a: \u00a0b\n", true},
	{"a: \x7f\n", false},
	{"a: \"\\0\\a\\b\\v\\f\\r\\e\\N\\_\\L\\P\\U0001F600\"\n", true},
	{strings.Repeat("[", 100) + strings.Repeat("]", 100) + "\n", true},
	{strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + "\n", false},
	{strings.Repeat("- ", 300) + "x\n", true},
}

// The fuzzer's seeds: the snippets and the repository's small YAML texts.
func FuzzFastReaderIsGoYAML(f *testing.F) {
	for _, tc := range fastSnippets {
		f.Add([]byte(tc.src))
	}
	for _, data := range repoYAML(f) {
		if len(data) < 4096 {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		sameAsGoYAML(t, "input", src)
	})
}

// suiteText is a suite of n cases as large suites are written (three
// tool calls and three checks each).
func suiteText(n int) []byte {
	var b bytes.Buffer
	b.WriteString("version: 1\nagent: {provider: script}\ncases:\n")
	for i := range n {
		fmt.Fprintf(&b, `  - name: case-%07d
    input: "Refund order O-%d, please"
    script:
      - tool_calls:
          - {name: lookup_order, args: {order_id: O-%d}}
          - {name: lookup_order, args: {order_id: 'O-%d'}}
      - tool_calls: [{name: refund, args: {order_id: O-%d, amount: %d.5}}]
      - text: |
          Refunded O-%d.
          Anything else? # not a comment
    expect:
      - called: {tool: lookup_order, with: {order_id: O-%d}, times: 2}
      - called: {tool: refund, times: 1}
      - output: {contains: Refunded}  # a comment
`, i, i, i, i, i, i, i, i)
	}
	return b.Bytes()
}

// BenchmarkReadYAML reads a 1,000-case suite, and one case's item (what
// a run reads again of each case), with the fast reader and with go-yaml.
func BenchmarkReadYAML(b *testing.B) {
	suite := suiteText(1000)
	two := suiteText(2)
	item := two[bytes.Index(two, []byte("  - name")):bytes.LastIndex(two, []byte("  - name"))]
	for _, text := range []struct {
		name string
		data []byte
	}{{"suite", suite}, {"case", item}} {
		if readFastIn(text.data, nil) == nil {
			b.Fatal("declined")
		}
		for _, r := range []struct {
			name string
			read func([]byte) *yaml.Node
		}{
			{"fast", func(src []byte) *yaml.Node { return readFastIn(src, nil) }},
			{"go-yaml", func(src []byte) *yaml.Node { n, _ := goYAML(src); return n }},
		} {
			b.Run(text.name+"/"+r.name, func(b *testing.B) {
				b.SetBytes(int64(len(text.data)))
				b.ReportAllocs()
				for b.Loop() {
					if r.read(text.data) == nil {
						b.Fatal("nil")
					}
				}
			})
		}
	}
}

// Texts made at random from the pieces suites are made of (keys, dashes,
// scalars of every kind, flow collections split across lines, block
// scalars, comments, blank lines, at random indentations; LF or CRLF line
// ends), valid or not:
// the fast reader declines each or reads go-yaml's tree.
func TestFastReaderRandomTexts(t *testing.T) {
	rng := rand.New(rand.NewPCG(randSeed(), 2))
	scalars := []string{"a", "b c", "x:y", "http://h/p#f", "a#b", "1", "-1", "+1", "0x1F", "0o17", "017", "1e3", ".5", "1.", "-.inf", ".nan", "1_0", "0b1",
		"yes", "no", "on", "true", "False", "null", "~", "-0", "9223372036854775808", "1e999", "é", "日本", "'q'", "'it''s'", `"d"`, `"\u00e9\n"`,
		`"a \"b\""`, "'#'", `"#"`, "[a, b]", "{a: 1, b: [c]}", "[]", "{}", "[a,\n   b]", "{a: 1,\n   b: 2}", "|\n", ">\n", "|-\n", "-x", "a b  ", "`x`", "&a x", "*a", "!t x"}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	texts, read := 0, 0
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(8) {
			ind := strings.Repeat(" ", []int{0, 0, 2, 2, 4, 4, 6, 1, 3}[rng.IntN(9)])
			v := pick(scalars)
			switch rng.IntN(7) {
			case 0:
				b.WriteString(ind + "k" + strconv.Itoa(rng.IntN(3)) + ": " + v)
			case 1:
				b.WriteString(ind + "- " + v)
			case 2:
				b.WriteString(ind + "k" + strconv.Itoa(rng.IntN(3)) + ":")
			case 3:
				b.WriteString(ind + "- k: " + v)
			case 4:
				b.WriteString(ind + "# c")
			case 5:
				b.WriteString(ind + "  text " + v)
			case 6:
				b.WriteString(ind + "- - " + v)
			}
			if !strings.HasSuffix(v, "\n") {
				b.WriteString([]string{"\n", "\n", "\n", " # c\n", "  \n", "\n\n"}[rng.IntN(6)])
			}
		}
		text := b.String()
		if rng.IntN(3) == 0 {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		texts++
		if sameAsGoYAML(t, "random", []byte(text)) {
			read++
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%d of %d random texts read", read, texts)
	if read < texts/20 {
		t.Errorf("only %d of %d random texts read", read, texts)
	}
}

// randSeed is 1, or FASTREADER_SEED to search further by hand.
func randSeed() uint64 {
	if s, err := strconv.ParseUint(os.Getenv("FASTREADER_SEED"), 10, 64); err == nil {
		return s
	}
	return 1
}

// Trees written out at random as people write them (block collections at
// random indentation steps, compact "- key: v" and "- - a", sequences not
// indented under their key, empty values, flow collections, block
// scalars, comments and blank lines between entries, LF or CRLF): the
// fast reader reads
// most of them, and reads each as go-yaml does.
func TestFastReaderRandomTrees(t *testing.T) {
	rng := rand.New(rand.NewPCG(randSeed(), 3))
	scalars := []string{"a", "b c", "x:y", "a#b", "1", "-1", "0x1F", "1e3", ".5", "true", "no", "null", "~", "é 日本", "'q'", "'it''s'",
		`"d"`, `"\u00e9\t"`, "-x", "a  ", "[a, b]", "{a: 1, b: [c, {d: e}]}", "[]", "{}", "[a,\n      b]", "", ""}
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	var b strings.Builder
	line := func() {
		switch rng.IntN(8) {
		case 0:
			b.WriteString(" # c")
		case 1:
			b.WriteString("\n")
		case 2:
			b.WriteString("\n" + strings.Repeat(" ", rng.IntN(6)) + "# c")
		}
		b.WriteString("\n")
	}
	// node writes the value of a key of the mapping at column col+1
	// (afterDash false: after "key: ") or of an item whose "- " is at
	// column col+1, the line already started.
	var node func(col, depth int, afterDash bool)
	node = func(col, depth int, afterDash bool) {
		step := 1 + rng.IntN(4)
		compact := afterDash && rng.IntN(2) == 0
		at := col + step // where a nested collection on the next lines starts
		if compact {
			at = col + 2
		}
		switch k := rng.IntN(10); {
		case depth > 4 || k < 4:
			b.WriteString(pick(scalars))
			line()
		case k == 4:
			b.WriteString(pick([]string{"|", ">", "|-", ">-", "| # c"}) + "\n")
			in := strings.Repeat(" ", col+step)
			for range 1 + rng.IntN(3) {
				b.WriteString(in + pick([]string{"text", "more text", "# not a comment", "x: y"}) + "\n")
				if rng.IntN(4) == 0 {
					b.WriteString("\n")
				}
			}
		case k < 7: // a mapping
			if !compact {
				b.WriteString("\n")
			}
			for i := range 1 + rng.IntN(3) {
				if i > 0 || !compact {
					b.WriteString(strings.Repeat(" ", at))
				}
				b.WriteString(pick([]string{"k", "key", "\"q\"", "'s'", "a b"}) + strconv.Itoa(i) + ": ")
				node(at, depth+1, false)
			}
		default: // a sequence
			if !afterDash && rng.IntN(3) == 0 {
				at = col // not indented under its key
			}
			if !compact {
				b.WriteString("\n")
			}
			for i := range 1 + rng.IntN(3) {
				if i > 0 || !compact {
					b.WriteString(strings.Repeat(" ", at))
				}
				b.WriteString("- ")
				node(at, depth+1, true)
			}
		}
	}
	texts, read := 0, 0
	for range 5000 {
		b.Reset()
		b.WriteString("root: ")
		node(0, 0, false)
		text := b.String()
		if rng.IntN(4) == 0 {
			text = strings.ReplaceAll(text, "\n", "\r\n")
		}
		texts++
		if sameAsGoYAML(t, "random tree", []byte(text)) {
			read++
		} else if _, err := goYAML([]byte(text)); err == nil && os.Getenv("FASTREADER_SHOW") != "" {
			t.Logf("declined, go-yaml reads it:\n%s", text)
		}
		if t.Failed() {
			break
		}
	}
	t.Logf("%d of %d random trees read", read, texts)
	if read < texts/2 {
		t.Errorf("only %d of %d random trees read", read, texts)
	}
}
