package toolrec

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"

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

// A merge's rules: whose rules a call sees, how the new ones group, how
// a conflict is told, what a rule asks of the arguments (secrets left
// out) and answers, and the YAML written.

// ownsTool says case c has its own rules for the tool (its list replaces
// the suite's).
func ownsTool(c *spec.Case, name string) bool {
	if c == nil {
		return false
	}
	_, ok := c.Mocks[name]
	return ok
}

// matchOf is the matching rules of a case's calls; the suite's and the
// agent's for calls of no case.
func matchOf(suite *spec.Suite, byCase map[string]*reqmatch.Set, name string) *reqmatch.Set {
	if m, ok := byCase[name]; ok {
		return m
	}
	m, _ := reqmatch.Compile(suite.MatchRules(&spec.Case{})) // the loader has checked the rules
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
	n := 0
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += leaves(e)
		}
		return n
	case []any:
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
