// Package reqmatch holds the matching rules a suite declares for model
// requests whose bodies change on every run (a time, a random id in a
// prompt or in request metadata): JSON paths to ignore, and values to
// normalise by regular expression or by a named preset. Both the recorded
// and the live request go through the same rules before they are
// compared, so a recording made once keeps replaying. The suite loader
// validates rules with it; the cassette matcher applies them.
package reqmatch

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Rule is one declared rule: exactly one of Ignore, Preset and Regex.
type Rule struct {
	// Ignore is a JSON path ($.metadata.request_id, $.messages[*].id):
	// what it reaches is left out of the comparison.
	Ignore string
	// Preset names a built-in normalisation (see Presets).
	Preset string
	// Regex is a regular expression (RE2); every match in a string value
	// (or the text of a number) is replaced by Replace.
	Regex   string
	Replace string // for Regex: the replacement ($1 expands); default "<normalised>"
}

// Label is the rule as messages and cassettes name it.
func (r Rule) Label() string {
	switch {
	case r.Ignore != "":
		return "ignore " + r.Ignore
	case r.Preset != "":
		return "preset " + r.Preset
	}
	return "regex " + strconv.Quote(r.Regex) + " -> " + strconv.Quote(r.replacement())
}

func (r Rule) replacement() string {
	return cmp.Or(r.Replace, "<normalised>")
}

// preset is a named normalisation: each pattern's matches become Placeholder.
type preset struct {
	Name, Placeholder, About string
	re                       func() *regexp.Regexp // compiled on first use
}

// lazyRE compiles expr on first use, not at start-up.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// The presets, in the order docs and suggestions list them. A timestamp
// is normalised before a date within it would be.
var presets = []preset{
	{"timestamp", "<timestamp>", "date and time: ISO 8601 / RFC 3339 (2026-12-01T10:04:58Z, with fraction and offset, or a space for T), RFC 1123 (Tue, 01 Dec 2026 10:04:58 GMT) and date(1) (Tue Dec  1 10:04:58 UTC 2026)",
		lazyRE(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2}|\b)` +
			`|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d{2}:\d{2}:\d{2} (?:GMT|UTC|[+-]\d{4})` +
			`|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [ \d]\d \d{2}:\d{2}:\d{2}(?: [A-Z]{2,5})? \d{4}`)},
	{"iso-date", "<date>", "a calendar date, 2026-12-01", lazyRE(`\b\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])\b`)},
	{"uuid", "<uuid>", "a UUID in its 8-4-4-4-12 hex form, any version, either case", lazyRE(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)},
	{"epoch-ms", "<epoch-ms>", "Unix time in milliseconds, 13 digits (2001 to 2286)", lazyRE(`\b[1-9]\d{12}\b`)},
	{"epoch-s", "<epoch-s>", "Unix time in seconds, 10 digits with an optional fraction (2001 to 2286)", lazyRE(`\b[1-9]\d{9}(?:\.\d+)?\b`)},
	{"duration", "<duration>", "a duration in seconds or milliseconds as test runners and shells print them: 0.001s, 12 ms, 1.5 seconds", lazyRE(`\b\d+(?:\.\d+)?\s?(?:ms|s|secs?|seconds?)\b`)},
}

// sub is one replacement of a CLI's preset.
type sub struct {
	re   func() *regexp.Regexp
	repl string
}

// cliPreset is what a coding-agent CLI's requests hold that changes from
// run to run and machine to machine: several replacements, in order.
// agent.cli applies its CLI's; an agent.command built on one (the Claude
// Agent SDK, the Codex SDK) names it.
type cliPreset struct {
	Name, About string
	subs        []sub
}

// The parts of the CLIs' presets.
var (
	// dryfire's private paths of a case: its workspace's and home's
	// temporary directories (os.MkdirTemp's digits), first whole with
	// whatever directory holds them (from the path's start: the fewest
	// directories before the first), then as a CLI derives names from
	// them (Claude Code's -tmp-dryfire-workspace-N project slug, Gemini
	// CLI's workspace base name).
	casePaths = []sub{
		{lazyRE("(^|[^\\w./-])(?:/[^\\s/\"'<>`]+)*?/dryfire-(workspace|home)-\\d+"), "${1}<${2}>"},
		{lazyRE(`[\w.-]*dryfire-(workspace|home)-\d+`), "<$1>"},
	}
	// A UUID within a word too (msg_UUID, fco_UUID).
	looseUUID = sub{lazyRE(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), "<uuid>"}
	isoDate   = sub{presets[1].re, "<date>"}
	epochMS   = sub{presets[3].re, "<epoch-ms>"}
	duration  = sub{presets[5].re, "<duration>"}
	// The CLI's own install place (node_modules/…): where it was
	// installed on the machine that recorded.
	nodeModules = sub{lazyRE("(?:/[^\\s/\"'<>`]+)*/node_modules/"), "<node_modules>/"}
)

