package spec

import (
	"bytes"
	"errors"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// A large suite's cases are most of its memory once decoded (a check,
// a script turn, the converted values of their arguments). With
// Options.Lazy, a case is checked while the suite loads as any other,
// then kept as a stub: its name, position, skip and trials, which is
// what the runner needs before the case runs. The runner decodes it
// again from the file's text when it runs (Suite.Decode) and lets it go
// after. Only the items of a cases list cut apart in the text (cutCases)
// and the rows of a JSON Lines file are kept so, and only those whose run
// needs nothing else read before it starts: no judge check, no simulated
// user, no passthrough code.

// source is where a suite's stubs are decoded again from, and the
// suite's cases once one of them is a stub (Suite.Cases is nil then).
type source struct {
	data  []byte
	spans []span // by line
	root  *yaml.Node
	cross cross
	opts  *Options
	srcs  []string

	stubs  []stub  // every case of the suite, in order
	wholes []*Case // the cases kept whole, by stub.line
	groups []group // the files and data rows stubs come from
}

// stub is a case as a large suite keeps it: 32 bytes and its name.
type stub struct {
	name   string
	line   int32 // its line; for a case kept whole, its place in wholes
	col    int32
	index  int32 // Case.index
	trials uint16
	group  uint8 // in source.groups: its file, and its data rows
	flags  uint8 // stubSkip, stubWhole
}

const (
	stubSkip  = 1 << iota // Case.Skip
	stubWhole             // a case kept whole (wholes)
)

// group is the file of stubs, and the data file they are rows of (nil:
// items of the suite's own cases list).
type group struct {
	file string
	rows *rowSource
}

// Lazy reports whether c is a stub to be decoded (Suite.Decode) before it
// runs.
func (c *Case) Lazy() bool { return c.lazy }

// mayStub reports whether case c can be kept as a stub by what c and
// the suite are: for an item of the suite's own list, whether it is.
func (x *decoder) mayStub(s *Suite, c *Case) bool {
	if !x.opts.Lazy || s.World != "" || c.Pos.File == x.file && !x.opts.lazyInline || c.Pos.File != x.file && x.rows == nil || c.User != nil || usesImplRules(s.Mocks) || usesImplRules(c.Mocks) {
		return false
	}
	for _, ch := range c.Expect {
		if ch.Kind == CheckJudge {
			return false
		}
	}
	return c.Pos.Line >= 1 && c.Pos.Line <= math.MaxInt32 && c.Pos.Col <= math.MaxInt32 && c.index <= math.MaxInt32 && c.Trials >= 0 && c.Trials <= math.MaxUint16
}

// stubOf is the stub kept for case c, or false when c is to be kept
// whole.
func (x *decoder) stubOf(s *Suite, c *Case) (stub, bool) {
	if !x.mayStub(s, c) {
		return stub{}, false
	}
	g := group{file: c.Pos.File}
	if c.Pos.File != x.file {
		g.rows = x.rows
	}
	if s.src == nil {
		s.src = &source{root: x.root, cross: x.cross, opts: x.opts}
		if x.opts.lazyInline {
			// The list's own items always find their group: a worker
			// that checked one knew it would be a stub (mayStub).
			s.src.groups = append(s.src.groups, group{file: x.file})
		}
	}
	src := s.src
	k := slices.Index(src.groups, g)
	if k < 0 {
		if len(src.groups) > math.MaxUint8 {
			return stub{}, false
		}
		k = len(src.groups)
		src.groups = append(src.groups, g)
	}
	// The name alone is kept: not the text of the item it is cut from.
	st := stub{name: strings.Clone(c.Name), line: int32(c.Pos.Line), col: int32(c.Pos.Col), index: int32(c.index), trials: uint16(c.Trials), group: uint8(k)}
	if c.Skip {
		st.flags |= stubSkip
	}
	return st, true
}

// keep adds case c to s: as a stub when it can be one, else whole.
func (x *decoder) keep(s *Suite, c *Case) {
	if x.opts.Lazy {
		if st, ok := x.stubOf(s, c); ok {
			s.src.srcs = x.d.Sources
			if s.src.stubs == nil {
				// The cases before the first stub become entries too.
				for _, w := range s.Cases {
					s.src.keepWhole(w)
				}
				s.Cases = nil
			}
			s.src.stubs = append(s.src.stubs, st)
			return
		}
	}
	releaseCase(c)
	if s.src != nil && s.src.stubs != nil {
		s.src.keepWhole(c)
		return
	}
	s.Cases = append(s.Cases, c)
}

func (src *source) keepWhole(c *Case) {
	src.stubs = append(src.stubs, stub{name: c.Name, line: int32(len(src.wholes)), flags: stubWhole})
	src.wholes = append(src.wholes, c)
}

// Len is how many cases s has.
func (s *Suite) Len() int {
	if s.src != nil && s.src.stubs != nil {
		return len(s.src.stubs)
	}
	return len(s.Cases)
}

// CaseName is the name of case i of s.
func (s *Suite) CaseName(i int) string {
	if s.src != nil && s.src.stubs != nil {
		return s.src.stubs[i].name
	}
	return s.Cases[i].Name
}

// Stubbed reports whether case i of s is kept as a stub: it has no judge
// check, no simulated user and no passthrough code.
func (s *Suite) Stubbed(i int) bool {
	return s.src != nil && s.src.stubs != nil && s.src.stubs[i].flags&stubWhole == 0
}

// CaseAt is case i of s: the case itself, or a new stub of it (Lazy: its
// name, position, skip and trials) that Decode makes whole.
func (s *Suite) CaseAt(i int) *Case {
	if s.src == nil || s.src.stubs == nil {
		return s.Cases[i]
	}
	st := &s.src.stubs[i]
	if st.flags&stubWhole != 0 {
		return s.src.wholes[st.line]
	}
	g := s.src.groups[st.group]
	return &Case{Name: st.name, Skip: st.flags&stubSkip != 0, Trials: int(st.trials), Pos: yamlpos.Pos{File: g.file, Line: int(st.line), Col: int(st.col)}, index: int(st.index), lazy: true, rows: g.rows}
}

// CaseNamed is the case of s named name (CaseAt), or nil.
func (s *Suite) CaseNamed(name string) *Case {
	for i := range s.Len() {
		if s.CaseName(i) == name {
			return s.CaseAt(i)
		}
	}
	return nil
}

// SkipOf says whether case i of s is skipped (skip:), and its trials:.
func (s *Suite) SkipOf(i int) (skip bool, trials int) {
	if s.src == nil || s.src.stubs == nil || s.src.stubs[i].flags&stubWhole != 0 {
		c := s.CaseAt(i)
		return c.Skip, c.Trials
	}
	st := &s.src.stubs[i]
	return st.flags&stubSkip != 0, int(st.trials)
}

// rowSource is a JSON Lines file whose rows are kept as stubs: the
// template they fill, and the file read again, with where each line
// starts, when the first of them is decoded.
type rowSource struct {
	t       *template // of the from: item
	file    string    // as from: names it
	path    string
	columns []string
	source  int // in the suite's Collector.Sources

	once  sync.Once
	data  []byte
	lines []uint32 // where each line starts (the file is at most safeio.MaxData)
	err   error
}

// rowSource is where the rows of the data file of template t are read again
// from, or nil when they are decoded whole (not JSON Lines, or not Lazy).
func (x *decoder) rowSource(t *template, file string, columns []string, source, rows int) *rowSource {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".jsonl", ".ndjson":
	default:
		return nil
	}
	if !x.opts.Lazy || rows < lazyMin {
		return nil
	}
	return &rowSource{t: t, file: file, path: x.d.Sources[source], columns: columns, source: source}
}

