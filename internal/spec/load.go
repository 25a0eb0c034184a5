package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/safeio"
)

// Options tune loading.
type Options struct {
	// ResolveImpl checks that an impl reference (package.module:function)
	// names a callable. Nil means passthrough mocks are unavailable, and
	// every impl is reported as such.
	ResolveImpl func(ref string) error
	// Root is the project root the data files of cases (from:) must stay
	// inside; "" is the current directory when the suite is inside it,
	// else the suite's directory.
	Root string
}

// IsSuiteFile reports whether a file name is a suite by its name.
func IsSuiteFile(name string) bool {
	return strings.HasSuffix(name, ".dryfire.yaml") || strings.HasSuffix(name, ".dryfire.yml")
}

// Expand turns command-line paths into suite files: a file stands for
// itself, a directory for every *.dryfire.yaml / *.dryfire.yml under it,
// in lexical order. Duplicates are dropped.
func Expand(paths []string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or directory", p)
		}
		if err != nil {
			return nil, fmt.Errorf("reading suite path: %w", err)
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && path != p && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if !d.IsDir() && IsSuiteFile(d.Name()) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("searching %s for suites: %w", p, err)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("no *.dryfire.yaml or *.dryfire.yml files under %s", p)
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return out, nil
}

// LoadFiles loads each file. It returns the suites that could be decoded
// and every diagnostic, grouped by file in argument order.
func LoadFiles(files []string, opts *Options) ([]*Suite, Diagnostics) {
	var suites []*Suite
	var all Diagnostics
	for _, f := range files {
		data, err := safeio.ReadFile(f, "suite", safeio.Limit(safeio.MaxYAML))
		if err != nil {
			all = append(all, Diagnostic{Pos: Pos{File: f, Line: 1, Col: 1}, Message: fmt.Sprintf("reading suite: %v", err)})
			continue
		}
		s, ds := Parse(f, data, opts)
		all = append(all, ds...)
		if s != nil {
			suites = append(suites, s)
		}
	}
	return suites, all
}

// Load expands paths and loads every suite file found.
func Load(paths []string, opts *Options) ([]*Suite, Diagnostics, error) {
	files, err := Expand(paths)
	if err != nil {
		return nil, nil, err
	}
	suites, ds := LoadFiles(files, opts)
	return suites, ds, nil
}

// Parse loads one suite from its bytes; file names it in positions. It
// never panics: any input gives a suite or diagnostics.
func Parse(file string, data []byte, opts *Options) (*Suite, Diagnostics) {
	if opts == nil {
		opts = &Options{}
	}
	d := &diags{file: file}
	s := parse(file, data, opts, d)
	sortWithin(d.list, append([]string{file}, d.sources...)...)
	return s, Diagnostics(d.list)
}

func parse(file string, data []byte, opts *Options, d *diags) *Suite {
	root := parseYAML(data, d)
	if root == nil {
		return nil
	}
	expandData(root, file, opts, d)
	conv := newConverter(d)
	doc := conv.convert(root, 0)
	if conv.large {
		return nil
	}
	if _, ok := doc.(map[string]any); !ok {
		d.add(Error, root.Line, root.Column, "a suite must be a mapping with version, agent and cases, not %s", describe(doc))
		return nil
	}
	// The schema check and the decoder only read the tree: run them side
	// by side, each with its own diagnostics, merged afterwards.
	sd := &diags{file: file}
	done := make(chan struct{})
	go func() {
		defer close(done)
		checkSchema(root, doc, conv, sd)
	}()
	x := &decoder{root: root, file: file, d: d, conv: conv, opts: opts}
	s := x.suite(root, doc)
	<-done
	for _, dg := range sd.list {
		d.add(dg.Severity, dg.Pos.Line, dg.Pos.Col, "%s", dg.Message)
	}
	return s
}