var cliPresets = []cliPreset{
	{"claude-code", "Claude Code and the Claude Agent SDK: the case's workspace and home paths, the date, UUIDs, durations (a test run's time in a tool result), the OS version, platform and shell", []sub{
		casePaths[0], casePaths[1], isoDate, looseUUID, duration,
		{lazyRE(`OS Version: [^\n"]*`), "OS Version: <os-version>"},
		{lazyRE(`Platform: \w+`), "Platform: <platform>"},
		{lazyRE(`Shell: [^\n"]*`), "Shell: <shell>"},
	}},
	{"codex", "Codex CLI and the Codex SDK: the case's workspace and home paths, the date, UUIDs (session, thread, turn and item ids), Unix milliseconds, durations, the shell, exec_command's chunk id", []sub{
		casePaths[0], casePaths[1], isoDate, looseUUID, epochMS, duration,
		{lazyRE(`<shell>[^<]*</shell>`), "<shell><shell></shell>"},
		{lazyRE(`Chunk ID: [0-9a-f]+`), "Chunk ID: <id>"},
	}},
	{"gemini-cli", "Gemini CLI: the case's workspace and home paths, the date, the ids it gives function calls (NAME_EPOCHMS_N), the install place of its built-in skills, durations, the operating system", []sub{
		casePaths[0], casePaths[1], isoDate, nodeModules, duration,
		{lazyRE(`\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{1,2}, \d{4}\b`), "<date>"},
		{lazyRE(`\b(\w+?)_[1-9]\d{12}_(\d+)\b`), "${1}_<epoch-ms>_${2}"},
		{lazyRE(`My operating system is: \w+`), "My operating system is: <os>"},
	}},
}

// Presets are the names of the presets, in documentation order: the
// values' (which a mismatch suggests), then the CLIs'.
func Presets() []string {
	out := make([]string, 0, len(presets)+len(cliPresets))
	for _, p := range presets {
		out = append(out, p.Name)
	}
	for _, p := range cliPresets {
		out = append(out, p.Name)
	}
	return out
}

// step is one step of a JSON path: a member name, an index, or any.
type step struct {
	key   string
	index int // -1: a member (key)
	any   bool
}

// Path is a parsed JSON path.
type Path []step

// PathError is a JSON path that does not parse; Col is the 1-based
// column within it.
type PathError struct {
	Col int
	Msg string
}

func (e *PathError) Error() string { return fmt.Sprintf("column %d: %s", e.Col, e.Msg) }

