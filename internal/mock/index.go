package mock

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Rule indexing. A tool's rule is chosen by a first-match scan in file
// order; for a long list of rules that differ by one argument (an
// id, a SKU, a city, an amount), most of the scan is spent proving that
// rules about other values do not match. A tool's list is indexed by one
// `when` key:
//
//   - byString: for each string, the positions of the rules whose `when`
//     requires exactly that string under the key;
//   - byNumber: the same for numbers, by value.NumberKey (1, 1.0 and 1e0
//     are one number, as `when` compares them);
//   - others: the positions of every other rule (no `when`, no such key,
//     or another kind of value there).
//
// A call whose arguments hold the string s under the key can only match
// a rule of byString[s] or of others: every other rule requires another
// string or a number there, and a string equals only that same string; a
// number likewise matches only byNumber of its key, or others. A call
// with anything else there can only match one of others. So the
// candidates are those two lists, merged back into file order, and the
// first of them whose `when` matches (tried in full, the key included)
// is the first rule of the whole list that matches: the same rule as the
// scan, always (TestIndexMatchesScan, FuzzIndexMatchesScan).
//
// The key is the one that leaves the fewest candidates: len(others) plus
// the size of the average value's rule list, as a call that hits one of
// the indexed rules sees it (sum of squared list sizes over their total).
// A key every rule gives the same value (currency: EUR) leaves them all;
// a key that tells the rules apart (sku: SKU-1, SKU-2, ...) leaves one.

// minIndexed is the shortest rule list that is indexed: below it a scan
// costs about what the index lookup does.
var minIndexed = 8

type ruleIndex struct {
	key      string
	byString map[string][]int32
	byNumber map[string][]int32 // by value.NumberKey
	others   []int32
}

// indexKey is the index's key for a scalar a `when` requires or a call
// holds: a string as itself, a number (num) by value.NumberKey; ok false
// for anything else.
func indexKey(v any) (key string, num, ok bool) {
	switch x := v.(type) {
	case string:
		return x, false, true
	case json.Number:
		k, ok := value.NumberKey(x)
		return k, true, ok
	}
	return "", false, false
}

// buildIndex indexes rules by the best key, or returns nil when the list
// is short or no key would at least halve the rules tried.
func buildIndex(rules []*rule) *ruleIndex {
	if len(rules) < minIndexed {
		return nil
	}
	type stat struct {
		n      int            // rules requiring a string or a number under the key
		values map[string]int // how many rules require each ("$" string, "#" number)
	}
	stats := map[string]*stat{}
	for _, r := range rules {
		if r.spec.When == nil {
			continue
		}
		for _, k := range r.spec.When.Keys() {
			v, _ := r.spec.When.ScalarAt(k)
			if key, num, ok := indexKey(v); ok {
				st := stats[k]
				if st == nil {
					st = &stat{values: map[string]int{}}
					stats[k] = st
				}
				if num {
					key = "#" + key // strings and numbers apart
				} else {
					key = "$" + key
				}
				st.n++
				st.values[key]++
			}
		}
	}
	key, best := "", float64(len(rules))
	for _, k := range slices.Sorted(maps.Keys(stats)) { // ties go to the first key in order: a stable choice
		st := stats[k]
		sq := 0
		for _, c := range st.values {
			sq += c * c
		}
		if cost := float64(len(rules)-st.n) + float64(sq)/float64(st.n); cost < best {
			key, best = k, cost
		}
	}
	if key == "" || 2*best > float64(len(rules)) {
		return nil
	}
	return indexBy(rules, key)
}

// indexBy indexes rules by key.
func indexBy(rules []*rule, key string) *ruleIndex {
	ix := &ruleIndex{key: key, byString: map[string][]int32{}, byNumber: map[string][]int32{}}
	for i, r := range rules {
		if r.spec.When != nil {
			v, _ := r.spec.When.ScalarAt(key)
			if k, num, ok := indexKey(v); ok {
				if num {
					ix.byNumber[k] = append(ix.byNumber[k], int32(i))
				} else {
					ix.byString[k] = append(ix.byString[k], int32(i))
				}
				continue
			}
		}
		ix.others = append(ix.others, int32(i))
	}
	return ix
}

// match is scan(rules, args) over the candidates only: the rules for the
// call's string or number under the key, and the others, in file order.
func (ix *ruleIndex) match(rules []*rule, args any) *rule {
	var hit []int32
	if m, ok := args.(map[string]any); ok {
		if k, num, ok := indexKey(m[ix.key]); ok {
			if num {
				hit = ix.byNumber[k]
			} else {
				hit = ix.byString[k]
			}
		}
	}
	others := ix.others
	for len(hit) > 0 || len(others) > 0 {
		var i int32
		if len(others) == 0 || len(hit) > 0 && hit[0] < others[0] {
			i, hit = hit[0], hit[1:]
		} else {
			i, others = others[0], others[1:]
		}
		if r := rules[i]; r.spec.When == nil || r.spec.When.Match(args) {
			return r
		}
	}
	return nil
}
