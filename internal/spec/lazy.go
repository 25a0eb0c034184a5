package spec

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
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
	if !x.opts.Lazy || s.World != "" || c.Pos.File == x.file && !x.opts.lazyInline || c.Pos.File != x.file && x.rows == nil || c.User != nil || usesImplRules(s.Mocks) || usesImplRules(c.Mocks) {
		return nil
	}
	for _, ch := range c.Expect {
		if ch.Kind == CheckJudge {
			return nil
		}
	}
	stub := &Case{Name: c.Name, Skip: c.Skip, SkipReason: c.SkipReason, Trials: c.Trials, Pos: c.Pos, index: c.index, lazy: true}
	if c.Pos.File != x.file {
		stub.rows = x.rows
	}
	return stub
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
	lines []int // where each line starts
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
		rs.lines = append(rs.lines, 0)
		for i, b := range rs.data {
			if b == '\n' {
				rs.lines = append(rs.lines, i+1)
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
	// The line was checked while the suite loaded: one JSON object. (Not
	// jsonLines: its scanner's buffer alone is 64 KiB a row.)
	var values map[string]any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&values); err != nil || values == nil || dec.More() {
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
		if n = instantiate(rs.t, r, rs.columns, rs.source, rs.file, d); n == nil {
			return nil, errDataChanged
		}
	} else {
		k := sort.Search(len(src.spans), func(i int) bool { return src.spans[i].line >= c.Pos.Line })
		if k == len(src.spans) || src.spans[k].line != c.Pos.Line {
			return nil, errNotLazy
		}
		sp := src.spans[k]
		seq := yamlpos.Parse(src.data[sp.start:sp.end], d)
		if seq == nil || seq.Kind != yaml.SequenceNode || len(seq.Content) != 1 {
			return nil, errNotLazy
		}
		shiftLines(seq, sp.line-1)
		n = seq.Content[0]
	}
	conv := yamlpos.NewConverter(d)
	x := &decoder{root: src.root, file: s.File, d: d, conv: conv, opts: src.opts, cross: src.cross, firstCase: map[string]int{}}
	conv.BeginCase(n)
	val := conv.Convert(n, 2)
	full := x.caseOf(yamlpos.Item{N: n, Val: val}, c.index)
	if full == nil || conv.Over || conv.Large {
		return nil, errNotLazy
	}
	if full.Name != c.Name {
		return nil, errDataChanged
	}
	x.crossCase(s, full)
	releaseCase(full)
	if ds := yamlpos.Diagnostics(d.List); ds.HasErrors() {
		return nil, ds
	}
	return full, nil
}
