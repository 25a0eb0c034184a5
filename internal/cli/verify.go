package cli

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type verifyOptions struct {
	filter, jsonOut, mdOut, python string
	maxRequests                    int
	list, update                   bool
	upstreamFlags
}

func newVerifyCommand(e *env) *cobra.Command {
	var o verifyOptions
	cmd := &cobra.Command{
		Use:   "verify PATH... [-- COMMAND... | --url|--sse|--http URL]",
		Short: "Send recorded requests again to their upstream; say what drifted",
		Long: `Send the recorded requests of the suites at PATH again to their real
upstream and say, per case, what no longer matches the recording.

Without an upstream: each case's cassette (the agent's model calls) is
sent again through the one live client, with the environment's keys and
base URLs (as dryfire run --record all would send it), and each answer
is compared with the recorded one by its shape, not its words: the
status, a body or a stream, fields added, removed or retyped, the stop
reasons, the tool calls (names and argument keys), a stream's sequence
of events.

With real tools (an MCP server's command after --, --url, --sse, or
plain HTTP tools by --http, as record-tools takes them): the suites'
declarations of the tools the server lists are compared with its list
(each description and input schema), a recorded tool it no longer lists
is named, and each call record-tools recorded (a rule under its
"# recorded from" comment) is sent again and its answer compared with
what the suite answers (an error or not, the shape of its JSON).

Nothing is written unless --update: it re-records only the cases that
drifted (a run with --record all; with real tools, record-tools with
--refresh-tools for those cases). --list says what would be sent and
sends nothing; more requests than --max-requests are refused before any
is sent. No key is ever printed or written.

Exit status: 0 nothing drifted (with --update: the cases that drifted
were re-recorded); 1 a case drifted, or a request got no answer (with
--update: a re-recorded case did not pass, or could not be merged); 2 a
usage or spec error, a key missing, more requests than --max-requests,
real tools that cannot be reached, no cassette to verify: nothing was
sent; 3 --update could
not re-record, or a report could not be written.`,
		Example: `  dryfire verify suites/ --list
  dryfire verify suites/ --max-requests 40 --json drift.json --markdown drift.md
  dryfire verify suites/ --update
  dryfire verify tools.dryfire.yaml -- npx -y @modelcontextprotocol/server-everything
  dryfire verify tools.dryfire.yaml --url http://127.0.0.1:3001/mcp --update`,
		Args: suitesFirst("verify needs at least one suite file or directory, e.g. dryfire verify suites/"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVerify(cmd, e, o, args)
		},
	}
	f := cmd.Flags()
	f.SortFlags = false
	f.StringVar(&o.filter, "filter", "", "verify only the cases whose name matches the regular expression `RE` (Go RE2 syntax)")
	f.IntVar(&o.maxRequests, "max-requests", dryfire.DefaultMaxRequests, "send at most `N` requests: more are refused before any is sent")
	f.BoolVar(&o.list, "list", false, "say what would be sent, per case, and send nothing")
	f.BoolVar(&o.update, "update", false, "re-record the cases that drifted (and only those)")
	f.StringVar(&o.jsonOut, "json", "", "write what drifted as JSON to `FILE`, or to standard output with '-' (the text then goes to standard error)")
	f.StringVar(&o.mdOut, "markdown", "", "write what drifted as GitHub-flavoured Markdown to `FILE`, or to standard output with '-'")
	f.StringVar(&o.url, "url", "", "the real tools: the MCP server at `URL` over streamable HTTP")
	f.StringVar(&o.sse, "sse", "", "the real tools: the MCP server at `URL` over HTTP+SSE (the 2024-11-05 protocol)")
	f.StringVar(&o.http, "http", "", "the real tools: plain HTTP tools at base `URL` (GET URL/tools, POST URL/tools/NAME)")
	f.Float64Var(&o.timeout, "call-timeout", 60, "give up on a call to the real tools after `S` seconds")
	addLoadFlags(cmd, e, &o.python)
	return cmd
}

