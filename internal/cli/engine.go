package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/engine"
	"github.com/dryfire-dev/dryfire/internal/hostport"
)

func newEngineCommand(e *env) *cobra.Command {
	var listen, record, python string
	cmd := &cobra.Command{
		Use:   "engine [--listen ADDR] [--record MODE]",
		Short: "Host the drills of the TypeScript and Python SDKs",
		Long: `Run the engine the TypeScript SDK (npm dryfire) and the Python SDK (PyPI
dryfire-sdk) start as a child process: one per test worker, hosting any number
of drills at once, each with its own world instance, model endpoint and
cassette, MCP, /tools and /ops, and none sharing state with another. A
drill runs exactly as a case of a world suite runs under dryfire run; its
agent is the test's own function.

When it is ready, the engine prints one line on standard output, then
nothing more:
  {"engine":"dryfire","protocol":1,"version":"...",
   "url":"http://127.0.0.1:PORT","token":"..."}
(one line here broken in two).
Its own messages go to standard error. It exits when standard input
reaches end of file (the test process ended, however it ended), or on
SIGTERM or Ctrl-C; drills still running are abandoned, their cassettes not
written.

Control routes, under /engine/, need Authorization: Bearer TOKEN:
  POST   /engine/drills          start a drill: {"drill", "suite", "cwd",
                                 "setup", "seed", "actor", "record",
                                 "reproduce"}; answers its binding
  POST   /engine/drills/ID/end   {"output", "error"}: the verdict and report
  DELETE /engine/drills/ID       abandon it
A drill's binding lives under /drills/ID/ (ID: 32 random hex characters,
the capability; no header): /mcp, /tools, /ops/PACKAGE/OPERATION, /world/...
and the model endpoint (/v1/...). The whole protocol is
docs/engine-protocol.md.

The engine listens on a free port of 127.0.0.1; --listen chooses another
address (a bare port binds 127.0.0.1; another host has to be given
explicitly, with a warning). Requests whose Host is not a loopback name, or
from a browser page not on localhost, are refused (403).

Exit status: 0 stopped; 2 a usage error; 3 the address cannot be listened
on.`,
		Example: `  dryfire engine
  dryfire engine --record none
  dryfire engine --listen 127.0.0.1:7788
  dryfire engine --python .venv/bin/python
  DRYFIRE_BIN=$(go env GOPATH)/bin/dryfire npx vitest`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEngine(cmd.Context(), e, listen, record)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&listen, "listen", "", "listen on `ADDR`: a port (binds 127.0.0.1), HOST:PORT or :PORT; default a free port of 127.0.0.1")
	f.StringVar(&record, "record", "", "the default record `MODE` of drills' model calls: none, once, new or all as for run; default none when CI is set, else once")
	f.StringVar(&python, "python", "", "the Python interpreter at `PATH` for passthrough code (impl:); accepted for the SDKs' sake: the drills of world suites run none")
	return cmd
}

func runEngine(ctx context.Context, e *env, listen, record string) error {
	addr := ""
	if listen != "" {
		a, loopback, err := hostport.Listen(listen)
		if err != nil {
			return usageErr("--listen: %v", err)
		}
		if !loopback {
			fmt.Fprintf(e.stderr, "dryfire: warning: the engine listens on %s, which other machines can reach: anyone who can connect can call the worlds of its drills\n", a)
		}
		addr = a
	}
	if record != "" {
		if _, err := dryfire.ParseRecordMode(record); err != nil {
			return usageErr("--record %q: want none, once, new or all", record)
		}
	}
	eng, err := engine.Start(engine.Options{Listen: addr, Record: record, Env: e.environ(), Version: Version})
	if err != nil {
		return &exitError{code: exitInfra, err: fmt.Errorf("the engine could not start: %w", unwrapOp(err))}
	}
	defer eng.Close()
	fmt.Fprintf(e.stdout, "%s\n", eng.ReadyLine())
	// The test process holds standard input open for as long as it uses
	// the engine; end of file means it has ended.
	eof := make(chan struct{})
	go func() {
		io.Copy(io.Discard, e.stdin)
		close(eof)
	}()
	select {
	case <-eof:
	case <-ctx.Done():
	}
	return nil
}
