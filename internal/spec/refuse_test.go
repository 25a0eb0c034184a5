package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Hole 11 of issue 36: a workspace outside the project root is refused by
// loading (so by validate), at its position, as run refuses it; written
// with '/' or '\', on the suite or on a case.
func TestValidateRefusesWorkspaceOutsideRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tpl"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "s.dryfire.yaml")
	for _, tc := range []struct{ src, want string }{
		{"version: 1\nagent: {command: [\"true\"]}\nworkspace: ../../../etc\ncases: [{name: a, input: hi}]\n",
			":3:12: workspace ../../../etc is outside the project root"},
		{"version: 1\nagent: {command: [\"true\"]}\nworkspace: '..\\..\\..\\etc'\ncases: [{name: a, input: hi}]\n",
			`:3:12: workspace ..\..\..\etc is outside the project root`},
		{"version: 1\nagent: {command: [\"true\"]}\ncases:\n  - {name: a, input: hi, workspace: tpl}\n  - {name: b, input: hi, workspace: /etc}\n",
			":5:37: workspace /etc is outside the project root"},
	} {
		_, ds := Parse(file, []byte(tc.src), &Options{Root: root})
		if !ds.HasErrors() || len(ds) != 1 || !strings.Contains(ds.Error(), tc.want) {
			t.Errorf("%q: got %v, want one error with %q", tc.src, ds, tc.want)
		}
	}
	// Inside the root it loads.
	_, ds := Parse(file, []byte("version: 1\nagent: {command: [\"true\"]}\nworkspace: tpl\ncases: [{name: a, input: hi}]\n"), &Options{Root: root})
	if ds.HasErrors() {
		t.Errorf("a workspace inside the root: %v", ds)
	}
}

// Hole 12 of issue 36: a case name holding a NUL (which no program's
// environment can hold, so every case failed at run time, exit 3) is
// refused at its position when the suite loads, in a list of cases and in
// a data file's names; so are the other C0 controls, which a JUnit report
// cannot hold. Tab, newline and carriage return stay allowed (escaped
// where printed: issue 30), as do DEL and the C1 controls.
func TestCaseNameControlCharacters(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "s.dryfire.yaml")
	for _, tc := range []struct{ name, want string }{
		{`a\0b`, `:3:16: case name "a\x00b" holds the control character U+0000`},
		{`\e[31mred`, `:3:16: case name "\x1b[31mred" holds the control character U+001B`},
		{`x\x01`, `:3:16: case name "x\x01" holds the control character U+0001`},
		{`x\x1f`, `:3:16: case name "x\x1f" holds the control character U+001F`},
		{`a\tb`, ""},
		{`a\nb`, ""},
		{`a\rb`, ""},
		{`del\x7f`, ""},
		{`c1\u0085`, ""},
		{`été ✓ 名前`, ""},
	} {
		src := "version: 1\nagent: {command: [\"true\"]}\ncases: [{name: \"" + tc.name + "\", input: hi}]\n"
		_, ds := Parse(file, []byte(src), &Options{Root: root})
		if tc.want == "" && len(ds) > 0 {
			t.Errorf("%s: got %v, want none", tc.name, ds)
		} else if tc.want != "" && (len(ds) != 1 || !strings.Contains(ds.Error(), tc.want)) {
			t.Errorf("%s: got %v, want one error with %q", tc.name, ds, tc.want)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "rows.jsonl"), []byte("{\"n\": \"x\\u0000y\"}\n{\"n\": \"fine\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := "version: 1\nagent: {command: [\"true\"]}\ncases:\n  - from: rows.jsonl\n    name: \"row {{n}}\"\n    input: hi\n"
	_, ds := Parse(file, []byte(src), &Options{Root: root})
	if len(ds) != 1 || !strings.Contains(ds.Error(), `rows.jsonl:1:1: case name "row x\x00y" holds the control character U+0000`) {
		t.Errorf("a data file's name: got %v", ds)
	}
}
