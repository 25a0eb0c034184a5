package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/report"
	"github.com/dryfire-dev/dryfire/internal/serve"
)

type serveOptions struct {
	caseName string
	stdio    bool
	http     string
	python   string
}

func newServeCommand(e *env) *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve PATH (--stdio | --http ADDR) [flags]",
		Short: "Serve a suite's mocks to any agent over MCP and HTTP",
		Long: `Serve the tools of the suite at PATH to an agent dryfire does not run
itself, answered by the suite's mocks exactly as in dryfire run: the same
rules, the same text, unmatched calls answered with an error result that
names the closest rule.

--stdio speaks MCP on standard input and output, for a client that starts
dryfire as its MCP server; everything else goes to standard error. --http
serves on ADDR:
  /mcp            MCP, streamable HTTP
  /tools          GET: the tools with their input schemas
  /tools/NAME     POST the arguments as JSON; the answer is
                  {"content": "...", "is_error": false}
  /reset          POST: every sequence back to its start
MCP serves both protocol eras: 2025-11-25 and earlier (initialize, a
session per client) and 2026-07-28 (stateless).

Mock state: each MCP session (each client of --stdio, each initialized
session over HTTP) has its own sequence positions; calls without a session
(HTTP tool calls, 2026-07-28 requests) share one state, which POST /reset
puts back to the start. --case serves one case's mocks instead of the
suite's.

ADDR is a port (7777) or HOST:PORT; a bare port or one without a host
binds 127.0.0.1, and port 0 picks a free port (the address is printed).
Any other host, 0.0.0.0 included, has to be given explicitly and makes the
mocks (and any impl: code) callable from other machines: a warning says
so. Requests whose Host is not a loopback name, or that come from a
browser page not on localhost (Origin), are refused with 403 (DNS
rebinding protection).

dryfire serve runs until Ctrl-C or SIGTERM (with --stdio, also until
standard input closes), then stops gracefully.

Exit status: 0 stopped; 2 a spec or usage error (an unknown case, too);
3 the address cannot be listened on.`,
		Example: `  dryfire serve support.dryfire.yaml --http 7777
  dryfire serve support.dryfire.yaml --http 127.0.0.1:0    # a free port
  dryfire serve support.dryfire.yaml --case 'gold refund' --stdio
  dryfire serve support.dryfire.yaml --http 0.0.0.0:7777   # other machines too
  dryfire serve shop.dryfire.yaml --http 7777 --python .venv/bin/python`,
		Args: onePath,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), e, o, args[0])
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.BoolVar(&o.stdio, "stdio", false, "speak MCP on standard input and output")
	f.StringVar(&o.http, "http", "", "serve MCP and HTTP tools on `ADDR`: a port (binds 127.0.0.1), HOST:PORT or :PORT, e.g. --http 7777; port 0 picks a free one")
	f.StringVar(&o.caseName, "case", "", "serve the mocks of the case named `NAME` (its rules replace the suite's for each tool it names), e.g. --case 'gold refund'")
	addPythonFlag(cmd, &o.python)
	return cmd
}

// onePath is the Args check of serve: exactly one suite.
func onePath(cmd *cobra.Command, args []string) error {
	switch len(args) {
	case 0:
		return usageErr("serve needs a suite file, e.g. %s support.dryfire.yaml --http 7777", cmd.CommandPath())
	case 1:
		return nil
	}
	return usageErr("serve takes one suite file, got %d arguments", len(args))
}

func runServe(ctx context.Context, e *env, o serveOptions, path string) error {
	if o.stdio == (o.http != "") {
		return usageErr("serve needs one of --stdio or --http ADDR, e.g. --http 7777")
	}
	var addr string
	var loopback bool
	if o.http != "" {
		var err error
		if addr, loopback, err = serve.ListenAddr(o.http); err != nil {
			return usageErr("--http: %v", err)
		}
	}
	p, err := dryfire.LoadWith(loadOptions(e, o.python), path)
	var ds dryfire.Diagnostics
	switch {
	case errors.As(err, &ds):
		for _, d := range ds {
			fmt.Fprintln(e.stderr, d)
		}
		errs, warns := ds.Count()
		fmt.Fprintf(e.stderr, "%s, %s: not serving\n", count(errs, "error"), count(warns, "warning"))
		return &exitError{code: report.ExitUsage}
	case err != nil:
		return &exitError{code: report.ExitUsage, err: err}
	}
	defer closeProject(e, p)
	for _, d := range p.Warnings {
		fmt.Fprintln(e.stderr, d)
	}
	srv, err := p.ToolServer(dryfire.ServeOptions{Case: o.caseName})
	if err != nil {
		return &exitError{code: report.ExitUsage, err: err}
	}
	for _, n := range srv.Root().Notes() {
		fmt.Fprintln(e.stderr, n)
	}
	what := p.Files[0]
	if o.caseName != "" {
		what += fmt.Sprintf(" (case %q)", o.caseName)
	}
	if o.stdio {
		return serveStdio(ctx, e, srv, what)
	}
	return serveHTTP(ctx, e, srv, what, addr, loopback)
}

func serveStdio(ctx context.Context, e *env, srv *dryfire.ToolServer, what string) error {
	fmt.Fprintf(e.stderr, "serving %s over stdio (MCP)\n", what)
	if err := srv.Root().ServeStdio(ctx, e.stdin, e.stdout); err != nil {
		return &exitError{code: report.ExitInfra, err: fmt.Errorf("serving over stdio: %w", err)}
	}
	return nil
}

// shutdownGrace is how long a stopping server waits for calls in flight.
const shutdownGrace = 5 * time.Second

func serveHTTP(ctx context.Context, e *env, srv *dryfire.ToolServer, what, addr string, loopback bool) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return &exitError{code: report.ExitInfra, err: fmt.Errorf("cannot listen on %s: %w", addr, unwrapOp(err))}
	}
	// The address as asked for, with the port the system chose for 0.
	real := ln.Addr().String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		if _, port, err := net.SplitHostPort(real); err == nil {
			real = net.JoinHostPort(host, port)
		}
	}
	if !loopback {
		fmt.Fprintf(e.stderr, "dryfire: warning: listening on %s, which other machines can reach: anyone who can connect can call the mocks (and the code behind impl: rules)\n", real)
	}
	fmt.Fprintf(e.stderr, "serving %s on http://%s: MCP /mcp, tools /tools\n", what, real)
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	select {
	case err := <-done:
		return &exitError{code: report.ExitInfra, err: fmt.Errorf("serving on %s: %w", real, err)}
	case <-ctx.Done():
	}
	// Stop: no new connections; MCP sessions end (their open streams
	// with them); calls in flight get shutdownGrace to finish.
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	shut := make(chan error, 1)
	go func() { shut <- hs.Shutdown(sctx) }()
	srv.CloseSessions()
	if err := <-shut; err != nil {
		hs.Close()
		fmt.Fprintf(e.stderr, "dryfire: calls still running after %s were cut off\n", shutdownGrace)
	}
	fmt.Fprintf(e.stderr, "stopped serving %s\n", what)
	return nil
}

// unwrapOp drops the "listen tcp ADDR:" prefix the caller already says.
func unwrapOp(err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err
	}
	return err
}
