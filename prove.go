package dryfire

import (
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

// Proof is how a case fared under Project.Prove: its reference solution
// must pass; an agent that does nothing, and one that calls its tools at
// random, must not.
type Proof struct {
	Suite string `json:"suite"`
	Case  string `json:"case"`
	// Reference names the case's reference solution: "its script", or
	// "its trajectory at FILE:LINE"; "" when it has none, and NoReference
	// says why.
	Reference   string `json:"reference"`
	NoReference string `json:"no_reference,omitempty"`
	// Ran is the reference's run (nil: none declared): a case that did
	// not pass is a drill no agent can pass as written.
	Ran *report.Case `json:"ran,omitempty"`
	// Nothing and Random are the checks that let the do-nothing agent and
	// the random agent through, each "CHECK (AT)", when the case passed
	// for it; nil when it failed, as it should.
	Nothing []string `json:"nothing,omitempty"`
	Random  []string `json:"random,omitempty"`
}

// Proven says the case is as it should be: its reference (if any)
// passes, and neither stand-in agent does.
func (p *Proof) Proven() bool {
	return (p.Ran == nil || p.Ran.Status == report.Passed) && p.Nothing == nil && p.Random == nil
}

// Prove runs every case three times, offline, the script model standing
// in for its agent on the built-in loop (its mocks or world, its checks):
// with its reference solution (its script, or its first trajectory check's
// calls then the answer its output checks ask for), with an agent that
// answers at once and calls nothing, and with one that calls one to three
// of its tools at random (seeded). Judge checks are replayed from their
// cassettes only. Proofs are in report order.
func (p *Project) Prove(ctx context.Context, opts *ProveOptions) ([]Proof, error) {
	if opts == nil {
		opts = &ProveOptions{}
	}
	if p.checkOnly {
		return nil, errCheckOnly
	}
	ro, err := p.runnerOptions(&RunOptions{Concurrency: opts.Concurrency, Filter: opts.Filter, Env: opts.Env}, nil)
	if err != nil {
		return nil, err
	}
	seed := opts.Seed
	if seed == 0 {
		seed = 1
	}
	proofs, err := runner.Prove(ctx, p.suites, ro, seed)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, errors.New("interrupted")
	}
	out := make([]Proof, len(proofs))
	for i, pr := range proofs {
		out[i] = Proof{Suite: pr.Suite, Case: pr.Case, Reference: pr.Reference, NoReference: pr.NoReference, Ran: pr.Ran, Nothing: pr.Nothing, Random: pr.Random}
	}
	return out, nil
}
