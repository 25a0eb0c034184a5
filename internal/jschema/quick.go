package jschema

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Most values a schema is applied to are valid: a suite's cases, a tool's
// arguments. The validator builds an error tree, a scope and a set of
// unevaluated names for every subschema it visits even when nothing
// fails, which made checking 100,000 inline cases take 40 % of loading
// them. So each compiled schema also gets a quick tree: the keywords a
// schema most often uses, compiled from the schema's JSON, applied
// without allocating. It answers yes (valid), no (invalid) or unsure;
// Validate runs the validator unless the answer is yes, so messages come
// from the validator alone and the quick tree only saves work.
//
// Its answers are the validator's, keyword by keyword, for the values a
// converter produces (nil, bool, string, json.Number, []any,
// map[string]any); anything else is unsure:
//   - any keyword it does not know, anywhere in a subschema, makes that
//     subschema unsure (annotations excepted, and format and content*,
//     which are not asserted); so do $ref other than "#/..." (and any
//     $id below the root, which moves where such refs point: then there
//     is no quick tree at all), a $schema other than 2020-12's, and
//     numbers it cannot compare exactly;
//   - a number is an integer when its value is (1.0 and 1e2 are, as for
//     the validator's big.Rat); bounds and numeric enum/const members
//     compare through float64 only when both sides have at most 15
//     significant digits and are normal, where float64 keeps their order
//     exactly; other numbers are unsure;
//   - lengths count code points; enum and const compare deeply, numbers
//     numerically;
//   - an in-place chain ($ref, allOf, not, if, ...) longer than maxHops
//     without stepping into the value is unsure (the validator reports a
//     $ref cycle there).

type verdict int8

const (
	unsure verdict = iota
	yes
	no
)

func and(a, b verdict) verdict {
	switch {
	case a == no || b == no:
		return no
	case a == unsure || b == unsure:
		return unsure
	}
	return yes
}

func or(a, b verdict) verdict {
	switch {
	case a == yes || b == yes:
		return yes
	case a == unsure || b == unsure:
		return unsure
	}
	return no
}

// JSON types as bits of a quick node's type set.
const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{
	"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger,
	"string": tString, "array": tArray, "object": tObject,
}

// maxHops bounds an in-place chain of subschemas at one value.
const maxHops = 64

// A quick node is one compiled subschema.
type quick struct {
	unsure bool
	// always: a boolean schema (true or false).
	always, isBool bool

	types    uint8 // 0: no type keyword
	required []string
	props    map[string]*quick
	addl     *quick // additionalProperties; nil when absent
	items    *quick // items (2020-12: every item)
	ref      *quick
	allOf    []*quick
	anyOf    []*quick
	oneOf    []*quick
	not      *quick
	ifS      *quick
	thenS    *quick
	elseS    *quick

	hasConst bool
	constV   any
	hasEnum  bool
	enum     []any

	// Numeric bounds, each with whether it is set.
	min, max, exMin, exMax             float64
	hasMin, hasMax, hasExMin, hasExMax bool

	// Counts; -1 when absent.
	minLen, maxLen, minItems, maxItems, minProps, maxProps int
}

var (
	quickTrue  = &quick{isBool: true, always: true}
	quickFalse = &quick{isBool: true, always: false}
)

// annotations are keywords that never make a value invalid: format and
// content* too, which CompileFragments's compiler does not assert under
// 2020-12's own vocabularies, and definitions, which 2020-12 does not
// apply (a $ref may still point into it).
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$defs": true, "markdownDescription": true,
	"format": true, "contentEncoding": true, "contentMediaType": true, "contentSchema": true, "definitions": true,
}

const draft2020 = "https://json-schema.org/draft/2020-12/schema"

// quickCompiler compiles the quick nodes of one schema document.
type quickCompiler struct {
	root any
	memo map[string]*quick
}

// newQuickCompiler returns nil when the document is not one a quick tree
// can follow: not 2020-12, or a $id below its root.
func newQuickCompiler(root any) *quickCompiler {
	if m, ok := root.(map[string]any); ok {
		if s, ok := m["$schema"]; ok && s != draft2020 {
			return nil
		}
	}
	if nestedID(root, true) {
		return nil
	}
	return &quickCompiler{root: root, memo: map[string]*quick{}}
}

