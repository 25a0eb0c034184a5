package dryfire

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/toolrec"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
	"github.com/dryfire-dev/dryfire/report"
)

// RecordToolsOptions say which real tools Project.RecordTools records:
// exactly one of Command, URL and HTTP.
type RecordToolsOptions struct {
	// Run is how the cases run (filter, model record mode, environment);
	// nil means the defaults. Cases run one at a time, in file order,
	// whatever its Concurrency says: the real tools keep state from call
	// to call, and the recording must not depend on a schedule.
	Run *RunOptions
	// Command is an MCP server started as a program and spoken to over
	// its standard input and output, in Dir ("" the current directory),
	// with the run's environment.
	Command []string
	Dir     string
	// URL is an MCP server over streamable HTTP, or over the HTTP+SSE
	// transport of the 2024-11-05 protocol when SSE is set.
	URL string
	SSE bool
	// HTTP is the base URL of plain HTTP tools: GET BASE/tools lists
	// them, POST BASE/tools/NAME calls one.
	HTTP string
	// CallTimeout bounds one call to the real tools; 0 means 60 s.
	CallTimeout time.Duration
	// DryRun writes no file: the recording says what would be written.
	DryRun bool
	// RefreshTools replaces the suites' declarations of the upstream's
	// tools that differ from its list (RecordedFile.Differing), and the
	// answer of each recorded rule the upstream now answers otherwise
	// (RecordedFile.Rerecorded; a hand-written rule or a recorded
	// sequence stays a conflict).
	RefreshTools bool
}

// ToolRecording is what Project.RecordTools did.
type ToolRecording struct {
	// Report is the run's report: every case, its tools answered by the
	// real ones.
	Report *report.Report
	// Upstream names the real tools (a command line, a URL).
	Upstream string
	// Tools is how many tools the upstream listed.
	Tools int
	// Calls is how many calls were forwarded to it.
	Calls int
	// Files are the suite files, in run order, with what was merged.
	Files []RecordedFile
}

// RecordedFile is what a recording merged into one suite file.
type RecordedFile struct {
	File string
	// Written says the file was changed (not with DryRun, nor when
	// nothing was new).
	Written bool
	// Tools are the tools declared from the upstream's list.
	Tools []string
	// Differing are the declarations of the upstream's tools that differ
	// from its list ("NAME: -declared +listed" by path), replaced under
	// RefreshTools.
	Differing []string
	// Rules is how many rules were added: Sequences of them are
	// sequences (equal arguments, changing answers), CaseRules are in a
	// case's own mocks (cases that got different answers to equal
	// calls).
	Rules, Sequences, CaseRules int
	// Known is how many calls an existing rule already answers as the
	// upstream did.
	Known int
	// Rerecorded is how many recorded rules took the upstream's new
	// answer (RefreshTools).
	Rerecorded int
	// Conflicts are calls an existing rule answers otherwise, as
	// FILE:LINE: message; the rule is kept.
	Conflicts []string
	// Failed are calls the upstream did not answer; none is recorded.
	Failed []string
	// Err is why nothing could be merged into the file.
	Err string
	// Warnings are those of the file as it is after the recording
	// (FILE:LINE:COL: warning: message).
	Warnings []string
}

// RecordTools runs the project's cases with their tool calls answered by
// real tools, through a recording proxy, then merges what the tools
// answered into each suite file as mock rules: tool declarations from
// the upstream's list for the tools a suite does not declare, and per
// tool first-match rules after the existing ones, each under a comment
// naming where it was recorded. Existing rules are never changed: a call
// one answers otherwise is a conflict. Values of secrets in the
// environment are never written.
func (p *Project) RecordTools(ctx context.Context, o *RecordToolsOptions) (*ToolRecording, error) {
	if o == nil {
		return nil, errors.New("recording tools: no upstream given")
	}
	for _, s := range p.suites {
		if s.World != "" {
			return nil, fmt.Errorf("%s is a world suite: its tools are the world's operations, and record-tools writes mock rules", s.File)
		}
	}
	ro := RunOptions{}
	if o.Run != nil {
		ro = *o.Run
	}
	ro.Concurrency = 1
	env := ro.Env
	if env == nil {
		env = os.Environ()
	}
	t, red := target(o, env)
	up, err := toolrec.Dial(ctx, t)
	if err != nil {
		return nil, errors.New(red.String(err.Error()))
	}
	rep, err := p.run(ctx, &ro, up)
	up.Close()
	if err != nil {
		return nil, err
	}
	ex := up.Exchanges()
	rec := &ToolRecording{Report: rep, Upstream: red.String(t.Label()), Tools: len(up.Tools()), Calls: len(ex)}
	if ctx.Err() != nil {
		return rec, fmt.Errorf("interrupted: nothing was written")
	}
	for _, s := range p.suites {
		var mine []toolrec.Exchange
		for _, e := range ex {
			if e.Suite == s.File {
				mine = append(mine, e)
			}
		}
		rec.Files = append(rec.Files, p.recordedFile(s, mine, up, red, o))
	}
	return rec, nil
}

