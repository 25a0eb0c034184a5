package world

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"go.starlark.net/starlark"
	"go.starlark.net/syntax"
	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Loading a world's behavior modules (Starlark): read inside the project, run bounded, frozen.

// behaviors loads each Starlark module, runs its top level (bounded) and
// freezes it: the functions are then safe to share between drills.
func (l *loader) behaviors(p yamlpos.KV) {
	for _, it := range yamlpos.Items(p.V, p.Val) {
		name := str(it.Val)
		if name == "" {
			continue
		}
		if _, dup := l.w.Sources[name]; dup {
			l.errorf(it.N, "behavior module %q is listed twice", name)
			continue
		}
		var src []byte
		var err error
		if l.opts.ReadFile != nil {
			src, err = l.opts.ReadFile(name)
		} else {
			src, err = l.readModule(name)
		}
		if err != nil {
			if errors.Is(err, safeio.ErrOutside) {
				l.errorf(it.N, "behavior module %s%s", safeio.Describe(name, err), rootHint(err))
			} else if errors.Is(err, os.ErrNotExist) {
				l.errorf(it.N, "behavior module %q not found (paths are relative to the world file)", name)
			} else {
				l.errorf(it.N, "reading behavior module %q: %v", name, err)
			}
			continue
		}
		// A module checked out with CRLF line ends (Git on Windows) is the
		// same module: its source, in the build and its hash, is the LF text.
		src = bytes.ReplaceAll(src, []byte("\r\n"), []byte("\n"))
		l.w.Sources[name] = string(src)
		path := l.modulePath(name)
		thread := &starlark.Thread{Name: "load " + name, Load: noLoad}
		thread.SetMaxExecutionSteps(10 * l.w.StepBudget)
		thread.SetLocal(memKey, newMemBudget(l.w.Limits.MemoryMB))
		globals, err := execModule(thread, path, src)
		if err != nil {
			l.starError(it.N, name, err)
			continue
		}
		globals.Freeze()
		for _, g := range sortedKeys(globals) {
			fn, ok := globals[g].(*starlark.Function)
			if !ok || strings.HasPrefix(g, "_") {
				continue
			}
			if _, dup := l.w.funcs[g]; dup {
				l.errorf(it.N, "behavior %q is defined in two modules (the second is %s); names must be unique across modules", g, name)
				continue
			}
			l.w.funcs[g] = fn
		}
	}
}

// readModule reads a behavior module from disk, inside the project root.
func (l *loader) readModule(name string) ([]byte, error) {
	dir := filepath.Dir(l.w.File)
	root := l.opts.Root
	if root == "" {
		root = safeio.DefaultRoot(l.w.File)
	}
	path, err := safeio.Confine(root, dir, name)
	if err != nil {
		return nil, err
	}
	return safeio.ReadFile(path, "behavior module", safeio.Limit(safeio.MaxData))
}

// modulePath is how a module's positions read: relative to where the
// world file was named from.
func (l *loader) modulePath(name string) string {
	if l.opts.ReadFile != nil {
		return name
	}
	return filepath.ToSlash(filepath.Join(filepath.Dir(l.w.File), safeio.FromName(name)))
}

// execModule compiles a behavior module, rewritten to keep its memory
// budget, and runs its top level.
func execModule(thread *starlark.Thread, path string, src []byte) (starlark.StringDict, error) {
	if bytes.Contains(src, []byte("__dryfire_")) {
		return nil, errors.New("names beginning with __dryfire_ are reserved")
	}
	f, err := fileOptions.Parse(path, src, 0)
	if err != nil {
		return nil, err
	}
	rewriteMemory(f)
	prog, err := starlark.FileProgram(f, predeclared.Has)
	if err != nil {
		return nil, err
	}
	return prog.Init(thread, predeclared)
}

var fileOptions = &syntax.FileOptions{Set: true, While: true, TopLevelControl: true, GlobalReassign: true, Recursion: false}

func noLoad(*starlark.Thread, string) (starlark.StringDict, error) {
	return nil, errors.New("load() is not available in behavior modules; list every module under behaviors")
}

// starError reports a Starlark error at its own position in the module.
func (l *loader) starError(n *yaml.Node, name string, err error) {
	var se syntax.Error
	var el resolveErrors
	switch {
	case errors.As(err, &se):
		l.extra = append(l.extra, yamlpos.Diagnostic{Pos: yamlpos.Pos{File: se.Pos.Filename(), Line: int(se.Pos.Line), Col: max(int(se.Pos.Col), 1)}, Message: "starlark: " + se.Msg})
	case errors.As(err, &el):
		for _, e := range el {
			l.extra = append(l.extra, yamlpos.Diagnostic{Pos: yamlpos.Pos{File: e.Pos.Filename(), Line: int(e.Pos.Line), Col: max(int(e.Pos.Col), 1)}, Message: "starlark: " + e.Msg})
		}
	default:
		pos, msg := starPos(err)
		if pos.File == "" {
			l.errorf(n, "behavior module %q: %s", name, msg)
			return
		}
		l.extra = append(l.extra, yamlpos.Diagnostic{Pos: pos, Message: "starlark: " + msg})
	}
}