// nestedID reports whether v holds a "$id" key anywhere below the top.
func nestedID(v any, top bool) bool {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if k == "$id" && !top || nestedID(c, false) {
				return true
			}
		}
	case []any:
		for _, c := range x {
			if nestedID(c, false) {
				return true
			}
		}
	}
	return false
}

// at compiles the subschema at fragment ("#/$defs/x"; "" or "#" is the
// whole document).
func (c *quickCompiler) at(fragment string) *quick {
	ptr := strings.TrimPrefix(fragment, "#")
	if strings.Contains(ptr, "%") || ptr != "" && ptr[0] != '/' {
		return &quick{unsure: true}
	}
	return c.node(ptr)
}

// node compiles the subschema at JSON pointer ptr, once.
func (c *quickCompiler) node(ptr string) *quick {
	if q, ok := c.memo[ptr]; ok {
		return q
	}
	v, ok := lookup(c.root, ptr)
	if !ok {
		return &quick{unsure: true}
	}
	if b, ok := v.(bool); ok {
		if b {
			return quickTrue
		}
		return quickFalse
	}
	m, ok := v.(map[string]any)
	if !ok {
		return &quick{unsure: true}
	}
	q := &quick{minLen: -1, maxLen: -1, minItems: -1, maxItems: -1, minProps: -1, maxProps: -1}
	c.memo[ptr] = q // before the children: a $ref back here is this node
	q.unsure = !c.fill(q, m, ptr)
	return q
}

// fill compiles keywords m of the node at ptr into q; false when some
// keyword is beyond the quick tree.
func (c *quickCompiler) fill(q *quick, m map[string]any, ptr string) bool {
	for k, v := range m {
		ok := true
		switch k {
		case "$schema", "$id":
			ok = ptr == ""
		case "type":
			q.types, ok = typeSet(v)
		case "required":
			list, isList := v.([]any)
			ok = isList
			for _, e := range list {
				s, isStr := e.(string)
				ok = ok && isStr
				q.required = append(q.required, s)
			}
		case "properties":
			props, isMap := v.(map[string]any)
			ok = isMap
			q.props = make(map[string]*quick, len(props))
			for name := range props {
				q.props[name] = c.node(ptr + "/properties/" + escape(name))
			}
		case "additionalProperties":
			q.addl = c.node(ptr + "/" + k)
		case "items":
			q.items = c.node(ptr + "/" + k)
		case "not":
			q.not = c.node(ptr + "/" + k)
		case "if":
			q.ifS = c.node(ptr + "/" + k)
		case "then":
			q.thenS = c.node(ptr + "/" + k)
		case "else":
			q.elseS = c.node(ptr + "/" + k)
		case "allOf", "anyOf", "oneOf":
			list, isList := v.([]any)
			ok = isList && len(list) > 0
			var subs []*quick
			for i := range list {
				subs = append(subs, c.node(ptr+"/"+k+"/"+strconv.Itoa(i)))
			}
			switch k {
			case "allOf":
				q.allOf = subs
			case "anyOf":
				q.anyOf = subs
			default:
				q.oneOf = subs
			}
		case "$ref":
			s, isStr := v.(string)
			ok = isStr && strings.HasPrefix(s, "#") && !strings.Contains(s, "%") && (len(s) == 1 || s[1] == '/')
			if ok {
				q.ref = c.node(s[1:])
			}
		case "const":
			q.hasConst, q.constV = true, v
			ok = comparable(v)
		case "enum":
			list, isList := v.([]any)
			q.hasEnum, q.enum = true, list
			ok = isList
			for _, e := range list {
				ok = ok && comparable(e)
			}
		case "minimum":
			q.min, ok = bound(v)
			q.hasMin = ok
		case "maximum":
			q.max, ok = bound(v)
			q.hasMax = ok
		case "exclusiveMinimum":
			q.exMin, ok = bound(v)
			q.hasExMin = ok
		case "exclusiveMaximum":
			q.exMax, ok = bound(v)
			q.hasExMax = ok
		case "minLength":
			q.minLen, ok = count(v)
		case "maxLength":
			q.maxLen, ok = count(v)
		case "minItems":
			q.minItems, ok = count(v)
		case "maxItems":
			q.maxItems, ok = count(v)
		case "minProperties":
			q.minProps, ok = count(v)
		case "maxProperties":
			q.maxProps, ok = count(v)
		default:
			ok = annotations[k]
		}
		if !ok {
			return false
		}
	}
	return true
}

