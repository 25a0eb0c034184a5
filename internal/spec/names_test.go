package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A nameSet finds every name it holds, at its line, and no other, also
// when every name hashes alike.
func TestNameSet(t *testing.T) {
	for _, collide := range []bool{false, true} {
		collideNames = collide
		var s nameSet
		want := map[string]int{}
		n := 3000
		if collide {
			n = 300
		}
		for i := range n {
			name := fmt.Sprintf("case %d", i)
			if i%7 == 0 {
				name = strings.Repeat("a", i%50) // prefixes of each other
			}
			if _, dup := want[name]; dup {
				continue
			}
			if _, found := s.line(name); found {
				t.Fatalf("collide %v: %q found before it was added", collide, name)
			}
			s.add(name, i<<33|i)
			want[name] = i<<33 | i
		}
		for name, line := range want {
			if got, found := s.line(name); !found || got != line {
				t.Errorf("collide %v: %q at %d, %v; want %d", collide, name, got, found, line)
			}
		}
		for _, name := range []string{"case", "case 3000", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "x"} {
			if _, found := s.line(name); found {
				t.Errorf("collide %v: %q found", collide, name)
			}
		}
	}
	collideNames = false
}

// A duplicate case name is told at the second place, naming the first,
// between inline cases and rows of a data file, rows far apart (other
// batches, other workers) and rows of two files; the same in order and
// on workers, and when every name's hash collides.
func TestDuplicateNamesAreFoundAtBothPlaces(t *testing.T) {
	dir := t.TempDir()
	var rows strings.Builder
	for i := range 200 {
		name := fmt.Sprintf("row %d", i)
		switch i {
		case 150:
			name = "row 3" // a row of the same file, batches after it
		case 99:
			name = "inline 1" // an inline case's name
		}
		fmt.Fprintf(&rows, "{\"name\": %q}\n", name)
	}
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(rows.String()), 0o644)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte("{\"name\": \"row 7\"}\n{\"name\": \"b 1\"}\n"), 0o644)
	item := func(file string) string {
		return "  - from: " + file + "\n    name: \"{{name}}\"\n    input: hi\n    script: [{text: ok}]\n"
	}
	data := []byte("version: 1\nagent: {provider: script}\ncases:\n" +
		"  - name: inline 1\n    input: hi\n    script: [{text: ok}]\n" + // line 4
		item("a.jsonl") + item("b.jsonl") +
		"  - name: row 160\n    input: hi\n    script: [{text: ok}]\n" + // line 15
		"  - name: b 1\n    input: hi\n    script: [{text: ok}]\n") // line 18
	file := filepath.Join(dir, "s.dryfire.yaml")
	a, b, s := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"), filepath.Join(dir, "s.dryfire.yaml")
	const unique = "; case names are unique within a suite"
	want := strings.Join([]string{
		s + `:15:11: duplicate case name "row 160" (first at ` + a + `:161)` + unique,
		s + `:18:11: duplicate case name "b 1" (first at ` + b + `:2)` + unique,
		a + `:100:1: duplicate case name "inline 1" (first at ` + s + `:4)` + unique,
		a + `:151:1: duplicate case name "row 3" (first at line 4)` + unique,
		b + `:1:1: duplicate case name "row 7" (first at ` + a + `:8)` + unique,
	}, "\n")
	defer func(n int) { checkWorkers = n }(checkWorkers)
	defer func() { collideNames = false }()
	for _, collide := range []bool{false, true} {
		for _, workers := range []int{1, 2, 3} {
			checkWorkers, collideNames = workers, collide
			_, ds := Parse(file, data, &Options{Root: dir, Discard: true})
			if got := ds.Error(); got != want {
				t.Errorf("%d workers, collide %v:\n%s\nwant:\n%s", workers, collide, got, want)
			}
		}
	}
}
