package spec

import (
	"errors"
	"sort"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// A large suite's cases are most of its memory once decoded (a check,
// a script turn, the converted values of their arguments). With
// Options.Lazy, a case is checked while the suite loads as any other,
// then kept as a stub: its name, position, skip and trials, which is
// what the runner needs before the case runs. The runner decodes it
// again from the file's text when it runs (Suite.Decode) and lets it go
// after. Only the items of a cases list cut apart in the text (cutCases)
// are kept so, and only those whose run needs nothing else read before
// it starts: no judge check, no simulated user, no passthrough code.

// source is where a suite's stubs are decoded again from.
type source struct {
	data  []byte
	spans []span // by line
	root  *yaml.Node
	cross cross
	opts  *Options
	srcs  []string
}

// Lazy reports whether c is a stub to be decoded (Suite.Decode) before it
// runs.
func (c *Case) Lazy() bool { return c.lazy }

// stubOf is the stub kept for the case c decoded from item n, or nil when
// c is to be kept whole.
func (x *decoder) stubOf(s *Suite, c *Case) *Case {
	if !x.opts.Lazy || s.World != "" || c.Pos.File != x.file || c.User != nil || usesImplRules(s.Mocks) || usesImplRules(c.Mocks) {
		return nil
	}
	for _, ch := range c.Expect {
		if ch.Kind == CheckJudge {
			return nil
		}
	}
	return &Case{Name: c.Name, Skip: c.Skip, SkipReason: c.SkipReason, Trials: c.Trials, Pos: c.Pos, index: c.index, lazy: true}
}

func usesImplRules(m map[string][]*Rule) bool {
	for _, rs := range m {
		for _, r := range rs {
			if usesImpl(r.Outcome) {
				return true
			}
		}
	}
	return false
}

// errNotLazy is what Decode says of a stub it cannot find again.
var errNotLazy = errors.New("internal error: the case cannot be decoded again from its suite")

// Decode is case c of s ready to run: c itself, or, for a stub, the case
// decoded again from the suite's text. It is safe to call from several
// goroutines. The case was checked while the suite loaded; an error here
// means the file changed in memory, which it does not.
func (s *Suite) Decode(c *Case) (*Case, error) {
	if !c.lazy {
		return c, nil
	}
	src := s.src
	if src == nil {
		return nil, errNotLazy
	}
	k := sort.Search(len(src.spans), func(i int) bool { return src.spans[i].line >= c.Pos.Line })
	if k == len(src.spans) || src.spans[k].line != c.Pos.Line {
		return nil, errNotLazy
	}
	sp := src.spans[k]
	d := newDiags(s.File)
	d.Sources = src.srcs
	seq := yamlpos.Parse(src.data[sp.start:sp.end], d)
	if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
		return nil, errNotLazy
	}
	shiftLines(seq, sp.line-1)
	n := seq.Content[0]
	conv := yamlpos.NewConverter(d)
	x := &decoder{root: src.root, file: s.File, d: d, conv: conv, opts: src.opts, cross: src.cross, firstCase: map[string]int{}}
	conv.BeginCase(n)
	val := conv.Convert(n, 2)
	full := x.caseOf(yamlpos.Item{N: n, Val: val}, c.index)
	if full == nil || conv.Over || conv.Large {
		return nil, errNotLazy
	}
	x.crossCase(s, full)
	releaseCase(full)
	if ds := yamlpos.Diagnostics(d.List); ds.HasErrors() {
		return nil, ds
	}
	return full, nil
}
