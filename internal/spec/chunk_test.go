package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/txtar"
)

// Cutting the cases apart changes nothing: every suite of the repository
// (examples, the testscripts' files, the hostile corpus) loads to the
// same suite with the same diagnostics whether its items are parsed one
// by one or with the whole file.
func TestCutCasesLoadsAsTheWholeFile(t *testing.T) {
	files := repoSuites(t)
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

// A stub decodes to the case it was: every suite of the repository loads
// with the same diagnostics with Lazy, and with each stub decoded again
// (from several goroutines at once) to the same suite.
func TestLazyCasesDecodeAsLoaded(t *testing.T) {
	defer func(m int) { lazyMin = m }(lazyMin)
	lazyMin = 1
	stubs := 0
	for name, data := range repoSuites(t) {
		a, da := Parse(name, data, nil)
		b, db := Parse(name, data, &Options{Lazy: true})
		if da.Error() != db.Error() {
			t.Errorf("%s: lazy:\n%s\nwhole:\n%s", name, db.Error(), da.Error())
			continue
		}
		if a == nil || b == nil || da.HasErrors() {
			continue // a suite with errors never runs
		}
		var wg sync.WaitGroup
		cases := make([]*Case, b.Len())
		for i := range cases {
			c := b.CaseAt(i)
			cases[i] = c
			if b.Stubbed(i) != c.Lazy() || b.CaseName(i) != c.Name {
				t.Errorf("%s: case %d: Stubbed %v, CaseName %q; the case: Lazy %v, Name %q", name, i, b.Stubbed(i), b.CaseName(i), c.Lazy(), c.Name)
			}
			if skip, trials := b.SkipOf(i); skip != c.Skip || trials != c.Trials {
				t.Errorf("%s: case %q: SkipOf %v %d, want %v %d", name, c.Name, skip, trials, c.Skip, c.Trials)
			}
			if !c.Lazy() {
				continue
			}
			stubs++
			if len(c.Expect) > 0 || len(c.Script) > 0 || c.Input != "" {
				t.Errorf("%s: stub %q keeps its decoded fields", name, c.Name)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				full, err := b.Decode(c)
				if err != nil {
					t.Errorf("%s: case %q: %v", name, c.Name, err)
					return
				}
				cases[i] = full
			}()
		}
		wg.Wait()
		b.Cases = cases
		ja, _ := json.Marshal(a)
		jb, _ := json.Marshal(b)
		if string(ja) != string(jb) {
			t.Errorf("%s: the suites differ once decoded:\n%s\n%s", name, ja, jb)
		}
	}
	if stubs < 100 {
		t.Errorf("only %d stubs in the repository's suites", stubs)
	}
	t.Logf("%d stubs decoded again", stubs)
}

// repoSuites are the suite files of the repository by name: examples,
// the testscripts' files, the hostile corpus.
func repoSuites(t *testing.T) map[string][]byte {
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
	return files
}
