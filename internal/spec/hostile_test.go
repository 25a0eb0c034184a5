package spec

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// hostileInputs are inputs built to break a YAML loader: deep nesting,
// alias bombs, huge numbers, odd bytes.
func hostileInputs() map[string][]byte {
	const head = "version: 1\nagent: {provider: script}\n"
	const tail = "cases: [{name: a, input: hi, script: [{text: ok}]}]\n"
	in := map[string][]byte{
		"deep flow sequences":  []byte(head + "mocks: {t: [{return: " + strings.Repeat("[", 10_000) + strings.Repeat("]", 10_000) + "}]}\n" + tail),
		"deep flow mappings":   []byte(head + "mocks: {t: [{return: " + strings.Repeat("{a: ", 10_000) + "1" + strings.Repeat("}", 10_000) + "}]}\n" + tail),
		"unclosed deep":        []byte(strings.Repeat("[", 10_000)),
		"deep block sequences": []byte(deepBlock(1_000)), // 10k would be 50 MB of indentation
		"billion laughs":       []byte(billionLaughs()),
		"alias bomb in keys":   []byte(head + "a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n" + tail),
		"self alias":           []byte("a: &a [*a]\n"),
		"huge int":             []byte(head + "mocks: {t: [{return: " + strings.Repeat("9", 100_000) + "}]}\n" + tail),
		"huge max_turns":       []byte("version: 1\nagent: {provider: script, max_turns: 99999999999999999999999999}\n" + tail),
		"huge exponents":       []byte("version: 1\nagent: {provider: script, max_turns: 1e999999999}\ncases: [{name: a, input: hi, max_turns: 2.0, script: [{text: ok}], expect: [{called: {tool: t, times: 1e999999999}}, {max_turns: -1e999999999}]}]\n"),
		"alias bomb in checks": []byte(aliasBombInChecks()),
		"huge hex":             []byte(head + "mocks: {t: [{return: 0x" + strings.Repeat("F", 10_000) + "}]}\n" + tail),
		"huge float":           []byte(head + "mocks: {t: [{return: 1e999999999}]}\n" + tail),
		"long line":            []byte(head + "name: " + strings.Repeat("x", 1<<20) + "\n" + tail),
		"many keys":            []byte(head + manyKeys(50_000) + tail),
		"nul bytes":            []byte("version: 1\x00\nagent: {provider: \x00script}\n" + tail),
		"only nul":             []byte("\x00\x00\x00"),
		"invalid utf8":         []byte("version: 1\nname: \xff\xfe\xfd\n" + "agent: {provider: script}\n" + tail),
		"bom":                  []byte("\xef\xbb\xbf" + head + tail),
		"utf16 bom":            []byte("\xff\xfev\x00e\x00r\x00"),
		"crlf":                 []byte(strings.ReplaceAll(head+tail, "\n", "\r\n")),
		"cr only":              []byte(strings.ReplaceAll(head+tail, "\n", "\r")),
		"odd unicode":          []byte(head + "name: \"\u202e\u200b\ufeff\U0001F600\u0301\"\n" + "\u00e9\u0301: 1\n" + tail),
		"unicode escapes":      []byte(head + "name: \"\\ud800\\U0010FFFF\\x00\"\n" + tail),
		"directives":           []byte("%YAML 1.1\n%TAG ! tag:example.com,2000:\n---\n" + head + tail),
		"bad directive":        []byte("%YAML 9.9\n---\n" + head + tail),
		"document end":         []byte(head + tail + "...\n"),
		"many documents":       []byte(strings.Repeat("---\na: 1\n", 10_000)),
		"complex keys":         []byte("? [a, b]\n: c\n? {d: e}\n: f\n"),
		"anchor on key":        []byte(head + "&k name: x\n*k : y\n" + tail),
		"tags everywhere":      []byte("!!map {version: !!int 1, agent: !!map {provider: !!str script}, cases: !!seq [!!map {name: !!str a, input: !!str b, script: [{text: !!str c}]}]}\n"),
		"empty":                nil,
		"whitespace":           []byte(" \n\t\n  \r\n"),
		"just a dash":          []byte("-"),
		"just a colon":         []byte(":"),
		"just a question":      []byte("?"),
		"stray brackets":       []byte("]]]}}}"),
	}
	return in
}

