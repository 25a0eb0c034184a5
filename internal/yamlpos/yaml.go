package yamlpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlnode"
)

// Limits that keep hostile input (alias bombs, deep nesting) from taking
// the loader down: MaxDepth levels of nesting, MaxNodes values in a
// document or in one case of a suite.
const MaxDepth = 200

// MaxNodes is a variable so that a test can lower it.
var MaxNodes = 1_000_000

// Parse reads the one document of a file. On a syntax error it reports
// the position and returns nil. The text is read by the fast reader when
// it is in its subset (readFast), else by go-yaml: the tree is the same,
// but for comments, which the fast reader leaves out.
func Parse(data []byte, d *Collector) *yaml.Node { return ParseIn(nil, data, d) }

// ParseIn is Parse with the nodes the fast reader makes taken from a (nil:
// new ones): the tree read before into a is given up, and nothing may
// hold its nodes any more. The texts of scalars are not a's: they stay.
func ParseIn(a *Arena, data []byte, d *Collector) *yaml.Node {
	if n := readFastIn(data, a); n != nil {
		return n
	}
	ld, err := yaml.NewLoader(bytes.NewReader(data))
	if err != nil {
		d.Add(Error, 1, 1, "yaml: %v", err)
		return nil
	}
	var doc yaml.Node
	if err := ld.Load(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.Add(Error, 1, 1, "%s", d.emptyMessage())
			return nil
		}
		reportYAMLError(err, data, d)
		return nil
	}
	var second yaml.Node
	switch err := ld.Load(&second); {
	case err == nil:
		d.Add(Error, second.Line, second.Column, "a %s file holds one YAML document; found a second one here", d.kindName())
	case !errors.Is(err, io.EOF):
		reportYAMLError(err, data, d)
		return nil
	}
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		return doc.Content[0]
	}
	d.Add(Error, 1, 1, "%s", d.emptyMessage())
	return nil
}

func reportYAMLError(err error, data []byte, d *Collector) {
	var le *yaml.LoadError
	var les *yaml.LoadErrors
	switch {
	case errors.As(err, &les):
		for _, e := range les.Errors {
			reportLoadError(e, data, d)
		}
	case errors.As(err, &le):
		reportLoadError(le, data, d)
	default:
		d.Add(Error, 1, 1, "yaml: %v", err)
	}
}

// unclosed names the constructs a file can end inside of, by the parser's
// context message, with what closes them.
var unclosed = map[string][2]string{
	"while scanning a quoted scalar": {"quoted string", "closing quote"},
	"while parsing a flow sequence":  {"flow sequence", "']'"},
	"while parsing a flow mapping":   {"flow mapping", "'}'"},
}

func reportLoadError(le *yaml.LoadError, data []byte, d *Collector) {
	msg := strings.TrimPrefix(le.Message, "yaml: ")
	line, col := le.Mark.Line, le.Mark.Column
	ctx := le.ContextMark
	hint := ""
	switch {
	case charAt(data, line, col) == '\t' &&
		(strings.Contains(msg, "cannot start any token") || strings.Contains(msg, "tab character")):
		d.Add(Error, line, col, "yaml: found a tab in the indentation; YAML indents with spaces only")
		return
	case strings.Contains(msg, "mapping values are not allowed"):
		hint = `; a plain value cannot contain ": " (quote it), or this line is indented wrongly`
	case strings.Contains(msg, "did not find expected '-' indicator"), strings.Contains(msg, "did not find expected key"):
		hint = "; check the indentation of this line"
	case strings.HasPrefix(msg, "did not find expected ',' or '"):
		hint = "; a ',' between entries or the closing bracket is missing"
	case strings.HasPrefix(msg, "unknown anchor"):
		hint = "; an alias (*name) must come after its anchor (&name)"
	case strings.Contains(msg, "unknown escape character"):
		hint = `; in double quotes a backslash starts an escape: write \\ or use single quotes`
	}
	if u, ok := unclosed[le.ContextMsg]; ok && ctx.Line > 0 && atEnd(data, line, col) {
		// The end of the file is no place to point at: point at the opener.
		d.Add(Error, ctx.Line, ctx.Column, "yaml: this %s is never closed: the file ends before its %s", u[0], u[1])
		return
	}
	if le.ContextMsg != "" {
		msg += " (" + le.ContextMsg
		if ctx.Line > 0 && ctx != le.Mark {
			msg += " started at " + strconv.Itoa(ctx.Line) + ":" + strconv.Itoa(ctx.Column)
		}
		msg += ")"
	}
	d.Add(Error, line, col, "yaml: %s%s", msg, hint)
}

