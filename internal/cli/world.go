package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
	"github.com/dryfire-dev/dryfire/internal/engine"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

func newWorldCommand(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "world",
		Short: "Work with world files: import one from an OpenAPI document",
		Args:  noArgs,
	}
	cmd.AddCommand(newWorldImportCommand(e))
	return cmd
}

var packageName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]+$`) })

func newWorldImportCommand(e *env) *cobra.Command {
	var pkg, out, envVar string
	var force bool
	cmd := &cobra.Command{
		Use:   "import FILE --package NAME",
		Short: "Write a world package from an OpenAPI 3.0 or 3.1 document",
		Long: `Write a world package from an OpenAPI 3.0 or 3.1 document (YAML or JSON):
NAME.world.yaml and its behavior module NAME.star, in --out DIR (default
the current directory).

Each operation is named from its operationId; its input schema holds its
path, query and header parameters and the members of its JSON request
body; its output schema is the first success response's; its declared
errors come from the error responses (named by status: 404 NOT_FOUND, 409
CONFLICT, 503 SERVICE_UNAVAILABLE, ...); its route (http:) from its path
and method. Resource-shaped operations get a generic behavior that keeps
records in state by id: POST /things creates, GET /things lists, GET,
PUT, PATCH and DELETE /things/{id} get, replace, update and delete. The
package's base URL variable (http.env) is --env, default NAME_URL.

What the import does not support is a positioned warning on standard
error, never a silent drop. The world written is validated at once.

Exit status: 0 written (warnings allowed); 2 the document is not OpenAPI
3, a file exists (give --force), or a usage error.`,
		Example: `  dryfire world import openapi.yaml --package payments
  dryfire world import petstore.json --package petstore --out worlds \
      --env PETSTORE_URL`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pkg == "" {
				return usageErr("world import needs --package NAME: the world package to write, e.g. --package petstore")
			}
			if !packageName().MatchString(pkg) {
				return usageErr("--package %q: a package name is letters, digits, _ and -", pkg)
			}
			return runWorldImport(e, args[0], pkg, out, envVar, force)
		},
	}
	cmd.Flags().StringVar(&pkg, "package", "", "the world package `NAME` to write (NAME.world.yaml, NAME.star)")
	cmd.Flags().StringVar(&out, "out", ".", "write into `DIR`")
	cmd.Flags().StringVar(&envVar, "env", "", "the `VAR` the agent reads the service's base URL from (default NAME_URL)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite files that exist")
	return cmd
}

func runWorldImport(e *env, file, pkg, out, envVar string, force bool) error {
	data, err := safeio.ReadFile(file, "OpenAPI document", safeio.Limit(safeio.MaxYAML))
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("reading the OpenAPI document: %w", err)}
	}
	res, ds := engine.ImportOpenAPI(file, data, pkg, envVar, filepath.Base(file))
	if res == nil {
		printDiagnostics(e, ds)
		return &exitError{code: exitUsage, err: fmt.Errorf("%s was not imported", file)}
	}
	printDiagnostics(e, res.Warnings)
	worldFile := filepath.Join(out, pkg+".world.yaml")
	module := filepath.Join(out, pkg+".star")
	for _, f := range []string{worldFile, module} {
		if _, err := os.Stat(f); err == nil && !force {
			return &exitError{code: exitUsage, err: fmt.Errorf("%s exists; give --force to overwrite it", f)}
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			return &exitError{code: exitUsage, err: fmt.Errorf("checking %s: %w", f, err)}
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("creating %s: %w", out, err)}
	}
	// Both files are written beside their places and validated there;
	// only a world that loads is moved into place, so that a failed
	// import leaves nothing behind (nor half of a pair).
	tmp, err := os.MkdirTemp(out, ".dryfire-import-*")
	if err != nil {
		return &exitError{code: exitInfra, err: fmt.Errorf("writing into %s: %w", out, err)}
	}
	defer os.RemoveAll(tmp)
	files := []struct {
		path string
		data []byte
	}{{module, res.Module}, {worldFile, res.World}}
	for _, f := range files {
		if err := atomicfile.Write(filepath.Join(tmp, filepath.Base(f.path)), f.data, 0o644); err != nil {
			return &exitError{code: exitInfra, err: fmt.Errorf("writing %s: %w", f.path, err)}
		}
	}
	routes, ok, wds := engine.CheckWorld(filepath.Join(tmp, filepath.Base(worldFile)), tmp, pkg)
	for i := range wds {
		if rel, err := filepath.Rel(tmp, wds[i].Pos.File); err == nil && !strings.HasPrefix(rel, "..") {
			wds[i].Pos.File = filepath.ToSlash(filepath.Join(out, rel))
		}
	}
	printDiagnostics(e, wds)
	if !ok {
		return &exitError{code: exitUsage, err: fmt.Errorf("the world made from %s does not validate, so nothing was written (a bug of the import: please report it with the document)", file)}
	}
	for _, f := range files {
		if err := os.Rename(filepath.Join(tmp, filepath.Base(f.path)), f.path); err != nil {
			return &exitError{code: exitInfra, err: fmt.Errorf("writing %s: %w", f.path, err)}
		}
	}
	clean := "it validates clean"
	if len(wds) > 0 {
		clean = "it validates, with the warnings above"
	}
	fmt.Fprintf(e.stdout, "wrote %s (%s, %s) and %s; %s\n", filepath.ToSlash(worldFile), termtext.Count(res.Operations, "operation"), termtext.Count(routes, "route"), filepath.ToSlash(module), clean)
	return nil
}

// printDiagnostics prints diagnostics one a line, Printable: a message
// quotes what a file says (a key, a value), which starts no line of its
// own and sends no escape sequence to the terminal.
func printDiagnostics[D fmt.Stringer](e *env, ds []D) {
	for _, d := range ds {
		fmt.Fprintln(e.stderr, termtext.Printable(d.String()))
	}
}
