package check

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// policy judges a rule over the whole trajectory: every call, the
// agent's own included, numbered as the report lists them. A failure
// names the rule and the first call that breaks it.
func policy(c *spec.Check, f *Facts) (bool, string) {
	p := c.Policy
	if p == nil {
		return false, "expected a policy with a rule: preceded_by, not_after or at_most"
	}
	named := ""
	if p.Name != "" {
		named = fmt.Sprintf(" (policy %q)", p.Name)
	}
	if p.If != nil {
		if ok, msg := one(p.If, f); !ok {
			return true, fmt.Sprintf("the rule%s does not apply: its condition %s does not hold: %s", named, p.If.Source, msg)
		}
	}
	calls, subject := f.Calls, selText(p.Calls)
	n := 0
	switch p.Rule {
	case spec.PolicyPrecededBy:
		want := fmt.Sprintf("every %s to come after %s%s", subject, selText(p.Other), sameText(p.Same))
		for i, r := range calls {
			if !selects(p.Calls, r) {
				continue
			}
			n++
			earlier, differ := -1, 0
			for j := range i {
				if selects(p.Other, calls[j]) {
					if sameArgs(p.Same, r, calls[j]) {
						earlier = j
						break
					}
					differ++
				}
			}
			if earlier < 0 {
				why := "no " + selText(p.Other) + " came before it"
				if differ > 0 {
					why = fmt.Sprintf("%s before it, none with the same %s", countText(differ, p.Other), sameNames(p.Same))
				}
				return false, fmt.Sprintf("expected %s%s; %s did not: %s", want, named, step(calls, i), why)
			}
		}
		if n == 0 {
			return true, fmt.Sprintf("%s%s, so none broke the rule", held(p.Name), countText(0, p.Calls))
		}
		return true, fmt.Sprintf("%s%s: %s came after %s%s", held(p.Name), countText(n, p.Calls), verb(n), selText(p.Other), sameText(p.Same))
	case spec.PolicyNotAfter:
		want := fmt.Sprintf("no %s after %s%s%s", subject, selText(p.Other), sameText(p.Same), untilText(p.Until))
		for i, r := range calls {
			if !selects(p.Calls, r) {
				continue
			}
			n++
			for j := i - 1; j >= 0; j-- {
				if p.Until != nil && selects(p.Until, calls[j]) && sameArgs(p.Same, r, calls[j]) {
					break
				}
				if selects(p.Other, calls[j]) && sameArgs(p.Same, r, calls[j]) {
					return false, fmt.Sprintf("expected %s%s; %s came after %s", want, named, step(calls, i), step(calls, j))
				}
			}
		}
		return true, fmt.Sprintf("%s%s: none came after %s%s%s", held(p.Name), countText(n, p.Calls), selText(p.Other), sameText(p.Same), strings.TrimPrefix(want, strings.TrimSuffix(want, untilText(p.Until))))
	case spec.PolicyAtMost:
		want := "at most " + countText(p.AtMost, p.Calls)
		if len(p.Per) > 0 {
			want += " per " + strings.Join(p.Per, ", ")
		}
		seen, most := map[string][]int{}, 0
		var form value.Form
		form.ByValue = true
		for i, r := range calls {
			if !selects(p.Calls, r) {
				continue
			}
			key, ok := []byte(nil), true
			args, _ := r.Args.(map[string]any)
			for _, name := range p.Per {
				v, has := args[name]
				if !has {
					ok = false
					break
				}
				key = append(form.Append(key, v), 0)
			}
			if !ok {
				continue
			}
			n++
			k := string(key)
			seen[k] = append(seen[k], i)
			most = max(most, len(seen[k]))
			if len(seen[k]) > p.AtMost {
				first := seen[k][0]
				per := ""
				if len(p.Per) > 0 {
					per = " with " + perValues(p.Per, args)
				}
				return false, fmt.Sprintf("expected %s%s; %s is number %d%s (the first: call %d)", want, named, step(calls, i), len(seen[k]), per, first+1)
			}
		}
		return true, fmt.Sprintf("%s%s (expected %s; the most: %d)", held(p.Name), countText(n, p.Calls), want, most)
	}
	return false, "expected a policy with a rule: preceded_by, not_after or at_most"
}

// selects says whether call r is one the selector means.
func selects(s *spec.CallSel, r tool.Record) bool {
	if s == nil {
		return false
	}
	if len(s.Tools) > 0 && !slices.Contains(s.Tools, r.Name) {
		return false
	}
	if s.Error != nil && *s.Error != r.Result.IsError {
		return false
	}
	if s.Where != "" && (s.Where == spec.WhereOwn) != r.Own {
		return false
	}
	return s.With == nil || s.With.Match(r.Args)
}

// sameArgs says whether r and other agree on every pair of same: r's
// argument and other's, both present and equal.
func sameArgs(same [][2]string, r, other tool.Record) bool {
	a, _ := r.Args.(map[string]any)
	b, _ := other.Args.(map[string]any)
	for _, s := range same {
		x, ok1 := a[s[0]]
		y, ok2 := b[s[1]]
		if !ok1 || !ok2 || !value.Equal(x, y) {
			return false
		}
	}
	return true
}

// selText says what a selector means, for messages.
func selText(s *spec.CallSel) string {
	if s == nil {
		return "(nothing)"
	}
	t := "a call"
	if len(s.Tools) > 0 {
		t = strings.Join(s.Tools, " or ")
	}
	if s.With != nil {
		t += " with " + value.Canonical(s.With.Source())
	}
	if s.Error != nil {
		if *s.Error {
			t += " answered with an error"
		} else {
			t += " answered without an error"
		}
	}
	switch s.Where {
	case spec.WhereOwn:
		t += " (the agent's own)"
	case spec.WhereServed:
		t += " (served)"
	}
	return t
}

func sameText(same [][2]string) string {
	if len(same) == 0 {
		return ""
	}
	return " with the same " + sameNames(same)
}

func sameNames(same [][2]string) string {
	parts := make([]string, len(same))
	for i, s := range same {
		parts[i] = s[0]
		if s[1] != s[0] {
			parts[i] += " (its " + s[1] + ")"
		}
	}
	return strings.Join(parts, ", ")
}

func perValues(per []string, args map[string]any) string {
	parts := make([]string, len(per))
	for i, name := range per {
		parts[i] = name + " " + value.Truncate(value.Canonical(args[name]), 80)
	}
	return strings.Join(parts, ", ")
}

// held opens a passing policy's message: its name, when it has one.
func held(name string) string {
	if name == "" {
		return ""
	}
	return fmt.Sprintf("policy %q held: ", name)
}

// verb is the subject of a sentence about n calls (n > 0).
func verb(n int) string {
	switch n {
	case 1:
		return "it"
	}
	return "each"
}

func untilText(s *spec.CallSel) string {
	if s == nil {
		return ""
	}
	return " until " + selText(s)
}

// countText says how many calls of s there were.
func countText(n int, s *spec.CallSel) string {
	t := selText(s)
	if len(s.Tools) > 0 {
		t = " of " + t
	} else {
		t = strings.TrimPrefix(t, "a call")
	}
	if n == 0 {
		return "no call" + t + " was made"
	}
	return termtext.Count(n, "call") + t
}

// step names call i of calls, as the report lists it: its number, tool,
// arguments, turn and where it ran.
func step(calls []tool.Record, i int) string {
	r := calls[i]
	s := "call " + strconv.Itoa(i+1) + " (" + oneCall(r) + ", turn " + strconv.Itoa(r.Turn)
	if r.Own {
		s += ", the agent's own"
	}
	return s + ")"
}
