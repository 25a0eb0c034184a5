package cassette

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// maxDiffs bounds the differences a message lists.
const maxDiffs = 5

// normal is a JSON request body after the declared matching rules, and
// where they changed it.
type normal struct {
	value   any
	applied reqmatch.Applied
}

// matched is what the matching rules made of both bodies; compare takes
// nil when no rules are declared (or a body is not JSON).
type matched struct {
	rec     *normal
	nowAp   reqmatch.Applied
	nowBody any
}

// compare returns the differences between a recorded request and the one
// made now (the first maxDiffs, and how many more there are), and, when
// no rules were declared, the presets that would have matched the values
// that differ (see reqmatch.Fixing).
func compare(rec, now *Request, nowBody canonBody, m *matched) ([]string, int, []string) {
	d := &differ{}
	if m != nil {
		d.recAp, d.nowAp = m.rec.applied, m.nowAp
	} else {
		d.strict = true
	}
	if rec.Method != now.Method || rec.Path != now.Path {
		d.add("request line: recorded " + strconv.Quote(rec.Method+" "+rec.Path) + ", now " + strconv.Quote(now.Method+" "+now.Path))
	}
	both := map[string]string{}
	maps.Copy(both, rec.Header)
	maps.Copy(both, now.Header)
	for _, k := range slices.Sorted(maps.Keys(both)) {
		rv, rok := rec.Header[k]
		nv, nok := now.Header[k]
		if rv != nv || rok != nok {
			d.add("header " + k + ": recorded " + headerValue(rv, rok) + ", now " + headerValue(nv, nok))
		}
	}
	switch {
	case m != nil:
		d.json("$", m.rec.value, m.nowBody)
	case bytes.Equal(rec.Body, now.Body) && rec.JSON == now.JSON:
	case rec.JSON && now.JSON:
		rv, err := value.Parse(rec.Body)
		if err != nil { // cannot happen: it was read as JSON
			d.add("body: the recorded body is not valid JSON")
			break
		}
		d.json("$", rv, nowBody.value)
	case rec.JSON != now.JSON:
		d.add("body: recorded " + bodyKind(rec) + ", now " + bodyKind(now))
	default:
		d.add("body: recorded " + textSnippet(string(rec.Body), string(now.Body)))
	}
	return d.list, d.total - len(d.list), d.fix
}

func headerValue(v string, ok bool) string {
	if !ok {
		return "(absent)"
	}
	return strconv.Quote(v)
}

func bodyKind(r *Request) string {
	switch {
	case r.JSON:
		return "JSON"
	case len(r.Body) == 0:
		return "no body"
	}
	return fmt.Sprintf("%d bytes that are not JSON", len(r.Body))
}

type differ struct {
	list  []string
	total int

	recAp, nowAp reqmatch.Applied // where the matching rules changed the bodies
	strict       bool             // no rules declared: suggest the presets that would match
	fix          []string         // those presets, in preset order
}

// note says which rules changed the values that differ at path; with no
// rules, it notes the presets that would have matched them.
func (d *differ) note(path, rec, now string) string {
	var labels []string
	for _, l := range append(slices.Clone(d.recAp[path]), d.nowAp[path]...) {
		if !slices.Contains(labels, l) {
			labels = append(labels, l)
		}
	}
	if len(labels) > 0 {
		return " (after match rules: " + strings.Join(labels, ", ") + ")"
	}
	if !d.strict {
		return ""
	}
	ps := reqmatch.Fixing(rec, now)
	if len(ps) == 0 {
		return ""
	}
	var fix []string
	for _, p := range reqmatch.Presets() { // in the order Fixing tried them
		if slices.Contains(d.fix, p) || slices.Contains(ps, p) {
			fix = append(fix, p)
		}
	}
	d.fix = fix
	if len(ps) == 1 {
		return " (preset " + ps[0] + " would match these)"
	}
	return " (presets " + strings.Join(ps[:len(ps)-1], ", ") + " and " + ps[len(ps)-1] + " would match these)"
}

func (d *differ) add(s string) {
	d.total++
	if len(d.list) < maxDiffs {
		d.list = append(d.list, s)
	}
}

// bodyPath is the path syntax of match rules: $.a.b, $["odd key"], $.a[3].
type bodyPath struct{}

func (bodyPath) Key(path, key string) string     { return reqmatch.Member(path, key) }
func (bodyPath) Index(path string, i int) string { return reqmatch.Index(path, i) }

// bodyDiff compares two bodies all the way down, arrays item by item,
// numbers by value.
var bodyDiff = value.Differ{Path: bodyPath{}, Items: true, Equal: sameLeaf}

// sameLeaf says two values that are not both objects (or both arrays) are
// alike: strings as written, numbers by value.
func sameLeaf(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		if !ok || x == y {
			return ok
		}
		fx, errx := strconv.ParseFloat(string(x), 64)
		fy, erry := strconv.ParseFloat(string(y), 64)
		return errx == nil && erry == nil && fx == fy
	case nil, bool:
		return a == b
	}
	return false
}

// json records where two JSON values differ.
func (d *differ) json(path string, rec, now any) {
	bodyDiff.Diffs(path, rec, now, func(x value.Diff) bool {
		switch {
		case x.Length:
			d.add(fmt.Sprintf("%s: recorded %s, now %d", x.Path, termtext.Count(len(x.A.([]any)), "item"), len(x.B.([]any))))
		case !x.InA:
			d.add(x.Path + ": recorded (absent), now " + show(x.B))
		case !x.InB:
			d.add(x.Path + ": recorded " + show(x.A) + ", now (absent)")
		default:
			d.leaf(x.Path, x.A, x.B)
		}
		return true
	})
}

// leaf records two values at path that differ.
func (d *differ) leaf(path string, rec, now any) {
	if r, ok := rec.(string); ok {
		if n, ok := now.(string); ok {
			d.add(path + ": recorded " + textSnippet(r, n) + d.note(path, r, n))
			return
		}
	}
	if r, ok := rec.(json.Number); ok {
		if n, ok := now.(json.Number); ok {
			d.add(path + ": recorded " + string(r) + ", now " + string(n) + d.note(path, string(r), string(n)))
			return
		}
	}
	d.add(path + ": recorded " + show(rec) + ", now " + show(now) + d.note(path, show(rec), show(now)))
}

// maxShow bounds a value shown in a difference, in characters.
const maxShow = 80

// show is a value as compact JSON, cut to maxShow characters.
func show(v any) string {
	s := value.Canonical(v)
	if utf8.RuneCountInString(s) > maxShow {
		return value.Truncate(s, maxShow-1)
	}
	return s
}

// textSnippet shows two strings around where they first differ:
// `"…same prefix recorded tail…", now "…same prefix new tail…"`.
func textSnippet(rec, now string) string {
	r, n := []rune(rec), []rune(now)
	p := 0
	for p < len(r) && p < len(n) && r[p] == n[p] {
		p++
	}
	const before, after = 20, 40
	part := func(s []rune) string {
		start, end := max(0, p-before), min(len(s), p+after)
		q := strconv.Quote(string(s[start:end]))
		q = q[1 : len(q)-1]
		if start > 0 {
			q = "…" + q
		}
		if end < len(s) {
			q += "…"
		}
		return `"` + q + `"`
	}
	return part(r) + ", now " + part(n)
}
