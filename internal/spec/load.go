package spec

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
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
	// Discard checks every case and counts it (Suite.Discarded) without
	// keeping it, so that checking a suite takes the memory of one case,
	// not of all; the suites of a world keep theirs (the world is
	// checked against them afterwards).
	Discard bool
	// Lazy keeps most cases as stubs once checked, decoded again when
	// they run (Suite.Decode): see lazy.go.
	Lazy bool
	// lazyInline: the suite's own items are many enough to keep as stubs.
	lazyInline bool
}

// IsSuiteFile reports whether a file name is a suite by its name.
func IsSuiteFile(name string) bool {
	return strings.HasSuffix(name, ".dryfire.yaml") || strings.HasSuffix(name, ".dryfire.yml")
}

// ExpandSkipping turns command-line paths into suite files: a file
// stands for itself, a directory for every *.dryfire.yaml /
// *.dryfire.yml under it, in lexical order. Duplicates are dropped. A
// directory under one given that cannot be read is skipped and named,
// with why ("a/b: permission denied"), in the order met: one unreadable
// directory of a project does not hide the suites of the others. The
// files are written with '/' on every OS (filepath.ToSlash): a suite's
// path is in its report, its rules' locations and its messages, which
// read the same on Windows as elsewhere.
func ExpandSkipping(paths []string) (files, skipped []string, err error) {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.ToSlash(filepath.Clean(p))
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, skipped, fmt.Errorf("%s: no such file or directory", p)
		}
		if err != nil {
			return nil, skipped, fmt.Errorf("reading suite path: %w", err)
		}
		if !st.IsDir() {
			add(p)
			continue
		}
		var found []string
		err = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if path != p && d != nil && d.IsDir() {
					skipped = append(skipped, filepath.ToSlash(path)+": "+why(err))
					return filepath.SkipDir
				}
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
			return nil, skipped, fmt.Errorf("searching %s for suites: %w", p, err)
		}
		if len(found) == 0 {
			if len(skipped) > 0 {
				return nil, skipped, fmt.Errorf("no *.dryfire.yaml or *.dryfire.yml files under %s (skipped, unreadable: %s)", p, strings.Join(skipped, "; "))
			}
			return nil, skipped, fmt.Errorf("no *.dryfire.yaml or *.dryfire.yml files under %s", p)
		}
		sort.Strings(found)
		for _, f := range found {
			add(f)
		}
	}
	return out, skipped, nil
}

// SplitSkipped is a skipped directory and why, from ExpandSkipping.
func SplitSkipped(s string) (dir, why string) {
	i := strings.LastIndex(s, ": ")
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+2:]
}

// why is an error of the file system as a reason: "permission denied".
func why(err error) string {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		return pe.Err.Error()
	}
	return err.Error()
}

