// Package mock answers tool calls from a suite's rules: rules in file
// order, the first whose `when` matches wins, one outcome per rule,
// sequences consumed one entry per matching call with the last repeating,
// and state per case.
package mock

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/passthrough"
	"github.com/dryfire-dev/dryfire/internal/pause"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Set is the compiled rules of a suite or a case: immutable, shared by
// every session that uses it.
type Set struct {
	tools map[string]*ruleList
	names []string // every tool name with rules, sorted
	n     int      // rules numbered 0..n-1
}

// ruleList is one tool's rules in file order, and an index of them when
// the list is long enough to be worth one (index.go).
type ruleList struct {
	rules []*rule
	index *ruleIndex // nil: scan the rules
}

type rule struct {
	id      int
	spec    *spec.Rule
	where   string // FILE:LINE
	single  outcome
	seq     []outcome // non-nil for sequence rules
	timeout time.Duration
	delay   time.Duration // delay_ms: waited before each answer
	notices *tool.Notices // log and progress; nil for most rules
	ask     *ask          // elicit or sample (ask.go); nil for most rules
}

type outcome struct {
	kind    tool.Outcome
	content string
	blocks  []byte // content outcomes: the MCP content blocks, as JSON
	isError bool
	impl    string
	src     *spec.Outcome // what a rule that asks fills in (ask.go); nil otherwise
}

// DefaultImplTimeout bounds an impl call whose rule sets no timeout_s.
const DefaultImplTimeout = 30 * time.Second

func compileOutcome(o spec.Outcome) outcome {
	switch o.Kind {
	case spec.Fail:
		return outcome{kind: tool.Error, content: o.Message, isError: true}
	case spec.Impl:
		return outcome{kind: tool.Impl, impl: o.Impl}
	case spec.Content:
		return outcome{kind: tool.Content, content: RenderContent(o.Blocks), blocks: []byte(value.Canonical(o.Blocks))}
	}
	return outcome{kind: tool.Return, content: value.Render(o.Value)}
}

// compileNotices turns a rule's log and progress into what a served MCP
// call sends; nil when the rule has neither.
func compileNotices(r *spec.Rule) *tool.Notices {
	if len(r.Log) == 0 && len(r.Progress) == 0 {
		return nil
	}
	n := &tool.Notices{Progress: r.Progress}
	for _, l := range r.Log {
		n.Log = append(n.Log, tool.LogMessage{Level: l.Level, Logger: l.Logger, Data: []byte(value.Canonical(l.Data))})
	}
	return n
}

func (s *Set) add(name string, rules []*spec.Rule) {
	list := make([]*rule, 0, len(rules))
	for _, r := range rules {
		cr := &rule{id: s.n, spec: r, where: r.Pos.FileLine(), timeout: DefaultImplTimeout, notices: compileNotices(r), ask: compileAsk(r.Ask)}
		if r.TimeoutS > 0 {
			cr.timeout = time.Duration(r.TimeoutS * float64(time.Second))
		}
		cr.delay = time.Duration(r.DelayMS * float64(time.Millisecond))
		s.n++
		if r.Outcome.Kind == spec.Sequence {
			cr.seq = make([]outcome, len(r.Outcome.Sequence))
			for i := range r.Outcome.Sequence {
				cr.seq[i] = compileOutcome(r.Outcome.Sequence[i])
				if cr.ask != nil {
					cr.seq[i].src = &r.Outcome.Sequence[i]
				}
			}
			if len(cr.seq) == 0 { // only from the Go API; the loader rejects it
				cr.seq = []outcome{{kind: tool.Error, content: "empty sequence", isError: true}}
			}
		} else {
			cr.single = compileOutcome(r.Outcome)
			if cr.ask != nil {
				cr.single.src = &r.Outcome
			}
		}
		list = append(list, cr)
	}
	s.tools[name] = &ruleList{rules: list, index: buildIndex(list)}
}

