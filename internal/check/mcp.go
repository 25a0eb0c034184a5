package check

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
)

// mcpCheck judges read, not_read and prompted from the case's MCP
// requests beside its tool calls: only answered ones count.
func mcpCheck(c *spec.Check, f *Facts) (bool, string) {
	n := 0
	var seen []string
	for _, u := range f.MCP {
		if u.Error != "" {
			continue
		}
		switch {
		case c.Kind == spec.CheckPrompted && u.Method == "prompts/get":
			seen = append(seen, u.Name+promptArgsText(u.Arguments))
			if u.Name == c.Prompt && argsMatch(c.PromptWith, u.Arguments) {
				n++
			}
		case c.Kind != spec.CheckPrompted && u.Method == "resources/read":
			seen = append(seen, u.URI)
			if u.URI == c.URI {
				n++
			}
		}
	}
	got := "nothing"
	if len(seen) > 0 {
		got = strings.Join(seen, ", ")
	}
	what, verb, did := "a read of resource "+c.URI, "read", "the agent read: "
	if c.Kind == spec.CheckPrompted {
		what, verb, did = "a get of prompt "+c.Prompt+promptArgsText(c.PromptWith), "got", "the agent got: "
	}
	switch {
	case c.Kind == spec.CheckNotRead:
		if n == 0 {
			return true, fmt.Sprintf("resource %s was never read", c.URI)
		}
		return false, fmt.Sprintf("expected no read of resource %s; it was read %s", c.URI, termtext.Count(n, "time"))
	case c.Times != nil:
		if n == *c.Times {
			return true, fmt.Sprintf("%s: %s %s", what, verb, termtext.Count(n, "time"))
		}
		return false, fmt.Sprintf("expected %s %s; %s %s (%s%s)", what, termtext.Count(*c.Times, "time"), verb, termtext.Count(n, "time"), did, got)
	case n > 0:
		return true, fmt.Sprintf("%s: %s %s", what, verb, termtext.Count(n, "time"))
	}
	return false, fmt.Sprintf("expected %s; %s%s", what, did, got)
}

// argsMatch says whether every argument of want has its value in got.
func argsMatch(want, got map[string]string) bool {
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			return false
		}
	}
	return true
}

// promptArgsText is arguments as (k=v, ...) in key order, "" for none.
func promptArgsText(args map[string]string) string {
	if len(args) == 0 {
		return ""
	}
	keys := slices.Sorted(maps.Keys(args))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + args[k]
	}
	return "(" + strings.Join(parts, ", ") + ")"
}