// LoadFiles loads each file. It returns the suites that could be decoded
// and every diagnostic, grouped by file in argument order.
func LoadFiles(files []string, opts *Options) ([]*Suite, yamlpos.Diagnostics) {
	var suites []*Suite
	var all yamlpos.Diagnostics
	for _, f := range files {
		data, err := safeio.ReadFile(f, "suite", safeio.Limit(safeio.MaxYAML))
		if err != nil {
			all = append(all, yamlpos.Diagnostic{Pos: yamlpos.Pos{File: f, Line: 1, Col: 1}, Message: fmt.Sprintf("reading suite: %v", err)})
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

// Parse loads one suite from its bytes; file names it in positions. It
// never panics: any input gives a suite or diagnostics.
func Parse(file string, data []byte, opts *Options) (*Suite, yamlpos.Diagnostics) {
	if opts == nil {
		opts = &Options{}
	}
	d := newDiags(file)
	s := parse(file, data, opts, d)
	yamlpos.Sort(d.List, append([]string{file}, d.Sources...)...)
	return s, yamlpos.Diagnostics(d.List)
}

// newDiags collects the diagnostics of suite file.
func newDiags(file string) *yamlpos.Collector {
	return &yamlpos.Collector{File: file, Kind: "suite", Empty: "empty suite file: expected a mapping with version, agent and cases"}
}

func parse(file string, data []byte, opts *Options, d *yamlpos.Collector) *Suite {
	if head, spans, ok := cutCases(data); ok && !noCutting {
		cd := &yamlpos.Collector{File: d.File, Kind: d.Kind, Empty: d.Empty}
		if s, ok := parseCut(file, data, head, spans, opts, cd); ok {
			*d = *cd
			return s
		}
	}
	root := yamlpos.Parse(data, d)
	if root == nil {
		return nil
	}
	if opts.Lazy {
		// Stubs are decoded again from cut items only.
		o := *opts
		o.Lazy = false
		opts = &o
	}
	items, detached := detachCases(root)
	return decodeSuite(file, root, func(k *caseChecker) bool {
		for i, n := range items {
			items[i] = nil // let the case's nodes go once decoded
			if !k.item(n) {
				return false
			}
		}
		return true
	}, len(items), detached, opts, d)
}

// afterCase, when set, is called after each case is decoded (a test
// watches the heap).
var afterCase func()

// How many items, and about how many bytes of them, are parsed at once.
const cutGroup, cutBytes = 64, 64 << 10

// noCutting parses every file whole (a test compares the two ways).
var noCutting bool

// parseCut parses a suite whose case items were cut apart (cutCases):
// the rest of the suite, then each item on its own. ok is false when a
// part does not parse alone; nothing it found is then reported.
func parseCut(file string, data, head []byte, spans []span, opts *Options, d *yamlpos.Collector) (*Suite, bool) {
	root := yamlpos.Parse(head, d)
	if root == nil || len(d.List) > 0 {
		return nil, false
	}
	if opts.Lazy {
		o := *opts
		o.lazyInline = len(spans) >= lazyMin // a small list is decoded again faster than it is kept whole
		opts = &o
	}
	var ok bool
	s := decodeSuite(file, root, func(k *caseChecker) bool {
		var more bool
		ok, more = k.cutItems(data, spans)
		return more
	}, len(spans), true, opts, d)
	if s != nil && s.src != nil {
		s.src.data, s.src.spans = data, spans
	}
	return s, ok
}

// decodeSuite converts, checks and decodes a suite, then its cases one at
// a time: cases hands them to the checker (count of them; detached: taken
// out of the tree, which holds an empty list or nothing in their place),
// and returns false when the file is too large to go on. Each case has
// its own bound on values, and its nodes are let go once it is decoded.
func decodeSuite(file string, root *yaml.Node, cases func(*caseChecker) bool, count int, detached bool, opts *Options, d *yamlpos.Collector) *Suite {
	conv := yamlpos.NewConverter(d)
	doc := conv.Convert(root, 0)
	if conv.Large {
		return nil
	}
	m, ok := doc.(map[string]any)
	if !ok {
		d.Add(yamlpos.Error, root.Line, root.Column, "a suite must be a mapping with version, agent and cases, not %s", yamlpos.Describe(doc))
		return nil
	}
	schemas, err := splitSchemas()
	if err != nil {
		d.Add(yamlpos.Error, 1, 1, "internal error: %v", err)
		return nil
	}
	if detached {
		// What the suite's schema sees of the list: whether it is empty.
		m["cases"] = make([]any, min(count, 1))
	}
	// The schema check and the decoder only read the tree: run them side
	// by side, each with its own diagnostics, merged afterwards.
	sd := newDiags(file)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, l := range schemas[0].Validate(doc) {
			schemas[0].Report(root, doc, conv, l, 0, sd)
		}
	}()
	x := &decoder{root: root, file: file, d: d, conv: conv, opts: opts}
	s := x.suite(root, doc)
	<-done
	for _, dg := range sd.List {
		d.Add(dg.Severity, dg.Pos.Line, dg.Pos.Col, "%s", dg.Message)
	}
	k := newCaseChecker(x, s, schemas[1])
	defer k.close()
	if !cases(k) {
		return nil
	}
	return s
}

// detachCases takes the items of the suite's cases list out of the tree.
func detachCases(root *yaml.Node) ([]*yaml.Node, bool) {
	_, cases := yamlpos.Lookup(root, "cases")
	if cases == nil || cases.Kind != yaml.SequenceNode {
		return nil, false
	}
	items := cases.Content
	cases.Content = nil
	return items, true
}