// offset returns the byte offset of a 1-based line and column (in
// characters) in data, or -1 when the position lies beyond the data.
func offset(data []byte, line, col int) int {
	if line < 1 || col < 1 {
		return -1
	}
	i := 0
	for l := 1; l < line; l++ {
		nl := bytes.IndexByte(data[i:], '\n')
		if nl < 0 {
			return -1
		}
		i += nl + 1
	}
	for c := 1; c < col; c++ {
		if i >= len(data) || data[i] == '\n' {
			return -1
		}
		_, size := utf8.DecodeRune(data[i:])
		i += size
	}
	return i
}

// charAt returns the byte at a position, or 0 when there is none.
func charAt(data []byte, line, col int) byte {
	if i := offset(data, line, col); i >= 0 && i < len(data) {
		return data[i]
	}
	return 0
}

// atEnd reports whether only white space follows a position.
func atEnd(data []byte, line, col int) bool {
	i := offset(data, line, col)
	return i < 0 || len(bytes.TrimSpace(data[i:])) == 0
}

// A Converter turns a YAML node tree into plain JSON values, reporting
// what JSON cannot hold: duplicate keys, merge keys, non-finite numbers,
// binary.
type Converter struct {
	d *Collector
	// nodes counts the values converted in the current scope (the
	// document, or one case: the bound is per case), each alias
	// expansion included; aliased the copies aliases made, in the scope
	// and in the whole document.
	nodes, aliased, aliasedAll int
	Large                      bool // the document is too large (reported): stop
	deep                       bool // the nesting error is out
	inCase                     bool // the scope is one case
	Over                       bool // the case is too large (reported): drop it
	caseNode                   *yaml.Node
	// anchored remembers the conversion of each anchored node, so that an
	// alias neither converts (and reports) it again nor escapes the count
	// of values (alias bombs).
	anchored map[*yaml.Node]anchoredValue
	// bad holds nodes the converter reported (a scalar JSON cannot hold,
	// nesting too deep): later stages say nothing more of them.
	bad map[*yaml.Node]bool
	// merged holds mappings with a merge key (reported): keys they seem to
	// miss may be in the merge, so later stages do not call them missing.
	merged map[*yaml.Node]bool
	// reports counts what the converter reported.
	reports int
	// Fixed, when set, holds parts of the tree that are the same, node
	// for node, in every tree converted with it (the parts of a data
	// file's row cases no row changes): each is converted once and, when
	// that reported nothing, its value is given again after, counted as
	// if converted again. The values are shared: for trees whose values
	// nothing changes.
	Fixed map[*yaml.Node]*Fixed
}

// A Fixed is the value of a part of a tree in Converter.Fixed.
type Fixed struct {
	v    any
	size int // the values under it
	done bool
}

func (c *Converter) add(sev Severity, line, col int, format string, args ...any) {
	c.reports++
	c.d.Add(sev, line, col, format, args...)
}

// BeginCase starts the count of the values of case n: a suite's cases
// are bounded one by one, each converted on its own after the rest.
func (c *Converter) BeginCase(n *yaml.Node) {
	c.nodes, c.aliased, c.inCase, c.Over, c.caseNode = 0, 0, true, false, n
}

