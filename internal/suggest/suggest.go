// Package suggest finds the likely intended word for a typo: the
// "did you mean" of unknown keys, checks and tool names.
package suggest

import (
	"fmt"
	"strings"
)

// maxLen bounds the names compared: a typo is suggested for names of up
// to this many characters, so that a file of huge names costs no more
// than one of short ones (the comparison is quadratic in the length).
const maxLen = 128

// Closest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be a likely typo.
func Closest(s string, candidates []string) string {
	rs := []rune(strings.ToLower(s))
	if len(rs) > maxLen {
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		rc := []rune(strings.ToLower(c))
		limit := max(1, min(3, len(c)/3))
		// At least one edit per character of length difference.
		if len(rc) > maxLen || len(rc)-len(rs) > limit || len(rs)-len(rc) > limit {
			continue
		}
		d := editDistance(rs, rc)
		// d < len(c): replacing every letter of a short word is no typo.
		if d <= limit && d < len(rc) && (bestD < 0 || d < bestD) {
			best, bestD = c, d
		}
	}
	return best
}

// DidYouMean renders a " (did you mean "x"?)" suffix, or "".
func DidYouMean(s string, candidates []string) string {
	if m := Closest(s, candidates); m != "" && m != s {
		return fmt.Sprintf(" (did you mean %q?)", m)
	}
	return ""
}

// Distance is the edit distance of a and b, case-insensitive, each cut to
// its first maxLen characters (the cost is quadratic in the length).
func Distance(a, b string) int {
	cut := func(s string) []rune {
		r := []rune(strings.ToLower(s))
		return r[:min(len(r), maxLen)]
	}
	return editDistance(cut(a), cut(b))
}

// editDistance is the optimal-string-alignment distance: insertions,
// deletions, substitutions and swaps of two neighbours each cost one.
func editDistance(ra, rb []rune) int {
	var rows [3][]int
	for i := range rows {
		rows[i] = make([]int, len(rb)+1)
	}
	for j := range rows[0] {
		rows[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		c, p, pp := rows[i%3], rows[(i+2)%3], rows[(i+1)%3]
		c[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			c[j] = min(p[j]+1, c[j-1]+1, p[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				c[j] = min(c[j], pp[j-2]+1)
			}
		}
	}
	return rows[len(ra)%3][len(rb)]
}
