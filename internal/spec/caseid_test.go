package spec

import (
	"regexp"
	"strconv"
	"testing"
)

func TestCaseIDForm(t *testing.T) {
	for _, tc := range []struct{ suite, name, want string }{
		{"suites/shop.dryfire.yaml", "Refund a late order!", "refund-a-late-or-8736852f"},
		{"s.dryfire.yaml", "lookup", "lookup-"},
		{"s.dryfire.yaml", "  ÉTÉ  ", "t-"},
		{"s.dryfire.yaml", "日本語", "case-"},
		{"s.dryfire.yaml", "a-b_c d", "a-b-c-d-"},
		{"s.dryfire.yaml", "0123456789abcdefXYZ", "0123456789abcdef-"},
		{"s.dryfire.yaml", "0123456789abcde fXYZ", "0123456789abcde-"},
	} {
		got := CaseID(tc.suite, tc.name)
		if !regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,14}[a-z0-9])?-[0-9a-f]{8}$`).MatchString(got) || got[:len(tc.want)] != tc.want {
			t.Errorf("CaseID(%q, %q) = %q, want %s… in the documented form", tc.suite, tc.name, got, tc.want)
		}
		if again := CaseID(tc.suite, tc.name); again != got {
			t.Errorf("CaseID is not stable: %q, then %q", got, again)
		}
	}
	if CaseID("a.dryfire.yaml", "x") == CaseID("b.dryfire.yaml", "x") {
		t.Error("the same name in two suites has one id")
	}
}

// Two names whose ids share their 8 digits (found by search) take more
// digits, as many as they need; the others keep theirs.
func TestCaseIDsCollide(t *testing.T) {
	a, b := "~*$&(^", "~($%$^"
	if CaseID("s.dryfire.yaml", a) != CaseID("s.dryfire.yaml", b) {
		t.Fatalf("no collision to test: %s, %s", CaseID("s.dryfire.yaml", a), CaseID("s.dryfire.yaml", b))
	}
	s := &Suite{File: "s.dryfire.yaml", Root: ".", Cases: []*Case{{Name: "first"}, {Name: a}, {Name: "other"}, {Name: b}}}
	other := &Suite{File: "t.dryfire.yaml", Root: ".", Cases: []*Case{{Name: "first"}}}
	ids := NewCaseIDs([]*Suite{other, s})
	got := []string{ids.ID(1, 0, "first"), ids.ID(1, 1, a), ids.ID(1, 2, "other"), ids.ID(1, 3, b), ids.ID(0, 0, "first")}
	want := []string{CaseID("s.dryfire.yaml", "first"), "case-45f0db53", CaseID("s.dryfire.yaml", "other"), "case-45f0db53", CaseID("t.dryfire.yaml", "first")}
	seen := map[string]bool{}
	for i := range got {
		if seen[got[i]] {
			t.Errorf("id %q twice: %q", got[i], got)
		}
		seen[got[i]] = true
		if i == 1 || i == 3 {
			if len(got[i]) <= len(want[i]) || got[i][:len(want[i])] != want[i] {
				t.Errorf("case %d: %q, want %q and more digits", i, got[i], want[i])
			}
		} else if got[i] != want[i] {
			t.Errorf("case %d: %q, want %q", i, got[i], want[i])
		}
	}
	// The same ids whatever the order of the suites.
	ids2 := NewCaseIDs([]*Suite{s})
	if ids2.ID(0, 1, a) != got[1] || ids2.ID(0, 3, b) != got[3] {
		t.Errorf("one suite alone: %q, %q; with another: %q, %q", ids2.ID(0, 1, a), ids2.ID(0, 3, b), got[1], got[3])
	}
}

func TestSuitePath(t *testing.T) {
	for _, tc := range []struct{ file, root, want string }{
		{"suites/a.dryfire.yaml", ".", "suites/a.dryfire.yaml"},
		{"./suites/../suites/a.dryfire.yaml", ".", "suites/a.dryfire.yaml"},
		{"proj/suites/a.dryfire.yaml", "proj", "suites/a.dryfire.yaml"},
		{"other/a.dryfire.yaml", "proj", "other/a.dryfire.yaml"},
	} {
		if got := (&Suite{File: tc.file, Root: tc.root}).SuitePath(); got != tc.want {
			t.Errorf("SuitePath(%q in %q) = %q, want %q", tc.file, tc.root, got, tc.want)
		}
	}
}

func BenchmarkNewCaseIDs(b *testing.B) {
	s := &Suite{File: "s.dryfire.yaml", Root: "."}
	for i := range 100_000 {
		s.Cases = append(s.Cases, &Case{Name: "case number " + strconv.Itoa(i)})
	}
	for b.Loop() {
		NewCaseIDs([]*Suite{s})
	}
}
