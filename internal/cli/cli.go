// Package cli is the dryfire command line: cobra commands that parse flags
// and call the dryfire library, and the mapping of outcomes to exit codes.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// Version is the dryfire version, set at build time with -ldflags.
var Version = "0.1.0-dev"

// exitError carries an exit code with the error to print.
type exitError struct {
	code  int
	err   error // nil: nothing more to print
	usage bool  // point at --help after the message
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

// usageErr is a mistake in the command line: exit 2, with a pointer to
// the command's help.
func usageErr(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...), usage: true}
}

// env is what a command may touch of the outside world.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	root           string // --root
}

// environ is the environment as KEY=VALUE, for the run.
func (e *env) environ() []string { return os.Environ() }

// terminalWidth returns w's width in columns when w is a terminal that
// can redraw a line in place (not TERM=dumb), and ok.
func (e *env) terminalWidth(w io.Writer) (width int, ok bool) {
	f, isFile := w.(*os.File)
	if !isFile || !term.IsTerminal(int(f.Fd())) || e.getenv("TERM") == "dumb" {
		return 0, false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return width, true
}

// stopSignals stop a command gracefully: Ctrl-C, SIGTERM, and SIGHUP (a
// closed terminal): a run writes its reports, serve what it recorded.
var stopSignals = []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}

// memoryLimit is the soft limit of the Go heap (GOMEMLIMIT overrides it).
const memoryLimit = 200 << 20

// ownLimit: the memory limit is dryfire's own, not GOMEMLIMIT's.
var ownLimit atomic.Bool

// raiseMemoryLimit lifts the soft memory limit to twice the live heap
// when that is more, once a project is loaded: a project that itself
// takes more than half the limit would otherwise have the collector run
// all the time.
func raiseMemoryLimit() {
	if !ownLimit.Load() {
		return
	}
	// The heap in use bounds the live heap: while twice it is under the
	// limit, there is nothing to lift, and no collection to force (a
	// small project's run would spend a tenth of its start-up on it).
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	if 2*int64(m.HeapAlloc) <= debug.SetMemoryLimit(-1) {
		return
	}
	runtime.GC()
	runtime.ReadMemStats(&m)
	if live := int64(m.HeapAlloc); 2*live > debug.SetMemoryLimit(-1) {
		debug.SetMemoryLimit(2 * live)
	}
}

// Main runs the command line and returns the exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// dryfire is a short-lived process that allocates a lot while loading:
	// trading memory for fewer collections cuts a 1,000-case run by ~20%.
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	// With a heap four times its live size, a large suite would take
	// gigabytes: past a soft limit the collector works harder instead
	// (raiseMemoryLimit lifts it for a project whose own size needs more).
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
		ownLimit.Store(true)
	}
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv}
	root := newRootCommand(e)
	// The signals are caught once a command is about to run: --version
	// and --help, answered before, do without (catching them starts a
	// goroutine and a thread). The first Ctrl-C stops the run gracefully
	// (cases not started are skipped, reports are written); a second one
	// kills the process.
	stop := func() {}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		ctx, stopCtx := signal.NotifyContext(cmd.Context(), stopSignals...)
		context.AfterFunc(ctx, stopCtx)
		stop = stopCtx
		cmd.SetContext(ctx)
		return nil
	}
	defer func() { stop() }()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(context.Background())
	if err == nil {
		return 0
	}
	var ee *exitError
	if !errors.As(err, &ee) {
		// Anything cobra itself rejects (an unknown flag or command, a
		// flag value of the wrong type) is a usage error.
		ee = &exitError{code: exitUsage, err: cobraError(root, cmd, args, err), usage: true}
	}
	if ee.err != nil {
		// An error may quote what an upstream said, and that a key.
		// Its control characters are escaped (termtext.Lines): an ESC or
		// OSC sequence from outside reaches no terminal.
		msg := redact.New(redact.FromEnviron(os.Environ())).String(ee.err.Error())
		fmt.Fprintln(stderr, "dryfire:", strings.Join(termtext.Lines(msg), "\n"))
	}
	if ee.usage {
		fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
	}
	return ee.code
}

