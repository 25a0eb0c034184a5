package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rows of a JSON Lines file are kept as stubs and decode to the
// cases they made: blank lines, CRLF line ends and rows named by their
// line included; a row changed on disk after loading is an error, not
// another case.
func TestLazyRowsDecodeAsLoaded(t *testing.T) {
	defer func(m int) { lazyMin = m }(lazyMin)
	lazyMin = 1
	dir := t.TempDir()
	rows := "{\"id\": \"O-1\", \"name\": \"one\"}\r\n\n{\"id\": \"O-2\", \"name\": \"two\"}\n{\"id\": \"O-3\"}\n"
	if err := os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	suite := []byte(`version: 1
agent: {provider: script}
mocks:
  lookup: [{return: {status: shipped}}]
cases:
  - name: inline
    input: hi
    script: [{text: Shipped.}]
  - from: rows.jsonl
    input: "Where is {{id}}?"
    script:
      - tool_calls: [{name: lookup, args: {id: "{{id}}"}}]
      - text: Shipped.
    expect:
      - called: {tool: lookup, with: {id: "{{id}}"}, times: 1}
`)
	file := filepath.Join(dir, "s.dryfire.yaml")
	a, da := Parse(file, suite, &Options{Root: dir})
	b, db := Parse(file, suite, &Options{Root: dir, Lazy: true})
	if da.HasErrors() || db.Error() != da.Error() {
		t.Fatalf("diagnostics: %v / %v", da, db)
	}
	stubs := 0
	cases := make([]*Case, b.Len())
	for i := range cases {
		c := b.CaseAt(i)
		cases[i] = c
		if !c.Lazy() {
			continue
		}
		stubs++
		full, err := b.Decode(c)
		if err != nil {
			t.Fatalf("case %q: %v", c.Name, err)
		}
		cases[i] = full
	}
	b.Cases = cases
	if stubs != 4 {
		t.Errorf("%d stubs, want 4 (an inline case and 3 rows)", stubs)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Errorf("the suites differ once decoded:\n%s\n%s", ja, jb)
	}
	if !strings.Contains(string(jb), `"Name":"rows.jsonl:4"`) {
		t.Errorf("the unnamed row is not named by its line: %s", jb)
	}

	c, _ := Parse(file, suite, &Options{Root: dir, Lazy: true})
	if err := os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(strings.Replace(rows, `"two"`, `"deux"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range c.Len() {
		k := c.CaseAt(i)
		_, err := c.Decode(k)
		if want := k.Name == "two"; (err != nil) != want {
			t.Errorf("case %q decoded after its file changed: error %v", k.Name, err)
		}
	}
}
