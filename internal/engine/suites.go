package engine

import (
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// suiteCache keeps each loaded suite while its files (the suite, its
// world, the behavior modules) are unchanged: drills of one suite share
// the loaded, immutable suite and world.
type suiteCache struct {
	mu      sync.Mutex
	entries map[string]*cacheEntry // by absolute path
}

type cacheEntry struct {
	mu sync.Mutex // one load at a time
	ls *loaded
}

// loaded is one suite as the engine serves it.
type loaded struct {
	file   string // absolute
	suite  *spec.Suite
	sw     *world.SuiteWorld
	ds     yamlpos.Diagnostics // errors: the suite is not usable
	stamps []stamp             // what the load read, to see a change
	ops    []byte              // the binding's operations, as JSON
	cases  map[string]*spec.Case
	names  []string // case names, in file order
}

// stamp is what a file was when it was read.
type stamp struct {
	path string
	size int64
	mod  time.Time
}

func stampOf(path string) stamp {
	st, err := os.Stat(path)
	if err != nil {
		return stamp{path: path, size: -1}
	}
	return stamp{path: path, size: st.Size(), mod: st.ModTime()}
}

// get loads the suite at path (absolute), or returns it from the cache.
// The second result is the suite it replaced after a change, if any.
func (c *suiteCache) get(path string) (*loaded, *loaded) {
	c.mu.Lock()
	en := c.entries[path]
	if en == nil {
		en = &cacheEntry{}
		c.entries[path] = en
	}
	c.mu.Unlock()
	en.mu.Lock()
	defer en.mu.Unlock()
	if en.ls != nil && !slices.ContainsFunc(en.ls.stamps, func(s stamp) bool { return stampOf(s.path) != s }) { // its files unchanged
		return en.ls, nil
	}
	old := en.ls
	en.ls = load(path)
	return en.ls, old
}

// load reads one suite file and, for a world suite, its world.
func load(path string) *loaded {
	ls := &loaded{file: path, stamps: []stamp{stampOf(path)}}
	suites, worlds, ds := world.LoadFiles([]string{path}, nil, "")
	ls.ds = ds
	if len(suites) == 1 {
		ls.suite = suites[0]
		if s := ls.suite; s.World != "" {
			wf := filepath.Join(filepath.Dir(path), safeio.FromName(s.World))
			ls.stamps = append(ls.stamps, stampOf(wf))
			if sw := worlds[s]; sw != nil {
				ls.sw = sw
				for _, name := range slices.Sorted(maps.Keys(sw.World.Sources)) {
					ls.stamps = append(ls.stamps, stampOf(filepath.Join(filepath.Dir(wf), safeio.FromName(name))))
				}
			}
		}
	}
	if ds.HasErrors() || ls.suite == nil {
		return ls
	}
	ls.cases = make(map[string]*spec.Case, len(ls.suite.Cases))
	for _, c := range ls.suite.Cases {
		ls.cases[c.Name] = c
		ls.names = append(ls.names, c.Name)
	}
	if ls.sw != nil {
		ls.ops = operations(ls.sw.World)
	}
	return ls
}

// usable is an INVALID_SUITE or NOT_A_WORLD_SUITE error for a suite
// drills cannot start from; nil when they can.
func (ls *loaded) usable() error {
	if ls.ds.HasErrors() || ls.suite == nil {
		lines := make([]string, 0, len(ls.ds))
		diags := make([]diagnostic, 0, len(ls.ds))
		for _, d := range ls.ds {
			lines = append(lines, d.String())
			sev := "error"
			if d.Severity == yamlpos.Warning {
				sev = "warning"
			}
			diags = append(diags, diagnostic{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Severity: sev, Message: d.Message})
		}
		if len(lines) == 0 {
			lines = append(lines, ls.file+": the suite could not be loaded")
		}
		return &suiteError{apiError{http.StatusBadRequest, "INVALID_SUITE", strings.Join(lines, "\n")}, diags}
	}
	if ls.sw == nil {
		return &apiError{http.StatusBadRequest, "NOT_A_WORLD_SUITE", fmt.Sprintf("%s is not a world suite (it has no world:): drills run in world suites, whose tools are a world's operations", ls.file)}
	}
	return nil
}

// find is the suite and case of a drill: in the suite file given
// (relative to cwd), or among the world suites under cwd.
func (e *Engine) find(cwd, suite, name string) (*loaded, *spec.Case, error) {
	if suite != "" {
		path := suite
		if !filepath.IsAbs(path) {
			path = filepath.Join(cwd, path)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, nil, &apiError{http.StatusNotFound, "UNKNOWN_SUITE", fmt.Sprintf("suite %s: no such file (suite is relative to cwd, %s)", suite, cwd)}
		}
		ls := e.use(path)
		if err := ls.usable(); err != nil {
			return nil, nil, err
		}
		c := ls.cases[name]
		if c == nil {
			return nil, nil, &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("%s has no drill %q%s; its drills are %s", ls.file, name, suggest.DidYouMean(name, ls.names), strings.Join(quoted(ls.names), ", "))}
		}
		return ls, c, nil
	}
	files, skipped, err := spec.ExpandSkipping([]string{cwd})
	if err != nil {
		return nil, nil, &apiError{http.StatusNotFound, "UNKNOWN_DRILL", fmt.Sprintf("no drill %q: %v (give suite, or run the test from the project's directory)", name, err)}
	}
	var found []*loaded
	var all, broken []string
	for _, f := range files {
		if !filepath.IsAbs(f) {
			f = filepath.Join(e.dir, f)
		}
		ls := e.use(f)
		if ls.usable() != nil {
			if ls.ds.HasErrors() {
				broken = append(broken, rel(cwd, f))
			}
			continue
		}
		if ls.cases[name] != nil {
			found = append(found, ls)
		}
		all = append(all, ls.names...)
	}
	switch len(found) {
	case 1:
		return found[0], found[0].cases[name], nil
	case 0:
		msg := fmt.Sprintf("no world suite under %s has a drill %q%s", cwd, name, suggest.DidYouMean(name, all))
		if len(broken) > 0 {
			msg += fmt.Sprintf("; these suites do not load (dryfire validate says why): %s", strings.Join(broken, ", "))
		}
		if len(skipped) > 0 {
			msg += fmt.Sprintf("; these directories cannot be read and were skipped: %s", strings.Join(skipped, "; "))
		}
		return nil, nil, &apiError{http.StatusNotFound, "UNKNOWN_DRILL", msg}
	}
	names := make([]string, len(found))
	for i, ls := range found {
		names[i] = rel(cwd, ls.file)
	}
	return nil, nil, &apiError{http.StatusConflict, "AMBIGUOUS_DRILL", fmt.Sprintf("drill %q is in %d suites: %s; pass suite to choose one", name, len(found), strings.Join(names, ", "))}
}