// lookup finds JSON pointer ptr in doc.
func lookup(doc any, ptr string) (any, bool) {
	if ptr == "" {
		return doc, true
	}
	cur := doc
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[tok]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) || tok != strconv.Itoa(i) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func typeSet(v any) (uint8, bool) {
	var names []any
	switch x := v.(type) {
	case string:
		names = []any{x}
	case []any:
		names = x
	default:
		return 0, false
	}
	var set uint8
	for _, n := range names {
		s, _ := n.(string)
		bit, ok := typeBits[s]
		if !ok {
			return 0, false
		}
		set |= bit
	}
	return set, set != 0
}

// count reads a non-negative integer keyword written plainly.
func count(v any) (int, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(string(n))
	return i, err == nil && i >= 0 && i < math.MaxInt32
}

// bound reads a numeric bound the quick tree can compare exactly.
func bound(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	d, ok := scanNumber(string(n))
	if !ok || !d.exact {
		return 0, false
	}
	return d.f, true
}

// comparable reports whether an enum or const member is one the quick
// tree compares: a scalar, a number only when exact.
func comparable(v any) bool {
	switch x := v.(type) {
	case nil, bool, string:
		return true
	case json.Number:
		d, ok := scanNumber(string(x))
		return ok && d.exact
	}
	return false
}

// A decimal is what the quick tree knows of a JSON number.
type decimal struct {
	integer bool    // its value is an integer
	exact   bool    // f orders it exactly among such numbers
	f       float64 // its value, when exact
}

// maxExp bounds the exponents the quick tree reads (the validator's
// big.Rat reads larger ones, or refuses them).
const maxExp = 1000