// row is the row at line of the file, read again.
func (rs *rowSource) row(line int) (row, error) {
	rs.once.Do(func() {
		rs.data, rs.err = safeio.ReadFile(rs.path, "data file", safeio.Limit(safeio.MaxData))
		if len(rs.data) > math.MaxUint32 {
			rs.data, rs.err = nil, errDataChanged
		}
		rs.lines = make([]uint32, 1, bytes.Count(rs.data, []byte{'\n'})+1)
		for i, b := range rs.data {
			if b == '\n' {
				rs.lines = append(rs.lines, uint32(i+1))
			}
		}
	})
	if rs.err != nil {
		return row{}, rs.err
	}
	if line < 1 || line > len(rs.lines) {
		return row{}, errDataChanged
	}
	text := rs.data[rs.lines[line-1]:]
	if i := bytes.IndexByte(text, '\n'); i >= 0 {
		text = text[:i]
	}
	// The line was checked while the suite loaded: one JSON object.
	values, problem := jsonRow(text)
	if values == nil || problem != "" {
		return row{}, errDataChanged
	}
	return row{line: line, values: values}, nil
}

// errDataChanged is a stub's row that is not what it was when the suite
// was loaded.
var errDataChanged = errors.New("its data file changed after the suite was loaded")

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

// lazyMin is how many cases a list, or rows a file, has at least for
// them to be kept as stubs: fewer are decoded again slower than they are
// kept whole.
var lazyMin = 2048