func deepBlock(n int) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(strings.Repeat(" ", i))
		b.WriteString("-\n")
	}
	return b.String()
}

func billionLaughs() string {
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\n")
	b.WriteString("l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= 9; i++ {
		b.WriteString("l" + itoa(i) + ": &l" + itoa(i) + " [")
		for j := range 9 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	b.WriteString("mocks: {t: [{return: *l9}]}\n")
	b.WriteString("cases: [{name: a, input: hi, script: [{text: ok}]}]\n")
	return b.String()
}

// aliasBombInChecks expands to just under the converter's limit, in the
// places the decoder walks again: when, with, args, return.
func aliasBombInChecks() string {
	var b strings.Builder
	b.WriteString("version: 1\nagent: {provider: script}\n")
	b.WriteString("x: &l0 {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7, h: 8}\n")
	for i := 1; i <= 5; i++ {
		b.WriteString("x" + itoa(i) + ": &l" + itoa(i) + " {")
		for j := range 8 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("k" + itoa(j) + ": *l" + itoa(i-1))
		}
		b.WriteString("}\n")
	}
	b.WriteString("mocks: {t: [{when: *l4, return: *l4}]}\n")
	b.WriteString("cases: [{name: a, input: hi, script: [{tool_calls: [{name: t, args: *l4}]}], expect: [{called: {tool: t, with: *l5}}]}]\n")
	return b.String()
}

func manyKeys(n int) string {
	var b strings.Builder
	b.WriteString("mocks:\n  t:\n    - return:\n")
	for i := range n {
		b.WriteString("        k" + itoa(i) + ": v\n")
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestNoPanic loads every suite of the corpus and every hostile input: each
// must give diagnostics or a suite, never a panic, and quickly.
func TestNoPanic(t *testing.T) {
	inputs := hostileInputs()
	for _, f := range invalidSuites(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		inputs[f] = data
	}
	// The bound scales with the machine: a loaded machine is slow at
	// everything, a super-linear parser only at these inputs. The
	// reference is a plain suite a tenth the size of "many keys"; the
	// bound grows by how much slower than on an idle machine it parses.
	ref := []byte("version: 1\nagent: {provider: script}\n" + manyKeys(5_000) + "cases: [{name: a, input: hi, script: [{text: ok}]}]\n")
	refTime := time.Duration(1<<63 - 1)
	for range 3 {
		start := time.Now()
		Parse("ref.dryfire.yaml", ref, nil)
		refTime = min(refTime, time.Since(start))
	}
	for name, data := range inputs {
		t.Run(name, func(t *testing.T) {
			limit := time.Second
			if raceEnabled {
				limit *= 10
			}
			// refQuiet: the reference's time on an idle 2-core machine.
			const refQuiet = 20 * time.Millisecond
			if raceEnabled {
				limit = time.Duration(float64(limit) * max(1, float64(refTime)/float64(10*refQuiet)))
			} else {
				limit = time.Duration(float64(limit) * max(1, float64(refTime)/float64(refQuiet)))
			}
			start := time.Now()
			s, ds := Parse("hostile.dryfire.yaml", data, nil)
			if d := time.Since(start); d > limit {
				// A loaded machine can stall one parse; a super-linear
				// parser is slow every time.
				start = time.Now()
				Parse("hostile.dryfire.yaml", data, nil)
				if d2 := time.Since(start); d2 > limit {
					t.Errorf("took %v, then %v; want under %v (the reference took %v)", d, d2, limit, refTime)
				}
			}
			checkInvariants(t, s, ds)
		})
	}
}

func checkInvariants(t *testing.T, s *Suite, ds yamlpos.Diagnostics) {
	t.Helper()
	for _, d := range ds {
		if d.Pos.Line < 1 || d.Pos.Col < 1 || d.Message == "" {
			t.Errorf("bad diagnostic %q", d)
		}
	}
	if !ds.HasErrors() && s == nil {
		t.Errorf("no errors and no suite")
	}
}
