package dryfire_test

import (
	"bytes"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestPublicAPIOwnsItsTypes fails when an exported declaration of package
// dryfire, drill or report mentions a type of an internal package: in a function's
// parameters or results, a method of an exported type, a field of an
// exported struct, an interface's methods, the type of an exported
// variable or constant, or the target of an alias. A user cannot name
// such a type, and go doc shows nothing of it.
func TestPublicAPIOwnsItsTypes(t *testing.T) {
	exports := exportData(t, ".", "./drill", "./report")
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok || file == "" {
			return nil, os.ErrNotExist
		}
		return os.Open(file)
	})
	for _, path := range []string{module, module + "/drill", module + "/report"} {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s: %v", path, err)
		}
		var leaks []string
		for _, name := range pkg.Scope().Names() {
			obj := pkg.Scope().Lookup(name)
			if !obj.Exported() {
				continue
			}
			w := &apiWalker{seen: map[types.Type]bool{}}
			w.object(pkg.Name()+"."+name, obj)
			leaks = append(leaks, w.leaks...)
		}
		sort.Strings(leaks)
		for _, l := range leaks {
			t.Errorf("%s", l)
		}
	}
}

// exportData is the export data file of every package the given packages
// depend on, by import path, as go list builds it.
func exportData(t *testing.T, pkgs ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}={{.Export}}"}, pkgs...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.String())
	}
	m := map[string]string{}
	for line := range strings.Lines(string(out)) {
		path, file, _ := strings.Cut(strings.TrimSpace(line), "=")
		m[path] = file
	}
	return m
}

// apiWalker collects the internal types an exported object's declaration
// mentions.
type apiWalker struct {
	seen  map[types.Type]bool
	leaks []string
}

func (w *apiWalker) object(where string, obj types.Object) {
	switch obj := obj.(type) {
	case *types.TypeName:
		if obj.IsAlias() {
			w.typ(where, types.Unalias(obj.Type()))
			return
		}
		named, ok := obj.Type().(*types.Named)
		if !ok {
			return
		}
		w.typ(where, named.Underlying())
		for m := range named.Methods() {
			if m.Exported() {
				w.typ(where+"."+m.Name(), m.Type())
			}
		}
	default:
		w.typ(where, obj.Type())
	}
}

func (w *apiWalker) typ(where string, t types.Type) {
	if w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		w.typ(where, types.Unalias(t))
	case *types.Named:
		if p := t.Obj().Pkg(); p != nil && isInternal(p.Path()) {
			w.leaks = append(w.leaks, where+" mentions "+p.Path()+"."+t.Obj().Name())
		}
		for a := range t.TypeArgs().Types() {
			w.typ(where, a)
		}
	case *types.Pointer:
		w.typ(where, t.Elem())
	case *types.Slice:
		w.typ(where, t.Elem())
	case *types.Array:
		w.typ(where, t.Elem())
	case *types.Map:
		w.typ(where, t.Key())
		w.typ(where, t.Elem())
	case *types.Chan:
		w.typ(where, t.Elem())
	case *types.Signature:
		for v := range t.Params().Variables() {
			w.typ(where, v.Type())
		}
		for v := range t.Results().Variables() {
			w.typ(where, v.Type())
		}
	case *types.Struct:
		for f := range t.Fields() {
			if f.Exported() || f.Embedded() {
				w.typ(where+"."+f.Name(), f.Type())
			}
		}
	case *types.Interface:
		for m := range t.Methods() {
			if m.Exported() {
				w.typ(where+"."+m.Name(), m.Type())
			}
		}
	case *types.TypeParam:
		w.typ(where, t.Constraint())
	}
}

func isInternal(path string) bool {
	return strings.HasPrefix(path, module+"/internal/") || path == module+"/internal"
}

// TestGoDocNamesNoInternalPackage fails when go doc of the public packages
// shows an internal package's identifier (a constant's value written as
// cassette.None, say): the reader cannot look it up.
func TestGoDocNamesNoInternalPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.Name}}", "./internal/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	ident := regexp.MustCompile(`\b(` + strings.Join(strings.Fields(string(out)), "|") + `)\.[A-Z]\w*`)
	for _, pkg := range []string{".", "./drill", "./report"} {
		doc, err := exec.Command("go", "doc", "-all", pkg).Output()
		if err != nil {
			t.Fatalf("go doc -all %s: %v", pkg, err)
		}
		for i, line := range strings.Split(string(doc), "\n") {
			if m := ident.FindString(line); m != "" {
				t.Errorf("go doc -all %s, line %d: %s (%q)", pkg, i+1, m, strings.TrimSpace(line))
			}
		}
	}
}
