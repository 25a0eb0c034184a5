package cli

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type recordToolsOptions struct {
	filter, record, jsonOut, python string
	dryRun, refresh                 bool
	upstreamFlags
}

func newRecordToolsCommand(e *env) *cobra.Command {
	var o recordToolsOptions
	cmd := &cobra.Command{
		Use:   "record-tools PATH... (-- COMMAND... | --url|--sse|--http URL)",
		Short: "Run the cases against real tools; write their answers as mocks",
		Long: `Run every case of the suites at PATH with its tool calls answered by
real tools instead of its mocks, then write what the tools answered into
each suite file as mock rules, so that the suite runs offline from then
on with the same answers.

The real tools are an MCP server started as a command (after --, spoken
to over its standard input and output), an MCP server by URL (--url:
streamable HTTP; --sse: the HTTP+SSE transport of the 2024-11-05
protocol), or plain HTTP tools by base URL (--http: GET BASE/tools lists
them, POST BASE/tools/NAME calls one). The agent is shown the tools the
upstream lists. Cases run one at a time, in file order: real tools keep
state from call to call.

What is written, into the file as it is (every comment and line of it
stays): a declaration under tools: for each listed tool the suite does
not declare (description and input schema); with --refresh-tools, a
declaration that differs from the listed tool replaced by it (without,
the differences are printed), and a recorded rule the upstream now
answers otherwise given its new answer; and for each call no
existing rule answers, a rule after the tool's existing ones, under a
comment "# recorded from UPSTREAM, case NAME". A rule's when is the
call's arguments, less those the suite's match: rules normalise or
ignore and those that hold a secret; calls with equal arguments and
changing answers become a sequence. When two cases got different answers
to the same call, each case gets its rules in its own mocks:. A call an
existing rule answers as the tool did is left alone; one it answers
otherwise is a conflict: the rule is kept, never changed, and the
command says where it is. Values of secrets in the environment (keys,
tokens, passwords) are written as REDACTED. The merged file is loaded
and checked to answer every recorded call as the tool did before it is
written (atomically).

Exit status: 0 recorded (and every case passed); 1 a conflict, a call
the tools did not answer, a file that could not be written, or a case
that failed; 2 a spec or usage error, or the tools could not be reached:
nothing ran or nothing was written; 130 interrupted, nothing written.`,
		Example: `  dryfire record-tools notes/ -- npx -y @modelcontextprotocol/server-memory
  dryfire record-tools suites/ --url http://127.0.0.1:3001/mcp
  dryfire record-tools suites/ --sse http://127.0.0.1:3001/sse
  dryfire record-tools suites/ --http http://127.0.0.1:8080
  dryfire record-tools s.dryfire.yaml --filter '^refund' -- ./my-server
  dryfire record-tools s.dryfire.yaml --dry-run -- ./my-server
  dryfire record-tools s.dryfire.yaml --refresh-tools -- ./my-server
  dryfire record-tools s.dryfire.yaml --json r.json -- ./my-server
  dryfire record-tools s.dryfire.yaml --call-timeout 5 -- ./my-server
  dryfire record-tools s.dryfire.yaml --record none -- ./my-server`,
		Args: suitesFirst("record-tools needs at least one suite file or directory, e.g. dryfire record-tools notes.dryfire.yaml -- npx -y @modelcontextprotocol/server-memory"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRecordTools(cmd, e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.url, "url", "", "record the MCP server at `URL` over streamable HTTP, e.g. --url http://127.0.0.1:3001/mcp")
	f.StringVar(&o.sse, "sse", "", "record the MCP server at `URL` over the HTTP+SSE transport (the 2024-11-05 protocol), e.g. --sse http://127.0.0.1:3001/sse")
	f.StringVar(&o.http, "http", "", "record plain HTTP tools at base `URL` (GET URL/tools, POST URL/tools/NAME), e.g. --http http://127.0.0.1:8080")
	f.StringVar(&o.filter, "filter", "", "record only the cases whose name matches the regular expression `RE` (Go RE2 syntax)")
	f.StringVar(&o.record, "record", "", "when real models are called: `MODE` none, once, new or all, as for dryfire run")
	f.StringVar(&o.jsonOut, "json", "", "write the JSON report of the recording run to `FILE` ('-' standard output)")
	f.BoolVar(&o.dryRun, "dry-run", false, "run and say what would be written, but write no file")
	f.BoolVar(&o.refresh, "refresh-tools", false, "replace the suites' declarations of the listed tools that differ from the list (description, input schema; aliases kept), and the answer of each recorded rule the tools now answer otherwise")
	f.Float64Var(&o.timeout, "call-timeout", 60, "give up on a call to the real tools after `S` seconds")
	addLoadFlags(cmd, e, &o.python)
	return cmd
}

func runRecordTools(cmd *cobra.Command, e *env, o recordToolsOptions, args []string) error {
	paths, rt, err := o.upstream(cmd, args, "server-memory")
	if err != nil {
		return err
	}
	if rt == nil {
		return usageErr("record-tools records one upstream: give an MCP server's command after --, or --url, --sse or --http")
	}
	if err := checkFilter(o.filter); err != nil {
		return err
	}
	if _, err := dryfire.ParseRecordMode(o.record); err != nil && o.record != "" {
		return usageErr("--record %q: want none, once, new or all", o.record)
	}
	ro := runOptions{jsonOut: o.jsonOut}
	if err := checkReportFlags(e, ro); err != nil {
		return err
	}
	text := textWriter(e, ro)
	// The warnings of the files as they are before the recording (tools
	// without rules) are not the user's to act on: those of the files as
	// written are printed after.
	p, err := loadWith(e, loadOptions(e, o.python), paths, ": nothing ran", false)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	width, terminal := e.terminalWidth(text)
	printer := report.NewText(text, report.TextOptions{Terminal: terminal, Color: terminal && e.getenv("NO_COLOR") == "", Width: width})
	progress := &noneSelected{next: printer}
	rt.Run = &dryfire.RunOptions{Filter: o.filter, Progress: progress, Record: dryfire.RecordMode(o.record), Env: e.environ(), MCPBridge: selfBridge()}
	rt.DryRun, rt.RefreshTools = o.dryRun, o.refresh
	rec, err := p.RecordTools(cmd.Context(), rt)
	if err != nil {
		if rec == nil {
			return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing was written", err)}
		}
		printer.Finish(rec.Report)
		return &exitError{code: exitStopped, err: err}
	}
	if progress.none {
		if o.filter != "" {
			return usageErr("--filter %q matches none of the %s; nothing ran", o.filter, termtext.Count(p.CaseCount(), "case"))
		}
	}
	printer.Finish(rec.Report)
	code := runExit(rec.Report)
	if code == exitInfra {
		code = exitFailed
	}
	fmt.Fprintf(text, "recorded %s to %s (%s listed)\n", termtext.Count(rec.Calls, "call"), termtext.Printable(rec.Upstream), termtext.Count(rec.Tools, "tool"))
	for _, f := range rec.Files {
		if recordedFileLines(text, f, o.dryRun, o.refresh) {
			code = exitFailed
		}
		for _, w := range f.Warnings {
			fmt.Fprintln(e.stderr, termtext.Printable(w))
		}
	}
	if err := writeReports(e, rec.Report, ro); err != nil {
		fmt.Fprintln(e.stderr, "dryfire:", err)
		code = exitFailed
	}
	return exitWith(code, "")
}

// upstreamOptions are the real tools a command names (at most one of an
// MCP command, a streamable HTTP URL, an HTTP+SSE URL and a plain HTTP
// base URL; flag is the URL flags' prefix, for messages); nil when none.
// upstreamFlags name the real tools of verify and record-tools, with the
// MCP server's command after --.
type upstreamFlags struct {
	url, sse, http string
	timeout        float64
}

// upstream splits args at -- into the suites and the real tools' command,
// and reads the real tools (nil: none) from it and the flags; server
// names the example MCP server.
func (u *upstreamFlags) upstream(cmd *cobra.Command, args []string, server string) ([]string, *dryfire.RecordToolsOptions, error) {
	paths, command := args, []string(nil)
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		paths, command = args[:dash], args[dash:]
		if len(command) == 0 {
			return nil, nil, usageErr("nothing after --: give the MCP server's command, e.g. -- npx -y @modelcontextprotocol/%s", server)
		}
	}
	rt, err := upstreamOptions(command, u.url, u.sse, u.http, "--")
	if rt != nil {
		if !(u.timeout > 0) {
			return nil, nil, usageErr("--call-timeout must be above 0 seconds, got %v", u.timeout)
		}
		rt.CallTimeout = time.Duration(u.timeout * float64(time.Second))
	}
	return paths, rt, err
}

// suitesFirst: a command's suites come before --, and there is one.
func suitesFirst(usage string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if cmd.ArgsLenAtDash() == 0 || len(args) == 0 {
			return usageErr("%s", usage)
		}
		return nil
	}
}

