package mock

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// The index must pick exactly the rule the first-match scan picks, for
// every list of rules, every key it is built on and every call.

// rulesOf makes rules from `when` values (nil: a rule without when).
func rulesOf(whens []any) []*rule {
	rules := make([]*rule, len(whens))
	for i, w := range whens {
		r := &spec.Rule{}
		if w != nil {
			r.When = value.Compile(w)
		}
		rules[i] = &rule{id: i, spec: r}
	}
	return rules
}

// checkIndex compares the index on key with the scan for args.
func checkIndex(t *testing.T, rules []*rule, key string, args any) {
	t.Helper()
	want := scan(rules, args)
	got := indexBy(rules, key).match(rules, args)
	if got != want {
		id := func(r *rule) string {
			if r == nil {
				return "none"
			}
			return fmt.Sprintf("rule %d (%s)", r.id, value.Canonical(r.spec.When.Source()))
		}
		t.Fatalf("index on %q picks %s, the scan %s, for %s", key, id(got), id(want), value.Canonical(args))
	}
}

// A small world of keys and values, so that random rules and calls
// collide often: strings the index keys on, and every other kind of
// value under the same keys (numbers that equal each other in another
// spelling, null, booleans, nested mappings and lists, strings that look
// like numbers).
var (
	testKeys   = []string{"sku", "city", "n", ""}
	testValues = []any{"a", "b", "c", "A", "1", "", json.Number("1"), json.Number("1.0"), json.Number("10e-1"), json.Number("2"),
		json.Number("0"), json.Number("-0.0"), json.Number("1e400"), json.Number("10e399"), nil, true,
		map[string]any{"sku": "a"}, map[string]any{}, []any{"a"}, []any{}}
)

func randomObject(r *rand.Rand, maxKeys int) map[string]any {
	m := map[string]any{}
	for range r.IntN(maxKeys + 1) {
		m[testKeys[r.IntN(len(testKeys))]] = testValues[r.IntN(len(testValues))]
	}
	return m
}

func randomArgs(r *rand.Rand) any {
	switch r.IntN(10) {
	case 0:
		return nil // arguments that are not JSON
	case 1:
		return []any{"a"}
	case 2:
		return "sku"
	}
	return randomObject(r, 4)
}

func TestIndexMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		whens := make([]any, 1+r.IntN(20))
		for i := range whens {
			if r.IntN(8) > 0 {
				whens[i] = randomObject(r, 3)
			}
		}
		rules := rulesOf(whens)
		for range 20 {
			args := randomArgs(r)
			for _, k := range testKeys {
				checkIndex(t, rules, k, args)
			}
		}
	}
}

// FuzzIndexMatchesScan: rules from a JSON list of `when` values (null
// for a rule without one), a call's arguments from JSON text, and the key.
func FuzzIndexMatchesScan(f *testing.F) {
	f.Add(`[{"sku":"a"},{"sku":"b"},null,{"sku":"a","n":1}]`, `{"sku":"a","n":1}`, "sku")
	f.Add(`[{"sku":1},{"sku":"1"},{"sku":null},{}]`, `{"sku":1}`, "sku")
	f.Add(`[{"sku":"a"},{"sku":{"x":"a"}}]`, `{"sku":{"x":"a"}}`, "sku")
	f.Add(`[{"city":"Rome"},{"city":"Rome","n":2},{"n":2}]`, `{"city":"Rome","n":2}`, "city")
	f.Add(`[{"sku":"a"}]`, `["sku"]`, "sku")
	f.Add(`[{"sku":"a"}]`, `not json`, "sku")
	f.Add(`[{"n":1},{"n":2},{"n":"1"},{"n":1.0},{"n":true},null]`, `{"n":1e0}`, "n")
	f.Add(`[{"n":0},{"n":-0.0},{"n":1e400}]`, `{"n":10e399}`, "n")
	f.Fuzz(func(t *testing.T, whensText, argsText, key string) {
		wv, err := value.Parse([]byte(whensText))
		if err != nil {
			return
		}
		whens, ok := wv.([]any)
		if !ok || len(whens) > 200 {
			return
		}
		args, err := value.Parse([]byte(argsText))
		if err != nil {
			args = nil // a call whose arguments are not JSON
		}
		checkIndex(t, rulesOf(whens), key, args)
	})
}

// buildIndex indexes a long list by the key that tells its rules apart,
// and leaves alone a list no key would halve.
func TestBuildIndexKey(t *testing.T) {
	many := func(f func(i int) any) []*rule {
		whens := make([]any, 20)
		for i := range whens {
			whens[i] = f(i)
		}
		return rulesOf(whens)
	}
	tests := []struct {
		name  string
		rules []*rule
		want  string // "" for no index
	}{
		{"the distinct key, not the common one", many(func(i int) any {
			return map[string]any{"currency": "EUR", "sku": fmt.Sprint("SKU-", i)}
		}), "sku"},
		{"every rule the same string", many(func(i int) any { return map[string]any{"currency": "EUR"} }), ""},
		{"numbers are, by value", many(func(i int) any { return map[string]any{"n": json.Number(fmt.Sprint(i))} }), "n"},
		{"booleans are not", many(func(i int) any { return map[string]any{"b": i%2 == 0} }), ""},
		{"mostly catch-alls", many(func(i int) any {
			if i < 15 {
				return nil
			}
			return map[string]any{"sku": fmt.Sprint(i)}
		}), ""},
		{"short lists are scanned", rulesOf([]any{map[string]any{"sku": "a"}, map[string]any{"sku": "b"}}), ""},
	}
	for _, tt := range tests {
		ix := buildIndex(tt.rules)
		got := ""
		if ix != nil {
			got = ix.key
		}
		if got != tt.want {
			t.Errorf("%s: indexed by %q, want %q", tt.name, got, tt.want)
		}
	}
}
