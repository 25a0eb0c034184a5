package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/report"
)

type proveOptions struct {
	prove       bool
	seed        uint64
	concurrency int
}

// runProve is validate --prove: a line for each case that is not proven
// (its reference fails, a stand-in agent passes it), one for each proven,
// and the counts.
func runProve(ctx context.Context, e *env, python string, o proveOptions, args []string) error {
	p, err := loadWith(e, loadOptions(e, python), args, ": nothing ran", true)
	if err != nil {
		return err
	}
	defer closeProject(e, p)
	proofs, err := p.Prove(ctx, &dryfire.ProveOptions{Seed: o.seed, Concurrency: o.concurrency, Env: e.environ()})
	if err != nil {
		return &exitError{code: exitUsage, err: fmt.Errorf("%w; nothing proven", err)}
	}
	pr := termtext.Printable
	var proven, failing, flagged, none int
	for _, f := range proofs {
		name := pr(f.Suite) + ": " + pr(f.Case)
		switch {
		case f.Ran == nil:
			none++
		case f.Ran.Status != report.Passed:
			failing++
			fmt.Fprintf(e.stdout, "FAIL  %s: %s does not pass: %s\n", name, pr(f.Reference), pr(f.Ran.Reason))
			for _, c := range f.Ran.Checks {
				if !c.Passed {
					fmt.Fprintf(e.stdout, "      ✗ %s (%s): %s\n", pr(c.Check), pr(c.At), pr(c.Message))
				}
			}
		}
		for _, s := range []struct {
			who    string
			checks []string
		}{{"an agent that does nothing", f.Nothing}, {fmt.Sprintf("an agent that calls tools at random (seed %d)", o.seed), f.Random}} {
			through := cmp.Or(strings.Join(s.checks, "; "), "no check at all")
			if s.checks != nil {
				fmt.Fprintf(e.stdout, "FLAG  %s: passes for %s, through %s\n", name, s.who, pr(through))
			}
		}
		switch {
		case f.Proven() && f.Ran != nil:
			proven++
			fmt.Fprintf(e.stdout, "ok    %s: %s passes; an agent that does nothing and a random one fail\n", name, pr(f.Reference))
		case f.Proven():
			fmt.Fprintf(e.stdout, "-     %s: %s; an agent that does nothing and a random one fail\n", name, pr(f.NoReference))
		case f.Nothing != nil || f.Random != nil:
			flagged++
		}
	}
	fmt.Fprintf(e.stdout, "%s proven, %d flagged, %s whose reference fails, %d without a reference\n", termtext.Count(proven, "case"), flagged, termtext.Count(failing, "case"), none)
	if ctx.Err() != nil {
		return &exitError{code: exitStopped, err: errors.New("interrupted")}
	}
	if flagged > 0 || failing > 0 {
		return &exitError{code: exitFailed}
	}
	return nil
}
