package value

import "bytes"

// JSONScan reads JSON text as encoding/json's scanner does, without
// decoding it: where a value ends, and whether it is one. Spaces says
// whether white space may stand between tokens (without it, only text
// json.Compact leaves as it is is a value); Depth bounds the nesting.
type JSONScan struct {
	Spaces bool
	Depth  int
	// Member, when set, is called with each member of the outermost
	// object (its key, unescaped keys only, and its value's bytes); false
	// stops the scan, as text that is no value.
	Member func(key, val []byte) bool
}

// Value is the end of the JSON value at b[i:].
func (s *JSONScan) Value(b []byte, i int) (int, bool) { return s.value(b, i, 1) }

func (s *JSONScan) value(b []byte, i, depth int) (int, bool) {
	if i >= len(b) || depth > s.Depth {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return s.object(b, i, depth)
	case c == '[':
		i = s.space(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			end, ok := s.value(b, i, depth+1)
			if !ok {
				return i, false
			}
			if i = s.space(b, end); i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = s.space(b, i+1)
			case ']':
				return i + 1, true
			default:
				return i, false
			}
		}
	case c == '"':
		return SkipString(b, i)
	case c == '-' || c >= '0' && c <= '9':
		n := NumberLen(b[i:])
		return i + n, n > 0
	case c == 't':
		return i + 4, bytes.HasPrefix(b[i:], []byte("true"))
	case c == 'f':
		return i + 5, bytes.HasPrefix(b[i:], []byte("false"))
	case c == 'n':
		return i + 4, bytes.HasPrefix(b[i:], []byte("null"))
	}
	return i, false
}

// object is the end of the object at b[i:] ('{' first); the members of
// the outermost go to Member.
func (s *JSONScan) object(b []byte, i, depth int) (int, bool) {
	member := s.Member
	if depth > 1 {
		member = nil
	}
	i = s.space(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return i, false
		}
		end, ok := SkipString(b, i)
		if !ok {
			return i, false
		}
		key := b[i+1 : end-1]
		if member != nil && bytes.IndexByte(key, '\\') >= 0 {
			return i, false
		}
		if i = s.space(b, end); i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = s.space(b, i+1)
		vend, ok := s.value(b, i, depth+1)
		if !ok || member != nil && !member(key, b[i:vend]) {
			return i, false
		}
		if i = s.space(b, vend); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = s.space(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

func (s *JSONScan) space(b []byte, i int) int {
	if s.Spaces {
		return SkipSpace(b, i)
	}
	return i
}

// SkipSpace is the end of the JSON white space at b[i:].
func SkipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plain marks the bytes a JSON string holds as they are: not '"', '\\'
// or a control.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// SkipString is the end of the JSON string at b[i:] ('"' first): any
// byte but a control, as encoding/json reads it, and valid escapes.
func SkipString(b []byte, i int) (int, bool) {
	for i++; i < len(b); i++ {
		for i < len(b) && plain[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c < 0x20:
			return i, false
		case c == '\\':
			i++
			if i >= len(b) {
				return i, false
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return i, false
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return i, false
					}
				}
				i += 4
			default:
				return i, false
			}
		}
	}
	return i, false
}