// scanNumber reads s, which must be a JSON number, without allocating.
func scanNumber(s string) (decimal, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	// Digits of the mantissa: where they are, and how many after the point.
	start := i
	if i < len(s) && s[i] == '0' {
		i++
	} else {
		if i >= len(s) || s[i] < '1' || s[i] > '9' {
			return decimal{}, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	intEnd := i
	fracStart, fracEnd := i, i
	if i < len(s) && s[i] == '.' {
		i++
		fracStart = i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == fracStart {
			return decimal{}, false
		}
		fracEnd = i
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		if i >= len(s) {
			return decimal{}, false
		}
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp > maxExp {
				return decimal{}, false
			}
			exp = exp*10 + int(s[i]-'0')
			i++
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) || exp > maxExp || exp < -maxExp {
		return decimal{}, false
	}
	// The significant digits: the mantissa's without leading and trailing
	// zeros; last is the power of ten of the last one.
	digit := func(k int) byte { // k-th mantissa digit, over int and fraction
		if k < intEnd-start {
			return s[start+k]
		}
		return s[fracStart+k-(intEnd-start)]
	}
	total := intEnd - start + fracEnd - fracStart
	first, end := 0, total
	for first < total && digit(first) == '0' {
		first++
	}
	if first == total {
		return decimal{integer: true, exact: true, f: 0}, true
	}
	for digit(end-1) == '0' {
		end--
	}
	last := exp - (fracEnd - fracStart) + (total - end)
	d := decimal{integer: last >= 0}
	if end-first <= 15 {
		f, err := strconv.ParseFloat(s, 64)
		if err == nil && math.Abs(f) >= 0x1p-1022 && !math.IsInf(f, 0) {
			d.exact, d.f = true, f
		}
	}
	return d, true
}

// kind is v's JSON type as a type bit; 0 for a Go value that is none.
func kind(v any) uint8 {
	switch v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case json.Number:
		return tNumber
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	}
	return 0
}

// check applies q to v; hops counts the subschemas applied in place
// since the last step into v.
func (q *quick) check(v any, hops int) verdict {
	if q.isBool {
		if q.always {
			return yes
		}
		return no
	}
	if q.unsure || hops > maxHops {
		return unsure
	}
	t := kind(v)
	if t == 0 {
		return unsure
	}
	var num decimal
	if t == tNumber && (q.types&(tInteger|tNumber) == tInteger || q.hasMin || q.hasMax || q.hasExMin || q.hasExMax) {
		d, ok := scanNumber(string(v.(json.Number)))
		if !ok {
			return unsure
		}
		num = d
	}
	if q.types != 0 {
		match := q.types&t != 0 || t == tNumber && q.types&tInteger != 0 && num.integer
		if !match {
			return no
		}
	}
	r := yes
	if q.hasConst {
		r = and(r, equal(v, q.constV))
	}
	if q.hasEnum {
		e := no
		for _, w := range q.enum {
			if e = or(e, equal(v, w)); e == yes {
				break
			}
		}
		r = and(r, e)
	}
	if r == no {
		return no
	}
	switch x := v.(type) {
	case map[string]any:
		r = and(r, q.object(x))
	case []any:
		r = and(r, q.array(x))
	case string:
		if q.minLen >= 0 || q.maxLen >= 0 {
			n := utf8.RuneCountInString(x)
			if q.minLen >= 0 && n < q.minLen || q.maxLen >= 0 && n > q.maxLen {
				return no
			}
		}
	case json.Number:
		r = and(r, q.number(num))
	}
	if r == no {
		return no
	}
	if q.ref != nil {
		r = and(r, q.ref.check(v, hops+1))
	}
	for _, s := range q.allOf {
		if r == no {
			return no
		}
		r = and(r, s.check(v, hops+1))
	}
	if q.anyOf != nil {
		a := no
		for _, s := range q.anyOf {
			if a = or(a, s.check(v, hops+1)); a == yes {
				break
			}
		}
		r = and(r, a)
	}
	if q.oneOf != nil {
		n, open := 0, false
		for _, s := range q.oneOf {
			switch s.check(v, hops+1) {
			case yes:
				n++
			case unsure:
				open = true
			}
		}
		switch {
		case n > 1:
			r = no
		case open:
			r = and(r, unsure)
		case n == 0:
			r = no
		}
	}
	if q.not != nil {
		switch q.not.check(v, hops+1) {
		case yes:
			return no
		case unsure:
			r = and(r, unsure)
		}
	}
	if q.ifS != nil {
		switch q.ifS.check(v, hops+1) {
		case yes:
			if q.thenS != nil {
				r = and(r, q.thenS.check(v, hops+1))
			}
		case no:
			if q.elseS != nil {
				r = and(r, q.elseS.check(v, hops+1))
			}
		default:
			r = and(r, unsure)
		}
	}
	return r
}

func (q *quick) object(obj map[string]any) verdict {
	if q.minProps >= 0 && len(obj) < q.minProps || q.maxProps >= 0 && len(obj) > q.maxProps {
		return no
	}
	for _, k := range q.required {
		if _, ok := obj[k]; !ok {
			return no
		}
	}
	r := yes
	if q.props == nil && q.addl == nil {
		return r
	}
	for k, v := range obj {
		s, ok := q.props[k]
		if !ok {
			s = q.addl
		}
		if s == nil {
			continue
		}
		if r = and(r, s.check(v, 0)); r == no {
			return no
		}
	}
	return r
}

func (q *quick) array(list []any) verdict {
	if q.minItems >= 0 && len(list) < q.minItems || q.maxItems >= 0 && len(list) > q.maxItems {
		return no
	}
	r := yes
	if q.items == nil {
		return r
	}
	for _, v := range list {
		if r = and(r, q.items.check(v, 0)); r == no {
			return no
		}
	}
	return r
}

func (q *quick) number(d decimal) verdict {
	if !q.hasMin && !q.hasMax && !q.hasExMin && !q.hasExMax {
		return yes
	}
	if !d.exact {
		return unsure
	}
	if q.hasMin && d.f < q.min || q.hasMax && d.f > q.max || q.hasExMin && d.f <= q.exMin || q.hasExMax && d.f >= q.exMax {
		return no
	}
	return yes
}

// equal compares value v with enum or const member w (comparable).
func equal(v, w any) verdict {
	switch x := v.(type) {
	case nil:
		return verdictOf(w == nil)
	case bool:
		y, ok := w.(bool)
		return verdictOf(ok && x == y)
	case string:
		y, ok := w.(string)
		return verdictOf(ok && x == y)
	case json.Number:
		y, ok := w.(json.Number)
		if !ok {
			return no
		}
		if x == y {
			return yes
		}
		a, okA := scanNumber(string(x))
		b, _ := scanNumber(string(y))
		if !okA || !a.exact {
			return unsure
		}
		return verdictOf(a.f == b.f)
	case []any, map[string]any:
		return no // members are scalars
	}
	return unsure
}

func verdictOf(b bool) verdict {
	if b {
		return yes
	}
	return no
}
