package suggest

import (
	"strings"
	"testing"
	"time"
)

func TestClosest(t *testing.T) {
	keys := []string{"agent", "cases", "description", "mocks", "name", "tools", "version"}
	providers := []string{"anthropic", "openai", "openai-responses", "openai-compatible", "script"}
	tests := []struct {
		s          string
		candidates []string
		want       string
	}{
		{"a", []string{"b", "c"}, ""},       // one-letter names: no suggestion
		{"ab", []string{"b"}, ""},           // would replace the whole word
		{"nmae", keys, "name"},              // swap of neighbours: one edit
		{"verison", keys, "version"},        // swap
		{"case", keys, "cases"},             // insertion
		{"toolss", keys, "tools"},           // deletion
		{"mocsk", keys, "mocks"},            // swap at the end
		{"descripton", keys, "description"}, // long words allow more edits
		{"descrptn", keys, "description"},   // three edits, limit 3
		{"dscrpt", keys, ""},                // five edits: too far
		{"Name", keys, "name"},              // case does not count
		{"NAME", keys, "name"},
		{"name", keys, "name"}, // an exact match is its own closest
		{"colour", keys, ""},
		{"temperature", keys, ""},
		{"antropic", providers, "anthropic"},
		{"openai-compatable", providers, "openai-compatible"},
		{"open-ai", providers, "openai"},
		{"scrip", providers, "script"},
		{"gemini", providers, ""},
		{"ab", []string{"ac", "ad"}, "ac"},                 // ties: the first candidate
		{"abcdef", []string{"abcxyz", "abcdxy"}, "abcdxy"}, // the nearest wins, not the first
		{"ix", []string{"id"}, "id"},                       // two-letter words allow one edit
		{"xy", []string{"ab"}, ""},
		{"naïve", []string{"naive"}, "naive"}, // runes, not bytes
		{"日本", []string{"日本語"}, "日本語"},
		{"anything", nil, ""},
		{"anything", []string{}, ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.s, tt.candidates); got != tt.want {
			t.Errorf("Closest(%q, %q) = %q, want %q", tt.s, tt.candidates, got, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	tests := []struct{ s, want string }{
		{"nmae", ` (did you mean "name"?)`},
		{"name", ""}, // nothing to suggest for a word that is right
		{"Name", ` (did you mean "name"?)`},
		{"colour", ""},
	}
	for _, tt := range tests {
		if got := DidYouMean(tt.s, []string{"name", "version"}); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"", "abc", 3},
		{"abc", "", 3},
		{"abc", "abc", 0},
		{"abc", "acb", 1}, // a swap is one edit
		{"ca", "abc", 3},  // optimal string alignment, not full Damerau
		{"kitten", "sitting", 3},
		{"flaw", "lawn", 2},
		{"héllo", "hello", 1},
	}
	for _, tt := range tests {
		if got := editDistance([]rune(tt.a), []rune(tt.b)); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := editDistance([]rune(tt.b), []rune(tt.a)); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d (symmetric)", tt.b, tt.a, got, tt.want)
		}
	}
}

// Huge names cost no more than short ones: a suite of 30,000-character
// names once took 17 s to validate.
func TestClosestHugeNames(t *testing.T) {
	var names []string
	for i := range 100 {
		names = append(names, strings.Repeat(string(rune('a'+i%26)), 30_000))
	}
	long := strings.Repeat("x", maxLen)
	start := time.Now()
	for range 10 {
		if got := Closest(strings.Repeat("a", 29_999), names); got != "" {
			t.Errorf("a suggestion for a huge name: %d characters", len(got))
		}
	}
	if got := Closest(long[:maxLen-1]+"y", []string{long}); got != long {
		t.Errorf("a name of %d characters: no suggestion", maxLen)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v", d)
	}
}
