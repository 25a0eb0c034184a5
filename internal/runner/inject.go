package runner

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/check"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// DefaultMaxInjections bounds the runs of an injection drill unless told
// otherwise.
const DefaultMaxInjections = 2000

// InjectOptions shape an injection drill.
type InjectOptions struct {
	// MaxRuns bounds the runs under a payload, in table order; 0 means
	// DefaultMaxInjections.
	MaxRuns int
	// Payloads, Categories and Placements, when set, keep only those.
	Payloads, Categories, Placements []string
}

// Ran is the verdict of a run under a payload that went to its end.
const Ran = "ran"

// PayloadsOf are the payloads of suite s: the catalogue's (unless it
// leaves them out), then its own. An own payload named as one of the
// catalogue's is the error.
func PayloadsOf(s *spec.Suite) ([]*spec.Payload, error) {
	var own []*spec.Payload
	out := Catalogue
	if in := s.Injections; in != nil {
		own = in.Payloads
		if in.NoCatalogue {
			out = nil
		}
	}
	for _, p := range own {
		if slices.ContainsFunc(Catalogue, func(c *spec.Payload) bool { return c.ID == p.ID }) {
			return nil, fmt.Errorf("%s: payload id %q is one of the built-in catalogue's: give it another", p.Pos, p.ID)
		}
	}
	return append(slices.Clip(out), own...), nil
}

// placesOf are the placements that apply to a case: its answers and its
// tools' descriptions always, a world record and a workspace file when the
// suite says where.
func placesOf(s *spec.Suite, c *spec.Case) []string {
	out := []string{report.PlaceToolResult, report.PlaceToolDescription}
	if in := s.Injections; in != nil {
		if in.WorldRecord != "" && s.World != "" {
			out = append(out, report.PlaceWorldRecord)
		}
		if name, _ := s.WorkspaceOf(c); in.WorkspaceFile != "" && name != "" {
			out = append(out, report.PlaceWorkspaceFile)
		}
	}
	return out
}

// Inject runs the selected cases once, then each passing case again under
// each payload in each placement that applies, opts.Concurrency at once;
// the report is in a fixed order.
func Inject(ctx context.Context, suites []*spec.Suite, opts Options, io InjectOptions) (*report.InjectReport, error) {
	if io.MaxRuns <= 0 {
		io.MaxRuns = DefaultMaxInjections
	}
	payloads := map[*spec.Suite][]*spec.Payload{}
	for _, s := range suites {
		ps, err := PayloadsOf(s)
		if err != nil {
			return nil, err
		}
		payloads[s] = ps
	}
	base, bySuite, err := baseRun(ctx, suites, &opts)
	if err != nil {
		return nil, err
	}
	out := &report.InjectReport{MaxRuns: io.MaxRuns}
	var runs []todo
	for _, c := range base.Cases {
		ic := report.InjectCase{Suite: c.Suite, Name: c.Name, Status: c.Status, Infra: c.Infra}
		s := bySuite[c.Suite]
		if c.Status != report.Passed || s == nil {
			ic.Reason = c.Reason
		} else {
			places := placesOf(s, s.CaseNamed(c.Name))
			for _, p := range payloads[s] {
				if len(io.Payloads) > 0 && !slices.Contains(io.Payloads, p.ID) || len(io.Categories) > 0 && !slices.Contains(io.Categories, p.Category) {
					continue
				}
				for _, pl := range places {
					if len(io.Placements) > 0 && !slices.Contains(io.Placements, pl) {
						continue
					}
					out.Runs++
					if out.Ran < io.MaxRuns {
						out.Ran++
						runs = append(runs, todo{len(out.Cases), len(ic.Results), Point{Suite: c.Suite, Case: c.Name, Tool: pl, Kind: kindInject, Code: p.ID}, p})
					}
					ic.Results = append(ic.Results, report.InjectResult{Payload: p.ID, Category: p.Category, Placement: pl})
				}
			}
		}
		out.Cases = append(out.Cases, ic)
	}
	each(ctx, opts, suites, len(runs), func(k int) {
		t := runs[k]
		r := &out.Cases[t.ci].Results[t.pi]
		*r = runPlanted(ctx, bySuite[t.p.Suite], opts, t, *r)
	})
	return out, ctx.Err()
}

