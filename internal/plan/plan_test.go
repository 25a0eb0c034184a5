package plan_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/wire"
	"github.com/dryfire-dev/dryfire/internal/world"
)

const src = `version: 1
agent: {provider: openai, model: m}
tools:
  b:
    description: the b tool
    input_schema: {type: object, properties: {x: {type: string}}}
  a: {}
mocks:
  a:
    - return: 1
  c:
    - return: 2
  d:
    - return: 3
cases:
  - name: adds a tool
    input: hi
    mocks:
      e:
        - return: 4
      c:
        - return: 5
  - name: plain
    input: hi
  - name: runs code
    input: hi
    mocks:
      a:
        - impl: tools.impls:a
`

func load(t *testing.T) *spec.Suite {
	t.Helper()
	s, ds := spec.Parse("s.dryfire.yaml", []byte(src), &spec.Options{ResolveImpl: func(string) error { return nil }})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	return s
}

func names(tools []plan.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

// One list, one order: declared tools in file order, then tools only the
// suite mocks, then tools only the case mocks; the model sees the same
// list, with an open object for a tool without a schema.
func TestTools(t *testing.T) {
	sp := plan.New(load(t), nil, nil)
	s := sp.Spec
	for _, tt := range []struct {
		c    *spec.Case
		want []string
	}{
		{nil, []string{"b", "a", "c", "d"}},
		{s.Cases[0], []string{"b", "a", "c", "d", "e"}},
		{s.Cases[1], []string{"b", "a", "c", "d"}},
		{s.Cases[2], []string{"b", "a", "c", "d"}},
	} {
		p := sp.Case(tt.c)
		if diff := cmp.Diff(tt.want, names(p.Tools)); diff != "" {
			t.Errorf("case %v: tools (-want +got):\n%s", tt.c, diff)
		}
		var model []string
		for _, d := range p.ModelTools {
			model = append(model, d.Name)
		}
		if diff := cmp.Diff(tt.want, model); diff != "" {
			t.Errorf("case %v: model tools (-want +got):\n%s", tt.c, diff)
		}
	}
	p := sp.Case(s.Cases[0])
	if got := p.ModelTools[0]; got.Description != "the b tool" || !cmp.Equal(got.InputSchema, s.Tools[0].InputSchema) {
		t.Errorf("declared tool as the model sees it: %+v", got)
	}
	open := map[string]any{"type": "object"}
	for _, d := range p.ModelTools[1:] {
		if !cmp.Equal(d.InputSchema, any(open)) {
			t.Errorf("tool %s without a schema is shown %v", d.Name, d.InputSchema)
		}
	}
	if p.Tools[0].Pos.Line != 4 || p.Tools[2].Pos.Line != 0 {
		t.Errorf("positions: declared %v, mocked-only %v", p.Tools[0].Pos, p.Tools[2].Pos)
	}
}

// A case runs user code when a rule it sees is an impl: its own, or the
// suite's for a tool it does not override.
func TestUsesImpl(t *testing.T) {
	sp := plan.New(load(t), nil, nil)
	var got []bool
	for _, c := range sp.Spec.Cases {
		got = append(got, sp.Case(c).UsesImpl)
	}
	if diff := cmp.Diff([]bool{false, false, true}, got); diff != "" {
		t.Errorf("uses impl (-want +got):\n%s", diff)
	}
	if sp.Case(nil).UsesImpl {
		t.Error("the suite's own rules run no code")
	}
}

// A case's cassette is where cassette.Paths puts it among all the cases
// of the suite.
func TestCassette(t *testing.T) {
	sp := plan.New(load(t), nil, nil)
	var names []string
	for _, c := range sp.Spec.Cases {
		names = append(names, c.Name)
	}
	want := cassette.Paths("s.dryfire.yaml", names)
	for i := len(names) - 1; i >= 0; i-- { // any order of asking
		if got := sp.Case(sp.Spec.Cases[i]).Cassette(); got != want[i] {
			t.Errorf("case %d: cassette %q, want %q", i, got, want[i])
		}
	}
	if got := sp.Case(nil).Cassette(); got != "" {
		t.Errorf("the suite's own plan has cassette %q", got)
	}
}

// A drill's seed is the run's when given, else the case's, else the
// world's; the suite's own plan starts the suite's scenario.
func TestDrill(t *testing.T) {
	suites, ds := spec.LoadFiles([]string{"../../examples/world/support.dryfire.yaml"}, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	s := suites[0]
	sw, ds := world.AttachSuite(s, world.Cache{}, "")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	sp := plan.New(s, sw, nil)
	if sp.World == nil {
		t.Fatal("no world")
	}
	worldSeed := sp.World.World.Seed
	seven, five := int64(7), int64(5)
	c0, c1 := s.Cases[0], s.Cases[1]
	c1.Seed = &seven
	for _, tt := range []struct {
		name string
		c    *spec.Case
		run  *int64
		want int64
	}{
		{"the world's", c0, nil, worldSeed},
		{"the case's", c1, nil, 7},
		{"the run's over the case's", c1, &five, 5},
		{"the run's over the world's", c0, &five, 5},
		{"the suite's own", nil, nil, worldSeed},
	} {
		if got := sp.Case(tt.c).Drill(tt.run).Seed; got != tt.want {
			t.Errorf("%s: seed %d, want %d", tt.name, got, tt.want)
		}
	}
	if got := sp.Case(c0).Drill(nil).Scenario; got != "refunds-down" {
		t.Errorf("case scenario %q", got)
	}
	if got := sp.Case(nil).Drill(nil).Scenario; got != s.Scenario {
		t.Errorf("suite scenario %q, want %q", got, s.Scenario)
	}
	// The tools are the world's operations, in operation order.
	var want []string
	for _, key := range sp.World.World.OpList {
		want = append(want, sp.World.World.Operations[key].Tool)
	}
	if diff := cmp.Diff(want, names(sp.Case(c0).Tools)); diff != "" || len(want) == 0 {
		t.Errorf("world tools (-want +got):\n%s", diff)
	}
}

// A case's limits: its max_turns, else the agent's, else the default;
// agent.timeout_s bounds a model call and a program's run alike, each
// with its own default; agent.retries, else the default.
func TestLimits(t *testing.T) {
	parse := func(agent string) *plan.Suite {
		t.Helper()
		s, ds := spec.Parse("l.dryfire.yaml", []byte("version: 1\nagent: "+agent+"\ncases:\n  - {name: own, input: hi, max_turns: 3}\n  - {name: plain, input: hi}\n"), nil)
		if ds.HasErrors() {
			t.Fatal(ds)
		}
		return plan.New(s, nil, nil)
	}
	tests := []struct {
		agent      string
		own, plain plan.Limits
	}{
		{"{provider: openai, model: m}",
			plan.Limits{MaxTurns: 3, CallTimeout: wire.DefaultTimeout, RunTimeout: plan.DefaultCommandTimeout, Retries: wire.DefaultRetries},
			plan.Limits{MaxTurns: spec.DefaultMaxTurns, CallTimeout: wire.DefaultTimeout, RunTimeout: plan.DefaultCommandTimeout, Retries: wire.DefaultRetries}},
		{"{provider: openai, model: m, max_turns: 7, timeout_s: 1.5, retries: 0}",
			plan.Limits{MaxTurns: 3, CallTimeout: 1500 * time.Millisecond, RunTimeout: 1500 * time.Millisecond, Retries: 0},
			plan.Limits{MaxTurns: 7, CallTimeout: 1500 * time.Millisecond, RunTimeout: 1500 * time.Millisecond, Retries: 0}},
	}
	for _, tt := range tests {
		sp := parse(tt.agent)
		if got := sp.Case(sp.Spec.Cases[0]).Limits; got != tt.own {
			t.Errorf("%s: case with max_turns: %+v, want %+v", tt.agent, got, tt.own)
		}
		if got := sp.Case(sp.Spec.Cases[1]).Limits; got != tt.plain {
			t.Errorf("%s: case without: %+v, want %+v", tt.agent, got, tt.plain)
		}
		if got := sp.Case(nil).Limits; got != tt.plain {
			t.Errorf("%s: the suite's own: %+v, want %+v", tt.agent, got, tt.plain)
		}
	}
}