// target is what the options name, in the environment env, and the
// redactor of its secrets and the environment's.
func target(o *RecordToolsOptions, env []string) (toolrec.Target, redact.Redactor) {
	t := toolrec.Target{Command: o.Command, Dir: o.Dir, Env: env, URL: o.URL, SSE: o.SSE, HTTP: o.HTTP, CallTimeout: o.CallTimeout}
	secrets := redact.FromEnviron(env)
	for _, u := range []string{o.URL, o.HTTP} {
		if u != "" {
			secrets = append(secrets, redact.FromURL(u)...)
		}
	}
	return t, redact.New(secrets)
}

// recordedFile merges one suite's exchanges and says what it did.
func (p *Project) recordedFile(s *spec.Suite, ex []toolrec.Exchange, up *toolrec.Upstream, red redact.Redactor, o *RecordToolsOptions) RecordedFile {
	rf := RecordedFile{File: s.File}
	res, warnings, err := p.mergeInto(s, ex, up, red, o)
	for _, w := range warnings {
		rf.Warnings = append(rf.Warnings, w.String())
	}
	if err != nil {
		rf.Err = red.String(err.Error())
	}
	if res != nil {
		rf.Written = res.Changed() && !o.DryRun && err == nil
		rf.Tools, rf.Differing, rf.Rules, rf.Sequences, rf.CaseRules, rf.Known, rf.Rerecorded = res.Tools, res.Differing, res.Rules, res.Sequences, res.CaseRules, res.Known, res.Rerecorded
		for _, c := range res.Conflicts {
			rf.Conflicts = append(rf.Conflicts, c.String())
		}
		rf.Failed = res.Failed
	}
	if n := up.Dropped(); n > 0 {
		rf.Failed = append(rf.Failed, fmt.Sprintf("%d calls after the first %d were answered but not recorded (toolrec.MaxExchanges)", n, toolrec.MaxExchanges))
	}
	return rf
}

// serveRecording is a ToolServer's recording proxy.
type serveRecording struct {
	p        *Project
	suite    *spec.Suite
	caseName string
	up       *toolrec.Upstream
	red      redact.Redactor
	o        *RecordToolsOptions
}

func (p *Project) dialRecording(ctx context.Context, s *spec.Suite, c *spec.Case, o *RecordToolsOptions) (*serveRecording, error) {
	env := os.Environ()
	if o.Run != nil && o.Run.Env != nil {
		env = o.Run.Env
	}
	t, red := target(o, env)
	up, err := toolrec.Dial(ctx, t)
	if err != nil {
		return nil, errors.New(red.String(err.Error()))
	}
	r := &serveRecording{p: p, suite: s, up: up, red: red, o: o}
	if c != nil {
		r.caseName = c.Name
	}
	return r, nil
}

// Recording says what a recording proxy forwards to: the upstream, how
// many tools it listed; ok false when the server is not one.
func (t *ToolServer) Recording() (upstream string, tools int, ok bool) {
	if t.rec == nil {
		return "", 0, false
	}
	return t.rec.red.String(t.rec.up.Target().Label()), len(t.rec.up.Tools()), true
}

// FinishRecording ends a recording proxy's session with the real tools
// and merges what they answered into the suite file (ServeOptions
// .RecordTools); calls is how many were forwarded. Call it once, after
// the server has stopped; nil without RecordTools.
func (t *ToolServer) FinishRecording() (calls int, f *RecordedFile) {
	if t.rec == nil {
		return 0, nil
	}
	r := t.rec
	r.up.Close()
	ex := r.up.Exchanges()
	rf := r.p.recordedFile(r.suite, ex, r.up, r.red, r.o)
	return len(ex), &rf
}

// mergeInto merges one suite's exchanges into its file, and returns the
// warnings of the file as it is after (or would be, with dry).
func (p *Project) mergeInto(s *spec.Suite, ex []toolrec.Exchange, up *toolrec.Upstream, red redact.Redactor, o *RecordToolsOptions) (*toolrec.Result, yamlpos.Diagnostics, error) {
	data, err := safeio.ReadFile(s.File, "suite", safeio.Limit(safeio.MaxYAML))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the suite again: %w", err)
	}
	// The file as it is now: it may have changed while the cases ran.
	cur, ds := spec.Parse(s.File, data, p.specOpts)
	if ds.HasErrors() || cur == nil {
		return nil, nil, fmt.Errorf("the suite changed while the cases ran and no longer loads:\n%s", ds.Error())
	}
	warnings := ds
	res, err := toolrec.Merge(s.File, data, cur, ex, toolrec.Options{
		Label:   red.String(up.Target().Label()),
		Tools:   up.Tools(),
		Refresh: o.RefreshTools,
		Secrets: red,
		Parse: func(file string, data []byte) (*spec.Suite, yamlpos.Diagnostics) {
			return spec.Parse(file, data, p.specOpts)
		},
	})
	if err != nil {
		return res, warnings, err
	}
	if res.Changed() {
		warnings = res.Warnings
	}
	if res.Unwritable {
		return res, warnings, fmt.Errorf("the merged file would not answer every recorded call as the upstream did (the conflicts below); nothing was written")
	}
	if o.DryRun || !res.Changed() {
		return res, warnings, nil
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(s.File); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := atomicfile.Write(s.File, res.Data, mode); err != nil {
		return res, warnings, fmt.Errorf("writing the suite: %w", err)
	}
	return res, warnings, nil
}
