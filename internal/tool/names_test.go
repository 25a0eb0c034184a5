package tool

import "testing"

func TestNames(t *testing.T) {
	n := NewNames([]string{"lookup_order", "order"}, map[string]string{"find_it": "lookup_order"})
	for _, tc := range []struct {
		name, want string
		suite      bool
	}{
		{"lookup_order", "lookup_order", true},
		{"order", "order", true},
		{"find_it", "lookup_order", true},
		{"mcp__dryfire__lookup_order", "lookup_order", true}, // Claude Code
		{"mcp__tools__lookup_order", "lookup_order", true},   // any server's
		{"dryfire__lookup_order", "lookup_order", true},      // Codex, Gemini CLI
		{"dryfire_lookup_order", "lookup_order", true},       // Mastra, LangChain's prefix
		{"my-dryfire.lookup_order", "lookup_order", true},
		{"mcp_127_0_0_1_18556_cases_refund_1ebaf566_mcp_lookup_order", "lookup_order", true}, // crewai
		{"cancel_order", "cancel_order", false},                                              // the agent's own: not "order"
		{"Write", "Write", false},
		{"mcp__dryfire__delete", "mcp__dryfire__delete", false},
		{"tools_lookup_order", "tools_lookup_order", false}, // a prefix without dryfire needs an alias
	} {
		got, suite := n.Suite(tc.name)
		if got != tc.want || suite != tc.suite {
			t.Errorf("Suite(%q) = %q, %t; want %q, %t", tc.name, got, suite, tc.want, tc.suite)
		}
		if tc.suite && !n.Is(tc.name, tc.want) {
			t.Errorf("Is(%q, %q) = false", tc.name, tc.want)
		}
	}
	var none *Names
	if got, suite := none.Suite("x"); got != "x" || suite {
		t.Errorf("nil Names: %q %t", got, suite)
	}
	if !none.Is("mcp__dryfire__x", "x") || none.Is("find_it", "lookup_order") {
		t.Error("nil Names: decorations only")
	}
}