// Compile builds the suite-level rule set.
func Compile(suite *spec.Suite) *Set {
	s := &Set{tools: map[string]*ruleList{}}
	for _, name := range suite.MockOrder {
		s.add(name, suite.Mocks[name])
	}
	s.names = slices.Sorted(maps.Keys(s.tools))
	return s
}

// ForCase returns the rules one case sees: its own mocks replace the
// suite's whole list for each tool they name; other tools keep theirs.
// Calls of no case (nil: dryfire serve without --case) see the suite's.
func (s *Set) ForCase(c *spec.Case) *Set {
	if c == nil || len(c.Mocks) == 0 {
		return s
	}
	out := &Set{tools: make(map[string]*ruleList, len(s.tools)+len(c.Mocks)), n: s.n}
	maps.Copy(out.tools, s.tools)
	for _, name := range c.MockOrder {
		out.add(name, c.Mocks[name])
	}
	out.names = slices.Sorted(maps.Keys(out.tools))
	return out
}

// match returns the first rule of tool, in file order, whose when matches
// args, or nil. A long list is searched through its index, which tries
// only the rules that can match, in the same order (index.go).
func (s *Set) match(name string, args any) *rule {
	l := s.tools[name]
	if l == nil {
		return nil
	}
	if l.index != nil {
		return l.index.match(l.rules, args)
	}
	return scan(l.rules, args)
}

// scan is the first-match search over every rule, in file order.
func scan(rules []*rule, args any) *rule {
	for _, r := range rules {
		if r.spec.When == nil || r.spec.When.Match(args) {
			return r
		}
	}
	return nil
}

// Impl runs passthrough code for an impl outcome. It never fails: every
// problem comes back as an error result.
type Impl interface {
	Call(ctx context.Context, req passthrough.Request) passthrough.Result
}

// Session holds one case's mock state: sequence positions. It answers
// calls and records none (tool.Recorder does); selection and sequence
// advance happen in one critical section, so counts are exact under any
// concurrency.
type Session struct {
	set  *Set
	impl Impl
	// Label names the case in passthrough messages (which calls are still
	// running at exit); set it before the first call.
	Label string

	mu   sync.Mutex
	used []int // per rule id: matching calls so far
}

// NewSession starts a case's state over a rule set. impl may be nil.
func NewSession(set *Set, impl Impl) *Session {
	return &Session{set: set, impl: impl, used: make([]int, set.n)}
}

var _ tool.Answerer = (*Session)(nil)

// Answer answers one tool call; args is c.Args parsed (nil, with perr
// saying why, when it is not JSON).
func (s *Session) Answer(ctx context.Context, c tool.Call, args any, perr error) tool.Result {
	s.mu.Lock()
	r := s.set.match(c.Name, args)
	var res tool.Result
	var o outcome
	if r == nil {
		res = s.miss(c, args, perr)
	} else {
		res.Rule, res.Entry = r.where, -1
		o = r.single
		if r.seq != nil {
			i := min(s.used[r.id], len(r.seq)-1)
			o, res.Entry = r.seq[i], i
		}
		s.used[r.id]++
		res.Outcome, res.Content, res.Blocks, res.IsError = o.kind, o.content, o.blocks, o.isError
		res.Notices = r.notices
	}
	s.mu.Unlock()

	if r != nil && r.delay > 0 && !pause.For(ctx, r.delay) {
		res.Outcome, res.Content, res.Blocks, res.IsError, res.Notices = tool.Error, fmt.Sprintf("dryfire: the call ended during the rule's delay_ms (%s): %v", r.where, context.Cause(ctx)), nil, true, nil
		return res
	}
	if r != nil && r.ask != nil && o.src != nil {
		return r.askClient(ctx, o, res)
	}
	if r != nil && o.kind == tool.Impl {
		pr := passthrough.Result{Content: fmt.Sprintf("dryfire: impl %s: passthrough mocks are not available in this version", o.impl), IsError: true}
		if s.impl != nil {
			label := c.Name
			if s.Label != "" {
				label = fmt.Sprintf("case %q, tool %s", s.Label, c.Name)
			}
			pr = s.impl.Call(ctx, passthrough.Request{Ref: o.impl, Args: c.Args, Timeout: r.timeout, Label: label})
		}
		res.Content, res.IsError = pr.Content, pr.IsError
		if pr.Note != "" {
			res.Notes = append(res.Notes, pr.Note)
		}
	}
	return res
}

