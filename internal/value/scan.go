package value

import "bytes"

// ScanJSON reads the JSON value at b[i:] as encoding/json's scanner
// does, without decoding it: where it ends, and whether it is one,
// nested at most depth deep. member, when set, is called with each
// member of the value when it is an object (its key, unescaped keys
// only, and its value's bytes); false stops the scan, as text that is no
// value.
func ScanJSON(b []byte, i, depth int, member func(key, val []byte) bool) (int, bool) {
	return scanValue(b, i, depth, member)
}

// scanValue is the end of the value at b[i:], nested at most left deep;
// an object's members go to member (nil: none do).
func scanValue(b []byte, i, left int, member func(key, val []byte) bool) (int, bool) {
	if i >= len(b) || left <= 0 {
		return i, false
	}
	switch c := b[i]; {
	case c == '{':
		return scanObject(b, i, left, member)
	case c == '[':
		i = SkipSpace(b, i+1)
		if i < len(b) && b[i] == ']' {
			return i + 1, true
		}
		for {
			end, ok := scanValue(b, i, left-1, nil)
			if !ok {
				return i, false
			}
			if i = SkipSpace(b, end); i >= len(b) {
				return i, false
			}
			switch b[i] {
			case ',':
				i = SkipSpace(b, i+1)
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

// scanObject is the end of the object at b[i:] ('{' first).
func scanObject(b []byte, i, left int, member func(key, val []byte) bool) (int, bool) {
	i = SkipSpace(b, i+1)
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
		if i = SkipSpace(b, end); i >= len(b) || b[i] != ':' {
			return i, false
		}
		i = SkipSpace(b, i+1)
		vend, ok := scanValue(b, i, left-1, nil)
		if !ok || member != nil && !member(key, b[i:vend]) {
			return i, false
		}
		if i = SkipSpace(b, vend); i >= len(b) {
			return i, false
		}
		switch b[i] {
		case ',':
			i = SkipSpace(b, i+1)
		case '}':
			return i + 1, true
		default:
			return i, false
		}
	}
}

// SkipSpace is the end of the JSON white space at b[i:].
func SkipSpace(b []byte, i int) int {
	for i < len(b) && jsonSpace[b[i]] {
		i++
	}
	return i
}

var jsonSpace = [256]bool{' ': true, '\t': true, '\n': true, '\r': true}

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
