package yamlpos

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"
)

// A large suite is mostly its cases, and go-yaml reads them at about 5 MB
// a second a core. readFast reads the part of YAML suites are written in
// (block and flow mappings and sequences, plain and quoted scalars,
// literal and folded block scalars, comments) several times faster (4-6×
// in BenchmarkReadYAML), into the same tree go-yaml's Loader makes: Kind,
// Style, Tag, Value, Line, Column and Content. It leaves the comment
// fields empty (nothing in dryfire reads them). For anything else
// (anchors, aliases, tags, directives, document markers, merge keys,
// empty values in flow collections, tabs, a CR but in CRLF, a BOM, timestamps, multi-line
// plain or quoted scalars, unusual indentation, and every error) it
// returns nil, and go-yaml reads the text: what is reported about a file,
// and where, stays go-yaml's.

// fastMaxDepth is the nesting at which the reader gives up (go-yaml's own
// bound is far above yamlpos's MaxDepth, which the converter reports).
const fastMaxDepth = 1000

// readFastIn returns the root node of the one document in src, or nil
// when src is outside what it reads, its nodes taken from a (nil: new
// ones).
func readFastIn(src []byte, a *Arena) *yaml.Node {
	if bytes.IndexByte(src, '\r') >= 0 {
		// CRLF line ends read as LF ones: go-yaml takes the pair as one
		// line break, in block scalars too. A CR alone is left to it.
		if bytes.Count(src, []byte{'\r'}) != bytes.Count(src, []byte("\r\n")) {
			return nil
		}
		src = bytes.ReplaceAll(src, []byte("\r\n"), []byte{'\n'})
	}
	ok, ascii := fastChars(src)
	if !ok {
		return nil
	}
	r := &fastReader{src: src, line: 1, arena: a, ascii: ascii}
	if len(src) <= substrMax {
		r.text = string(src)
	}
	if a != nil {
		a.next, a.nextKids, a.depth = 0, 0, -1
		r.stack, r.buf = a.stack[:0], a.buf[:0]
		defer func() { a.stack, a.buf = r.stack[:0], r.buf[:0] }()
	}
	r.ind = r.skipLines()
	if r.ind < 0 {
		return nil // empty: go-yaml says so
	}
	n := r.block(0, atLine)
	if n == nil || r.ind >= 0 {
		return nil
	}
	if a != nil {
		a.depth = r.deepest
	}
	return n
}

// fastChars reports whether src holds only characters the reader knows:
// no tab, CR or other control character, no BOM or line separator, valid
// UTF-8, and no line that starts with a document marker or a directive;
// and whether they are all ASCII.
func fastChars(src []byte) (ok, ascii bool) {
	lineStart := true
	ascii = true
	for i := 0; i < len(src); {
		c := src[i]
		if lineStart {
			lineStart = false
			if c == '%' || (c == '-' || c == '.') && len(src) >= i+3 && src[i+1] == c && src[i+2] == c {
				return false, false
			}
		}
		if c < utf8.RuneSelf {
			switch {
			case c == '\n':
				lineStart = true
			case c < 0x20 || c == 0x7f:
				return false, false
			}
			i++
			continue
		}
		ascii = false
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size == 1 || r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r == 0xfffe || r == 0xffff {
			return false, false
		}
		i += size
	}
	return true, ascii
}

// Where a block node starts: first on its line, after "- ", after "key: ".
const (
	atLine = iota
	afterDash
	afterKey
)

type fastReader struct {
	src       []byte
	pos       int
	line      int // the line of pos, from 1
	lineStart int // where that line starts
	// ind is the indentation of the content line the reader is at once a
	// block node is read (-1: the end of the text).
	ind   int
	depth int
	// deepest is the most collections the reader was inside at once.
	deepest int
	// colAt and colN: the last column counted, at colAt.
	colAt, colN int
	// Where an empty value after the last indicator is.
	emptyLine, emptyCol int
	slab                []yaml.Node
	kids                []*yaml.Node // where Content lists are cut from
	stack               []*yaml.Node
	buf                 []byte
	// text is src as a string, when src is short enough (substrMax) for
	// its scalars to share it: their texts are cut from it.
	text   string
	intern map[string]string
	arena  *Arena
	ascii  bool // src is: a column is a byte
}

