package mock

import (
	"sort"
)

// Rule indexing. A tool's rule is chosen by a first-match scan in file
// order; for a long list of rules that differ by one argument (an
// id, a SKU, a city), most of the scan is spent proving that rules about
// other values do not match. A tool's list is indexed by one `when` key:
//
//   - byValue: for each string, the positions of the rules whose `when`
//     requires exactly that string under the key;
//   - others: the positions of every other rule (no `when`, no such key,
//     or a value there that is not a string).
//
// A call whose arguments hold the string s under the key can only match
// a rule of byValue[s] or of others: every other rule requires another
// string there, and string equality is what `when` compares. A call
// without a string there can only match one of others. So the candidates
// are those two lists, merged back into file order, and the first of
// them whose `when` matches (tried in full, the key included) is the
// first rule of the whole list that matches: the same rule as the scan,
// always (TestIndexMatchesScan, FuzzIndexMatchesScan).
//
// The key is the one that leaves the fewest candidates: len(others) plus
// the size of the average value's rule list, as a call that hits one of
// the indexed rules sees it (sum of squared list sizes over their total).
// A key every rule gives the same string (currency: EUR) leaves them all;
// a key that tells the rules apart (sku: SKU-1, SKU-2, ...) leaves one.

// minIndexed is the shortest rule list that is indexed: below it a scan
// costs about what the index lookup does.
var minIndexed = 8

type ruleIndex struct {
	key     string
	byValue map[string][]int32
	others  []int32
}

// buildIndex indexes rules by the best key, or returns nil when the list
// is short or no key would at least halve the rules tried.
func buildIndex(rules []*rule) *ruleIndex {
	if len(rules) < minIndexed {
		return nil
	}
	type stat struct {
		n      int            // rules requiring a string under the key
		values map[string]int // how many rules require each string
	}
	stats := map[string]*stat{}
	for _, r := range rules {
		if r.spec.When == nil {
			continue
		}
		for _, k := range r.spec.When.Keys() {
			if v, ok := r.spec.When.StringAt(k); ok {
				st := stats[k]
				if st == nil {
					st = &stat{values: map[string]int{}}
					stats[k] = st
				}
				st.n++
				st.values[v]++
			}
		}
	}
	keys := make([]string, 0, len(stats))
	for k := range stats {
		keys = append(keys, k)
	}
	sort.Strings(keys) // ties go to the first key in order: a stable choice
	key, best := "", float64(len(rules))
	for _, k := range keys {
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
	ix := &ruleIndex{key: key, byValue: map[string][]int32{}}
	for i, r := range rules {
		if r.spec.When != nil {
			if v, ok := r.spec.When.StringAt(key); ok {
				ix.byValue[v] = append(ix.byValue[v], int32(i))
				continue
			}
		}
		ix.others = append(ix.others, int32(i))
	}
	return ix
}

// match is scan(rules, args) over the candidates only: the rules for the
// call's string under the key, and the others, in file order.
func (ix *ruleIndex) match(rules []*rule, args any) *rule {
	var hit []int32
	if m, ok := args.(map[string]any); ok {
		if v, ok := m[ix.key].(string); ok {
			hit = ix.byValue[v]
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
