package cli

import (
	"context"
	"errors"
	"fmt"
	"os/signal"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

func newValidateCommand(e *env) *cobra.Command {
	var python string
	var po proveOptions
	cmd := &cobra.Command{
		Use:   "validate PATH...",
		Short: "Check suite files and report every problem with its position",
		Long: `Check suite files without running anything.

Every problem of every file is printed at once to standard error as
FILE:LINE:COL: message, warnings marked "warning:", then a count; a clean
load prints "N files, N cases: ok" to standard output. PATH is a suite
file or a directory, searched for *.dryfire.yaml and *.dryfire.yml files
(in lexical order; hidden directories and node_modules are skipped).

A suite that uses impl: (passthrough mocks) has each reference resolved:
the module is imported with Python, which runs its top-level code, and the
attribute is checked to be callable.

With --prove, every case is also run three times, offline, the script
model standing in for its agent on the built-in loop (its mocks or world,
its checks as written): with its reference solution (its script; else
its first trajectory check's calls, a turn each, then the answer its
output checks ask for), which must pass; with an agent that answers at
once and calls nothing, and with one that calls one to three of its
tools at random (--seed), both of which must fail. A case one of them
passes is flagged with the checks that let it through.

Exit status: 0 no errors (warnings allowed), and with --prove every case
proven; 1 with --prove, a reference that does not pass or a case a
stand-in agent passes; 2 errors found, or a usage error.`,
		Example: `  dryfire validate examples/quickstart
  dryfire validate support.dryfire.yaml billing.dryfire.yaml
  dryfire validate --python .venv/bin/python suites/
  dryfire validate --prove examples/`,
		Args: paths,
		RunE: func(cmd *cobra.Command, args []string) error {
			if po.prove {
				return runProve(cmd.Context(), e, python, po, args)
			}
			for _, f := range []string{"seed", "concurrency"} {
				if cmd.Flags().Changed(f) {
					return usageErr("--%s is for --prove", f)
				}
			}
			return runValidate(e, python, args)
		},
	}
	addLoadFlags(cmd, e, &python)
	cmd.Flags().BoolVar(&po.prove, "prove", false, "also run each case with its reference solution (it must pass), with an agent that does nothing and with a random one (they must fail)")
	cmd.Flags().Uint64Var(&po.seed, "seed", 1, "with --prove, the random agent's seed `N`")
	cmd.Flags().IntVarP(&po.concurrency, "concurrency", "j", 0, "with --prove, run `N` cases at once (default: the number of CPUs)")
	return cmd
}

// addLoadFlags adds the flags of loading suites: --python, the
// interpreter for impl: mocks, and --root, the project root.
func addLoadFlags(cmd *cobra.Command, e *env, python *string) {
	cmd.Flags().StringVar(python, "python", "", "run impl: mocks with the Python interpreter at `PATH` (default $DRYFIRE_PYTHON, then python3 from PATH), e.g. --python .venv/bin/python")
	cmd.Flags().StringVar(&e.root, "root", "", "the project root `DIR`: the paths a suite or world names (world:, behaviors:) must stay inside it, symlinks resolved (default: the current directory, or the directory of a suite outside it)")
}

// loadOptions are the library options the command line sets.
func loadOptions(e *env, python string) dryfire.LoadOptions {
	return dryfire.LoadOptions{Python: python, Stderr: e.stderr, Root: e.root}
}

// closeProject ends passthrough code: it waits for calls still running,
// and abandons them on Ctrl-C.
func closeProject(e *env, p *dryfire.Project) {
	ctx, stop := signal.NotifyContext(context.Background(), stopSignals...)
	defer stop()
	p.Close(ctx, e.stderr)
}

// loadWith loads suites for a command: every diagnostic goes to stderr,
// and a load with errors ends with the count line (then consequence,
// e.g. ": nothing ran") and exit status 2. Warnings are printed when
// warn is set (record-tools prints those of the files it wrote instead).
func loadWith(e *env, lo dryfire.LoadOptions, args []string, consequence string, warn bool) (*dryfire.Project, error) {
	p, err := dryfire.Load(&lo, args...)
	var ds dryfire.Diagnostics
	switch {
	case errors.As(err, &ds):
		printDiagnostics(e, ds)
		if onGitHub(e) {
			ghDiagnostics(e.stderr, ds)
		}
		errs, warns := ds.Count()
		fmt.Fprintf(e.stderr, "%s, %s%s\n", termtext.Count(errs, "error"), termtext.Count(warns, "warning"), consequence)
		return nil, &exitError{code: exitUsage}
	case err != nil:
		return nil, &exitError{code: exitUsage, err: err}
	}
	if !warn {
		return p, nil
	}
	printDiagnostics(e, p.Warnings)
	if onGitHub(e) {
		ghDiagnostics(e.stderr, p.Warnings)
	}
	return p, nil
}

func runValidate(e *env, python string, args []string) error {
	lo := loadOptions(e, python)
	lo.CheckOnly = true // the cases are counted, not kept
	p, err := loadWith(e, lo, args, "", true)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	fmt.Fprintf(e.stdout, "%s, %s: ok", termtext.Count(len(p.Files), "file"), termtext.Count(p.CaseCount(), "case"))
	if n := len(p.Warnings); n > 0 {
		fmt.Fprintf(e.stdout, " (%s)", termtext.Count(n, "warning"))
	}
	fmt.Fprintln(e.stdout)
	return nil
}
