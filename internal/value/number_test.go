package value

import (
	"regexp"
	"testing"
)

// NumberLen takes what JSON's grammar of a number takes: the longest
// start of s the regular expression of it matches.
func TestNumberLen(t *testing.T) {
	prefix := regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`)
	for _, s := range []string{"", "0", "-0", "00", "01", "1", "12", "-", "+1", "1.", "1.5", ".5", "1e", "1e5", "1E+5", "1e-05", "1.5e3x",
		"-12.25e-3", "1_000", "0x10", "1e+", "1.e5", "123456789012345678901234567890", "1 ", " 1", "NaN", "-.5", "2.5.1", "1ee5", "1,", "-0]"} {
		if got, want := NumberLen(s), len(prefix.FindString(s)); got != want {
			t.Errorf("NumberLen(%q) = %d, want %d", s, got, want)
		}
		if got, want := NumberLen([]byte(s)), len(prefix.FindString(s)); got != want {
			t.Errorf("NumberLen([]byte(%q)) = %d, want %d", s, got, want)
		}
	}
}