func upstreamOptions(command []string, mcpURL, sseURL, httpURL, flag string) (*dryfire.RecordToolsOptions, error) {
	n := 0
	for _, set := range []bool{len(command) > 0, mcpURL != "", sseURL != "", httpURL != ""} {
		if set {
			n++
		}
	}
	if n == 0 {
		return nil, nil
	}
	if n > 1 {
		return nil, usageErr("record one upstream: an MCP server's command after --, or %surl, %ssse or %shttp", flag, flag, flag)
	}
	for _, u := range []struct{ flag, v string }{{"url", mcpURL}, {"sse", sseURL}, {"http", httpURL}} {
		if u.v == "" {
			continue
		}
		if pu, err := url.Parse(u.v); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
			return nil, usageErr("%s%s %q: want an http:// or https:// URL", flag, u.flag, u.v)
		}
	}
	return &dryfire.RecordToolsOptions{Command: command, URL: mcpURL + sseURL, SSE: sseURL != "", HTTP: httpURL}, nil
}

// recordedFileLines says what was merged into one file; true when
// something needs the user (a conflict, a failed call, an error).
func recordedFileLines(w interface{ Write([]byte) (int, error) }, f dryfire.RecordedFile, dry, refresh bool) bool {
	// Every text here may quote a real tool (its name, its error
	// message): printed Printable, one line each.
	p := termtext.Printable
	if f.Err != "" {
		fmt.Fprintf(w, "%s: not written: %s\n", p(f.File), strings.Join(termtext.Lines(f.Err), "\n  "))
		for _, c := range f.Conflicts {
			fmt.Fprintf(w, "  conflict: %s\n", p(c))
		}
		return true
	}
	verb := "wrote"
	switch {
	case dry && (f.Rules > 0 || len(f.Tools) > 0 || refresh && len(f.Differing) > 0):
		verb = "would write"
	case !f.Written:
		verb = "unchanged"
	}
	var parts []string
	if len(f.Tools) > 0 {
		parts = append(parts, termtext.Count(len(f.Tools), "tool")+" declared")
	}
	if refresh && len(f.Differing) > 0 {
		parts = append(parts, termtext.Count(len(f.Differing), "declaration")+" refreshed")
	}
	if f.Rules > 0 {
		r := termtext.Count(f.Rules, "rule") + " added"
		var of []string
		if f.Sequences > 0 {
			of = append(of, termtext.Count(f.Sequences, "sequence"))
		}
		if f.CaseRules > 0 {
			of = append(of, fmt.Sprintf("%d in cases' own mocks", f.CaseRules))
		}
		if len(of) > 0 {
			r += " (" + strings.Join(of, ", ") + ")"
		}
		parts = append(parts, r)
	}
	if f.Rerecorded > 0 {
		parts = append(parts, termtext.Count(f.Rerecorded, "recorded rule")+" re-recorded")
	}
	if f.Known > 0 {
		parts = append(parts, termtext.Count(f.Known, "call")+" answered by the rules already")
	}
	if len(parts) == 0 {
		parts = append(parts, "no calls")
	}
	fmt.Fprintf(w, "%s %s: %s\n", verb, p(f.File), strings.Join(parts, "; "))
	for _, c := range f.Conflicts {
		fmt.Fprintf(w, "  conflict: %s\n", p(c))
	}
	for _, c := range f.Failed {
		fmt.Fprintf(w, "  not recorded: %s\n", p(c))
	}
	for _, d := range f.Differing {
		if refresh {
			fmt.Fprintf(w, "  refreshed: %s\n", p(d))
		} else {
			fmt.Fprintf(w, "  declared otherwise than listed: %s (--refresh-tools takes the list's)\n", p(d))
		}
	}
	return len(f.Conflicts) > 0 || len(f.Failed) > 0
}