// substrMax is the longest text whose scalars share one copy of it
// (fastReader.text): a tree kept holds the whole text, which is about
// the size of the tree's strings. The texts read most are far shorter
// (a group of cut case items, one item read again before it runs).
const substrMax = 256 << 10

// An Arena holds the nodes of trees read one after another (ParseIn),
// each let go before the next is read: the nodes and Content lists of
// one are used again for the next.
type Arena struct {
	nodes    [][]yaml.Node
	kids     [][]*yaml.Node
	next     int // the next of nodes to hand out
	nextKids int
	stack    []*yaml.Node // fastReader's, for the next read
	buf      []byte
	depth    int // Depth
}

// Depth is how many collections deep the tree last read into a nests,
// the outermost counted, when the fast reader read it (it reads no
// anchors or aliases); -1 when go-yaml read it.
func (a *Arena) Depth() int { return a.depth }

// arenaNodes is how many nodes an arena makes at once, arenaKids how
// many children.
const arenaNodes, arenaKids = 64, 256

// nodeSlab is a slab for the next nodes.
func (r *fastReader) nodeSlab() []yaml.Node {
	if a := r.arena; a != nil {
		if a.next == len(a.nodes) {
			a.nodes = append(a.nodes, make([]yaml.Node, arenaNodes))
		}
		a.next++
		s := a.nodes[a.next-1]
		clear(s) // another tree's
		return s
	}
	// Nodes come 64 at a time, or fewer near the end of the text (suites
	// take some 7 bytes of text a node; more slabs if not).
	return make([]yaml.Node, min(64, (len(r.src)-r.pos)/7+1))
}

// kidSlab is a slab for Content lists, k children at least.
func (r *fastReader) kidSlab(k int) []*yaml.Node {
	if a := r.arena; a != nil {
		if a.nextKids == len(a.kids) {
			a.kids = append(a.kids, nil)
		}
		if len(a.kids[a.nextKids]) < k {
			a.kids[a.nextKids] = make([]*yaml.Node, max(k, arenaKids))
		}
		a.nextKids++
		return a.kids[a.nextKids-1]
	}
	// About a child a node, as many as nodes would be made for the text
	// left.
	return make([]*yaml.Node, max(k, min(64, (len(r.src)-r.pos)/7+1)))
}

func (r *fastReader) blankAt(p int) bool {
	return p >= len(r.src) || r.src[p] == ' ' || r.src[p] == '\n'
}

// col is the column of p on the current line, in characters from 1. It
// counts on from the last column asked on the line (they come in order).
func (r *fastReader) col(p int) int {
	if r.ascii {
		return p - r.lineStart + 1
	}
	if r.colN == 0 || r.colAt < r.lineStart || r.colAt > p {
		r.colAt, r.colN = r.lineStart, 1
	}
	c := r.colN
	for _, b := range r.src[r.colAt:p] {
		if b&0xc0 != 0x80 {
			c++
		}
	}
	r.colAt, r.colN = p, c
	return c
}

func (r *fastReader) node(kind yaml.Kind, style yaml.Style, tag string, line, col int) *yaml.Node {
	if len(r.slab) == 0 {
		r.slab = r.nodeSlab()
	}
	n := &r.slab[0]
	r.slab = r.slab[1:]
	n.Kind, n.Style, n.Tag, n.Line, n.Column = kind, style, tag, line, col
	return n
}

// content makes the children pushed since start a node's Content: a
// list of its own length and capacity, cut from a slab.
func (r *fastReader) content(start int) []*yaml.Node {
	k := len(r.stack) - start
	if k == 0 {
		return nil
	}
	if len(r.kids) < k {
		r.kids = r.kidSlab(k)
	}
	c := r.kids[:k:k]
	r.kids = r.kids[k:]
	copy(c, r.stack[start:])
	clear(r.stack[start:])
	r.stack = r.stack[:start]
	return c
}

// sub is the text of a scalar written as src[start:end].
func (r *fastReader) sub(start, end int) string {
	if r.text != "" {
		return r.text[start:end]
	}
	return r.str(r.src[start:end])
}

