package runner

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// Host serves drills whose agent is a test's own function (the engine of
// the TypeScript and Python SDKs): each drill is run as an agent.command
// case is, with its world and model endpoint under PREFIX/ID/, except
// that the agent is not a program dryfire starts: Start serves the
// drill, the agent calls its URLs, End judges it.
type Host struct {
	h    *host
	lv   *live
	opts Options

	mu    sync.Mutex
	plans map[*spec.Suite]*plan.Suite // what every drill of a suite shares
}

// NewHost returns a host serving drills under prefix ("/drills/"). Its
// record mode and environment are opts.Record and opts.Env (as a run's);
// it is an http.Handler, served by the caller at SetBase's URL.
func NewHost(prefix string, opts Options) (*Host, error) {
	lv, err := newLive(opts)
	if err != nil {
		return nil, err
	}
	lv.connect(opts, true)
	// Credentials in the base URLs of the engine's environment are secrets
	// too, for the cassettes and the reports.
	for _, p := range []string{provider.OpenAI, provider.Anthropic} {
		lv.secrets = append(lv.secrets, redact.FromURL(lv.getenv(wire.BaseURLEnv(p)))...)
	}
	lv.red = redact.New(lv.secrets)
	return &Host{h: newHost(prefix), lv: lv, opts: opts, plans: map[*spec.Suite]*plan.Suite{}}, nil
}

// SetBase says where the host is reached (http://127.0.0.1:PORT): the
// drills' URLs start with it. Call it before the first Start.
func (H *Host) SetBase(base string) { H.h.base = base }

// Mode is the host's default record mode.
func (H *Host) Mode() cassette.Mode { return H.lv.mode }

func (H *Host) ServeHTTP(w http.ResponseWriter, r *http.Request) { H.h.srv.ServeHTTP(w, r) }

// Close ends every MCP session of every drill.
func (H *Host) Close() { H.h.srv.CloseSessions() }

// DrillSpec is one drill to start.
type DrillSpec struct {
	Suite *spec.Suite
	// SuiteWorld is the world the suite runs on (world.LoadFiles').
	SuiteWorld *world.SuiteWorld
	Case       *spec.Case
	// ID names the drill under the host's prefix: letters and digits.
	ID string
	// World is the drill's world instance (its setup, seed and actor
	// already applied).
	World *world.Instance
	// Record is this drill's record mode; empty: the host's.
	Record cassette.Mode
	// OwnModel says the agent brings its own model (a served session's
	// may never call the case's): turns of its script left unserved do
	// not fail it.
	OwnModel bool
}

// Drill is a started drill of a Host.
type Drill struct {
	cc   *commandCase
	red  redact.Redactor // the secrets kept out of its report
	once sync.Once
}

// Start serves a drill: its world's operations over MCP, /tools and
// /ops, its world routes, and its model endpoint on its cassette.
func (H *Host) Start(d DrillSpec) (*Drill, error) {
	start := time.Now()
	p := H.plan(d.Suite, d.SuiteWorld).Case(d.Case)
	j := job{suite: d.Suite, plan: p, c: d.Case, cassette: p.Cassette(), id: d.ID}
	lv := H.lv
	if d.Record != "" && d.Record != lv.mode {
		cp := *lv
		cp.mode = d.Record
		lv = &cp
	}
	c := base(j)
	cc, c := startCommand(j, H.opts, lv, H.h, c, start, d.World)
	if cc == nil {
		return nil, errors.New(c.Reason)
	}
	cc.keepEmpty, cc.ownModel = false, d.OwnModel
	return &Drill{cc: cc, red: lv.red}, nil
}

// plan is the plan of a suite, made once.
func (H *Host) plan(s *spec.Suite, sw *world.SuiteWorld) *plan.Suite {
	H.mu.Lock()
	defer H.mu.Unlock()
	if p := H.plans[s]; p != nil {
		return p
	}
	p := plan.New(s, sw, nil)
	H.plans[s] = p
	return p
}

// Forget drops what the host keeps for a suite no longer used (one that
// was loaded again after a change).
func (H *Host) Forget(s *spec.Suite) {
	H.mu.Lock()
	delete(H.plans, s)
	H.mu.Unlock()
}

// URL is where the drill is served: BASE/PREFIX/ID.
func (d *Drill) URL() string { return d.cc.url }

// Env is what an agent program needs to reach the drill, in a fixed
// order: the variables an agent.command program gets (its offline
// settings and the suite's agent.env too).
func (d *Drill) Env() [][2]string {
	return envSet(d.cc.url, d.cc.j.c, d.cc.drill != nil, d.cc.j.suite.Agent.Env, httpEnv(d.cc.url, d.cc.j.plan.Suite.World))
}

// End ends the drill and judges it: output is what the agent returned,
// agentErr what it threw (the drill then fails with "the agent failed:
// ..."). The model cassette is written as a run writes it, but only when
// a model call was recorded: a drill without one leaves no cassette. End and
// Abandon take effect once; later calls return an empty case.
func (d *Drill) End(ctx context.Context, output string, agentErr error) report.Case {
	var c report.Case
	d.once.Do(func() {
		res := programResult{output: output}
		if agentErr != nil {
			res.err, res.failed = errors.New("the agent failed: "+agentErr.Error()), true
		}
		c = d.cc.finish(ctx, res)
		d.red.Walk(&c)
	})
	return c
}

// Abandon ends the drill without a verdict and without writing its
// cassette.
func (d *Drill) Abandon() {
	d.once.Do(d.cc.abandon)
}