// use returns a suite from the cache, dropping what the host kept for the
// copy it replaced.
func (e *Engine) use(path string) *loaded {
	ls, old := e.suites.get(path)
	if old != nil && old.suite != nil {
		e.host.Forget(old.suite)
	}
	return ls
}

func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil && !strings.HasPrefix(r, "..") {
		return filepath.ToSlash(r)
	}
	return path
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = fmt.Sprintf("%q", n)
	}
	return out
}

// opInfo is one operation of a binding.
type opInfo struct {
	Package      string   `json:"package"`
	Operation    string   `json:"operation"`
	Tool         string   `json:"tool"`
	InputSchema  any      `json:"input_schema"`
	OutputSchema any      `json:"output_schema"`
	Errors       []string `json:"errors"`
	Idempotent   bool     `json:"idempotent"`
}

// operations lists a world's operations in the world's order.
func operations(w *world.World) []byte {
	list := make([]opInfo, 0, len(w.OpList))
	for _, key := range w.OpList {
		op := w.Operations[key]
		errs := slices.AppendSeq(make([]string, 0, len(op.Errors)), maps.Keys(op.Errors)) // [] in JSON when none
		slices.Sort(errs)
		in := op.Input
		if in == nil {
			in = map[string]any{"type": "object"}
		}
		list = append(list, opInfo{Package: op.Package, Operation: op.Name, Tool: op.Tool, InputSchema: in, OutputSchema: op.Output, Errors: errs, Idempotent: op.Idempotent})
	}
	return marshal(list)
}
