// Package value is dryfire's model of JSON values: the arguments a model
// sends, the values a mock returns, and the `when` / `with` patterns that
// match them.
//
// A value is one of nil, bool, string, json.Number, []any and
// map[string]any. Numbers stay json.Number so that large integers keep
// their digits, and compare numerically (1 == 1.0) without a round-trip.
package value

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse decodes JSON text into a value, keeping numbers as json.Number.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// Canonical renders v as compact JSON with sorted keys and no HTML
// escaping: the form dryfire delivers to the model and writes to reports.
func Canonical(v any) string {
	var b strings.Builder
	write(&b, v)
	return b.String()
}

// Render is what a tool result carries: a string verbatim, anything else
// as canonical JSON.
func Render(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return Canonical(v)
}

func write(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case json.Number:
		b.WriteString(string(x))
	case string:
		writeString(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			write(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			write(b, x[k])
		}
		b.WriteByte('}')
	default:
		// Not a value of this package; fall back to encoding/json so that
		// callers of the Go API may pass ordinary Go values.
		data, err := json.Marshal(x)
		if err != nil {
			writeString(b, fmt.Sprint(x))
			return
		}
		w, err := Parse(data)
		if err != nil {
			b.Write(data)
			return
		}
		write(b, w)
	}
}

const hex = "0123456789abcdef"

func writeString(b *strings.Builder, s string) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b.WriteString(s[start:i])
			switch c {
			case '"':
				b.WriteString(`\"`)
			case '\\':
				b.WriteString(`\\`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			case '\t':
				b.WriteString(`\t`)
			default:
				b.WriteString(`\u00`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b.WriteString(s[start:i])
			b.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		i += size
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
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

// NumberEqual compares two JSON numbers by value.
func NumberEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	fa, errA := strconv.ParseFloat(string(a), 64)
	fb, errB := strconv.ParseFloat(string(b), 64)
	if errA == nil && errB == nil && fa != fb {
		// Rounding is monotonic: different floats mean different values.
		return false
	}
	ra, okA := new(big.Rat).SetString(string(a))
	rb, okB := new(big.Rat).SetString(string(b))
	return okA && okB && ra.Cmp(rb) == 0
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
