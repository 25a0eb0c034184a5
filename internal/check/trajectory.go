package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/value"
)

// trajectory compares the calls made with a trajectory check's calls as
// a whole, by its match and argument modes.
func trajectory(c *spec.Check, f *Facts) (bool, string) {
	want, made := c.Trajectory, f.Calls
	fits := func(w *spec.TrajectoryCall, r tool.Record) bool { return fitsCall(w, r, c.TrajectoryArgs) }
	mode := fmt.Sprintf("(match %s, args %s)", c.TrajectoryMatch, c.TrajectoryArgs)
	madeList := "the calls made were " + callList(made)
	if len(made) == 0 {
		madeList = "no tool was called at all"
	}
	if c.TrajectoryMatch == spec.TrajectoryStrict {
		for i := 0; i < max(len(want), len(made)); i++ {
			switch {
			case i >= len(made):
				return false, fmt.Sprintf("expected %s %s; call %d, %s, was not made; %s", termtext.Count(len(want), "call"), mode, i+1, entry(want[i]), madeList)
			case i >= len(want):
				return false, fmt.Sprintf("expected %s %s; call %d, %s, is one more; %s", termtext.Count(len(want), "call"), mode, i+1, oneCall(made[i]), madeList)
			case !fits(want[i], made[i]):
				return false, fmt.Sprintf("expected %s %s; call %d should be %s, it was %s; %s", termtext.Count(len(want), "call"), mode, i+1, entry(want[i]), oneCall(made[i]), madeList)
			}
		}
		return true, fmt.Sprintf("the %s made were the trajectory's, in order %s", termtext.Count(len(made), "call"), mode)
	}
	pairOf := match(want, made, fits)
	var missing, extra []string
	used := make([]bool, len(made))
	for i, j := range pairOf {
		if j < 0 {
			missing = append(missing, entry(want[i]))
		} else {
			used[j] = true
		}
	}
	for j, u := range used {
		if !u {
			extra = append(extra, oneCall(made[j]))
		}
	}
	var problems []string
	checkMissing := c.TrajectoryMatch != spec.TrajectorySubset
	checkExtra := c.TrajectoryMatch != spec.TrajectorySuperset
	if checkMissing && len(missing) > 0 {
		problems = append(problems, "not made: "+value.Truncate(strings.Join(missing, ", "), 300))
	}
	if checkExtra && len(extra) > 0 {
		problems = append(problems, "made but not expected: "+value.Truncate(strings.Join(extra, ", "), 300))
	}
	what := map[string]string{
		spec.TrajectoryUnordered: "the trajectory's calls, in any order",
		spec.TrajectorySubset:    "calls among the trajectory's",
		spec.TrajectorySuperset:  "the trajectory's calls, among others",
	}[c.TrajectoryMatch]
	if len(problems) == 0 {
		return true, fmt.Sprintf("the %s made were %s %s", termtext.Count(len(made), "call"), what, mode)
	}
	return false, fmt.Sprintf("expected %s %s; %s; %s", what, mode, strings.Join(problems, "; "), madeList)
}

// fitsCall says whether a call made is the trajectory entry w.
func fitsCall(w *spec.TrajectoryCall, r tool.Record, args string) bool {
	if w.Tool != r.Name {
		return false
	}
	if w.With == nil || args == spec.ArgsIgnore {
		return true
	}
	if !w.With.Match(r.Args) {
		return false
	}
	// Exact: each is a deep subset of the other.
	return args != spec.ArgsExact || value.Compile(r.Args).Match(w.With.Source())
}

// match pairs the trajectory's entries with distinct calls made, as many
// as can be (augmenting paths): pairOf[i] is entry i's call, or -1.
func match(want []*spec.TrajectoryCall, made []tool.Record, fits func(*spec.TrajectoryCall, tool.Record) bool) []int {
	pairOf, owner := slices.Repeat([]int{-1}, len(want)), slices.Repeat([]int{-1}, len(made))
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range made {
			if seen[j] || !fits(want[i], made[j]) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j], pairOf[i] = i, j
				return true
			}
		}
		return false
	}
	for i := range want {
		try(i, make([]bool, len(made)))
	}
	return pairOf
}

func entry(w *spec.TrajectoryCall) string {
	if w.With == nil {
		return w.Tool
	}
	return w.Tool + " " + value.Canonical(w.With.Source())
}

func oneCall(r tool.Record) string {
	return r.Name + " " + value.Truncate(value.Canonical(r.Args), 120)
}

func callList(calls []tool.Record) string {
	parts := make([]string, len(calls))
	for i, r := range calls {
		parts[i] = oneCall(r)
	}
	return value.Truncate(strings.Join(parts, ", "), 300)
}
