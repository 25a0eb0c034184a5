package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// Script is the offline, deterministic model: its answers are a case's
// scripted turns. A request is answered by the first turn not yet served
// whose guard (when:) holds for it; a turn without a guard holds for any
// request, so a script without guards is served in order, whatever the
// conversation says. Every agent's model calls reach it the same way: the
// built-in loop's (Generate) and, on the wire, an agent program's
// (internal/modelserver, Pick).
type Script struct {
	turns []*spec.Turn
	mu    sync.Mutex
	// served[i]: turn i answered a request; log, which request each
	// answered, in order; asked counts the requests.
	served []bool
	log    []Served
	asked  int
	// issued are the tool calls the served turns made, by id: a tool
	// result whose request does not carry the call (a Responses request
	// with previous_response_id) is still known by its tool.
	issued map[string]string
	guards bool // some turn has a guard
	// names knows the names a framework shows the suite's tools by
	// (tool.Names): a turn's call of lookup_order is sent as the
	// dryfire_lookup_order a request offers.
	names *tool.Names
}

// SetNames makes the script call the suite's tools by the names each
// request offers them as (nil: by theirs, or a framework's usual
// decorations of them).
func (s *Script) SetNames(n *tool.Names) { s.names = n }

// Served is one request the script answered: its number (from 1, in
// arrival order) and the turn (from 1) that answered it; Refused, when
// the answer was an error (the turn calls a tool the request does not
// offer).
type Served struct {
	Request, Turn int
	Refused       bool
}

// NewScript serves the given turns.
func NewScript(turns []*spec.Turn) *Script {
	s := &Script{turns: turns, served: make([]bool, len(turns)), issued: map[string]string{}}
	for _, t := range turns {
		if t.When != nil {
			s.guards = true
		}
	}
	return s
}

// ErrScriptExhausted is returned when the loop asks for a turn the script
// does not have.
type ErrScriptExhausted struct {
	Turns int // how many turns the script has
}

func (e *ErrScriptExhausted) Error() string {
	if e.Turns == 0 {
		return "the script has no turns, so the loop has nothing to send for turn 1; give the case a script that ends with a turn that has text and no tool_calls"
	}
	turns := "turns"
	if e.Turns == 1 {
		turns = "turn"
	}
	return fmt.Sprintf("the script ran out: it has %d %s, and turn %d still called tools, so the loop asked for turn %d; end the script with a turn that has text and no tool_calls", e.Turns, turns, e.Turns, e.Turns+1)
}

// Generate returns the turn that answers the request (Pick).
func (s *Script) Generate(ctx context.Context, req *Request) (*Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.Pick(req)
	t := p.T
	var offer *ToolNotOfferedError
	if errors.As(err, &offer) {
		// The built-in loop's tools are the suite's: a call of another
		// is answered unmatched, and the case fails for it.
		err = nil
	}
	if err != nil {
		if !s.guards {
			var none *NoTurnError
			if errors.As(err, &none) && none.AllServed {
				return nil, &ErrScriptExhausted{Turns: len(s.turns)}
			}
		}
		return nil, err
	}
	r := &Response{Text: t.Text}
	for _, c := range t.ToolCalls {
		r.ToolCalls = append(r.ToolCalls, tool.Call{ID: c.ID, Name: c.Name, Args: ArgsJSON(c)})
	}
	return r, nil
}

// ArgsJSON is a scripted call's arguments as JSON text.
func ArgsJSON(c *spec.ScriptCall) string {
	if c.ArgsJSON != "" {
		return c.ArgsJSON
	}
	if c.Args == nil {
		return "{}"
	}
	return value.Canonical(c.Args)
}

// Pick is the turn chosen for a request.
type Pick struct {
	Request int        // the request's number, from 1, in arrival order
	Turn    int        // the turn's number, from 1; 0: none answers
	T       *spec.Turn // the turn; nil: none
	Last    string     // the request's last message, for people
	// Names are the names the request offers the turn's calls' tools by,
	// one per call: what the answer calls them.
	Names []string
}