// ParsePath reads a JSON path in the form mismatch messages print: $
// followed by .name, ["name"], [N], .* or [*].
func ParsePath(s string) (Path, error) {
	if !strings.HasPrefix(s, "$") {
		return nil, &PathError{1, `a JSON path starts with $ (the body), e.g. $.metadata.request_id`}
	}
	var p Path
	i := 1
	for i < len(s) {
		switch s[i] {
		case '.':
			j := i + 1
			if j < len(s) && s[j] == '*' {
				p = append(p, step{any: true, index: -1})
				i = j + 1
				continue
			}
			for j < len(s) && (s[j] == '_' || s[j] == '-' || s[j] >= '0' && s[j] <= '9' || s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			if j == i+1 {
				return nil, &PathError{i + 2, `a member name after "." (letters, digits, _ or -; write ["…"] for others)`}
			}
			p = append(p, step{key: s[i+1 : j], index: -1})
			i = j
		case '[':
			end := strings.IndexByte(s[i:], ']')
			if s[i+1:min(i+2, len(s))] == `"` {
				// A quoted name may hold "]": find the closing quote.
				q, err := strconv.QuotedPrefix(s[i+1:])
				if err != nil {
					return nil, &PathError{i + 2, `an unterminated or malformed quoted member name`}
				}
				name, _ := strconv.Unquote(q)
				k := i + 1 + len(q)
				if k >= len(s) || s[k] != ']' {
					return nil, &PathError{k + 1, `want ] after the quoted member name`}
				}
				p = append(p, step{key: name, index: -1})
				i = k + 1
				continue
			}
			if end < 0 {
				return nil, &PathError{i + 1, `"[" without a closing "]"`}
			}
			inner := s[i+1 : i+end]
			if inner == "*" {
				p = append(p, step{any: true, index: -1})
			} else if n, err := strconv.Atoi(inner); err == nil && n >= 0 && inner == strconv.Itoa(n) {
				p = append(p, step{index: n})
			} else {
				return nil, &PathError{i + 2, fmt.Sprintf(`%q is not an index: write [N] (from 0), [*], or ["name"]`, inner)}
			}
			i += end + 1
		default:
			return nil, &PathError{i + 1, fmt.Sprintf(`unexpected %q: steps are .name, ["name"], [N], .* and [*]`, s[i])}
		}
	}
	if len(p) == 0 {
		return nil, &PathError{1, `$ alone is the whole body: name a part of it, e.g. $.metadata`}
	}
	return p, nil
}

// compiled is a rule ready to apply.
type compiled struct {
	rule  Rule
	path  Path           // Ignore
	re    *regexp.Regexp // Preset or Regex
	repl  string
	label string
	part  bool // a CLI preset's part after its first
}

// Set is a compiled list of rules, applied in order. A nil Set applies
// nothing.
type Set struct {
	rules []compiled
	regex bool // some rule rewrites values

	// memo is what the rewriting rules make of a string, and which
	// changed it: a case's requests repeat most of themselves (a coding
	// agent's system prompt, its tools, the conversation so far) on
	// every turn, short strings included (a type, a role, a tool name,
	// an id), which would each meet every rule again.
	mu        sync.Mutex
	memo      map[string]normalised
	memoBytes int
}

// normalised is a string after the rewriting rules, and the labels of
// those that changed it.
type normalised struct {
	s      string
	labels []string
}

// memoMax bounds the memo: the bytes of the strings it keeps, each
// counted with memoEntry for its entry.
const (
	memoMax   = 32 << 20
	memoEntry = 64
)

// Compile checks and compiles rules. The loader reports problems with
// positions before this is called; the error here names the rule.
func Compile(rules []Rule) (*Set, error) {
	if len(rules) == 0 {
		return nil, nil
	}
	s := &Set{}
	for _, r := range rules {
		c := compiled{rule: r, label: r.Label()}
		switch {
		case r.Ignore != "":
			p, err := ParsePath(r.Ignore)
			if err != nil {
				return nil, fmt.Errorf("match rule %s: %w", c.label, err)
			}
			c.path = p
		case r.Preset != "":
			if i := slices.IndexFunc(cliPresets, func(p cliPreset) bool { return p.Name == r.Preset }); i >= 0 {
				for j, sb := range cliPresets[i].subs {
					s.rules = append(s.rules, compiled{rule: r, label: c.label, re: sb.re(), repl: sb.repl, part: j > 0})
				}
				continue
			}
			i := slices.IndexFunc(presets, func(p preset) bool { return p.Name == r.Preset })
			if i < 0 {
				return nil, fmt.Errorf("match rule %s: no such preset (there are %s)", c.label, strings.Join(Presets(), ", "))
			}
			c.re, c.repl = presets[i].re(), presets[i].Placeholder
		default:
			re, err := regexp.Compile(r.Regex)
			if err != nil {
				return nil, fmt.Errorf("match rule %s: %w", c.label, err)
			}
			c.re, c.repl = re, r.replacement()
		}
		s.rules = append(s.rules, c)
	}
	s.regex = slices.ContainsFunc(s.rules, func(c compiled) bool { return c.re != nil })
	return s, nil
}

// Rules are the rules of the set, as declared (nil for a nil Set).
func (s *Set) Rules() []Rule {
	if s == nil {
		return nil
	}
	out := make([]Rule, 0, len(s.rules))
	for _, c := range s.rules {
		if c.part {
			continue
		}
		out = append(out, c.rule)
	}
	return out
}

// Applied says, per JSON path (as Member and Index write them), which
// rules changed the value there.
type Applied map[string][]string

func (a Applied) add(path, label string) {
	if !slices.Contains(a[path], label) {
		a[path] = append(a[path], label)
	}
}

// Apply applies the rules to a parsed JSON body (objects as
// map[string]any, numbers as json.Number), changing it in place, and
// returns it with the paths the rules changed. An ignored object member
// is removed; an ignored array item becomes the string "<ignored>", so
// that the items after it keep their places.
func (s *Set) Apply(v any) (any, Applied) {
	if s == nil {
		return v, nil
	}
	ap := Applied{}
	for i := range s.rules {
		if c := &s.rules[i]; c.path != nil {
			v = ignore(v, c.path, "$", c.label, ap)
		}
	}
	if s.regex {
		v = s.rewrite(v, nil, ap)
	}
	return v, ap
}

// at is a JSON path as a chain, made into text (Member, Index) only where
// a rule changed something.
type at struct {
	up  *at
	key string
	i   int // -1: key
}

func (a *at) String() string {
	if a == nil {
		return "$"
	}
	if a.i < 0 {
		return Member(a.up.String(), a.key)
	}
	return Index(a.up.String(), a.i)
}

// rewrite applies the rewriting rules, in order, to every string (and
// number's text) of v.
func (s *Set) rewrite(v any, path *at, ap Applied) any {
	switch x := v.(type) {
	case string:
		n := s.normal(x)
		for _, l := range n.labels {
			ap.add(path.String(), l)
		}
		return n.s
	case json.Number:
		if n := s.rewrite(string(x), path, ap); n != string(x) {
			return n // its text, as a string
		}
	case []any:
		for i := range x {
			x[i] = s.rewrite(x[i], &at{path, "", i}, ap)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = s.rewrite(e, &at{path, k, -1}, ap)
		}
	}
	return v
}

// normal is x after the rewriting rules, from the memo when it was seen.
func (s *Set) normal(x string) normalised {
	s.mu.Lock()
	n, ok := s.memo[x]
	s.mu.Unlock()
	if ok {
		return n
	}
	n = normalised{s: x}
	for i := range s.rules {
		c := &s.rules[i]
		if c.re == nil {
			continue
		}
		if r := c.re.ReplaceAllString(n.s, c.repl); r != n.s {
			if !slices.Contains(n.labels, c.label) {
				n.labels = append(n.labels, c.label)
			}
			n.s = r
		}
	}
	s.mu.Lock()
	if s.memoBytes+len(x)+memoEntry <= memoMax {
		if s.memo == nil {
			s.memo = map[string]normalised{}
		}
		s.memo[x] = n
		s.memoBytes += len(x) + memoEntry
	}
	s.mu.Unlock()
	return n
}

// Ignored replaces an ignored array item.
const Ignored = "<ignored>"

func ignore(v any, p Path, at, label string, ap Applied) any {
	st := p[0]
	last := len(p) == 1
	switch x := v.(type) {
	case map[string]any:
		if st.index >= 0 {
			return v
		}
		keys := []string{st.key}
		if st.any {
			keys = slices.Sorted(maps.Keys(x))
		} else if _, ok := x[st.key]; !ok {
			keys = nil
		}
		for _, k := range keys {
			if last {
				delete(x, k)
				ap.add(Member(at, k), label)
			} else {
				x[k] = ignore(x[k], p[1:], Member(at, k), label, ap)
			}
		}
	case []any:
		for i := range x {
			if !st.any && st.index != i {
				continue
			}
			if last {
				x[i] = Ignored
				ap.add(Index(at, i), label)
			} else {
				x[i] = ignore(x[i], p[1:], Index(at, i), label, ap)
			}
		}
	}
	return v
}

var ident = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// Member is the path of an object member: $.a.b, or $.a["b c"].
func Member(path, key string) string {
	if ident().MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// Index is the path of an array item: $.a[3].
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Fixing are the presets that, applied to both values (strings, or the
// texts of numbers) as a rule list would, make them equal: the fewest
// that do, in preset order; nil when none do.
func Fixing(rec, now string) []string {
	if rec == now {
		return nil
	}
	for _, p := range presets {
		if p.re().ReplaceAllString(rec, p.Placeholder) == p.re().ReplaceAllString(now, p.Placeholder) {
			return []string{p.Name}
		}
	}
	var used []string
	for _, p := range presets {
		r, n := p.re().ReplaceAllString(rec, p.Placeholder), p.re().ReplaceAllString(now, p.Placeholder)
		if r != rec || n != now {
			used = append(used, p.Name)
		}
		rec, now = r, n
	}
	if rec == now {
		return used
	}
	return nil
}

// Lookup is the value at a path without * steps in a parsed JSON value.
func (p Path) Lookup(v any) (any, bool) {
	for _, st := range p {
		switch x := v.(type) {
		case map[string]any:
			if st.index >= 0 || st.any {
				return nil, false
			}
			e, ok := x[st.key]
			if !ok {
				return nil, false
			}
			v = e
		case []any:
			if st.index < 0 || st.index >= len(x) {
				return nil, false
			}
			v = x[st.index]
		default:
			return nil, false
		}
	}
	return v, true
}
