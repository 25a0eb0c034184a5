package toolrec

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/mock"
	"github.com/dryfire-dev/dryfire/internal/model"
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
	key     string         // tool and canonical when
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
	res := &Result{}
	byCase := map[string]*spec.Case{}
	matches := map[string]*reqmatch.Set{} // a case's rules: the suite's, the agent's, its own
	for _, c := range suite.Cases {
		byCase[c.Name] = c
		m, err := reqmatch.Compile(suite.MatchRules(c))
		if err != nil {
			return nil, fmt.Errorf("%s: case %q: %w", file, c.Name, err)
		}
		matches[c.Name] = m
	}

	// Which calls the existing rules answer already, and how.
	var calls []Exchange
	var swaps []swap       // recorded rules re-recorded (Options.Refresh)
	var recheck []Exchange // the calls they answer
	lines := strings.Split(string(data), "\n")
	set := mock.Compile(suite)
	sessions := map[string]*mock.Session{}
	for _, e := range ex {
		if e.Err != "" {
			res.Failed = append(res.Failed, fmt.Sprintf("case %q: %s: %s", e.Case, e.Tool, o.Secrets.String(e.Err)))
			continue
		}
		c := byCase[e.Case]
		if c == nil && e.Case != "" {
			continue
		}
		sess := sessions[e.Case]
		if sess == nil {
			sess = mock.NewSession(rulesOf(set, c), nil)
			sessions[e.Case] = sess
		}
		want := redactAnswer(e.Answer, o.Secrets).Result()
		got := sess.Answer(context.Background(), tool.Call{Name: e.Tool, Args: value.Canonical(e.Args)}, e.Args, nil)
		switch {
		case got.Outcome == tool.Unmatched:
			calls = append(calls, e)
		case sameResult(got, want):
			res.Known++
		default:
			if item := recordedItem(file, top, lines, got.Rule); o.Refresh && item != nil {
				if !slices.ContainsFunc(swaps, func(s swap) bool { return s.item == item }) {
					swaps = append(swaps, swap{item, e})
				}
				recheck = append(recheck, e) // checked after the merge
				continue
			}
			res.Conflicts = append(res.Conflicts, Conflict{Rule: got.Rule, Message: fmt.Sprintf("%s %s (case %q): the upstream answered %s; %s rule answers %s. The rule is kept: delete it and record again to take the new answer",
				e.Tool, describeArgs(redactValue(e.Args, o.Secrets)), e.Case, describe(want, got), whose(data, got.Rule), describe(got, want))})
		}
	}

	// The new rules, per case; then per tool, the suite's when every case
	// that made the calls agrees, else each case's own.
	type caseRules struct {
		name  string
		order []string
		rules map[string]*pending
	}
	var cases []*caseRules
	byName := map[string]*caseRules{}
	for _, e := range calls {
		cr := byName[e.Case]
		if cr == nil {
			cr = &caseRules{name: e.Case, rules: map[string]*pending{}}
			byName[e.Case] = cr
			cases = append(cases, cr)
		}
		when := whenOf(e.Args, matchOf(suite, matches, e.Case), o.Secrets)
		key := e.Tool + "\x00" + value.Canonical(when)
		p := cr.rules[key]
		if p == nil {
			p = &pending{tool: e.Tool, key: key, cse: e.Case, leaves: leaves(when)}
			if len(when) > 0 {
				p.when = when
			}
			cr.rules[key] = p
			cr.order = append(cr.order, key)
		}
		a := redactAnswer(e.Answer, o.Secrets)
		if n := len(p.answers); n == 0 || !sameResult(p.answers[n-1].Result(), a.Result()) {
			p.answers = append(p.answers, a)
		}
	}
	perCase := map[string]bool{} // tools whose rules go into the cases
	seen := map[string]*pending{}
	for _, cr := range cases {
		c := byCase[cr.name]
		for _, key := range cr.order {
			p := cr.rules[key]
			if ownsTool(c, p.tool) {
				perCase[p.tool] = true
				continue
			}
			if q := seen[key]; q != nil && !sameAnswers(q.answers, p.answers) {
				perCase[p.tool] = true
			}
			if seen[key] == nil {
				seen[key] = p
			}
		}
	}
	var suiteRules []*pending
	caseLists := map[string][]*pending{}
	added := map[string]bool{}
	for _, cr := range cases {
		for _, key := range cr.order {
			p := cr.rules[key]
			// Calls of no case are the suite's own (dryfire serve without
			// --case): they never go into a case.
			if perCase[p.tool] && cr.name != "" {
				caseLists[cr.name] = append(caseLists[cr.name], p)
			} else if !added[key] {
				added[key] = true
				suiteRules = append(suiteRules, p)
			}
		}
	}
	n := len(suiteRules)
	for _, l := range caseLists {
		n += len(l)
	}
	if n > MaxRules {
		return nil, fmt.Errorf("%s: the recording makes %d rules, more than %d (MaxRules): record fewer cases at a time (--filter)", file, n, MaxRules)
	}

	// The edits, as text inserted into the file as it is: every byte of
	// it stays, comments and layout included.
	ed := newEditor(file, data, top)
	tree := newMeant(top)
	declared := map[string]*spec.Tool{}
	for _, t := range suite.Tools {
		declared[t.Name] = t
	}
	var decl []yamlnode.Pair
	for _, t := range o.Tools {
		if d := declared[t.Name]; d != nil {
			if err := refresh(ed, tree, d, t, o, res); err != nil {
				return nil, err
			}
			continue
		}
		declared[t.Name] = &spec.Tool{Name: t.Name}
		res.Tools = append(res.Tools, t.Name)
		decl = append(decl, yamlnode.KV(t.Name, toolNode(t, o.Secrets)))
	}
	if len(decl) > 0 {
		if err := ed.addPairs(top, "tools", decl, []string{"mocks", "cases"}); err != nil {
			return nil, err
		}
		tree.addPairs(tree.top, "tools", decl, []string{"mocks", "cases"})
	}
	if gs := groups(suiteRules); len(gs) > 0 {
		if err := ed.addRules(top, "mocks", gs, o.Label, []string{"cases"}); err != nil {
			return nil, err
		}
		tree.addRules(tree.top, "mocks", gs, []string{"cases"})
		res.count(suiteRules, false)
	}
	for _, cr := range cases {
		list := caseLists[cr.name]
		if len(list) == 0 {
			continue
		}
		item, err := ed.caseItem(top, byCase[cr.name])
		if err != nil {
			return nil, err
		}
		if err := ed.addRules(item, "mocks", groups(list), o.Label, nil); err != nil {
			return nil, err
		}
		tree.addRules(tree.caseItem(cr.name), "mocks", groups(list), nil)
		res.count(list, true)
	}
	for _, sw := range swaps {
		n := swapped(sw.item, redactAnswer(sw.e.Answer, o.Secrets))
		ed.replaceItem(sw.item, n)
		*itemAt(tree.top, sw.item.Line) = *n
		res.Rerecorded++
	}
	calls = append(calls, recheck...) // checked below, as the new rules are
	res.Data = ed.apply()
	if !res.Changed() {
		res.Data = data
		return res, nil
	}

	// The merged file must read as the edits meant, load clean and
	// answer every recorded call as the upstream did.
	if err := tree.check(file, res.Data); err != nil {
		return nil, err
	}
	merged, ds := o.Parse(file, res.Data)
	if ds.HasErrors() || merged == nil {
		return nil, fmt.Errorf("the merged suite does not load (a bug of dryfire record-tools; %s is unchanged):\n%s", file, ds.Error())
	}
	res.Warnings = ds
	set = mock.Compile(merged)
	byCase = map[string]*spec.Case{}
	for _, c := range merged.Cases {
		byCase[c.Name] = c
	}
	sessions = map[string]*mock.Session{}
	before := len(res.Conflicts)
	for _, e := range calls {
		sess := sessions[e.Case]
		if sess == nil {
			sess = mock.NewSession(rulesOf(set, byCase[e.Case]), nil)
			sessions[e.Case] = sess
		}
		want := redactAnswer(e.Answer, o.Secrets).Result()
		got := sess.Answer(context.Background(), tool.Call{Name: e.Tool, Args: value.Canonical(e.Args)}, e.Args, nil)
		if !sameResult(got, want) {
			res.Conflicts = append(res.Conflicts, Conflict{Rule: got.Rule, Message: fmt.Sprintf("%s %s (case %q): the upstream answered %s; after the merge this rule answers %s (a rule above takes the call: move the recorded rule up, or narrow the rule above)",
				e.Tool, describeArgs(redactValue(e.Args, o.Secrets)), e.Case, describe(want, got), describe(got, want))})
		}
	}
	if len(res.Conflicts) > before {
		// A file that does not answer as the upstream did is not written.
		res.Unwritable = true
	}
	return res, nil
}

