package spec

import "testing"

func TestSideCallsOf(t *testing.T) {
	for _, tc := range []struct {
		cli, key, want string
	}{
		{CLIClaudeCode, "", "claude-code"}, // on by default for the adapter
		{CLIClaudeCode, "none", ""},
		{"", "", ""}, // opt-in under agent.command
		{"", "claude-code", "claude-code"},
		{CLICodex, "", ""},
	} {
		if got := SideCallsOf(&Agent{CLI: tc.cli, SideCalls: tc.key}); got != tc.want {
			t.Errorf("agent.cli %q, agent.side_calls %q: %q, want %q", tc.cli, tc.key, got, tc.want)
		}
	}
}