// str makes the text of a scalar, sharing short ones (keys above all)
// in a long text.
func (r *fastReader) str(b []byte) string {
	if len(b) > 24 || len(r.src) <= substrMax {
		return string(b)
	}
	if s, ok := r.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if r.intern == nil {
		r.intern = make(map[string]string, 64)
	}
	if len(r.intern) < 4096 {
		r.intern[s] = s
	}
	return s
}

// skipLines skips blank and comment lines from a line start and returns
// the indentation of the next content line, at whose first character it
// stops (-1: the end of the text).
func (r *fastReader) skipLines() int {
	src := r.src
	for {
		p := r.pos
		for p < len(src) && src[p] == ' ' {
			p++
		}
		if p < len(src) && src[p] == '#' {
			for p < len(src) && src[p] != '\n' {
				p++
			}
		}
		if p >= len(src) {
			r.pos = p
			return -1
		}
		if src[p] == '\n' {
			r.pos = p + 1
			r.line++
			r.lineStart = r.pos
			continue
		}
		r.pos = p
		return p - r.lineStart
	}
}

// endLine checks that only spaces and a comment follow a value on its
// line, then moves to the next content line (r.ind).
func (r *fastReader) endLine() bool {
	src := r.src
	p := r.pos
	for p < len(src) && src[p] == ' ' {
		p++
	}
	if p < len(src) && src[p] == '#' {
		if p > r.lineStart && src[p-1] != ' ' {
			return false // a comment needs a space before it
		}
		for p < len(src) && src[p] != '\n' {
			p++
		}
	}
	if p < len(src) {
		if src[p] != '\n' {
			return false
		}
		p++
		r.line++
		r.lineStart = p
	}
	r.pos = p
	r.ind = r.skipLines()
	return true
}

// block reads the block node at r.pos, in the block collection at column
// ctx (0: none), and leaves the reader at the next content line.
func (r *fastReader) block(ctx, mode int) *yaml.Node {
	src := r.src
	c := src[r.pos]
	line, col := r.line, r.col(r.pos)
	switch {
	case c == '-' && r.blankAt(r.pos+1):
		if mode == afterKey {
			return nil
		}
		return r.sequence(line, col)
	case c == '[' || c == '{':
		n := r.flow(ctx)
		if n == nil || !r.endLine() {
			return nil
		}
		return n
	case c == '|' || c == '>':
		if mode == atLine || ctx == 0 {
			return nil
		}
		return r.blockScalar(ctx, line, col)
	case c == '"' || c == '\'':
		n := r.quoted(line, col)
		if n == nil {
			return nil
		}
		p := r.pos
		for p < len(src) && src[p] == ' ' {
			p++
		}
		if p < len(src) && src[p] == ':' && r.blankAt(p+1) {
			if mode == afterKey {
				return nil
			}
			r.pos = p
			return r.mapping(n, line, col)
		}
		if !r.endLine() {
			return nil
		}
		return n
	}
	n, key := r.plain(line, col, false)
	if n == nil {
		return nil
	}
	if key {
		if mode == afterKey {
			return nil
		}
		return r.mapping(n, line, col)
	}
	if !r.endLine() {
		return nil
	}
	return n
}

// What follows a '-' or a key's ':' on its line.
const (
	badLine      = iota // something the reader does not take
	lineEnds            // nothing: the reader is at the next content line
	valueFollows        // a value, at r.pos
)

// indicator moves past the '-' or ':' at r.pos and the spaces after it.
// r.empty is then an empty value where go-yaml places one: just after
// the indicator.
func (r *fastReader) indicator() int {
	src := r.src
	r.emptyLine, r.emptyCol = r.line, r.col(r.pos)+1
	r.pos++
	for r.pos < len(src) && src[r.pos] == ' ' {
		r.pos++
	}
	if r.pos < len(src) && src[r.pos] != '\n' && src[r.pos] != '#' {
		return valueFollows
	}
	if !r.endLine() {
		return badLine
	}
	return lineEnds
}

// more reports whether the next content line goes on with the block
// collection at column col (ok false: it is indented past it).
func (r *fastReader) more(col int) (more, ok bool) {
	switch {
	case r.ind < 0 || r.ind+1 < col:
		return false, true
	case r.ind+1 > col:
		return false, false
	}
	return true, true
}