// ownsTool says case c has its own rules for the tool (its list replaces
// the suite's).
func ownsTool(c *spec.Case, name string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Mocks[name]
	return ok
}

// rulesOf is the rules a case sees; the suite's own for nil (calls of
// no case: dryfire serve without --case).
func rulesOf(set *mock.Set, c *spec.Case) *mock.Set {
	if c == nil {
		return set
	}
	return set.ForCase(c)
}

// matchOf is the matching rules of a case's calls; the suite's and the
// agent's for calls of no case.
func matchOf(suite *spec.Suite, byCase map[string]*reqmatch.Set, name string) *reqmatch.Set {
	if m, ok := byCase[name]; ok {
		return m
	}
	m, err := reqmatch.Compile(suite.MatchRules(&spec.Case{}))
	if err != nil {
		return nil // the loader has checked the rules
	}
	return m
}

func (r *Result) count(ps []*pending, inCase bool) {
	for _, p := range ps {
		r.Rules++
		if len(p.answers) > 1 {
			r.Sequences++
		}
		if inCase {
			r.CaseRules++
		}
	}
}

// groups are rules by tool, tools in the order of their first rule,
// each tool's rules sorted (sortRules).
func groups(ps []*pending) []group {
	var out []group
	at := map[string]int{}
	for _, p := range ps {
		i, ok := at[p.tool]
		if !ok {
			i = len(out)
			at[p.tool] = i
			out = append(out, group{tool: p.tool})
		}
		out[i].rules = append(out[i].rules, p)
	}
	for i := range out {
		out[i].rules = sortRules(out[i].rules)
	}
	return out
}

