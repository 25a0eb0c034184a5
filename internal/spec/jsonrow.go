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

// A line of a JSON Lines file is read by value.Parse, whose fast path
// gives what encoding/json gives; the first pass, which keeps only a
// row's keys, by value.ScanJSON. Whatever they do not take on as plainly
// valid (a key with an escape or invalid UTF-8, nesting past
// maxRowDepth) is read by encoding/json as a whole, whose verdict and
// message are the rule.

// jsonRow reads one line of a JSON Lines file: the row's values, or the
// problem jsonLines reports for it; a blank line is nil and "".
func jsonRow(text []byte) (map[string]any, string) {
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil, ""
	}
	if v, err := value.Parse(text); err == nil {
		if m, ok := v.(map[string]any); ok {
			return m, ""
		}
	}
	return rowByDecoder(text)
}

// readRow reads a line as jsonRow does; with keys set it keeps only the
// top-level keys, in keys (cleared first, its values nil): the same
// verdict for less work.
func readRow(text []byte, keys *rowKeys) (map[string]any, string) {
	if keys == nil {
		return jsonRow(text)
	}
	text = bytes.TrimSpace(text)
	if len(text) == 0 {
		return nil, ""
	}
	if scanKeys(text, keys) {
		return keys.m, ""
	}
	m, problem := rowByDecoder(text)
	if m == nil {
		return nil, problem
	}
	clear(keys.m)
	for k := range m {
		keys.m[k] = nil
	}
	return keys.m, ""
}

// scanKeys puts the keys of text, one plainly valid JSON object, in keys
// (cleared first); false: ask encoding/json.
func scanKeys(text []byte, keys *rowKeys) bool {
	clear(keys.m)
	end, ok := value.ScanJSON(text, 0, maxRowDepth, func(k, _ []byte) bool {
		if !utf8.Valid(k) {
			return false
		}
		keys.m[keys.name(k)] = nil
		return true
	})
	return text[0] == '{' && ok && end == len(text)
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

// maxRowDepth is the nesting the first pass takes on; deeper rows go to
// encoding/json.
const maxRowDepth = 100

// name is the key k as a string made once for all rows.
func (rk *rowKeys) name(k []byte) string {
	if s, ok := rk.names[string(k)]; ok {
		return s
	}
	s := string(k)
	rk.names[s] = s
	return s
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