// tooLarge reports the bound that n went over: the copies aliases made in
// the whole document, or the values of the case or of the document.
func (c *Converter) tooLarge(n *yaml.Node) {
	switch {
	case c.aliasedAll > MaxNodes || !c.inCase && c.aliased > 0:
		c.Large = true
		c.add(Error, n.Line, n.Column, "document too large: more than %d values once aliases are expanded", MaxNodes)
	case c.inCase:
		c.Over = true
		how := ""
		if c.aliased > 0 {
			how = " once aliases are expanded"
		}
		c.add(Error, c.caseNode.Line, c.caseNode.Column, "case too large: more than %d values%s (the bound is per case); split it into smaller cases", MaxNodes, how)
	default:
		c.Large = true
		c.add(Error, n.Line, n.Column, "document too large: more than %d values; split it into several files", MaxNodes)
	}
}

type anchoredValue struct {
	v    any
	size int // values it expands to
}

// NewConverter makes a converter that reports to d.
func NewConverter(d *Collector) *Converter {
	return &Converter{d: d}
}

// report reports a problem with a node and marks it bad.
func (c *Converter) report(n *yaml.Node, format string, args ...any) {
	c.add(Error, n.Line, n.Column, format, args...)
	c.markBad(n)
}

func (c *Converter) markBad(n *yaml.Node) {
	if c.bad == nil {
		c.bad = map[*yaml.Node]bool{}
	}
	c.bad[n] = true
}

// IsBad reports whether the converter already reported a problem with n
// (its value is not what was written): say nothing more of it.
func (c *Converter) IsBad(n *yaml.Node) bool {
	return c.bad[Deref(n)]
}

// IsMerged reports whether mapping n has a merge key (reported): keys
// it seems to miss may be in the merge.
func (c *Converter) IsMerged(n *yaml.Node) bool {
	return c.merged[Deref(n)]
}

// Convert converts n, at depth levels of nesting, to JSON values: maps,
// lists, strings, booleans, json.Number and nil.
func (c *Converter) Convert(n *yaml.Node, depth int) any {
	c.nodes++
	if c.Large || c.Over {
		return nil
	}
	if c.nodes > MaxNodes || c.aliasedAll > MaxNodes {
		c.tooLarge(n)
		return nil
	}
	if depth > MaxDepth {
		if !c.deep {
			c.deep = true
			c.add(Error, n.Line, n.Column, "nesting deeper than %d levels", MaxDepth)
		}
		c.markBad(n)
		return nil
	}
	if a, ok := c.anchored[n]; ok {
		c.nodes += a.size // an alias expands to the whole value again
		c.aliased += a.size
		c.aliasedAll += a.size
		return a.v
	}
	fixed := c.Fixed[n]
	if fixed != nil && fixed.done && c.nodes+fixed.size <= MaxNodes {
		c.nodes += fixed.size
		return fixed.v
	}
	start, reports, bad, merged, anchored, aliased := c.nodes, c.reports, len(c.bad), len(c.merged), len(c.anchored), c.aliasedAll
	v := c.convert(n, depth)
	if n.Anchor != "" {
		if c.anchored == nil {
			c.anchored = map[*yaml.Node]anchoredValue{}
		}
		c.anchored[n] = anchoredValue{v, c.nodes - start}
	}
	if fixed != nil && !fixed.done && !c.Large && !c.Over && c.reports == reports && len(c.bad) == bad && len(c.merged) == merged && len(c.anchored) == anchored && c.aliasedAll == aliased {
		fixed.v, fixed.size, fixed.done = v, c.nodes-start, true
	}
	return v
}

// convert is Convert of n without what comes before and after.
func (c *Converter) convert(n *yaml.Node, depth int) any {
	var v any
	switch n.Kind {
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil
		}
		return c.Convert(n.Alias, depth+1)
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			v = c.Convert(n.Content[0], depth+1)
		}
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		// The keys so far, to find a duplicate without a lookup in m
		// (when they are few, as they mostly are).
		var few [8]string
		seen := few[:0]
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, val := n.Content[i], n.Content[i+1]
			key, ok := c.key(k)
			if !ok {
				if IsMerge(k) {
					if c.merged == nil {
						c.merged = map[*yaml.Node]bool{}
					}
					c.merged[n] = true
				}
				continue
			}
			dup := false
			if len(n.Content) <= 2*len(few) {
				dup = slices.Contains(seen, key)
				seen = append(seen, key)
			} else {
				_, dup = m[key]
			}
			if dup {
				c.duplicate(n, i, key)
				continue
			}
			m[key] = c.Convert(val, depth+1)
		}
		v = m
	case yaml.SequenceNode:
		a := make([]any, 0, len(n.Content))
		for _, e := range n.Content {
			a = append(a, c.Convert(e, depth+1))
		}
		v = a
	case yaml.ScalarNode:
		v = c.scalar(n)
	}
	return v
}