// sortRules puts the rules whose when says more first, so that a rule
// for some of the arguments never takes the calls of one for more of them.
func sortRules(ps []*pending) []*pending {
	out := slices.Clone(ps)
	slices.SortStableFunc(out, func(a, b *pending) int { return b.leaves - a.leaves })
	return out
}

// whose says whether the rule at FILE:LINE was recorded or written by hand.
func whose(data []byte, rule string) string {
	i := strings.LastIndexByte(rule, ':')
	line, err := strconv.Atoi(rule[i+1:])
	if i < 0 || err != nil {
		return "the"
	}
	lines := bytes.Split(data, []byte("\n"))
	for l := line - 2; l >= 0 && l < len(lines); l-- {
		t := strings.TrimSpace(string(lines[l]))
		if strings.HasPrefix(t, Origin) {
			return "the recorded"
		}
		if !strings.HasPrefix(t, "#") {
			break
		}
	}
	return "the hand-written"
}

// describe quotes a result's text, from a little before where it
// differs from other's (so that two long answers show their difference)
// and at most describeLen bytes of it.
func describe(r, other tool.Result) string {
	s, o := r.Content, other.Content
	i := 0
	for i < len(s) && i < len(o) && s[i] == o[i] {
		i++
	}
	start := max(0, i-describeLen/4)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	out := s[start:]
	cut := len(out) > describeLen
	if cut {
		end := describeLen
		for end > 0 && !utf8.RuneStart(out[end]) {
			end--
		}
		out = out[:end]
	}
	q := strconv.Quote(out)
	if start > 0 {
		q = "…" + q
	}
	if cut {
		q += "…"
	}
	if r.IsError {
		return "the error " + q
	}
	return q
}

// describeLen is how much of an answer a conflict quotes.
const describeLen = 60

// describeArgs is a call's arguments as JSON, cut at describeLen.
func describeArgs(args any) string {
	s := value.Canonical(args)
	if len(s) > describeLen {
		end := describeLen
		for end > 0 && !utf8.RuneStart(s[end]) {
			end--
		}
		s = s[:end] + "…"
	}
	return s
}

func sameResult(a, b tool.Result) bool {
	return a.Content == b.Content && a.IsError == b.IsError && bytes.Equal(a.Blocks, b.Blocks)
}

func sameAnswers(a, b []Answer) bool {
	return slices.EqualFunc(a, b, func(x, y Answer) bool { return sameResult(x.Result(), y.Result()) })
}

