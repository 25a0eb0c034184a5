package value

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// Canonical renders v as compact JSON with sorted keys and no HTML
// escaping: the form dryfire delivers to the model and writes to reports.
func Canonical(v any) string {
	b := (&writer{}).append(make([]byte, 0, 64), v, 0)
	return unsafe.String(unsafe.SliceData(b), len(b)) // b is not used again
}

// Form is a way of writing values as JSON, the one writer of canonical
// JSON in dryfire: keys sorted, only what JSON requires escaped (no HTML
// escaping), strings that are not UTF-8 made so. The zero Form is
// Canonical's compact form.
type Form struct {
	// Prefix and Indent, when either is set, indent the value as
	// json.Indent does with them (an empty array or object stays [] or
	// {}): the form cassettes store bodies in.
	Prefix, Indent string
	// ByValue writes each number by its value (1.0 and 1e0 as 1), for a
	// key under which numbers equal by value must be alike.
	ByValue bool
}

// Append appends v to dst in the form f.
func (f *Form) Append(dst []byte, v any) []byte {
	w := writer{Form: *f, indented: f.Prefix != "" || f.Indent != ""}
	return w.append(dst, v, 0)
}

// writer writes in a Form.
type writer struct {
	Form
	indented bool
}

func (f *writer) newline(b []byte, depth int) []byte {
	b = append(b, '\n')
	b = append(b, f.Prefix...)
	for range depth {
		b = append(b, f.Indent...)
	}
	return b
}

func (f *writer) append(b []byte, v any, depth int) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case bool:
		if x {
			return append(b, "true"...)
		}
		return append(b, "false"...)
	case json.Number:
		if f.ByValue {
			if n, err := strconv.ParseFloat(string(x), 64); err == nil {
				return strconv.AppendFloat(b, n, 'g', -1, 64)
			}
		}
		return append(b, x...)
	case string:
		return appendString(b, x)
	case []any:
		return f.array(b, x, depth)
	case map[string]any:
		return f.object(b, x, depth)
	default:
		// Not a value of this package; fall back to encoding/json so that
		// callers of the Go API may pass ordinary Go values.
		data, err := json.Marshal(x)
		if err != nil {
			return appendString(b, fmt.Sprint(x))
		}
		w, err := Parse(data)
		if err != nil {
			return append(b, data...)
		}
		return f.append(b, w, depth)
	}
}

func (f *writer) array(b []byte, x []any, depth int) []byte {
	if len(x) == 0 && f.indented {
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for i, e := range x {
		if i > 0 {
			b = append(b, ',')
		}
		if f.indented {
			b = f.newline(b, depth+1)
		}
		b = f.append(b, e, depth+1)
	}
	if f.indented {
		b = f.newline(b, depth)
	}
	return append(b, ']')
}

func (f *writer) object(b []byte, x map[string]any, depth int) []byte {
	if len(x) == 0 && f.indented {
		return append(b, "{}"...)
	}
	var buf [16]string // most objects are small: sort their keys without allocating
	keys := buf[:0]
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b = append(b, '{')
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		if f.indented {
			b = f.newline(b, depth+1)
		}
		b = appendString(b, k)
		b = append(b, ':')
		if f.indented {
			b = append(b, ' ')
		}
		b = f.append(b, x[k], depth+1)
	}
	if f.indented {
		b = f.newline(b, depth)
	}
	return append(b, '}')
}

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string as encoding/json writes it
// without HTML escaping: as Canonical does, but U+2028 and U+2029 escaped
// too (a JavaScript reader would take them for line ends), and backspace
// and form feed as \b and \f.
func AppendString(b []byte, s string) []byte { return appendStr(b, s, true) }

func appendString(b []byte, s string) []byte { return appendStr(b, s, false) }

// appendStr appends s quoted; asJSON: as encoding/json does (AppendString).
func appendStr(b []byte, s string, asJSON bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"':
				b = append(b, `\"`...)
			case '\\':
				b = append(b, `\\`...)
			case '\n':
				b = append(b, `\n`...)
			case '\r':
				b = append(b, `\r`...)
			case '\t':
				b = append(b, `\t`...)
			case '\b', '\f':
				if asJSON {
					if c == '\b' {
						b = append(b, `\b`...)
					} else {
						b = append(b, `\f`...)
					}
					break
				}
				fallthrough
			default:
				b = append(b, `\u00`...)
				b = append(b, hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if asJSON && (r == '\u2028' || r == '\u2029') {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