// empty is the null of a key or item with no value.
func (r *fastReader) empty() *yaml.Node {
	return r.node(yaml.ScalarNode, 0, "!!null", r.emptyLine, r.emptyCol)
}

func (r *fastReader) enter() bool {
	r.depth++
	r.deepest = max(r.deepest, r.depth)
	return r.depth <= fastMaxDepth
}

// sequence reads a block sequence whose first '-' is at r.pos.
func (r *fastReader) sequence(line, col int) *yaml.Node {
	if !r.enter() {
		return nil
	}
	defer func() { r.depth-- }()
	s := r.node(yaml.SequenceNode, 0, "!!seq", line, col)
	start := len(r.stack)
	src := r.src
	for {
		var v *yaml.Node
		switch r.indicator() {
		case lineEnds:
			if r.ind < 0 || r.ind+1 <= col {
				v = r.empty()
				break
			}
			v = r.block(col, atLine)
		case valueFollows:
			v = r.block(col, afterDash)
		}
		if v == nil {
			return nil
		}
		r.stack = append(r.stack, v)
		if more, ok := r.more(col); !ok {
			return nil
		} else if !more || src[r.pos] != '-' || !r.blankAt(r.pos+1) {
			break
		}
	}
	s.Content = r.content(start)
	return s
}

// mapping reads a block mapping whose first key, at line and col, is
// read; r.pos is at its ':'.
func (r *fastReader) mapping(key *yaml.Node, line, col int) *yaml.Node {
	if !r.enter() {
		return nil
	}
	defer func() { r.depth-- }()
	m := r.node(yaml.MappingNode, 0, "!!map", line, col)
	start := len(r.stack)
	src := r.src
	for {
		var v *yaml.Node
		switch r.indicator() {
		case lineEnds:
			switch c := r.ind + 1; {
			case r.ind < 0:
				v = r.empty()
			case c > col:
				v = r.block(col, atLine)
			case c == col && src[r.pos] == '-' && r.blankAt(r.pos+1):
				v = r.sequence(r.line, c) // a sequence not indented under its key
			default:
				v = r.empty()
			}
		case valueFollows:
			v = r.block(col, afterKey)
		}
		if v == nil {
			return nil
		}
		r.stack = append(r.stack, key, v)
		if more, ok := r.more(col); !ok {
			return nil
		} else if !more {
			break
		}
		if key = r.key(); key == nil {
			return nil
		}
	}
	m.Content = r.content(start)
	return m
}

// key reads the key of a block mapping at r.pos, leaving r.pos at its ':'.
func (r *fastReader) key() *yaml.Node {
	src := r.src
	line, col := r.line, r.col(r.pos)
	switch src[r.pos] {
	case '"', '\'':
		k := r.quoted(line, col)
		if k == nil {
			return nil
		}
		p := r.pos
		for p < len(src) && src[p] == ' ' {
			p++
		}
		if p >= len(src) || src[p] != ':' || !r.blankAt(p+1) {
			return nil
		}
		r.pos = p
		return k
	}
	k, isKey := r.plain(line, col, false)
	if k == nil || !isKey {
		return nil
	}
	return k
}

// plainStart reports whether a plain scalar may start at p.
func (r *fastReader) plainStart(p int, flow bool) bool {
	switch r.src[p] {
	case ' ', '\n', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		return false
	case '-':
		if r.blankAt(p + 1) {
			return false
		}
		if flow {
			switch r.src[p+1] {
			case ',', '[', ']', '{', '}':
				return false
			}
		}
	}
	return true
}

// flowEnd reports whether a plain scalar in a flow collection ends at p.
func (r *fastReader) flowEnd(p int) bool {
	switch r.src[p] {
	case ',', '[', ']', '{', '}':
		return true
	case ':':
		if p+1 >= len(r.src) {
			return true
		}
		switch r.src[p+1] {
		case ' ', '\n', ',', ']', '}':
			return true
		}
	}
	return false
}

