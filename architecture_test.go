package dryfire_test

import (
	"bytes"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var updateArchitecture = flag.Bool("update", false, "regenerate the package graph in ARCHITECTURE.md from go list")

const module = "github.com/dryfire-dev/dryfire"

// layers are the layers of ARCHITECTURE.md, top first: a package imports
// only packages of layers below its own. A path ending in "/..." places
// every package under it. The last layer is test support: no shipped
// package may import it.
var layers = []struct {
	name string
	pkgs []string
}{
	{"commands", []string{"cmd/dryfire", "bench/...", "internal/cli/gendocs"}},
	{"command line", []string{"internal/cli"}},
	{"the SDKs' engine", []string{"internal/engine"}},
	{"public API", []string{"."}},
	{"public API for Go drills", []string{"drill"}},
	{"running cases", []string{"internal/runner", "internal/verify"}},
	{"servers, the loop, judging", []string{"internal/toolserver", "internal/modelserver", "internal/mcpbridge", "internal/agent", "internal/check", "internal/toolrec"}},
	{"the per-case plan", []string{"internal/plan"}},
	{"answering tools and models", []string{"internal/mock", "internal/world", "internal/cassette", "internal/openapi"}},
	{"each model API's wire format", []string{"internal/wire"}},
	{"the model call", []string{"internal/model"}},
	{"user code, the suite format, the tool-call record", []string{"internal/passthrough", "internal/program", "internal/spec", "internal/tool", "internal/workspace"}},
	{"YAML with positions and diagnostics", []string{"internal/yamlpos"}},
	{"the report", []string{"report"}},
	{"foundations", []string{"internal/netjail", "internal/reaper", "internal/pause", "internal/quietlog", "internal/jsonrpc", "internal/value", "internal/suggest", "internal/jschema", "internal/atomicfile", "internal/safeio", "internal/redact", "internal/yamlnode", "internal/termtext", "internal/jsonout", "internal/hostport", "internal/provider", "internal/reqmatch", "schema"}},
	{"a pinned copy of a library (FORK.md)", []string{"internal/jsonschema"}},
	{"its error kinds", []string{"internal/jsonschema/kind"}},
	{"test support", []string{"internal/test/...", "examples/...", "bench/gensuite/suite"}},
}

// layerOf is the index in layers of a package path relative to the module
// ("." for the root), or -1. A package named exactly is in that layer,
// even when a "/..." entry of another layer covers it too.
func layerOf(rel string) int {
	under := -1 // the layer of a "/..." entry above rel; an exact entry wins
	for i, l := range layers {
		for _, p := range l.pkgs {
			dir, tree := strings.CutSuffix(p, "/...")
			switch {
			case rel == p:
				return i
			case under < 0 && tree && (rel == dir || strings.HasPrefix(rel, dir+"/")):
				under = i
			}
		}
	}
	return under
}

// goList runs go list in the module root and returns, for each package of
// the module it prints, its imports of the module's packages (relative
// paths, sorted), and the packages in the order go list printed them.
func goList(t *testing.T, args ...string) (map[string][]string, []string) {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-f", "{{if not .Standard}}{{.ImportPath}} {{join .Imports \" \"}}{{end}}"}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	imports := map[string][]string{}
	var order []string
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		pkg, ok := rel(f[0])
		if !ok {
			continue
		}
		var in []string
		for _, imp := range f[1:] {
			if r, ok := rel(imp); ok {
				in = append(in, r)
			}
		}
		slices.Sort(in)
		imports[pkg] = in
		order = append(order, pkg)
	}
	return imports, order
}

// name is how the graph shows a package: the root as "dryfire".
func name(rel string) string {
	if rel == "." {
		return "dryfire"
	}
	return rel
}

func rel(path string) (string, bool) {
	if path == module {
		return ".", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// TestLayering fails when a package imports one of its own layer or of a
// layer above it (test support aside), when a package is in no layer, and when a shipped
// package (the command, the library, drill) depends on test support.
func TestLayering(t *testing.T) {
	imports, order := goList(t, "./...")
	for _, pkg := range order {
		l := layerOf(pkg)
		if l < 0 {
			t.Errorf("package %s is in no layer: place it in layers (architecture_test.go), then run go test -run TestPackageGraph -update . to redraw ARCHITECTURE.md", name(pkg))
			continue
		}
		for _, imp := range imports[pkg] {
			// Test support may use any package (the fakes speak the
			// wire's shapes); nothing shipped may use it.
			if li := layerOf(imp); li >= 0 && li <= l && l < len(layers)-1 {
				t.Errorf("%s (layer %d, %s) imports %s (layer %d, %s): a package imports only packages of layers below its own", name(pkg), l+1, layers[l].name, name(imp), li+1, layers[li].name)
			}
		}
	}
	shipped, _ := goList(t, "-deps", "./cmd/dryfire", ".", "./drill")
	for pkg := range shipped {
		if layerOf(pkg) == len(layers)-1 {
			t.Errorf("the shipped command or library depends on %s, which is test support", pkg)
		}
	}
}

// TestCLIImportsThePublicAPI fails when the command line imports an
// internal package other than a foundation (or the SDKs' engine, which it
// serves): everything else it reaches through the public packages (the
// root and report), as a user's Go program would.
func TestCLIImportsThePublicAPI(t *testing.T) {
	imports, _ := goList(t, "./internal/cli")
	foundations := -1
	for i, l := range layers {
		if l.name == "foundations" {
			foundations = i
		}
	}
	for _, imp := range imports["internal/cli"] {
		if imp == "." || imp == "report" || imp == "internal/engine" || layerOf(imp) == foundations {
			continue
		}
		t.Errorf("internal/cli imports %s: reach it through the public package (a foundation, layer %d, may be imported)", imp, foundations+1)
	}
}

// TestPackageGraph fails when the package graph of ARCHITECTURE.md is not
// the one go list -deps gives; -update redraws it.
func TestPackageGraph(t *testing.T) {
	const file = "ARCHITECTURE.md"
	const begin = "<!-- package graph: generated by `go test -run TestPackageGraph -update .`; do not edit -->\n"
	const end = "<!-- end of package graph -->\n"
	doc, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	before, rest, ok := strings.Cut(string(doc), begin)
	_, after, ok2 := strings.Cut(rest, end)
	if !ok || !ok2 {
		t.Fatalf("%s has no package graph between the lines %q and %q", file, begin, end)
	}
	shipped, _ := goList(t, "-deps", "./cmd/dryfire", ".", "./drill")
	want := before + begin + drawGraph(shipped) + end + after
	if want == string(doc) {
		return
	}
	if *updateArchitecture {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("the package graph of %s is stale (the imports changed): run go test -run TestPackageGraph -update . and review the difference", file)
}

// drawGraph draws the shipped packages layer by layer, top first, each
// with the module packages it imports.
func drawGraph(imports map[string][]string) string {
	var b strings.Builder
	b.WriteString("```text\n")
	for i, l := range layers {
		var pkgs []string
		for pkg := range imports {
			if layerOf(pkg) == i {
				pkgs = append(pkgs, pkg)
			}
		}
		if len(pkgs) == 0 {
			continue
		}
		slices.Sort(pkgs)
		fmt.Fprintf(&b, "%d. %s\n", i+1, l.name)
		for _, pkg := range pkgs {
			if len(imports[pkg]) == 0 {
				fmt.Fprintf(&b, "     %s\n", name(pkg))
				continue
			}
			in := make([]string, len(imports[pkg]))
			for i, imp := range imports[pkg] {
				in[i] = name(imp)
			}
			fmt.Fprintf(&b, "     %-22s → %s\n", name(pkg), strings.Join(in, ", "))
		}
	}
	b.WriteString("```\n")
	return b.String()
}

// outsideDocument matches a citation of a document that is not in the
// repository (the product's design notes): a comment states the rule
// itself instead.
var outsideDocument = regexp.MustCompile(`\b(DESIGN|WIRE|LIBRARIES)(\.md)?\s*§|\b(DESIGN|WIRE|LIBRARIES)\.md\b|\bseed 0\d\d\b|\bseeds/`)

// TestNoCommentCitesAnOutsideDocument fails when Go source cites a
// document the repository does not have.
func TestNoCommentCitesAnOutsideDocument(t *testing.T) {
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for i, line := range strings.Split(string(data), "\n") {
			if m := outsideDocument.FindString(line); m != "" {
				t.Errorf("%s:%d: cites %q, a document outside the repository; state the rule itself", path, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// hotPath are the packages a tool call, a model call or a case goes
// through, each with the files of it that are not on that path (a world
// is loaded once, then called). No function is exempted: a step done
// once is as long as one done per call.
var hotPath = map[string][]string{
	"internal/runner":      nil,
	"internal/toolserver":  nil,
	"internal/modelserver": nil,
	"internal/mock":        nil,
	"internal/tool":        nil,
	"internal/value":       nil,
	"internal/model":       nil,
	"internal/wire":        nil,
	"internal/cassette":    nil,
	"internal/reqmatch":    nil,
	"internal/agent":       nil,
	"internal/passthrough": nil,
	"internal/jsonrpc":     nil,
	"internal/world":       {"load.go", "override.go", "suite.go"},
}

// maxHotFunc is the longest a function on the hot path may be, in lines:
// past it, a function does several jobs, which stay apart as functions.
const maxHotFunc = 80

// TestHotPathFunctionsAreShort fails when a function of production code
// on a tool call's, a model call's or a case's path is longer than
// maxHotFunc lines.
func TestHotPathFunctionsAreShort(t *testing.T) {
	fset := token.NewFileSet()
	for dir, skip := range hotPath {
		files, err := filepath.Glob(filepath.Join(filepath.FromSlash(dir), "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") || slices.Contains(skip, filepath.Base(path)) {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
				if n := end.Line - start.Line + 1; n > maxHotFunc {
					t.Errorf("%s:%d: %s is %d lines, over %d on the hot path: split it into its stages", filepath.ToSlash(path), start.Line, fd.Name.Name, n, maxHotFunc)
				}
			}
		}
	}
}