// slabs are the nodes of rows Decode reads again (rowSlab), arenas those
// of the items it reads again, and of the groups of items checked apart.
var (
	slabs  = sync.Pool{New: func() any { return &rowSlab{} }}
	arenas = sync.Pool{New: func() any { return new(yamlpos.Arena) }}
	kvBufs = sync.Pool{New: func() any { return new([]yamlpos.KV) }}
)

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
	d := newDiags(s.File)
	d.Sources = src.srcs
	var n *yaml.Node
	if rs := c.rows; rs != nil {
		r, err := rs.row(c.Pos.Line)
		if err != nil {
			return nil, err
		}
		// The row's nodes are used again for the next row decoded: once
		// this one is decoded nothing holds them (a stub is never a
		// drill's, which keeps some).
		slab := slabs.Get().(*rowSlab)
		defer slabs.Put(slab)
		if n = instantiateIn(slab, rs.t, r, rs.columns, rs.source, rs.file, d); n == nil {
			return nil, errDataChanged
		}
	} else {
		k := sort.Search(len(src.spans), func(i int) bool { return src.spans[i].line >= c.Pos.Line })
		if k == len(src.spans) || src.spans[k].line != c.Pos.Line {
			return nil, errNotLazy
		}
		sp := src.spans[k]
		// The item's nodes are used again for the next item decoded: once
		// this one is decoded nothing holds them (a stub is never a
		// drill's, whose overrides and setup keep theirs).
		a := arenas.Get().(*yamlpos.Arena)
		defer arenas.Put(a)
		seq := yamlpos.ParseIn(a, src.data[sp.start:sp.end], d)
		if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
			return nil, errNotLazy
		}
		shiftLines(seq, sp.line-1)
		n = seq.Content[0]
	}
	conv := yamlpos.NewConverter(d)
	kvs := kvBufs.Get().(*[]yamlpos.KV)
	defer kvBufs.Put(kvs)
	// The case's values are converted as it is decoded, not whole first:
	// the maps and lists it is made of are not kept, only its values.
	x := &decoder{root: src.root, file: s.File, d: d, conv: conv, opts: src.opts, cross: src.cross, kvs: (*kvs)[:0], convertLate: true}
	defer func() { *kvs = x.kvs[:0] }()
	conv.BeginCase(n)
	full := x.caseOf(yamlpos.Item{N: n}, c.index)
	if full == nil || conv.Over || conv.Large {
		return nil, errNotLazy
	}
	if full.Name != c.Name {
		return nil, errDataChanged
	}
	// What crossCase would say of it was said while the suite loaded, and
	// it changes nothing of a stub's case (no judge, no simulated user).
	releaseCase(full)
	if ds := yamlpos.Diagnostics(d.List); ds.HasErrors() {
		return nil, ds
	}
	return full, nil
}