func runVerify(cmd *cobra.Command, e *env, o verifyOptions, args []string) error {
	paths, rt, err := o.upstream(cmd, args, "server-everything")
	if err != nil {
		return err
	}
	if rt != nil {
		rt.Run = &dryfire.RunOptions{Env: e.environ(), MCPBridge: selfBridge()}
	}
	if err := checkFilter(o.filter); err != nil {
		return err
	}
	if o.maxRequests < 1 {
		return usageErr("--max-requests is at least 1, got %d", o.maxRequests)
	}
	if o.list && o.update {
		return usageErr("--list sends nothing, and --update re-records what drifted: give one")
	}
	text, err := jsonMarkdown(e, o.jsonOut, o.mdOut)
	if err != nil {
		return err
	}
	p, err := loadWith(e, loadOptions(e, o.python), paths, ": nothing was sent", true)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	v, err := p.Verify(cmd.Context(), &dryfire.VerifyOptions{Filter: o.filter, Env: e.environ(), MaxRequests: o.maxRequests, List: o.list, Update: o.update, Tools: rt})
	if v == nil {
		return &exitError{code: exitUsage, err: err}
	}
	if v.Upstream == "" && v.Requests == 0 {
		// A drift check that checks nothing must not pass quietly.
		which := "no case"
		if o.filter != "" {
			which = fmt.Sprintf("no case whose name matches --filter %q", o.filter)
		}
		return usageErr("nothing to verify: %s has a cassette with a model call; nothing was sent", which)
	}
	verifyText(text, v, o)
	code := exitOK
	switch {
	case err != nil:
		fmt.Fprintln(e.stderr, "dryfire: --update:", err)
		code = exitInfra
	case v.UpdateRun != nil:
		// Re-recorded: as the run of those cases went.
		if runExit(v.UpdateRun) != exitOK {
			code = exitFailed
		}
	case v.UpdateTools != nil:
		for _, f := range v.UpdateTools.Files {
			if recordedFileLines(text, f, false, true) {
				code = exitFailed
			}
		}
	case v.Drifted > 0 || v.Failed > 0:
		code = exitFailed
	}
	var errs []error
	if o.jsonOut != "" {
		errs = append(errs, writeReportWith(e, o.jsonOut, indentedJSON(v)))
	}
	if o.mdOut != "" {
		errs = append(errs, writeReportWith(e, o.mdOut, func(w io.Writer) error { return verifyMarkdown(w, v) }))
	}
	if onGitHub(e) && !o.list {
		errs = append(errs, ghAppendSummary(e, func(w io.Writer) error { return verifyMarkdown(w, v) }))
	}
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintln(e.stderr, "dryfire:", err)
		code = exitInfra
	}
	return exitWith(code, "")
}

// verifyText is what a person reads: each drift under its case, then the
// counts.
func verifyText(w io.Writer, v *dryfire.Verification, o verifyOptions) {
	p := termtext.Printable
	if o.list {
		for _, l := range v.Listed {
			fmt.Fprintln(w, p(l))
		}
		fmt.Fprintf(w, "would send %s for %s (--max-requests %d); nothing was sent\n", termtext.Count(v.Requests, "request"), termtext.Count(v.Cases, "case"), o.maxRequests)
		return
	}
	for _, d := range v.Drifts {
		name := p(d.Suite) + ": " + p(d.Case)
		if d.Case == "" {
			name = p(d.Suite) + " (no case)"
		}
		if d.Request > 0 {
			fmt.Fprintf(w, "DRIFT  %s: request %d (%s)\n", name, d.Request, p(d.What))
		} else {
			fmt.Fprintf(w, "DRIFT  %s: %s\n", name, p(d.What))
		}
		for _, x := range d.Differences {
			fmt.Fprintf(w, "         %s\n", p(x))
		}
	}
	what := "the recorded requests"
	if v.Upstream != "" {
		what = "the recorded tools at " + p(v.Upstream)
	}
	fmt.Fprintf(w, "verified %s of %s (%s sent): %d drifted", what, termtext.Count(v.Cases, "case"), termtext.Count(v.Requests, "request"), v.Drifted)
	switch {
	case len(v.Updated) > 0:
		fmt.Fprintf(w, "; re-recorded %s: %s\n", termtext.Count(len(v.Updated), "case"), p(strings.Join(v.Updated, "; ")))
	case v.UpdateRun != nil || v.UpdateTools != nil:
		fmt.Fprintln(w, "; none could be re-recorded")
	case v.Drifted > 0:
		fmt.Fprintln(w, "; nothing was written (--update re-records the cases that drifted)")
	default:
		fmt.Fprintln(w)
	}
	// A re-recorded case that did not pass (exit 1) says why, as run does.
	if r := v.UpdateRun; r != nil {
		var bad []*report.Case
		for i := range r.Cases {
			if s := r.Cases[i].Status; s == report.Failed || s == report.Errored {
				bad = append(bad, &r.Cases[i])
			}
		}
		pr := report.NewText(w, report.TextOptions{})
		pr.Start(len(bad))
		for i, c := range bad {
			pr.CaseDone(i, c)
		}
	}
}

// verifyMarkdown is a verification as GitHub-flavoured Markdown: a
// heading with the counts, a table of the drifts (at most 50 rows),
// every text escaped.
func verifyMarkdown(w io.Writer, v *dryfire.Verification) error {
	var b strings.Builder
	m := func(s string) string { return termtext.Markdown(s) }
	fmt.Fprintf(&b, "### dryfire verify: %s, %s, %d drifted\n\n", termtext.Count(v.Cases, "case"), termtext.Count(v.Requests, "request"), v.Drifted)
	if len(v.Drifts) > 0 {
		b.WriteString("| suite | case | request | what | differences |\n|---|---|--:|---|---|\n")
	}
	for i, d := range v.Drifts {
		if i == 50 {
			fmt.Fprintf(&b, "\n… and %d more (the JSON lists them all)\n", len(v.Drifts)-i)
			break
		}
		diffs := make([]string, len(d.Differences))
		for k, x := range d.Differences {
			diffs[k] = m(x)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s |\n", m(d.Suite), m(d.Case), d.Request, m(d.What), strings.Join(diffs, "<br>"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
