package value

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// Parse decodes JSON text into a value, keeping numbers as json.Number.
//
// Every tool call's arguments go through here, so the usual text (plain
// strings, numbers, objects and arrays, one value) is read by a small
// scanner that allocates only the value; anything else (an escape in a
// string, invalid UTF-8, deep nesting, bad or trailing text) is decoded
// by encoding/json, whose values and errors are the contract: the fast
// path returns exactly what it would (FuzzParse).
func Parse(data []byte) (any, error) {
	if v, ok := parseFast(data); ok {
		return v, nil
	}
	return parseStd(data)
}

// ParseString is Parse of a string, without copying it: the strings of
// the value may share its memory.
func ParseString(text string) (any, error) {
	if v, ok := parseFast(text); ok {
		return v, nil
	}
	return parseStd([]byte(text))
}

// ParseChecked is ParseString, and whether text is known to be valid JSON
// (json.Valid): it is when the fast path read it, which reads only valid
// JSON. valid false says nothing either way.
func ParseChecked(text string) (v any, valid bool, err error) {
	if v, ok := parseFast(text); ok {
		return v, true, nil
	}
	v, err = parseStd([]byte(text))
	return v, false, err
}

// parseStd is Parse by encoding/json.
func parseStd(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	// Only white space may follow (dec.More is false before a closing
	// bracket, so "1]" would pass it).
	if len(bytes.TrimLeft(data[dec.InputOffset():], " \t\r\n")) > 0 {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

// fastDepth is the deepest nesting the fast path reads; deeper text goes
// to encoding/json (which has its own bound).
const fastDepth = 256

// scanner is the fast path: ok false means "not sure", never "invalid".
type scanner[T string | []byte] struct {
	b     T
	i     int
	depth int
}

// parseFast reads data when it is one value of the usual kind, followed
// by nothing but white space.
func parseFast[T string | []byte](data T) (any, bool) {
	s := scanner[T]{b: data}
	s.space()
	v, ok := s.value()
	if !ok {
		return nil, false
	}
	s.space()
	return v, s.i == len(s.b)
}

func (s *scanner[T]) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner[T]) value() (any, bool) {
	if s.i >= len(s.b) {
		return nil, false
	}
	switch c := s.b[s.i]; {
	case c == '{':
		return s.object()
	case c == '[':
		return s.array()
	case c == '"':
		str, ok := s.str()
		return str, ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	case c == 't':
		return true, s.word("true")
	case c == 'f':
		return false, s.word("false")
	case c == 'n':
		return nil, s.word("null")
	}
	return nil, false
}

func (s *scanner[T]) word(w string) bool {
	if len(s.b)-s.i < len(w) || string(s.b[s.i:s.i+len(w)]) != w {
		return false
	}
	s.i += len(w)
	return true
}

func (s *scanner[T]) object() (any, bool) {
	if s.depth++; s.depth > fastDepth {
		return nil, false
	}
	s.i++ // {
	m := map[string]any{}
	s.space()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		s.depth--
		return m, true
	}
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return nil, false
		}
		k, ok := s.str()
		if !ok {
			return nil, false
		}
		s.space()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return nil, false
		}
		s.i++
		s.space()
		v, ok := s.value()
		if !ok {
			return nil, false
		}
		m[k] = v // a repeated key: the last wins, as in encoding/json
		if end, ok := s.after('}'); !ok || end {
			return m, ok
		}
	}
}

func (s *scanner[T]) array() (any, bool) {
	if s.depth++; s.depth > fastDepth {
		return nil, false
	}
	s.i++ // [
	a := make([]any, 0)
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ']' {
		s.i++
		s.depth--
		return a, true
	}
	for {
		s.space()
		v, ok := s.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if end, ok := s.after(']'); !ok || end {
			return a, ok
		}
	}
}

// after reads what follows a member or an element: a comma (end false)
// or the closing bracket (end true).
func (s *scanner[T]) after(closing byte) (end, ok bool) {
	s.space()
	if s.i >= len(s.b) {
		return false, false
	}
	switch s.b[s.i] {
	case ',':
		s.i++
		return false, true
	case closing:
		s.i++
		s.depth--
		return true, true
	}
	return false, false
}

// str reads a string without escapes, in valid UTF-8.
func (s *scanner[T]) str() (string, bool) {
	start := s.i + 1
	ascii := true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			seg := s.b[start:j]
			if !ascii && !validUTF8(seg) {
				return "", false
			}
			s.i = j + 1
			return string(seg), true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? as written.
func (s *scanner[T]) number() (any, bool) {
	n := NumberLen(s.b[s.i:])
	if n == 0 {
		return nil, false
	}
	start := s.i
	s.i += n
	return json.Number(s.b[start:s.i]), true
}

// NumberLen is the length of the JSON number s starts with, 0 if none:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?, as long as it goes.
func NumberLen[T ~string | ~[]byte](s T) int {
	digits := func(i int) int {
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(i)
	default:
		return 0
	}
	if i+1 < len(s) && s[i] == '.' && s[i+1] >= '0' && s[i+1] <= '9' {
		i = digits(i + 1)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if k := digits(j); k > j {
			i = k
		}
	}
	return i
}

func validUTF8[T string | []byte](text T) bool {
	switch t := any(text).(type) {
	case string:
		return utf8.ValidString(t)
	case []byte:
		return utf8.Valid(t)
	}
	return false
}