// plain reads a plain scalar on one line. key says it ends with ": " (a
// block mapping's key; r.pos is then at the ':').
func (r *fastReader) plain(line, col int, flow bool) (n *yaml.Node, key bool) {
	src := r.src
	if !r.plainStart(r.pos, flow) {
		return nil, false
	}
	start, p := r.pos, r.pos
	end := p
	for p < len(src) {
		c := src[p]
		if c == '\n' {
			break
		}
		if c == ' ' {
			q := p + 1
			for q < len(src) && src[q] == ' ' {
				q++
			}
			if q >= len(src) || src[q] == '\n' || src[q] == '#' || flow && r.flowEnd(q) {
				break
			}
			if !flow && src[q] == ':' && r.blankAt(q+1) {
				p, key = q, true
				break
			}
			p = q
			continue
		}
		if flow {
			if r.flowEnd(p) {
				break
			}
		} else if c == ':' && r.blankAt(p+1) {
			key = true
			break
		}
		p++
		end = p
	}
	text := src[start:end]
	tag := resolvePlain(text)
	if tag == "" {
		return nil, false
	}
	r.pos = p
	if !key {
		r.pos = end
	}
	n = r.node(yaml.ScalarNode, 0, tag, line, col)
	n.Value = r.sub(start, end)
	return n, key
}

// quoted reads a single- or double-quoted scalar on one line.
func (r *fastReader) quoted(line, col int) *yaml.Node {
	src := r.src
	q := src[r.pos]
	p := r.pos + 1
	start := p
	r.buf = r.buf[:0]
	escaped := false
	for {
		if p >= len(src) || src[p] == '\n' {
			return nil
		}
		c := src[p]
		if c == q {
			if q == '\'' && p+1 < len(src) && src[p+1] == '\'' {
				if !escaped {
					r.buf, escaped = append(r.buf, src[start:p]...), true
				}
				r.buf = append(r.buf, '\'')
				p += 2
				continue
			}
			break
		}
		if c == '\\' && q == '"' {
			if !escaped {
				r.buf, escaped = append(r.buf, src[start:p]...), true
			}
			n := r.escape(p + 1)
			if n < 0 {
				return nil
			}
			p = n
			continue
		}
		if escaped {
			r.buf = append(r.buf, c)
		}
		p++
	}
	style := yaml.DoubleQuotedStyle
	if q == '\'' {
		style = yaml.SingleQuotedStyle
	}
	n := r.node(yaml.ScalarNode, style, "!!str", line, col)
	if escaped {
		n.Value = r.str(r.buf)
	} else {
		n.Value = r.sub(start, p)
	}
	r.pos = p + 1
	return n
}

// escape appends the escape sequence whose letter is at p to r.buf and
// returns where it ends (-1: one the reader does not take).
func (r *fastReader) escape(p int) int {
	src := r.src
	if p >= len(src) {
		return -1
	}
	size := 0
	switch src[p] {
	case '0':
		r.buf = append(r.buf, 0)
	case 'a':
		r.buf = append(r.buf, 7)
	case 'b':
		r.buf = append(r.buf, 8)
	case 't':
		r.buf = append(r.buf, 9)
	case 'n':
		r.buf = append(r.buf, 10)
	case 'v':
		r.buf = append(r.buf, 11)
	case 'f':
		r.buf = append(r.buf, 12)
	case 'r':
		r.buf = append(r.buf, 13)
	case 'e':
		r.buf = append(r.buf, 27)
	case ' ', '"', '/', '\\':
		r.buf = append(r.buf, src[p])
	case 'N':
		r.buf = utf8.AppendRune(r.buf, 0x85)
	case '_':
		r.buf = utf8.AppendRune(r.buf, 0xa0)
	case 'L':
		r.buf = utf8.AppendRune(r.buf, 0x2028)
	case 'P':
		r.buf = utf8.AppendRune(r.buf, 0x2029)
	case 'x':
		size = 2
	case 'u':
		size = 4
	case 'U':
		size = 8
	default:
		return -1
	}
	p++
	if size == 0 {
		return p
	}
	if p+size > len(src) {
		return -1
	}
	v := 0
	for _, c := range src[p : p+size] {
		switch {
		case '0' <= c && c <= '9':
			v = v<<4 | int(c-'0')
		case 'a' <= c && c <= 'f':
			v = v<<4 | int(c-'a'+10)
		case 'A' <= c && c <= 'F':
			v = v<<4 | int(c-'A'+10)
		default:
			return -1
		}
	}
	if 0xd800 <= v && v <= 0xdfff || v > 0x10ffff {
		return -1
	}
	r.buf = utf8.AppendRune(r.buf, rune(v))
	return p + size
}

