package toolrec

import (
	"context"
	"fmt"
	"slices"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/redact"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlnode"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Origin starts the comment above every recorded rule; a rule without it
// is hand-written.
const Origin = "# recorded from "

// Options of a merge.
type Options struct {
	// Label names the upstream in the origin comments (Target.Label).
	Label string
	// Tools are the upstream's tools: those the suite does not declare
	// are declared.
	Tools []plan.Tool
	// Refresh replaces the declarations the suite has of the upstream's
	// tools that differ from its list (plan.Tool.Diff), keeping their
	// aliases, and the outcome of each recorded rule the upstream now
	// answers otherwise (rerecord.go).
	Refresh bool
	// Secrets are redacted from every argument and answer written; an
	// argument holding one is left out of a rule's when.
	Secrets redact.Redactor
	// Parse loads the merged file the way the run loaded the suite (the
	// same passthrough resolver and root), to check it.
	Parse func(file string, data []byte) (*spec.Suite, yamlpos.Diagnostics)
}

// Result is what a merge wrote.
type Result struct {
	Data  []byte   // the merged file
	Tools []string // tools declared, in the upstream's order
	// Differing are the suite's declarations of the upstream's tools that
	// differ from its list, each "NAME: its differences" (plan.Tool.Diff):
	// replaced with Options.Refresh.
	Differing []string
	refreshed bool
	Rules     int // rules added
	Sequences int // of which sequences
	CaseRules int // of which in a case's own mocks
	// Known counts calls an existing rule already answers as the
	// upstream did.
	Known int
	// Rerecorded counts recorded rules that took the upstream's new
	// answer (Options.Refresh).
	Rerecorded int
	// Conflicts are calls an existing rule answers otherwise: the rule is
	// kept, never changed.
	Conflicts []Conflict
	// Failed are calls the upstream did not answer (not recorded).
	Failed []string
	// Warnings are the merged file's, when it changed.
	Warnings yamlpos.Diagnostics
	// Unwritable says the merged file would not answer every recorded
	// call as the upstream did (Conflicts say which): it must not be
	// written.
	Unwritable bool
}

// Changed says the merge changes the file.
func (r *Result) Changed() bool {
	return len(r.Tools) > 0 || r.refreshed || r.Rules > 0 || r.Rerecorded > 0
}

// Conflict is a recorded answer an existing rule contradicts.
type Conflict struct {
	Rule    string // FILE:LINE of the rule kept
	Message string
}

func (c Conflict) String() string { return c.Rule + ": " + c.Message }

// MaxRules bounds the rules one merge writes.
const MaxRules = 10_000

// pending is one rule to write: the calls of one case (or of every case
// that agrees) with equal arguments, as matched, in call order.
type pending struct {
	tool    string
	when    map[string]any // nil: every call
	answers []Answer       // compressed: the last one repeats
	cse     string         // the first case that made the calls
	leaves  int
}

// Merge writes the exchanges of one suite's cases into its file: tool
// declarations for the upstream's tools the suite lacks, and rules for
// the calls no existing rule answers, after the existing ones. ex are the
// exchanges of this suite, in the order the calls were made.
func Merge(file string, data []byte, suite *spec.Suite, ex []Exchange, o Options) (*Result, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("reading %s: %w", file, err)
	}
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top == nil || top.Kind != yaml.MappingNode || top.Style&yaml.FlowStyle != 0 {
		return nil, fmt.Errorf("%s: recording needs a suite whose top level is a block mapping", file)
	}
	m := &merge{file: file, data: data, top: top, suite: suite, o: o, res: &Result{}, matches: map[string]*reqmatch.Set{}}
	for _, c := range suite.Cases {
		rules, err := reqmatch.Compile(suite.MatchRules(c))
		if err != nil {
			return nil, fmt.Errorf("%s: case %q: %w", file, c.Name, err)
		}
		m.matches[c.Name] = rules // a case's rules: the suite's, the agent's, its own
	}
	m.known(ex)
	if err := m.plan(); err != nil {
		return nil, err
	}
	if err := m.write(); err != nil {
		return nil, err
	}
	if !m.res.Changed() {
		m.res.Data = data
		return m.res, nil
	}
	return m.res, m.verify()
}

// merge is one Merge, step by step: known, plan, write, verify.
type merge struct {
	file    string
	data    []byte
	top     *yaml.Node
	suite   *spec.Suite
	o       Options
	res     *Result
	matches map[string]*reqmatch.Set
	byCase  map[string]*spec.Case

	calls   []Exchange // the calls no existing rule answers, then those of swaps
	swaps   []swap     // recorded rules re-recorded (Options.Refresh)
	recheck []Exchange // the calls the swapped rules answer

	cases      []*caseRules // the new rules, by case, in the order of their calls
	suiteRules []*pending
	caseLists  map[string][]*pending
}

