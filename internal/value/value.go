// Package value is dryfire's model of JSON values: the arguments a model
// sends, the values a mock returns, and the `when` / `with` patterns that
// match them.
//
// A value is one of nil, bool, string, json.Number, []any and
// map[string]any. Numbers stay json.Number so that large integers keep
// their digits, and compare numerically (1 == 1.0) without a round-trip.
package value

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"unicode/utf8"
)

// Render is what a tool result carries: a string verbatim, anything else
// as canonical JSON.
func Render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Canonical(v)
}

// Equal reports whether a and b are the same JSON value. Numbers compare
// numerically; strings compare case-sensitively; a string never equals a
// number.
func Equal(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && NumberEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !Equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !Equal(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// NumberEqual compares two JSON numbers by value, exactly: 1 == 1.0 ==
// 1e0 == 10e-1, -0 == 0, and numbers that differ in any digit differ
// however many digits they have. It compares digits and exponents without
// arithmetic on the value, so it allocates nothing on ordinary numbers and
// a huge exponent costs no more than its length. A text that is not a JSON
// number (possible only through the Go API) equals only the same text.
func NumberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	da, okA := parseDecimal(string(a))
	db, okB := parseDecimal(string(b))
	if !okA || !okB {
		return false
	}
	return da.equal(&db)
}

// NumberKey is a string two numbers share exactly when NumberEqual says
// they are equal (1, 1.0, 1e0 and 10e-1 share "1"); false when n is not
// written in JSON's grammar (it then equals only its own spelling). A
// plain integer of up to 21 digits is its own key, without allocating.
func NumberKey(n json.Number) (string, bool) {
	s := string(n)
	if plainInteger(s) {
		return s, true
	}
	d, ok := parseDecimal(s)
	if !ok {
		return "", false
	}
	if d.zero() {
		return "0", true
	}
	// The value is ±0.D × 10^point, D the significant digits.
	var b strings.Builder
	if d.neg {
		b.WriteByte('-')
	}
	k := d.last - d.first + 1
	shift := int64(len(d.whole) - d.first)
	if x, ok := smallExp(d.exp); ok {
		if point := x + shift; point >= int64(k) && point <= 21 {
			for i := d.first; i <= d.last; i++ {
				b.WriteByte(d.digit(i))
			}
			for range point - int64(k) {
				b.WriteByte('0')
			}
			return b.String(), true
		}
	}
	point := bigExp(d.exp)
	point.Add(point, big.NewInt(shift))
	b.WriteByte('.') // no integer key has a point
	for i := d.first; i <= d.last; i++ {
		b.WriteByte(d.digit(i))
	}
	b.WriteByte('e')
	b.WriteString(point.String())
	return b.String(), true
}

// plainInteger reports whether s is -?[1-9][0-9]{0,20} or 0: a number
// that is its own key.
func plainInteger(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || len(digits) > 21 || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if !isDigit(digits[i]) {
			return false
		}
	}
	return true
}

// decimal is a JSON number taken apart: its value is
// ±0.D × 10^(exp + len(whole) − first), where D is the digits of
// whole+frac from index first to last (the significant digits).
type decimal struct {
	neg         bool
	whole, frac string // the digits before and after the point
	first, last int    // significant digits, as indexes into whole+frac; first > last for zero
	exp         string // the exponent as written after e/E, sign included; "" when none
}

func (d *decimal) digit(i int) byte {
	if i < len(d.whole) {
		return d.whole[i]
	}
	return d.frac[i-len(d.whole)]
}

func (d *decimal) zero() bool { return d.first > d.last }

// parseDecimal splits a number written in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func parseDecimal(s string) (decimal, bool) {
	var d decimal
	i := 0
	if i < len(s) && s[i] == '-' {
		d.neg = true
		i++
	}
	start := i
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	d.whole = s[start:i]
	if len(d.whole) == 0 || (len(d.whole) > 1 && d.whole[0] == '0') {
		return d, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		d.frac = s[start:i]
		if len(d.frac) == 0 {
			return d, false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		start = i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		digits := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == digits {
			return d, false
		}
		d.exp = s[start:i]
	}
	if i != len(s) {
		return d, false
	}
	n := len(d.whole) + len(d.frac)
	d.first, d.last = n, -1
	for j := 0; j < n; j++ {
		if d.digit(j) != '0' {
			d.first = j
			break
		}
	}
	for j := n - 1; j >= d.first; j-- {
		if d.digit(j) != '0' {
			d.last = j
			break
		}
	}
	return d, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func (d *decimal) equal(e *decimal) bool {
	if d.zero() || e.zero() {
		return d.zero() && e.zero() // -0 == 0 == 0.0e7
	}
	if d.neg != e.neg || d.last-d.first != e.last-e.first {
		return false
	}
	for i := 0; i <= d.last-d.first; i++ {
		if d.digit(d.first+i) != e.digit(e.first+i) {
			return false
		}
	}
	// Same significant digits: equal when the point sits in the same place,
	// exp(d) + shift(d) == exp(e) + shift(e).
	shiftD, shiftE := int64(len(d.whole)-d.first), int64(len(e.whole)-e.first)
	xd, okD := smallExp(d.exp)
	xe, okE := smallExp(e.exp)
	if okD && okE {
		return xd+shiftD == xe+shiftE
	}
	bd, be := bigExp(d.exp), bigExp(e.exp)
	bd.Add(bd, big.NewInt(shiftD))
	be.Add(be, big.NewInt(shiftE))
	return bd.Cmp(be) == 0
}

// smallExp reads an exponent that fits comfortably in an int64.
func smallExp(s string) (int64, bool) {
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	s = strings.TrimLeft(s, "0")
	if len(s) > 17 {
		return 0, false
	}
	var x int64
	for i := 0; i < len(s); i++ {
		x = x*10 + int64(s[i]-'0')
	}
	if neg {
		x = -x
	}
	return x, true
}

func bigExp(s string) *big.Int {
	x := new(big.Int)
	if s != "" {
		x.SetString(strings.TrimPrefix(s, "+"), 10)
	}
	return x
}

// TypeName names the JSON type of v the way error messages do.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

// Truncate shortens s to at most n runes, marking the cut.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}

// Map is a copy of v whose objects and arrays are made anew, and whose
// other values are what leaf makes of them (nil: they stay as they are).
func Map(v any, leaf func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Map(e, leaf)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Map(e, leaf)
		}
		return out
	}
	if leaf == nil {
		return v
	}
	return leaf(v)
}