// duplicate reports the key at n.Content[i], which an earlier key repeats.
func (c *Converter) duplicate(n *yaml.Node, i int, key string) {
	k := n.Content[i]
	for j := 0; j < i; j += 2 {
		f := Deref(n.Content[j])
		if f == nil || f.Kind != yaml.ScalarNode || f.Value != key || IsMerge(f) {
			continue
		}
		f = n.Content[j]
		if f.Line == k.Line {
			c.add(Error, k.Line, k.Column, "duplicate key %q (first at column %d); remove one", key, f.Column)
		} else {
			c.add(Error, k.Line, k.Column, "duplicate key %q (first at line %d); remove one", key, f.Line)
		}
		return
	}
}

// IsMerge reports whether key node k is a merge key (<<).
func IsMerge(k *yaml.Node) bool {
	k = Deref(k)
	return k != nil && k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

func (c *Converter) key(k *yaml.Node) (string, bool) {
	for k.Kind == yaml.AliasNode && k.Alias != nil {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		c.add(Error, k.Line, k.Column, "mapping keys must be plain strings, not a %s", yamlnode.KindName(k.Kind))
		return "", false
	}
	if IsMerge(k) {
		c.add(Error, k.Line, k.Column, "merge keys (<<) are not supported: write the keys out, or alias the whole value")
		return "", false
	}
	return k.Value, true
}

var leadingZero = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[-+]?0[0-9_]+$`) })

// isJSONNumber reports whether s is a JSON number and nothing else.
func isJSONNumber(s string) bool { return s != "" && value.NumberLen(s) == len(s) }

func (c *Converter) scalar(n *yaml.Node) any {
	switch n.ShortTag() {
	case "!!null":
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			c.report(n, "invalid boolean %q: write true or false", n.Value)
			return nil
		}
		return b
	case "!!int":
		if isJSONNumber(n.Value) {
			return json.Number(n.Value)
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			if n.Style == 0 && leadingZero().MatchString(n.Value) {
				c.add(Warning, n.Line, n.Column, "%s is read as the number %d (a leading 0 makes it octal); quote it to keep the text", n.Value, i)
			}
			return json.Number(strconv.FormatInt(i, 10))
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return json.Number(strconv.FormatUint(u, 10))
		}
		if b, ok := new(big.Int).SetString(strings.ReplaceAll(n.Value, "_", ""), 0); ok {
			return json.Number(b.String())
		}
		c.report(n, "invalid integer %q", n.Value)
		return nil
	case "!!float":
		if isJSONNumber(n.Value) {
			return json.Number(n.Value)
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			c.report(n, "invalid number %q", n.Value)
			return nil
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			c.report(n, "%s is not a JSON number; quote it to make it a string", n.Value)
			return nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case "!!binary":
		c.report(n, "binary values (!!binary) are not supported; use a string")
		return nil
	}
	// A plain number YAML cannot hold resolves to a string: an integer is
	// kept exactly, as a big one is above; a float beyond a float64 (1e400)
	// would not be what was meant, sent as either.
	if n.Style == 0 && n.ShortTag() == "!!str" && isJSONNumber(n.Value) {
		if !strings.ContainsAny(n.Value, ".eE") {
			return json.Number(n.Value) // an integer too long for YAML's own: kept exactly
		}
		c.report(n, "%s is beyond the range of a float64 (about ±1.8e308); write a smaller number, or quote it to make it a string", value.Truncate(n.Value, 40))
		return nil
	}
	// !!str, !!timestamp and any other tag: the text as written.
	return n.Value
}