// Pick chooses the turn that answers req and marks it served. A request
// no turn answers is a *NoTurnError; a turn that calls a tool req does not
// offer, a *ToolNotOfferedError (the turn is served all the same: the
// case errs).
func (s *Script) Pick(req *Request) (Pick, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked++
	n := s.asked
	v := s.view(req)
	for i, t := range s.turns {
		if s.served[i] {
			continue
		}
		held := v.holds(t.When)
		if v.over {
			return Pick{Request: n, Last: v.last}, &GuardWorkError{Request: n, Turn: i + 1, Bytes: len(v.lastText)}
		}
		if !held {
			continue
		}
		s.served[i] = true
		s.log = append(s.log, Served{Request: n, Turn: i + 1})
		for _, c := range t.ToolCalls {
			s.issued[c.ID] = c.Name
		}
		p := Pick{Request: n, Turn: i + 1, T: t, Last: v.last, Names: make([]string, len(t.ToolCalls))}
		for k, c := range t.ToolCalls {
			name, ok := s.offered(req.Tools, c.Name)
			if !ok {
				s.log[len(s.log)-1].Refused = true
				return p, &ToolNotOfferedError{Turn: i + 1, Request: n, Tool: c.Name, Offered: toolNames(req.Tools)}
			}
			p.Names[k] = name
		}
		return p, nil
	}
	e := &NoTurnError{Request: n, Turns: len(s.turns), Served: slices.Clone(s.log), Last: v.last, AllServed: len(s.log) == len(s.turns)}
	e.Closest = s.closest(v)
	return Pick{Request: n, Last: v.last}, e
}

// offered is the name req offers tool by: its own, else an alias or a
// framework's decoration of it (the first the request lists).
func (s *Script) offered(ts []ToolDef, tool string) (string, bool) {
	if slices.ContainsFunc(ts, func(d ToolDef) bool { return d.Name == tool }) {
		return tool, true
	}
	if i := slices.IndexFunc(ts, func(d ToolDef) bool { return s.names.Is(d.Name, tool) }); i >= 0 {
		return ts[i].Name, true
	}
	return "", false
}

// Unserve gives turn back (a fault cut its answer short): the request
// that retries it is answered by it again.
func (s *Script) Unserve(turn int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if turn < 1 || turn > len(s.turns) {
		return
	}
	s.served[turn-1] = false
	for i := len(s.log) - 1; i >= 0; i-- {
		if s.log[i].Turn == turn {
			s.log = slices.Delete(s.log, i, i+1)
			break
		}
	}
}

// Served lists the requests answered so far and their turns, in order.
func (s *Script) Served() []Served {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// Unserved are the turns (from 1) no request was answered by, less the
// optional ones: a case that leaves some fails, naming them.
func (s *Script) Unserved() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for i, t := range s.turns {
		if !s.served[i] && !t.Optional {
			out = append(out, i+1)
		}
	}
	return out
}

// UnservedError is a run that ended with turns of its script never
// served: the agent made fewer model calls than the script foresees, or
// a turn's guard never held.
type UnservedError struct {
	Turns  []int    // the turns left, from 1
	Served []Served // the requests answered, in order
}

func (e *UnservedError) Error() string {
	var b strings.Builder
	if len(e.Turns) == 1 {
		fmt.Fprintf(&b, "script turn %d was never served", e.Turns[0])
	} else {
		fmt.Fprintf(&b, "script turns %s were never served", intList(e.Turns))
	}
	switch len(e.Served) {
	case 0:
		b.WriteString(": the agent made no model call")
	case 1:
		fmt.Fprintf(&b, ": the agent made 1 model call (%s)", servedList(e.Served))
	default:
		fmt.Fprintf(&b, ": the agent made %d model calls (%s)", len(e.Served), servedList(e.Served))
	}
	b.WriteString("; a turn the agent may not ask for is marked optional: true")
	return b.String()
}

func intList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	if len(parts) == 2 {
		return parts[0] + " and " + parts[1]
	}
	return strings.Join(parts, ", ")
}

// Reset starts the script over.
func (s *Script) Reset() {
	s.mu.Lock()
	clear(s.served)
	s.log, s.asked = nil, 0
	clear(s.issued)
	s.mu.Unlock()
}

func toolNames(ts []ToolDef) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Name
	}
	return out
}

// view is what a guard looks at in a request.
type view struct {
	names    *tool.Names
	tools    []string
	lastUser string // the last user message's text
	hasUser  bool
	results  []string // the tools of the tool results that end the request
	ended    bool     // the request ends with tool results
	last     string   // the last message, for people and matches
	lastText string
	req      *Request // the whole request, for anywhere (requestText)
	all      *string  // requestText(req), once a guard asked for it
	// steps is the work of the guards read so far; over, that the next
	// would pass MaxGuardSteps (it was not read).
	steps int64
	over  bool
}

// spend counts n steps of work, false (and over) when they would pass
// MaxGuardSteps.
func (v *view) spend(n int64) bool {
	if v.over || v.steps+n > MaxGuardSteps {
		v.over = true
		return false
	}
	v.steps += n
	return true
}