// caseRules are the new rules of a case's calls.
type caseRules struct {
	name  string
	order []string
	rules map[string]*pending
}

// replayer answers calls as a suite's rules do, a mock session a case.
type replayer struct {
	set      *mock.Set
	byCase   map[string]*spec.Case
	sessions map[string]*mock.Session
}

func newReplayer(s *spec.Suite) *replayer {
	r := &replayer{set: mock.Compile(s), byCase: map[string]*spec.Case{}, sessions: map[string]*mock.Session{}}
	for _, c := range s.Cases {
		r.byCase[c.Name] = c
	}
	return r
}

func (r *replayer) answer(e Exchange) tool.Result {
	sess := r.sessions[e.Case]
	if sess == nil {
		sess = mock.NewSession(r.set.ForCase(r.byCase[e.Case]), nil)
		r.sessions[e.Case] = sess
	}
	return sess.Answer(context.Background(), tool.Call{Name: e.Tool, Args: value.Canonical(e.Args)}, e.Args, nil)
}

// known sorts the exchanges by what the existing rules answer: a call no
// rule answers is to record; one answered differently is a conflict, or
// a recorded rule to re-record (Options.Refresh).
func (m *merge) known(ex []Exchange) {
	o, res := m.o, m.res
	lines := strings.Split(string(m.data), "\n")
	rp := newReplayer(m.suite)
	m.byCase = rp.byCase
	for _, e := range ex {
		if e.Err != "" {
			res.Failed = append(res.Failed, fmt.Sprintf("case %q: %s: %s", e.Case, e.Tool, o.Secrets.String(e.Err)))
			continue
		}
		if rp.byCase[e.Case] == nil && e.Case != "" {
			continue
		}
		want := redactAnswer(e.Answer, o.Secrets).Result()
		got := rp.answer(e)
		switch {
		case got.Outcome == tool.Unmatched:
			m.calls = append(m.calls, e)
		case sameResult(got, want):
			res.Known++
		default:
			if item := recordedItem(m.file, m.top, lines, got.Rule); o.Refresh && item != nil {
				if !slices.ContainsFunc(m.swaps, func(s swap) bool { return s.item == item }) {
					m.swaps = append(m.swaps, swap{item, e})
				}
				m.recheck = append(m.recheck, e) // checked after the merge
				continue
			}
			res.Conflicts = append(res.Conflicts, Conflict{Rule: got.Rule, Message: fmt.Sprintf("%s %s (case %q): the upstream answered %s; %s rule answers %s. The rule is kept: delete it and record again to take the new answer",
				e.Tool, describeArgs(redactValue(e.Args, o.Secrets)), e.Case, describe(want, got), whose(m.data, got.Rule), describe(got, want))})
		}
	}
}

// plan makes the new rules, per case; then per tool, the suite's when
// every case that made the calls agrees, else each case's own.
func (m *merge) plan() error {
	byName := map[string]*caseRules{}
	for _, e := range m.calls {
		cr := byName[e.Case]
		if cr == nil {
			cr = &caseRules{name: e.Case, rules: map[string]*pending{}}
			byName[e.Case] = cr
			m.cases = append(m.cases, cr)
		}
		when := whenOf(e.Args, matchOf(m.suite, m.matches, e.Case), m.o.Secrets)
		key := e.Tool + "\x00" + value.Canonical(when)
		p := cr.rules[key]
		if p == nil {
			p = &pending{tool: e.Tool, cse: e.Case, leaves: leaves(when)}
			if len(when) > 0 {
				p.when = when
			}
			cr.rules[key] = p
			cr.order = append(cr.order, key)
		}
		a := redactAnswer(e.Answer, m.o.Secrets)
		if n := len(p.answers); n == 0 || !sameResult(p.answers[n-1].Result(), a.Result()) {
			p.answers = append(p.answers, a)
		}
	}
	perCase := map[string]bool{} // tools whose rules go into the cases
	seen := map[string]*pending{}
	for _, cr := range m.cases {
		for _, key := range cr.order {
			p := cr.rules[key]
			if ownsTool(m.byCase[cr.name], p.tool) {
				perCase[p.tool] = true
				continue
			}
			if q := seen[key]; q != nil && !slices.EqualFunc(q.answers, p.answers, func(x, y Answer) bool { return sameResult(x.Result(), y.Result()) }) {
				perCase[p.tool] = true
			}
			if seen[key] == nil {
				seen[key] = p
			}
		}
	}
	m.caseLists = map[string][]*pending{}
	added := map[string]bool{}
	for _, cr := range m.cases {
		for _, key := range cr.order {
			p := cr.rules[key]
			// Calls of no case are the suite's own (dryfire serve without
			// --case): they never go into a case.
			if perCase[p.tool] && cr.name != "" {
				m.caseLists[cr.name] = append(m.caseLists[cr.name], p)
			} else if !added[key] {
				added[key] = true
				m.suiteRules = append(m.suiteRules, p)
			}
		}
	}
	n := len(m.suiteRules)
	for _, l := range m.caseLists {
		n += len(l)
	}
	if n > MaxRules {
		return fmt.Errorf("%s: the recording makes %d rules, more than %d (MaxRules): record fewer cases at a time (--filter)", m.file, n, MaxRules)
	}
	return nil
}

