package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// The value-count error names its cause: aliases when they made the
// copies, the document itself when it has none.
func TestDocumentTooLargeNamesItsCause(t *testing.T) {
	defer func(n int) { yamlpos.MaxNodes = n }(yamlpos.MaxNodes)
	yamlpos.MaxNodes = 1000
	plain := "version: 1\nagent: {provider: script}\nmocks: {t: [{return: [" + strings.Repeat("1,", yamlpos.MaxNodes) + "1]}]}\ncases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	_, ds := Parse("big.dryfire.yaml", []byte(plain), nil)
	if got := ds.Error(); !strings.Contains(got, "document too large: more than 1000 values; split it into several files") {
		t.Errorf("without aliases: %s", got)
	}
	_, ds = Parse("bomb.dryfire.yaml", []byte(billionLaughs()), nil)
	if got := ds.Error(); !strings.Contains(got, "values once aliases are expanded") {
		t.Errorf("billion laughs: %s", got)
	}
}

// The bound on values is per case: many cases under it load whatever
// their sum, from YAML or from a data file; one case over it is reported
// at its place, and the others still load.
func TestValueBoundIsPerCase(t *testing.T) {
	defer func(n int) { yamlpos.MaxNodes = n }(yamlpos.MaxNodes)
	yamlpos.MaxNodes = 1000
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\ncases:\n")
	for i := range 50 { // 50 cases of about 30 values: 1,500 in all
		fmt.Fprintf(&b, "  - {name: c%d, input: hi, script: [{text: ok}], mocks: {t: [{return: [%s0]}]}}\n", i, strings.Repeat("0,", 20))
	}
	big := b.String() + "  - {name: big, input: hi, script: [{text: ok}], mocks: {t: [{return: [" + strings.Repeat("1,", yamlpos.MaxNodes) + "1]}]}}\n"
	s, ds := Parse("cases.dryfire.yaml", []byte(b.String()), nil)
	if ds.HasErrors() || len(s.Cases) != 50 {
		t.Fatalf("50 small cases: %d cases, %v", len(s.Cases), ds)
	}
	s, ds = Parse("cases.dryfire.yaml", []byte(big), nil)
	want := "cases.dryfire.yaml:54:5: case too large: more than 1000 values (the bound is per case); split it into smaller cases"
	if got := ds.Error(); !strings.Contains(got, want) {
		t.Errorf("a big case: got\n%s\nwant %s", got, want)
	}
	if s == nil || len(s.Cases) != 50 {
		t.Errorf("the other cases are not loaded: %v", s)
	}

	dir := t.TempDir()
	var rows strings.Builder
	for i := range 200 { // 200 rows of about 20 values each
		fmt.Fprintf(&rows, "{\"n\": %d}\n", i)
	}
	os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows.String()), 0o644)
	suite := "version: 1\nagent: {provider: script}\ncases:\n  - from: rows.jsonl\n    name: \"r{{n}}\"\n    input: \"n {{n}}\"\n    script: [{text: ok}]\n    expect: [{output: {contains: \"o{{n}}\"}}, {max_turns: 1}]\n"
	file := filepath.Join(dir, "d.dryfire.yaml")
	s, ds = Parse(file, []byte(suite), &Options{Root: dir})
	if ds.HasErrors() || len(s.Cases) != 200 {
		t.Fatalf("200 rows: %v", ds)
	}
	// A template whose rows make cases over the bound: each row says so.
	os.WriteFile(filepath.Join(dir, "one.jsonl"), []byte("{\"n\": 1}\n"), 0o644)
	suite = "version: 1\nagent: {provider: script}\ncases:\n  - from: one.jsonl\n    input: \"{{n}}\"\n    script: [{text: ok}]\n    mocks: {t: [{return: [" + strings.Repeat("1,", yamlpos.MaxNodes) + "1]}]}\n"
	_, ds = Parse(file, []byte(suite), &Options{Root: dir})
	want = "one.jsonl:1:1: case too large: this row's case has more than 1000 values (the bound is per case)"
	if got := ds.Error(); !strings.Contains(got, want) {
		t.Errorf("a big row: got\n%s\nwant %s", got, want)
	}
}