func (s *Script) view(req *Request) *view {
	v := &view{tools: toolNames(req.Tools), names: s.names, req: req}
	names := map[string]string{}
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
		}
	}
	nameOf := func(id string) string {
		if n, ok := names[id]; ok {
			return n
		}
		return s.issued[id]
	}
	// The tool results that end the request: those after the last
	// assistant message. A user's words sent with them (Claude Code's
	// "The user hasn't heard from you in a while" after a long tool
	// call) do not hide them.
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == Assistant {
			break
		}
		if m.Role == ToolRole {
			v.ended = true
			v.results = append(v.results, nameOf(m.CallID))
		}
	}
	slices.Reverse(v.results)
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if m := req.Messages[i]; m.Role == User {
			v.lastUser, v.hasUser = m.Text, true
			break
		}
	}
	if n := len(req.Messages); n > 0 {
		m := req.Messages[n-1]
		v.lastText = m.Text
		switch m.Role {
		case ToolRole:
			v.last = fmt.Sprintf("tool %q: %q", cut(nameOf(m.CallID)), cut(m.Text))
		case Assistant:
			v.last = fmt.Sprintf("assistant: %q", cut(m.Text))
		default:
			v.last = fmt.Sprintf("%s: %q", m.Role, cut(m.Text))
		}
	} else {
		v.last = "none (the request has no messages)"
	}
	return v
}

// holds says whether guard g (nil: none) holds for the request.
func (v *view) holds(g *spec.Guard) bool { return g == nil || len(v.fails(g)) == 0 }

// fails are the reasons guard g does not hold, one per key that fails.
func (v *view) fails(g *spec.Guard) []string {
	var out []string
	if g.NoTools && len(v.tools) > 0 {
		out = append(out, fmt.Sprintf("when.tools [] wants a request that offers no tool; it offers %s", quoteList(v.tools)))
	}
	for _, t := range g.Tools {
		if !slices.ContainsFunc(v.tools, func(o string) bool { return v.names.Is(o, t) }) {
			offers := "no tools"
			if len(v.tools) > 0 {
				offers = quoteList(v.tools)
			}
			out = append(out, fmt.Sprintf("when.tools wants %q offered; the request offers %s", t, offers))
			break
		}
	}
	if g.Result != nil {
		switch {
		case g.ResultOf != "" && !slices.ContainsFunc(v.results, func(o string) bool { return v.names.Is(o, g.ResultOf) }):
			got := "ends with no tool result"
			if v.ended {
				got = "ends with results of " + quoteList(v.results)
			}
			out = append(out, fmt.Sprintf("when.tool_result wants a result of %q; the request %s", g.ResultOf, got))
		case g.ResultOf == "" && *g.Result && !v.ended:
			out = append(out, "when.tool_result wants the request to end with a tool result; it ends with none")
		case !*g.Result && v.ended:
			out = append(out, "when.tool_result false wants a request that ends with no tool result; it ends with results of "+quoteList(v.results))
		}
	}
	if (g.User != "" && !v.spend(int64(len(v.lastUser)))) || (g.Matches != nil && !v.spend(int64(len(v.lastText)+1)*int64(max(1, g.MatchesSize)))) {
		return append(out, "its guard was not tried (model.MaxGuardSteps)")
	}
	if g.User != "" && !strings.Contains(v.lastUser, g.User) {
		got := "the request has no user message"
		if v.hasUser {
			got = fmt.Sprintf("the last user message is %q", cut(v.lastUser))
		}
		out = append(out, fmt.Sprintf("when.user wants %q; %s", g.User, got))
	}
	if g.Matches != nil && !g.Matches.MatchString(v.lastText) {
		out = append(out, fmt.Sprintf("when.matches %q is not found in the last message", g.Matches.String()))
	}
	if g.Anywhere != nil {
		if v.all == nil {
			t := requestText(v.req)
			v.all = &t
		}
		all := *v.all
		if !v.spend(int64(len(all)+1) * int64(max(1, g.AnywhereSize))) {
			return append(out, "its guard was not tried (model.MaxGuardSteps)")
		}
		if !g.Anywhere.MatchString(all) {
			out = append(out, fmt.Sprintf("when.anywhere %q is not found in the request", g.Anywhere.String()))
		}
	}
	return out
}

