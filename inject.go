package dryfire

import (
	"cmp"
	"context"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxInjections bounds an injection drill's runs unless
// InjectOptions.MaxRuns says otherwise.
const DefaultMaxInjections = 2000

// InjectOptions control Project.Inject; nil means the defaults. The run's
// options are RunOptions', as for a sweep (Record defaults to RecordNone).
type InjectOptions struct {
	RunOptions
	// MaxRuns bounds the runs under a payload, in table order; 0 means
	// DefaultMaxInjections.
	MaxRuns int
	// Payloads, Categories and Placements, when set, keep only those.
	Payloads, Categories, Placements []string
}

// Inject runs the selected cases once, then each passing case again with
// each payload (the built-in catalogue's and the suite's injections:)
// planted in each placement that applies, and says per run whether the
// case still passed (utility) and whether the attacker's goal was met
// (see docs/safety.md).
func (p *Project) Inject(ctx context.Context, opts *InjectOptions) (*report.InjectReport, error) {
	opts = cmp.Or(opts, &InjectOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.drillOptions(opts.RunOptions)
	if err != nil {
		return nil, err
	}
	return runner.Inject(ctx, p.suites, ro, runner.InjectOptions{MaxRuns: opts.MaxRuns, Payloads: opts.Payloads, Categories: opts.Categories, Placements: opts.Placements})
}
