package jschema_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/schema"
)

// A format file the repository holds: where it is, and its text.
type formatFile struct {
	name string
	data []byte
}

// repoFiles gathers every suite and world file of the repository: files
// of their own, files inside txtar archives (testscripts, the hostile
// corpus), and the YAML blocks of the docs that hold cases or a world.
func repoFiles(t testing.TB) (suites, worlds []formatFile) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	add := func(name string, data []byte) {
		switch {
		case strings.HasSuffix(name, ".dryfire.yaml"):
			suites = append(suites, formatFile{name, data})
		case strings.HasSuffix(name, ".world.yaml"):
			worlds = append(worlds, formatFile{name, data})
		}
	}
	block := regexp.MustCompile("(?s)```ya?ml\n(.*?)```")
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == ".git" || n == "node_modules" || n == ".venv" {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		switch {
		case strings.HasSuffix(path, ".yaml"):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			add(rel, data)
		case strings.HasSuffix(path, ".txtar"):
			a, err := txtar.ParseFile(path)
			if err != nil {
				return err
			}
			for _, f := range a.Files {
				add(rel+":"+f.Name, f.Data)
			}
		case strings.HasSuffix(path, ".md"):
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, m := range block.FindAllSubmatch(data, -1) {
				switch {
				case bytes.Contains(m[1], []byte("\ncases:")) || bytes.HasPrefix(m[1], []byte("cases:")):
					add(rel+".dryfire.yaml", m[1])
				case bytes.Contains(m[1], []byte("\nentities:")) || bytes.HasPrefix(m[1], []byte("entities:")):
					add(rel+".world.yaml", m[1])
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return suites, worlds
}

// A tally of what the quick tree said of values, beside the validator.
type tally struct {
	yes, no, unsureValid, unsureInvalid int
}

// judge puts v to s's quick tree and to the validator: a sure verdict
// must be the validator's.
func (ty *tally) judge(t testing.TB, s *jschema.Schema, v any, where string) {
	valid := jschema.LibraryValid(s, v)
	switch got := jschema.QuickVerdict(s, v); {
	case got == "yes" && !valid, got == "no" && valid:
		t.Errorf("%s: quick %s, validator valid=%v", where, got, valid)
	case got == "yes":
		ty.yes++
	case got == "no":
		ty.no++
	case valid:
		ty.unsureValid++
	default:
		ty.unsureInvalid++
	}
}

func compiled(t testing.TB, data []byte, url string, fragments ...string) []*jschema.Schema {
	raw, err := value.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	ss, err := jschema.CompileFragments(raw, url, fragments)
	if err != nil {
		t.Fatal(err)
	}
	return ss
}

// Every suite, case and world the repository holds, put to the quick
// trees of the format schemas: where they are sure they agree with the
// validator, and of a valid case they are (almost) always sure.
func TestQuickAgreesOnTheRepository(t *testing.T) {
	suites, worlds := repoFiles(t)
	if len(suites) < 100 || len(worlds) < 5 {
		t.Fatalf("found %d suites and %d worlds: the walk is broken", len(suites), len(worlds))
	}
	ss := compiled(t, schema.Suite, schema.SuiteURL, "", "#/$defs/case")
	whole, kase := ss[0], ss[1]
	world := compiled(t, schema.World, schema.WorldURL, "")[0]
	var docs, cases, worldDocs tally
	for _, f := range suites {
		v := convert(f.data)
		if v == nil {
			continue
		}
		docs.judge(t, whole, v, f.name)
		m, _ := v.(map[string]any)
		list, _ := m["cases"].([]any)
		for i, c := range list {
			cases.judge(t, kase, c, f.name+": case "+strconv.Itoa(i))
		}
	}
	for _, f := range worlds {
		if v := convert(f.data); v != nil {
			worldDocs.judge(t, world, v, f.name)
		}
	}
	t.Logf("suites %+v; cases %+v; worlds %+v", docs, cases, worldDocs)
	if cases.yes < 200 || cases.unsureValid*100 > cases.yes {
		t.Errorf("of valid cases, %d were certainly valid and %d unsure: the quick tree should know nearly all", cases.yes, cases.unsureValid)
	}
}

// convert reads a YAML document to JSON values, nil when it does not
// read.
func convert(data []byte) any {
	doc := yamlpos.ParseDocument("f.yaml", data, "suite", "")
	return doc.Value
}

// Mutated case values (seeded by the repository's), put to the case
// schema's quick tree and to the whole suite's: where a tree is sure, it
// agrees with the validator.
func FuzzQuickAgrees(f *testing.F) {
	suites, _ := repoFiles(f)
	for _, sf := range suites {
		m, _ := convert(sf.data).(map[string]any)
		list, _ := m["cases"].([]any)
		for _, c := range list {
			f.Add([]byte(value.Canonical(c)))
		}
	}
	ss := compiled(f, schema.Suite, schema.SuiteURL, "", "#/$defs/case")
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := value.Parse(data)
		if err != nil {
			return
		}
		var ty tally
		ty.judge(t, ss[1], v, "case")
		ty.judge(t, ss[0], map[string]any{"version": json.Number("1"), "agent": map[string]any{"provider": "script"}, "cases": []any{v}}, "suite")
	})
}

// One case of bench/gensuite's shape, checked against the case schema by
// Validate (its quick tree) and by the validator alone.
func BenchmarkCaseSchema(b *testing.B) {
	v := convert([]byte(`name: case-0000001
input: Refund order O-1
script:
  - tool_calls:
      - {name: lookup_order, args: {order_id: O-1}}
      - {name: lookup_order, args: {order_id: O-1}}
  - tool_calls: [{name: refund, args: {order_id: O-1, amount: 1}}]
  - text: Refunded O-1.
expect:
  - called: {tool: lookup_order, with: {order_id: O-1}, times: 2}
  - called: {tool: refund, times: 1}
  - output: {contains: Refunded}
`))
	kase := compiled(b, schema.Suite, schema.SuiteURL, "#/$defs/case")[0]
	if jschema.QuickVerdict(kase, v) != "yes" {
		b.Fatalf("the case is not certainly valid: %s", jschema.QuickVerdict(kase, v))
	}
	b.Run("Validate", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			kase.Validate(v)
		}
	})
	b.Run("validator", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			jschema.LibraryValid(kase, v)
		}
	})
}
