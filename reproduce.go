package dryfire

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/report"
)

// Reproduction compares a stored drill with its re-run.
type Reproduction struct {
	Suite, Name string
	BuildHash   string
	Seed        int64
	Identical   bool
	// Differences says where the evidence (or verdict) differs, first
	// difference first.
	Differences []string
	Rerun       *report.Case
}

// ReproduceOptions choose how a reproduction loads the suites and which
// agent it runs; nil means the defaults of every field.
type ReproduceOptions struct {
	// Load are the options the report's suites are loaded with.
	Load LoadOptions
	// Command, when set, is the agent of every drill: a program run as an
	// agent.command program is (the drill's world as its tools over MCP
	// and HTTP, DRYFIRE_MCP_URL, DRYFIRE_TOOLS_URL, the model base URLs
	// and dummy keys, the input on standard input), whatever agent the
	// suite names. Empty: each suite's own agent (its script, or its
	// agent.command).
	Command []string
	// Dir is the working directory of Command; empty means the current
	// directory. (A suite's own agent.command runs in the suite's
	// directory, as in a run.)
	Dir string
	// Env is the environment agent programs run in (with dryfire's
	// variables set over it); nil means os.Environ().
	Env []string
	// Concurrency is how many drills run at once (default 8); the
	// evidence does not depend on it.
	Concurrency int
}

// Reproduce re-runs every drill of a stored JSON report from exactly the
// build and seed it recorded (not from the world file as it is now) and
// compares the evidence and the verdict. The suites named by the report
// are loaded for the agent side (the script, the checks); the agent is each
// suite's own, or opts.Command for every drill. Model calls are replayed
// from the drills' cassettes (as --record none): a reproduction never calls
// a live model and never writes a cassette, and a model request that
// strays from the recording ends that drill, which then differs.
func Reproduce(ctx context.Context, reportJSON []byte, opts *ReproduceOptions) ([]Reproduction, error) {
	opts = cmp.Or(opts, &ReproduceOptions{})
	var stored report.Report
	if err := json.Unmarshal(reportJSON, &stored); err != nil {
		return nil, fmt.Errorf("reading the report: %w", err)
	}
	type key struct{ suite, name string }
	drills := map[key]*report.Case{}
	var order []key
	var suites []string
	seenSuite := map[string]bool{}
	for i := range stored.Cases {
		c := &stored.Cases[i]
		if c.BuildHash == "" || c.Seed == nil || len(c.Build) == 0 {
			continue
		}
		k := key{c.Suite, c.Name}
		drills[k] = c
		order = append(order, k)
		if !seenSuite[c.Suite] {
			if err := reportedSuite(c.Suite, opts.Load.Root); err != nil {
				return nil, fmt.Errorf("reading the report: case %q: %w", c.Name, err)
			}
			seenSuite[c.Suite] = true
			suites = append(suites, c.Suite)
		}
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("the report has no drills (cases of world suites with build_hash and seed)")
	}
	p, err := Load(&opts.Load, suites...)
	if err != nil {
		return nil, err
	}
	defer p.Close(ctx, nil)
	names := make([]string, 0, len(order))
	for _, k := range order {
		names = append(names, regexp.QuoteMeta(k.name))
	}
	run := runner.Options{
		Impl:        p.impl,
		Concurrency: opts.Concurrency,
		Record:      cassette.None,
		Env:         opts.Env,
		Filter:      regexp.MustCompile("^(" + strings.Join(names, "|") + ")$"),
		Worlds:      p.worlds,
		Builds: func(suite, name string) (string, int64, bool) {
			c, ok := drills[key{suite, name}]
			if !ok {
				return "", 0, false
			}
			return string(c.Build), *c.Seed, true
		},
	}
	if len(opts.Command) > 0 {
		run.Command, run.CommandDir = opts.Command, opts.Dir
		if run.CommandDir == "" {
			wd, err := os.Getwd()
			if err != nil {
				return nil, err
			}
			run.CommandDir = wd
		}
	}
	rep, err := runner.Run(ctx, p.suites, run)
	if err != nil {
		return nil, err
	}
	var out []Reproduction
	for i := range rep.Cases {
		c := &rep.Cases[i]
		old, ok := drills[key{c.Suite, c.Name}]
		if !ok {
			continue
		}
		r := Reproduction{Suite: c.Suite, Name: c.Name, BuildHash: old.BuildHash, Seed: *old.Seed, Rerun: c}
		r.Differences = runner.CompareDrills(old, c)
		r.Identical = len(r.Differences) == 0
		out = append(out, r)
		delete(drills, key{c.Suite, c.Name})
	}
	for _, k := range order {
		if _, missing := drills[k]; missing {
			out = append(out, Reproduction{Suite: k.suite, Name: k.name, BuildHash: drills[k].BuildHash, Differences: []string{"the suite no longer has this case"}})
		}
	}
	return out, nil
}

// reportedSuite checks a suite path read from a report: a suite file
// inside the project root (root, or else the current directory), so a
// report cannot make dryfire read any other file.
func reportedSuite(path, root string) error {
	if !spec.IsSuiteFile(path) {
		return fmt.Errorf("suite %q is not a *.dryfire.yaml or *.dryfire.yml file", path)
	}
	root = cmp.Or(root, ".")
	if _, err := safeio.Confine(root, ".", path); err != nil {
		return fmt.Errorf("suite %s; give --root DIR to widen the project root", safeio.Describe(path, err))
	}
	return nil
}
