package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// Cutting the cases apart changes nothing: every suite of the repository
// (examples, the testscripts' files, the hostile corpus) loads to the
// same suite with the same diagnostics whether its items are parsed one
// by one or with the whole file.
func TestCutCasesLoadsAsTheWholeFile(t *testing.T) {
	files := map[string][]byte{}
	root := filepath.Join("..", "..")
	filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path != root && d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		switch {
		case IsSuiteFile(path):
			data, _ := os.ReadFile(path)
			files[path] = data
		case strings.HasSuffix(path, ".txtar"):
			a, err := txtar.ParseFile(path)
			if err != nil {
				return nil
			}
			for _, f := range a.Files {
				if IsSuiteFile(f.Name) || strings.HasSuffix(f.Name, ".yaml") && strings.Contains(string(f.Data), "cases:") {
					files[path+"/"+f.Name] = f.Data
				}
			}
		}
		return nil
	})
	if len(files) < 100 {
		t.Fatalf("only %d suites found", len(files))
	}
	cut := 0
	for name, data := range files {
		if _, _, ok := cutCases(data); ok {
			cut++
		}
		a, da := Parse(name, data, nil)
		noCutting = true
		b, db := Parse(name, data, nil)
		noCutting = false
		if da.Error() != db.Error() {
			t.Errorf("%s: cut apart:\n%s\nwhole:\n%s", name, da.Error(), db.Error())
			continue
		}
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: the suites differ:\n%s\n%s", name, ja, jb)
		}
	}
	t.Logf("%d suites, %d of them cut apart", len(files), cut)
}