// write makes the edits, as text inserted into the file as it is: every
// byte of it stays, comments and layout included.
func (m *merge) write() error {
	top, o, res := m.top, m.o, m.res
	ed := newEditor(m.file, m.data, top)
	tree := &meant{top: clone(top)}
	declared := map[string]*spec.Tool{}
	for _, t := range m.suite.Tools {
		declared[t.Name] = t
	}
	var decl []yamlnode.Pair
	for _, t := range o.Tools {
		if d := declared[t.Name]; d != nil {
			if err := refresh(ed, tree, d, t, o, res); err != nil {
				return err
			}
			continue
		}
		declared[t.Name] = &spec.Tool{Name: t.Name}
		res.Tools = append(res.Tools, t.Name)
		decl = append(decl, yamlnode.KV(t.Name, toolNode(t, o.Secrets)))
	}
	if len(decl) > 0 {
		if err := ed.addPairs(top, "tools", decl, []string{"mocks", "cases"}); err != nil {
			return err
		}
		tree.addPairs(tree.top, "tools", decl, []string{"mocks", "cases"})
	}
	if gs := groups(m.suiteRules); len(gs) > 0 {
		if err := ed.addRules(top, "mocks", gs, o.Label, []string{"cases"}); err != nil {
			return err
		}
		tree.addRules(tree.top, "mocks", gs, []string{"cases"})
		res.count(m.suiteRules, false)
	}
	for _, cr := range m.cases {
		list := m.caseLists[cr.name]
		if len(list) == 0 {
			continue
		}
		item, err := ed.caseItem(top, m.byCase[cr.name])
		if err != nil {
			return err
		}
		if err := ed.addRules(item, "mocks", groups(list), o.Label, nil); err != nil {
			return err
		}
		tree.addRules(tree.caseItem(cr.name), "mocks", groups(list), nil)
		res.count(list, true)
	}
	for _, sw := range m.swaps {
		n := swapped(sw.item, redactAnswer(sw.e.Answer, o.Secrets))
		ed.replaceItem(sw.item, n)
		*itemAt(tree.top, sw.item.Line) = *n
		res.Rerecorded++
	}
	m.calls = append(m.calls, m.recheck...) // verified as the new rules are
	res.Data = ed.apply()
	if res.Changed() {
		return tree.check(m.file, res.Data)
	}
	return nil
}

// verify checks that the merged file (the edits read as they meant,
// write's tree.check) loads clean and answers every recorded call as the
// upstream did; a file that does not is not written (Unwritable).
func (m *merge) verify() error {
	o, res := m.o, m.res
	merged, ds := o.Parse(m.file, res.Data)
	if ds.HasErrors() || merged == nil {
		return fmt.Errorf("the merged suite does not load (a bug of dryfire record-tools; %s is unchanged):\n%s", m.file, ds.Error())
	}
	res.Warnings = ds
	rp := newReplayer(merged)
	before := len(res.Conflicts)
	for _, e := range m.calls {
		want := redactAnswer(e.Answer, o.Secrets).Result()
		if got := rp.answer(e); !sameResult(got, want) {
			res.Conflicts = append(res.Conflicts, Conflict{Rule: got.Rule, Message: fmt.Sprintf("%s %s (case %q): the upstream answered %s; after the merge this rule answers %s (a rule above takes the call: move the recorded rule up, or narrow the rule above)",
				e.Tool, describeArgs(redactValue(e.Args, o.Secrets)), e.Case, describe(want, got), describe(got, want))})
		}
	}
	res.Unwritable = len(res.Conflicts) > before
	return nil
}