// cobraError rewords what cobra and pflag reject, with a did-you-mean.
func cobraError(root, cmd *cobra.Command, args []string, err error) error {
	var notExist *pflag.NotExistError
	var invalid *pflag.InvalidValueError
	switch {
	case errors.As(err, &notExist):
		name := notExist.GetSpecifiedName()
		if name == "" || len(name) == 1 {
			return fmt.Errorf("unknown flag -%s for %q", notExist.GetSpecifiedShortnames(), cmd.CommandPath())
		}
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		hint := ""
		if m := suggest.Closest(name, names); m != "" {
			hint = fmt.Sprintf(" (did you mean --%s?)", m)
		}
		return fmt.Errorf("unknown flag --%s for %q%s", name, cmd.CommandPath(), hint)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		want := ""
		if f.Value.Type() == "int" {
			want = ": want a whole number"
		}
		return fmt.Errorf("invalid value %q for --%s%s", invalid.GetValue(), f.Name, want)
	case cmd == root && strings.HasPrefix(err.Error(), "unknown command "):
		var names []string
		for _, c := range root.Commands() {
			if c.IsAvailableCommand() {
				names = append(names, c.Name())
			}
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return fmt.Errorf("unknown command %q%s; the commands are %s", a, suggest.DidYouMean(a, names), strings.Join(names, ", "))
			}
		}
	}
	return err
}

func newRootCommand(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "dryfire",
		Short: "Test LLM agents offline, deterministically and fast",
		Long: `dryfire tests LLM agents offline, deterministically and fast.

Every tool the agent calls is a deterministic mock; every call to a real
model is recorded once into a cassette and replayed after that (or the
model is the offline script model). A suite (*.dryfire.yaml) declares the
agent, its tools, the mocks and cases with checks.

Exit status: 0 all cases passed; 1 a case failed; 2 a spec or usage error
(nothing ran); 3 only infrastructure errors; 130 interrupted.`,
		Example: `  dryfire validate examples/quickstart
  dryfire run examples/quickstart
  dryfire run suites/ --json report.json --junit junit.xml
  dryfire schema > suite.schema.json`,
		Version:            Version,
		SilenceErrors:      true,
		SilenceUsage:       true,
		DisableSuggestions: true, // cobraError says it on one line
		CompletionOptions:  cobra.CompletionOptions{HiddenDefaultCmd: true},
	}
	root.SetVersionTemplate("dryfire {{.Version}}\n")
	root.SetUsageFunc(usage)
	root.AddCommand(newInitCommand(e), newRunCommand(e), newMergeCommand(e), newCompareCommand(e), newValidateCommand(e), newSchemaCommand(e), newReproduceCommand(e), newRecheckCommand(e), newServeCommand(e), newCallCommand(e), newMCPBridgeCommand(e), newEngineCommand(e), newWorldCommand(e), newRecordToolsCommand(e), newVerifyCommand(e), newSweepCommand(e), newInjectCommand(e), newVersionCommand(e))
	return root
}

// paths is the Args check of run and validate: at least one path.
func paths(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return usageErr("%s needs at least one suite file or directory, e.g. %s examples/quickstart", cmd.Name(), cmd.CommandPath())
	}
	return nil
}

// noArgs is the Args check of commands that take none.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErr("%s takes no arguments, got %q", cmd.Name(), args[0])
	}
	return nil
}

// usageWidth is the width flag descriptions are wrapped to in help.
const usageWidth = 80

// usage is cobra's usage text with the flag descriptions wrapped to 80
// columns, so that help reads in any terminal.
func usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:")
	if c.Runnable() {
		fmt.Fprintf(&b, "\n  %s", c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n  %s [command]", c.CommandPath())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\n\nExamples:\n%s", c.Example)
	}
	if c.HasAvailableSubCommands() {
		b.WriteString("\n\nCommands:")
		for _, sub := range c.Commands() {
			if sub.IsAvailableCommand() || sub.Name() == "help" {
				fmt.Fprintf(&b, "\n  %-*s %s", sub.NamePadding(), sub.Name(), sub.Short)
			}
		}
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\n\nFlags:\n%s", strings.TrimRight(c.LocalFlags().FlagUsagesWrapped(usageWidth), " \n"))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\n\nGlobal flags:\n%s", strings.TrimRight(c.InheritedFlags().FlagUsagesWrapped(usageWidth), " \n"))
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\n\nRun '%s COMMAND --help' for more about a command.", c.CommandPath())
	}
	b.WriteByte('\n')
	_, err := io.WriteString(c.OutOrStderr(), b.String())
	return err
}
