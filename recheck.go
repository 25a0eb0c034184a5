package dryfire

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// RecheckOptions configure Recheck; nil means the defaults of every
// field.
type RecheckOptions struct {
	// Name names the report in the result (report.Report.Recheck), e.g.
	// its path.
	Name string
	// Root is the project root: the suites the report names must be
	// inside it (empty: the current directory).
	Root string
	// Record is the record mode of the judge checks that are new or
	// edited since the run, whose verdicts the report does not hold:
	// empty means RecordNone (replayed from their cassettes only; a judge
	// without one errs its case). No other model is ever called.
	Record RecordMode
	// Env is the environment keys and base URLs are read from (a judge's
	// model, under Record); nil means os.Environ().
	Env []string
}

// Recheck applies the current checks (expect:) of the suites a stored
// JSON report names to the run it holds: the tool calls, output, turns,
// conversation and a drill's final state, evidence and events, as the
// run left them. It runs no agent, answers no tool call and starts no
// passthrough code (impl: modules are not imported); a model is called
// only for a judge check that is new or edited, and only under
// opts.Record. The result is the report with each case's checks, status
// and reason as the current checks make them, and Recheck set; a case
// the suite no longer has errs. A check that needs what the report does
// not hold (a file check, when the workspace was not kept) keeps its
// stored result when unchanged, and else errs its case, saying so.
func Recheck(ctx context.Context, reportJSON []byte, opts *RecheckOptions) (*report.Report, error) {
	opts = cmp.Or(opts, &RecheckOptions{})
	var stored report.Report
	dec := json.NewDecoder(bytes.NewReader(reportJSON))
	dec.UseNumber() // a drill's state compares numbers exactly
	if err := dec.Decode(&stored); err != nil {
		return nil, fmt.Errorf("not a dryfire JSON report: %w", err)
	}
	if stored.Cases == nil {
		return nil, errors.New("not a dryfire JSON report: it has no cases")
	}
	var files []string
	seen := map[string]bool{}
	for i := range stored.Cases {
		c := &stored.Cases[i]
		if seen[c.Suite] {
			continue
		}
		if err := reportedSuite(c.Suite, opts.Root); err != nil {
			return nil, fmt.Errorf("reading the report: case %q: %w", c.Name, err)
		}
		seen[c.Suite] = true
		files = append(files, c.Suite)
	}
	if len(files) == 0 {
		return nil, errors.New("the report has no cases to re-check")
	}
	// impl: references are taken as written: re-checking runs no user code.
	so := &spec.Options{ResolveImpl: func(string) error { return nil }, Root: opts.Root}
	suites, worlds, ds := world.LoadFiles(files, so, opts.Root)
	if ds.HasErrors() {
		return nil, diagnosticsOf(ds)
	}
	mode := cmp.Or(cassette.Mode(opts.Record), cassette.None)
	if _, err := cassette.ParseMode(string(mode)); err != nil {
		return nil, err
	}
	return runner.Recheck(ctx, suites, &stored, opts.Name, runner.Options{Record: mode, Env: opts.Env, Worlds: worlds})
}