// space skips spaces, line breaks and comments inside a flow collection
// in the block collection at column ctx; every line it reaches must be
// indented past ctx.
func (r *fastReader) space(ctx int) bool {
	src := r.src
	for r.pos < len(src) {
		switch src[r.pos] {
		case ' ':
			r.pos++
		case '\n':
			r.pos++
			r.line++
			r.lineStart = r.pos
			p := r.pos
			for p < len(src) && src[p] == ' ' {
				p++
			}
			if p < len(src) && src[p] != '\n' && p-r.lineStart+1 <= ctx {
				return false
			}
		case '#':
			if r.pos > r.lineStart && src[r.pos-1] != ' ' {
				return false
			}
			for r.pos < len(src) && src[r.pos] != '\n' {
				r.pos++
			}
		default:
			return true
		}
	}
	return false // the text ends inside the collection
}

// flow reads a flow collection at r.pos.
func (r *fastReader) flow(ctx int) *yaml.Node {
	if !r.enter() {
		return nil
	}
	defer func() { r.depth-- }()
	src := r.src
	open := src[r.pos]
	kind, tag, close := yaml.SequenceNode, "!!seq", byte(']')
	if open == '{' {
		kind, tag, close = yaml.MappingNode, "!!map", '}'
	}
	n := r.node(kind, yaml.FlowStyle, tag, r.line, r.col(r.pos))
	start := len(r.stack)
	r.pos++
	if !r.space(ctx) {
		return nil
	}
	if src[r.pos] == close {
		r.pos++
		return n
	}
	for {
		if open == '{' {
			k := r.flowKey(ctx)
			if k == nil {
				return nil
			}
			r.stack = append(r.stack, k)
		}
		v := r.flowNode(ctx)
		if v == nil || !r.space(ctx) {
			return nil
		}
		r.stack = append(r.stack, v)
		if src[r.pos] == close {
			r.pos++
			break
		}
		if src[r.pos] != ',' {
			return nil
		}
		r.pos++
		if !r.space(ctx) || src[r.pos] == close || src[r.pos] == ',' {
			return nil // a trailing comma or an empty entry
		}
	}
	n.Content = r.content(start)
	return n
}

// flowKey reads the key of a flow mapping entry and its ": ", on one
// line, and the space after it.
func (r *fastReader) flowKey(ctx int) *yaml.Node {
	src := r.src
	line, col := r.line, r.col(r.pos)
	var k *yaml.Node
	switch src[r.pos] {
	case '"', '\'':
		k = r.quoted(line, col)
	default:
		k, _ = r.plain(line, col, true)
	}
	if k == nil {
		return nil
	}
	for r.pos < len(src) && src[r.pos] == ' ' {
		r.pos++
	}
	if r.pos >= len(src) || src[r.pos] != ':' || !r.blankAt(r.pos+1) {
		return nil
	}
	r.pos++
	if !r.space(ctx) {
		return nil
	}
	if c := src[r.pos]; c == ',' || c == '}' {
		return nil // an empty value
	}
	return k
}

// flowNode reads a scalar or collection inside a flow collection.
func (r *fastReader) flowNode(ctx int) *yaml.Node {
	src := r.src
	line, col := r.line, r.col(r.pos)
	switch src[r.pos] {
	case '[', '{':
		return r.flow(ctx)
	case '"', '\'':
		return r.quoted(line, col)
	}
	n, _ := r.plain(line, col, true)
	if n == nil {
		return nil
	}
	// A plain scalar goes on after a line break unless the next line
	// starts with an indicator that ends it.
	p := r.pos
	for p < len(src) && src[p] == ' ' {
		p++
	}
	if p < len(src) && src[p] == '\n' {
		for p < len(src) && (src[p] == ' ' || src[p] == '\n') {
			p++
		}
		if p < len(src) {
			switch src[p] {
			case '#', ',', ']', '}':
			default:
				return nil
			}
		}
	}
	return n
}

