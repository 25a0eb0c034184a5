package dryfire

import (
	"cmp"
	"context"
	"errors"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// ProveOptions configure Project.Prove; nil means the defaults.
type ProveOptions struct {
	// Seed seeds the random agent; 0 means 1.
	Seed uint64
	// Concurrency, Filter and Env are RunOptions'.
	Concurrency int
	Filter      string
	Env         []string
}

// Prove runs every case three times, offline, the script model standing
// in for its agent on the built-in loop (its mocks or world, its checks):
// with its reference solution (its script, or its first trajectory check's
// calls then the answer its output checks ask for), with an agent that
// answers at once and calls nothing, and with one that calls one to three
// of its tools at random (seeded). Judge checks are replayed from their
// cassettes only. Proofs are in report order.
func (p *Project) Prove(ctx context.Context, opts *ProveOptions) ([]report.Proof, error) {
	opts = cmp.Or(opts, &ProveOptions{})
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.runnerOptions(&RunOptions{Concurrency: opts.Concurrency, Filter: opts.Filter, Env: opts.Env}, nil)
	if err != nil {
		return nil, err
	}
	seed := cmp.Or(opts.Seed, 1)
	proofs, err := runner.Prove(ctx, p.suites, ro, seed)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, errors.New("interrupted")
	}
	return proofs, nil
}
