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

// crewai's names of a server's tools, exactly: one over 64 characters
// is cut with a hash, and no suffix tells its tool (the hashes are
// crewai 1.15.30's sanitize_tool_name of the same names).
func TestNamesCrewai(t *testing.T) {
	n := NewNames([]string{"lookup_order", "getOrder"}, nil)
	n.Server("http://127.0.0.1:44891/cases/another-gold-ord-4ead6ae7/mcp")
	for name, want := range map[string]string{
		"mcp_127_0_0_1_44891_cases_another_gold_ord_4ead6ae7_mcp_a8316492": "lookup_order",
		"mcp_127_0_0_1_44891_cases_another_gold_ord_4ead6ae7_mcp_160e0265": "getOrder",
	} {
		if got, ok := n.Suite(name); !ok || got != want {
			t.Errorf("Suite(%q) = %q, %t; want %q", name, got, ok, want)
		}
	}
	short := NewNames([]string{"getOrder"}, nil)
	short.Server("http://127.0.0.1:44891/cases/x/mcp")
	if got, ok := short.Suite("mcp_127_0_0_1_44891_cases_x_mcp_get_order"); !ok || got != "getOrder" {
		t.Errorf("a camelCase tool: %q, %t", got, ok)
	}
	if got := crewaiServer("http://127.0.0.1:44891/cases/another-gold-ord-4ead6ae7/mcp"); got != "mcp_127_0_0_1:44891_cases_another-gold-ord-4ead6ae7_mcp" {
		t.Errorf("crewaiServer: %q", got)
	}
}
