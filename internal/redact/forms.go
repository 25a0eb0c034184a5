package redact

import (
	"encoding/base64"
	"encoding/hex"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// The forms a secret is found in, besides itself:
//
//   - JSON escapes, at any depth of escaping: any of its characters as
//     \uXXXX (hex digits of either case, after any number of
//     backslashes), '/' as \/ (a model API echoing "sk\u002d..." in an
//     error body);
//   - URL encoding: any byte as %XX, a space as +;
//   - base64, standard or URL alphabet, padded or not, at any of the
//     three offsets it can sit at inside a longer encoding (user:pass in
//     an Authorization: Basic header): the run of base64 characters that
//     holds its encoding is replaced whole;
//   - hex, either case: the run of hex digits that holds it is replaced.
//
// What it is not found in: other encodings (HTML entities, UTF-16, a
// compressed or encrypted body), and a secret cut across two writes of a
// Writer.

// replace is s with every occurrence of sec, in each form, replaced.
func replace(s, sec string) string {
	if strings.Contains(s, sec) {
		s = strings.ReplaceAll(s, sec, Redacted)
	}
	if strings.ContainsAny(s, `\%`) || strings.ContainsRune(sec, ' ') && strings.ContainsRune(s, '+') {
		s = replaceEscaped(s, sec)
	}
	for _, n := range needles(sec) {
		if strings.Contains(s, n.text) {
			s = replaceRuns(s, n.text, n.in)
		}
	}
	return s
}

// replaceEscaped replaces sec written with JSON escapes or URL encoding
// (mixed with its plain characters as they come).
func replaceEscaped(s, sec string) string {
	var b strings.Builder
	var starts [256]bool // the bytes a match can start at
	starts[sec[0]], starts['\\'], starts['%'] = true, true, true
	starts['+'] = sec[0] == ' '
	last := 0
	for i := 0; i < len(s); {
		if !starts[s[i]] {
			i++
			continue
		}
		end := matchAt(s, i, sec)
		if end < 0 {
			i++
			continue
		}
		start := i
		for start > last && s[i] == '\\' && s[start-1] == '\\' {
			start-- // the whole run of backslashes, so none is left dangling
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last, i = end, end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// matchAt is where sec, in any mix of its forms, ends when it starts at
// s[i]; -1 when it does not start there.
func matchAt(s string, i int, sec string) int {
	for j := 0; j < len(sec); {
		if i >= len(s) {
			return -1
		}
		c := s[i]
		switch {
		case c == sec[j]:
			i, j = i+1, j+1
		case c == '%' && i+2 < len(s) && unhex(s[i+1]) >= 0 && unhex(s[i+2]) >= 0:
			if byte(unhex(s[i+1])<<4|unhex(s[i+2])) != sec[j] {
				return -1
			}
			i, j = i+3, j+1
		case c == '+' && sec[j] == ' ':
			i, j = i+1, j+1
		case c == '\\':
			k := i
			for k < len(s) && s[k] == '\\' {
				k++
			}
			switch {
			case k < len(s) && s[k] == '/' && sec[j] == '/':
				i, j = k+1, j+1
			case k+4 < len(s) && s[k] == 'u':
				r, err := strconv.ParseUint(s[k+1:k+5], 16, 16)
				if err != nil {
					return -1
				}
				enc := string(rune(r))
				if !strings.HasPrefix(sec[j:], enc) {
					return -1
				}
				i, j = k+5, j+len(enc)
			default:
				return -1
			}
		default:
			return -1
		}
	}
	return i
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// needle is an encoded form of a secret, and the characters of the
// encoding it sits in (the run replaced).
type needle struct {
	text, in string
}

const (
	b64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_="
	hexChars = "0123456789abcdefABCDEF"
)

var needleCache sync.Map // secret → []needle

// needles are the base64 and hex forms of sec: for base64, at each of
// the three offsets, the characters its bytes alone decide.
func needles(sec string) []needle {
	if v, ok := needleCache.Load(sec); ok {
		return v.([]needle)
	}
	var out []needle
	add := func(text, in string) {
		if !slices.ContainsFunc(out, func(n needle) bool { return n.text == text }) {
			out = append(out, needle{text, in})
		}
	}
	for k := range 3 {
		enc := base64.RawStdEncoding.EncodeToString(append(make([]byte, k), sec...))
		first := (8*k + 5) / 6
		last := 8 * (k + len(sec)) / 6
		if last-first < 8 {
			continue
		}
		std := enc[first:last]
		add(std, b64Chars)
		add(strings.NewReplacer("+", "-", "/", "_").Replace(std), b64Chars)
	}
	h := hex.EncodeToString([]byte(sec))
	add(h, hexChars)
	add(strings.ToUpper(h), hexChars)
	needleCache.Store(sec, out)
	return out
}

// replaceRuns replaces every run of the characters in that holds text.
func replaceRuns(s, text, in string) string {
	var b strings.Builder
	last := 0
	for {
		i := strings.Index(s[last:], text)
		if i < 0 {
			break
		}
		start, end := last+i, last+i+len(text)
		for start > last && strings.IndexByte(in, s[start-1]) >= 0 {
			start--
		}
		for end < len(s) && strings.IndexByte(in, s[end]) >= 0 {
			end++
		}
		b.WriteString(s[last:start])
		b.WriteString(Redacted)
		last = end
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