// blockScalar reads a literal or folded scalar whose indicator is at
// r.pos, in the block collection at column ctx: without an indentation
// indicator or keep chomping, its first line not blank, no line of only
// spaces, and (folded) no line more indented than the first.
func (r *fastReader) blockScalar(ctx, line, col int) *yaml.Node {
	src := r.src
	literal := src[r.pos] == '|'
	p := r.pos + 1
	strip := false
	if p < len(src) && src[p] == '-' {
		strip = true
		p++
	}
	h := p
	for p < len(src) && src[p] == ' ' {
		p++
	}
	if p < len(src) && src[p] == '#' {
		if p == h {
			return nil
		}
		for p < len(src) && src[p] != '\n' {
			p++
		}
	}
	if p >= len(src) || src[p] != '\n' {
		return nil
	}
	p++
	lineNo := line + 1
	// The first line sets the indentation.
	indent := 0
	for p+indent < len(src) && src[p+indent] == ' ' {
		indent++
	}
	if p+indent >= len(src) || src[p+indent] == '\n' || indent+1 <= ctx {
		return nil
	}
	r.buf = r.buf[:0]
	blank := 0 // blank lines since the last content line
	first := true
	for {
		sp := 0
		for p+sp < len(src) && src[p+sp] == ' ' {
			sp++
		}
		if p+sp >= len(src) {
			if sp > 0 {
				return nil
			}
			break // the end of the text
		}
		if src[p+sp] == '\n' {
			if sp > 0 {
				return nil // a line of only spaces
			}
			blank++
			p++
			lineNo++
			continue
		}
		if sp < indent {
			break // the next node
		}
		if !literal && sp > indent {
			return nil
		}
		e := p + sp
		for e < len(src) && src[e] != '\n' {
			e++
		}
		if e >= len(src) {
			return nil // the last line has no line break
		}
		switch {
		case first:
		case literal:
			r.buf = append(r.buf, '\n')
			for range blank {
				r.buf = append(r.buf, '\n')
			}
		case blank == 0:
			r.buf = append(r.buf, ' ')
		default:
			for range blank {
				r.buf = append(r.buf, '\n')
			}
		}
		first, blank = false, 0
		r.buf = append(r.buf, src[p+indent:e]...)
		p = e + 1
		lineNo++
	}
	if !strip {
		r.buf = append(r.buf, '\n')
	}
	style := yaml.LiteralStyle
	if !literal {
		style = yaml.FoldedStyle
	}
	n := r.node(yaml.ScalarNode, style, "!!str", line, col)
	n.Value = string(r.buf)
	r.pos, r.line, r.lineStart = p, lineNo, p
	r.ind = r.skipLines()
	return n
}

// resolvePlain is the tag go-yaml resolves a plain scalar to ("" for the
// ones the reader leaves to go-yaml: the merge key, timestamps, empty).
func resolvePlain(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	switch string(b) {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		return "!!bool"
	case "~", "null", "Null", "NULL":
		return "!!null"
	case ".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", "-0", "-0.0":
		return "!!float"
	case "<<":
		return ""
	}
	switch c := b[0]; {
	case c == '.':
		if _, err := strconv.ParseFloat(string(b), 64); err == nil {
			return "!!float"
		}
	case c == '+' || c == '-' || '0' <= c && c <= '9':
		if len(b) > 4 && digits(b[:4]) && b[4] == '-' {
			return "" // perhaps a timestamp
		}
		s := string(b)
		if strings.IndexByte(s, '_') >= 0 {
			s = strings.ReplaceAll(s, "_", "")
		}
		if _, err := strconv.ParseInt(s, 0, 64); err == nil {
			return "!!int"
		}
		if _, err := strconv.ParseUint(strings.TrimPrefix(s, "+"), 0, 64); err == nil {
			return "!!int"
		}
		if yamlFloat(s) {
			if _, err := strconv.ParseFloat(s, 64); err == nil {
				return "!!float"
			}
		}
	}
	return "!!str"
}

func digits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// yamlFloat reports whether s is [-+]?(.D+|D+(.D*)?)([eE][-+]?D+)?.
func yamlFloat(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	run := func() int {
		j := i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i - j
	}
	if i < len(s) && s[i] == '.' {
		i++
		if run() == 0 {
			return false
		}
	} else {
		if run() == 0 {
			return false
		}
		if i < len(s) && s[i] == '.' {
			i++
			run()
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if run() == 0 {
			return false
		}
	}
	return i == len(s)
}