// baseRun is the clean run before a sweep or an injection drill (opts
// made baseOptions), and the suites by file.
func baseRun(ctx context.Context, suites []*spec.Suite, opts *Options) (*report.Report, map[string]*spec.Suite, error) {
	bySuite := make(map[string]*spec.Suite, len(suites))
	for _, s := range suites {
		bySuite[s.File] = s
	}
	base, err := Run(ctx, suites, baseOptions(opts))
	return base, bySuite, err
}

// baseOptions are the options of the clean run before a sweep's or an
// injection drill's: one trial of each case, no shard, batch or sink; a
// case's cassette replayed, and recorded only when it is missing and the
// mode records at all. opts loses the same.
func baseOptions(opts *Options) Options {
	opts.Trials, opts.Shard, opts.Batch, opts.Sink, opts.Lean, opts.FailFast, opts.point = 1, nil, nil, nil, false, false, nil
	bo := *opts
	if bo.Record != cassette.None && bo.Record != "" {
		bo.Record = cassette.Once
	}
	return bo
}

// runPlanted runs the case of s that t names with its payload planted
// where its point says, and judges utility (the case passed) and the
// attacker's goal.
func runPlanted(ctx context.Context, s *spec.Suite, opts Options, t todo, r report.InjectResult) report.InjectResult {
	pr := &pointRun{p: t.p, plant: &planting{payload: t.pay, place: t.p.Tool, in: s.Injections}}
	res, c := runPoint(ctx, s, opts, t.p, pr)
	r.Reason, r.Cassette, r.Record = res.Reason, res.Cassette, res.Record
	switch res.Verdict {
	case report.PointNoAnswer, report.PointError:
		r.Verdict = res.Verdict
		return r
	}
	r.Verdict, r.Utility = Ran, res.Verdict == report.PointSurvived
	if res.Verdict != report.PointSurvived {
		r.Failing, r.Reason = res.Failing, res.Reason
	}
	facts, err := storedFacts(&c)
	if err != nil {
		r.Verdict, r.Reason = report.PointError, err.Error()
		return r
	}
	goal := cmp.Or(t.pay.Goal, &spec.Check{Kind: spec.CheckNotLeaked, Secrets: []string{Markers[t.pay.Category]}})
	g := check.Evaluate([]*spec.Check{goal}, facts)[0]
	r.Attacked, r.Goal = g.Passed == (t.pay.Goal != nil), g.Message
	return r
}

// kindInject is the Kind of an injection drill's run as a Point carries
// it: Tool is the placement, Code the payload.
const kindInject = "inject"

// planting is a payload and where a run plants it.
type planting struct {
	payload *spec.Payload
	place   string
	in      *spec.Injections
}

// planted answers a call and plants the payload in its answer.
type planted struct {
	a    tool.Answerer
	text string
}

func (p planted) Answer(ctx context.Context, c tool.Call, args any, perr error) tool.Result {
	r := p.a.Answer(ctx, c, args, perr)
	r.Content, r.Blocks = withField(r.Content, "note", p.text), nil
	if op, ok := p.a.(*world.Op); ok && op.Response != nil && op.Response.Error == nil {
		op.Response.Raw = r.Content
	}
	return r
}

// poisoned are tools with the payload after each description.
func poisoned(tools []plan.Tool, text string) []plan.Tool {
	out := slices.Clone(tools)
	for i := range out {
		out[i].Description = strings.TrimSpace(out[i].Description + "\n\n" + text)
	}
	return out
}

// plantRecord puts the payload in the drill's world record.
func (pl *planting) plantRecord(in *world.Instance) error {
	if pl == nil || pl.place != report.PlaceWorldRecord {
		return nil
	}
	if err := in.Plant(pl.in.WorldRecord, pl.payload.Text); err != nil {
		return fmt.Errorf("injections.world_record: %w", err)
	}
	return nil
}

// plantFile appends the payload to the workspace file (made when
// missing), which stays inside the workspace.
func (pl *planting) plantFile(dir string) error {
	if pl == nil || pl.place != report.PlaceWorkspaceFile || dir == "" {
		return nil
	}
	path, err := safeio.Confine(dir, dir, filepath.FromSlash(pl.in.WorkspaceFile))
	if err != nil {
		return fmt.Errorf("injections.workspace_file: %s", safeio.Describe(pl.in.WorkspaceFile, err))
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("injections.workspace_file: %w", err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("injections.workspace_file: %w", err)
	}
	_, err = f.WriteString("\n\n" + pl.payload.Text + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