// UsesImpl reports whether any rule of the set runs passthrough code: such
// a case is never recorded into a cassette.
func (s *Set) UsesImpl() bool {
	for _, l := range s.tools {
		for _, r := range l.rules {
			if r.single.kind == tool.Impl || slices.ContainsFunc(r.seq, func(o outcome) bool { return o.kind == tool.Impl }) {
				return true
			}
		}
	}
	return false
}

// Pure reports whether every answer to a call of tool name depends on
// the call's arguments alone, not on the calls before it, the clock,
// code or the MCP client: none of its rules is a sequence, waits
// (delay_ms), runs impl code or asks the client (elicit, sample). A tool
// without rules is pure: its calls are unmatched.
func (s *Set) Pure(name string) bool {
	l := s.tools[name]
	return l == nil || !slices.ContainsFunc(l.rules, func(r *rule) bool {
		return r.seq != nil || r.delay > 0 || r.single.kind == tool.Impl || r.ask != nil
	})
}

// Asks reports whether a rule of tool name asks the MCP client something
// during the call (elicit or sample): such a call needs the client.
func (s *Set) Asks(name string) bool {
	l := s.tools[name]
	return l != nil && slices.ContainsFunc(l.rules, func(r *rule) bool { return r.ask != nil })
}

// AskingTools are the tools, sorted, with a rule that asks the MCP client
// something; nil when none has.
func (s *Set) AskingTools() []string {
	var out []string
	for _, name := range s.names {
		if s.Asks(name) {
			out = append(out, name)
		}
	}
	return out
}

// miss builds the answer to an unmatched call, with its near miss.
// It runs only on a miss, never on the matching path.
func (s *Session) miss(c tool.Call, args any, perr error) tool.Result {
	nm := &tool.NearMiss{Tool: c.Name}
	l := s.set.tools[c.Name]
	switch {
	case perr != nil:
		nm.Note = fmt.Sprintf("the arguments are not valid JSON (%v)", perr)
	case l == nil || len(l.rules) == 0:
		nm.Note = "no mock rules for this tool" + suggest.DidYouMean(c.Name, s.set.names)
	default:
		best := -1
		for _, r := range l.rules {
			if r.spec.When == nil {
				continue
			}
			if n, mm := r.spec.When.Diff(args); best < 0 || n < best {
				best = n
				nm.Rule, nm.Path, nm.Expected, nm.Got, nm.Reason = r.where, mm.Path, mm.Expected, mm.Got, mm.Reason
			}
		}
	}
	return tool.Result{Outcome: tool.Unmatched, IsError: true, Entry: -1, NearMiss: nm, Content: "dryfire: " + DescribeMiss(nm)}
}

// DescribeMiss renders a near miss as one sentence.
func DescribeMiss(nm *tool.NearMiss) string {
	var b strings.Builder
	fmt.Fprintf(&b, "no mock rule matched this call to %q", nm.Tool)
	if nm.Note != "" {
		b.WriteString(": " + nm.Note)
		return b.String()
	}
	fmt.Fprintf(&b, "; closest rule %s differs at %s: expected %s, got %s", nm.Rule, nm.Path, nm.Expected, nm.Got)
	if nm.Reason != "" {
		b.WriteString(" (" + nm.Reason + ")")
	}
	return b.String()
}