// closest is what the guard of the turn not yet served that comes
// nearest to holding says (the fewest keys failing, the first of those).
func (s *Script) closest(v *view) string {
	best, why := -1, []string(nil)
	for i, t := range s.turns {
		if s.served[i] || t.When == nil {
			continue
		}
		f := v.fails(t.When)
		if v.over {
			break
		}
		if best < 0 || len(f) < len(why) {
			best, why = i, f
		}
	}
	if best < 0 {
		return ""
	}
	return fmt.Sprintf("turn %d: %s", best+1, strings.Join(why, "; "))
}

// MaxGuardSteps bounds the work of the guards of one request: a
// when.matches reading the last message costs its length times the size
// of its pattern's program (a regular expression reads a byte in about
// as many steps at worst), a when.user its last user message's length.
// 20,000 matches guards on a 100 KB message took 41.6 s; 10^8 steps take
// about 0.3 s.
const MaxGuardSteps = 100_000_000

// GuardWorkError is a request whose guards would cost more than
// MaxGuardSteps; Turn's was not tried.
type GuardWorkError struct {
	Request, Turn int
	Bytes         int // the length of the last message
}

func (e *GuardWorkError) Error() string {
	return fmt.Sprintf("model request %d: the script's guards would take more than %d steps to read it (model.MaxGuardSteps: each when.matches costs the last message's %d bytes times the size of its pattern); turn %d's guard was not tried: guard fewer turns with matches, or make their patterns shorter", e.Request, MaxGuardSteps, e.Bytes, e.Turn)
}

// NoTurnError is a request no turn of the script answers.
type NoTurnError struct {
	Request, Turns int
	Served         []Served
	AllServed      bool
	Last           string // the request's last message, for people
	Closest        string // the closest guard and why it fails; "" when none
}

func (e *NoTurnError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "model request %d matches no turn of the script: ", e.Request)
	switch {
	case e.Turns == 0:
		b.WriteString("the script has no turns")
	case e.AllServed && e.Turns == 1:
		fmt.Fprintf(&b, "its only turn is served (%s)", servedList(e.Served))
	case e.AllServed:
		fmt.Fprintf(&b, "all %d turns are served (%s)", e.Turns, servedList(e.Served))
	case len(e.Served) == 0:
		b.WriteString("no turn is served yet")
	default:
		fmt.Fprintf(&b, "turns served: %s", servedList(e.Served))
	}
	fmt.Fprintf(&b, "; the request's last message: %s", cutAt(e.Last, 200))
	if e.Closest != "" {
		fmt.Fprintf(&b, "; closest guard: %s", e.Closest)
	}
	if e.AllServed {
		b.WriteString("; add a turn for it (a guarded one, with when:, for a call the agent makes besides its conversation)")
	}
	return b.String()
}

func servedList(ss []Served) string {
	parts := make([]string, len(ss))
	for i, s := range ss {
		if s.Refused {
			parts[i] = fmt.Sprintf("turn %d (request %d, refused)", s.Turn, s.Request)
		} else {
			parts[i] = fmt.Sprintf("turn %d (request %d)", s.Turn, s.Request)
		}
	}
	return strings.Join(parts, ", ")
}

// ToolNotOfferedError is a scripted tool call of a tool the request did
// not offer.
type ToolNotOfferedError struct {
	Turn, Request int
	Tool          string
	Offered       []string
}

func (e *ToolNotOfferedError) Error() string {
	if len(e.Offered) == 0 {
		return fmt.Sprintf("script turn %d calls tool %q, which model request %d does not offer (it offers no tools: a call besides the conversation, such as a title or a summary, is answered by a turn of its own with when: {tools: []})", e.Turn, e.Tool, e.Request)
	}
	return fmt.Sprintf("script turn %d calls tool %q, which model request %d does not offer (it offers %s)", e.Turn, e.Tool, e.Request, quoteList(e.Offered))
}

// maxQuoted bounds the text of a request a message or the report quotes.
const maxQuoted = 120

func quoteList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// cut shortens text for a message and the report (a request's last
// message may be a tool result of megabytes): at most maxQuoted bytes.
func cut(s string) string { return cutAt(s, maxQuoted) }

// cutAt shortens s to at most n bytes, on a rune boundary, marked.
func cutAt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// Codes of the script's refusals (model.Coded).
const (
	CodeNoTurn     = "dryfire_script_no_turn"          // no turn of the case's script answers the request
	CodeNotOffered = "dryfire_script_tool_not_offered" // the turn calls a tool the request does not offer
)

// Code implements Coded.
func (e *NoTurnError) Code() (string, string)         { return CodeNoTurn, "" }
func (e *ToolNotOfferedError) Code() (string, string) { return CodeNotOffered, "" }