// whenOf is the pattern of a call's arguments: every argument, less those
// the suite's matching rules ignore or normalise (they differ from run to
// run) and those that hold a secret (the file never does).
func whenOf(args any, match *reqmatch.Set, red redact.Redactor) map[string]any {
	// Apply changes what it is given: it gets a copy.
	clone, _ := value.Parse([]byte(value.Canonical(args)))
	norm, _ := match.Apply(clone)
	m, _ := keep(args, norm, red).(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// keep is the part of v equal to its normalised form n; a member or
// element that differs is left out (a list as a whole: its pattern
// matches element by element).
func keep(v, n any, red redact.Redactor) any {
	switch x := v.(type) {
	case map[string]any:
		nm, _ := n.(map[string]any)
		out := map[string]any{}
		for k, e := range x {
			ne, ok := nm[k]
			if !ok {
				continue
			}
			if kept := keep(e, ne, red); kept != drop {
				out[k] = kept
			}
		}
		return out
	case []any:
		if value.Canonical(v) != value.Canonical(n) || value.Canonical(redactValue(v, red)) != value.Canonical(v) {
			return drop
		}
		return v
	case string:
		if s, ok := n.(string); !ok || s != x || red.String(x) != x {
			return drop
		}
		return v
	}
	if value.Canonical(v) != value.Canonical(n) {
		return drop
	}
	return v
}

type dropped struct{}

var drop any = dropped{}

func leaves(v any) int {
	switch x := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range x {
			n += leaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range x {
			n += leaves(e)
		}
		return n + 1
	}
	return 1
}

func redactValue(v any, red redact.Redactor) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[red.String(k)] = redactValue(e, red)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = redactValue(e, red)
		}
		return out
	case string:
		return red.String(x)
	}
	return v
}

func redactAnswer(a Answer, red redact.Redactor) Answer {
	if len(red) == 0 {
		return a
	}
	bl, _ := redactValue(a.Blocks, red).([]any)
	return Answer{IsError: a.IsError, Blocks: bl}
}

// refresh notes how the declaration d of the upstream's tool t differs
// from t, and replaces it with Options.Refresh.
func refresh(ed *editor, tree *meant, d *spec.Tool, t plan.Tool, o Options, res *Result) error {
	diffs := plan.Tool{Description: d.Description, Input: d.InputSchema}.Diff(model.ToolDef{Description: t.Description, InputSchema: t.Input}, false)
	if len(diffs) == 0 {
		return nil
	}
	res.Differing = append(res.Differing, d.Name+": "+o.Secrets.String(strings.Join(diffs, "; ")))
	if !o.Refresh {
		return nil
	}
	n := toolNode(t, o.Secrets, d.Aliases...)
	if err := ed.replaceValue(ed.top, "tools", d.Name, n); err != nil {
		return err
	}
	_, tools := yamlpos.Lookup(tree.top, "tools")
	_, v := yamlpos.Lookup(yamlpos.Deref(tools), d.Name)
	*v = *n
	res.refreshed = true
	return nil
}

// toolNode declares a tool as the upstream listed it, with aliases.
func toolNode(t plan.Tool, red redact.Redactor, aliases ...string) *yaml.Node {
	n := yamlnode.Mapping()
	if len(aliases) > 0 {
		n.Content = append(n.Content, yamlnode.Scalar("aliases"), yamlnode.FlowSeq(aliases...))
	}
	if t.Description != "" {
		n.Content = append(n.Content, yamlnode.Scalar("description"), yamlnode.Scalar(red.String(t.Description)))
	}
	if t.Input != nil {
		n.Content = append(n.Content, yamlnode.Scalar("input_schema"), yamlnode.Fit(redactValue(t.Input, red), flowLimit))
	}
	if len(n.Content) == 0 {
		n.Style = yaml.FlowStyle
	}
	return n
}

// ruleNode is one recorded rule.
func ruleNode(p *pending) *yaml.Node {
	n := yamlnode.Mapping()
	if p.when != nil {
		n.Content = append(n.Content, yamlnode.Scalar("when"), yamlnode.Flow(p.when))
	}
	if len(p.answers) == 1 {
		k, v := outcome(p.answers[0])
		n.Content = append(n.Content, yamlnode.Scalar(k), v)
		return n
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, a := range p.answers {
		k, v := outcome(a)
		seq.Content = append(seq.Content, yamlnode.Mapping(yamlnode.KV(k, v)))
	}
	n.Content = append(n.Content, yamlnode.Scalar("sequence"), seq)
	return n
}

// flowLimit is the longest JSON value written on one line.
const flowLimit = 80

// outcome is an answer as a rule's outcome: an error's text; one text
// block as return (its JSON value when the text is that value's
// canonical form, else the text); other blocks as content.
func outcome(a Answer) (string, *yaml.Node) {
	text, one := a.Text()
	switch {
	case a.IsError:
		return "error", yamlnode.Scalar(text)
	case one:
		if v, err := value.Parse([]byte(text)); err == nil && value.Canonical(v) == text {
			switch v.(type) {
			case map[string]any, []any:
				return "return", yamlnode.Fit(v, flowLimit)
			}
		}
		return "return", yamlnode.Scalar(text)
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, b := range a.Blocks {
		seq.Content = append(seq.Content, yamlnode.Flow(b))
	}
	return "content", seq
}
