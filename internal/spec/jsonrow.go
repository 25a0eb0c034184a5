package spec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// A line of a JSON Lines file is read by a small parser of its own for
// the JSON a data row usually is (objects, arrays, strings, numbers,
// true, false, null), several times faster than encoding/json's
// reflection. What it does not take on as plainly valid — any syntax
// error, a string with an escape or invalid UTF-8 is decoded by
// encoding/json, nesting past 100 levels, anything after the object — is
// read by encoding/json as a whole, whose verdict and message are the
// rule: the parser only ever says "yes, and these are the values
// encoding/json would give" or "ask encoding/json".

// jsonRow reads one line of a JSON Lines file: the row's values, or the
// problem jsonLines reports for it; a blank line is nil and "".
func jsonRow(text []byte) (map[string]any, string) {
	return readRow(text, nil)
}

// readRow reads a line as jsonRow does; with keys set it keeps only the
// top-level keys, in keys (cleared first, its values nil) — the same
// verdict, by the same code, for less work.
func readRow(text []byte, keys *rowKeys) (map[string]any, string) {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil, ""
	}
	p := rowParser{b: text, keys: keys}
	if m, ok := p.row(); ok {
		return m, ""
	}
	m, problem := rowByDecoder(text)
	if m != nil && keys != nil {
		clear(keys.m)
		for k := range m {
			keys.m[k] = nil
		}
		return keys.m, ""
	}
	return m, problem
}

// rowByDecoder reads a trimmed, non-blank line by encoding/json alone.
func rowByDecoder(text []byte) (map[string]any, string) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Sprintf("not JSON: %v", err)
	}
	if dec.More() {
		return nil, "a line of a .jsonl file holds one JSON object; this one has more after it"
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Sprintf("a row is a JSON object of columns, not %s", yamlpos.Describe(v))
	}
	return m, ""
}

// rowKeys is the map readRow gives the keys of a row in, again for each
// row, with the key strings made once.
type rowKeys struct {
	m     map[string]any
	names map[string]string
}

func newRowKeys() *rowKeys {
	return &rowKeys{m: map[string]any{}, names: map[string]string{}}
}

// maxRowDepth is the nesting the parser takes on; deeper rows go to
// encoding/json.
const maxRowDepth = 100

type rowParser struct {
	b     []byte
	i     int
	depth int
	keys  *rowKeys // set: keep only the top-level keys
}

// row reads the line as one object and nothing after it; false: ask
// encoding/json.
func (p *rowParser) row() (map[string]any, bool) {
	if p.b[0] != '{' {
		return nil, false
	}
	var m map[string]any
	var ok bool
	if p.keys != nil {
		clear(p.keys.m)
		m, ok = p.keys.m, p.object(p.keys.m, true)
	} else {
		m = map[string]any{}
		ok = p.object(m, false)
	}
	return m, ok && p.i == len(p.b)
}

func (p *rowParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// object reads the object at p.i into m (nil: the values are not kept);
// top: its keys are a row's columns.
func (p *rowParser) object(m map[string]any, top bool) bool {
	if p.depth++; p.depth > maxRowDepth {
		return false
	}
	p.i++ // {
	p.space()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		p.depth--
		return true
	}
	for {
		if p.i >= len(p.b) || p.b[p.i] != '"' {
			return false
		}
		k, ok := p.str(true)
		if !ok {
			return false
		}
		p.space()
		if p.i >= len(p.b) || p.b[p.i] != ':' {
			return false
		}
		p.i++
		p.space()
		v, ok := p.value(m != nil && !(top && p.keys != nil))
		if !ok {
			return false
		}
		if m != nil {
			if top && p.keys != nil {
				m[p.keys.name(k)] = nil
			} else {
				m[string(k)] = v
			}
		}
		p.space()
		if p.i >= len(p.b) {
			return false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case '}':
			p.i++
			p.depth--
			return true
		default:
			return false
		}
	}
}

// name is the key k as a string made once for all rows.
func (rk *rowKeys) name(k []byte) string {
	if s, ok := rk.names[string(k)]; ok {
		return s
	}
	s := string(k)
	rk.names[s] = s
	return s
}

func (p *rowParser) array(keep bool) ([]any, bool) {
	if p.depth++; p.depth > maxRowDepth {
		return nil, false
	}
	p.i++ // [
	var a []any
	if keep {
		a = make([]any, 0)
	}
	p.space()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		p.depth--
		return a, true
	}
	for {
		v, ok := p.value(keep)
		if !ok {
			return nil, false
		}
		if keep {
			a = append(a, v)
		}
		p.space()
		if p.i >= len(p.b) {
			return nil, false
		}
		switch p.b[p.i] {
		case ',':
			p.i++
			p.space()
		case ']':
			p.i++
			p.depth--
			return a, true
		default:
			return nil, false
		}
	}
}

// value reads the value at p.i; keep: make it (else nil).
func (p *rowParser) value(keep bool) (any, bool) {
	if p.i >= len(p.b) {
		return nil, false
	}
	switch c := p.b[p.i]; {
	case c == '{':
		if !keep {
			return nil, p.object(nil, false)
		}
		m := map[string]any{}
		return m, p.object(m, false)
	case c == '[':
		a, ok := p.array(keep)
		if !ok || !keep {
			return nil, ok
		}
		return a, true
	case c == '"':
		s, ok := p.str(keep)
		if !ok || !keep {
			return nil, ok
		}
		return string(s), true
	case c == '-' || c >= '0' && c <= '9':
		n := value.NumberLen(p.b[p.i:])
		if n == 0 {
			return nil, false
		}
		p.i += n
		if !keep {
			return nil, true
		}
		return json.Number(p.b[p.i-n : p.i]), true
	case bytes.HasPrefix(p.b[p.i:], []byte("true")):
		p.i += 4
		return true, true
	case bytes.HasPrefix(p.b[p.i:], []byte("false")):
		p.i += 5
		return false, true
	case bytes.HasPrefix(p.b[p.i:], []byte("null")):
		p.i += 4
		return nil, true
	}
	return nil, false
}

// str reads the string at p.i: its bytes (decoded by encoding/json when
// it has an escape or invalid UTF-8), or nil when !keep and it has
// neither.
func (p *rowParser) str(keep bool) ([]byte, bool) {
	start := p.i
	p.i++
	plain, ascii := true, true
	for {
		if p.i >= len(p.b) {
			return nil, false
		}
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			inner := p.b[start+1 : p.i-1]
			if plain && (ascii || utf8.Valid(inner)) {
				if !keep {
					return nil, true
				}
				return inner, true
			}
			var s string
			if json.Unmarshal(p.b[start:p.i], &s) != nil {
				return nil, false
			}
			return []byte(s), true
		case c == '\\':
			plain = false
			p.i += 2
			continue
		case c < ' ':
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		p.i++
	}
}

// eachLine hands each line of data (its number, from 1, and its text
// without the line's end, a part of data) to each until it returns false,
// split as bufio.Scanner splits lines; the error is a line longer than
// maxDataLine, after the lines before it.
func eachLine(data []byte, each func(line int, text []byte) bool) (int, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, min(64<<10, len(data)+1)), maxDataLine)
	off, start := 0, 0
	sc.Split(func(b []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := bufio.ScanLines(b, atEOF)
		start = off
		off += adv
		return adv, tok, err
	})
	line := 0
	for sc.Scan() {
		line++
		if !each(line, data[start:start+len(sc.Bytes())]) {
			return line, nil
		}
	}
	return line, sc.Err()
}
