package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/report"
)

// fakeCLI stands in for a coding-agent CLI in node_modules/.bin: it says
// its version, prints what it was given (its arguments, its input, the
// variables the adapter sets, the configuration files in its home) and
// exits with $FAKE_EXIT.
const fakeCLI = `#!/bin/sh
if [ "$1" = --version ]; then echo "9.9.9 (fake)"; exit 0; fi
echo "args: $*"
echo "input: $(cat)"
echo "home: $([ "$HOME" != "$REAL_HOME" ] && [ -d "$HOME" ] && echo private)"
for v in CODEX_HOME CLAUDE_CONFIG_DIR GEMINI_CLI_HOME CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC ENABLE_TOOL_SEARCH GOOGLE_API_KEY XDG_CONFIG_HOME; do
	eval "val=\${$v-unset}"
	case "$val" in "$HOME"*) val="HOME${val#"$HOME"}";; esac
	echo "$v=$val"
done
cd "$HOME" && find . -type f | sort | while read -r f; do echo "== $f"; cat "$f"; done
echo "$HOME" > "$FAKE_OUT"
exit "${FAKE_EXIT:-0}"
`

// Each CLI of agent.cli, found in node_modules/.bin, runs with the
// adapter's arguments, its input on stdin, a private home holding the
// configuration written for the case (removed after it), the variables
// that keep it from calling home; agent.env wins over the adapter's.
func TestCodingCLIAdapters(t *testing.T) {
	t.Setenv("REAL_HOME", os.Getenv("HOME"))
	t.Setenv("XDG_CONFIG_HOME", "/nowhere")
	for _, tc := range []struct {
		cli, exe string
		want     []string
	}{
		{"claude-code", "claude", []string{
			"args: -p --output-format text --mcp-config ",
			"/dryfire-mcp.json --verbose\n",
			"CLAUDE_CONFIG_DIR=HOME/.claude\n", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1\n",
			"ENABLE_TOOL_SEARCH=true\n", // agent.env's
			"== ./.claude/settings.json\n", `"defaultMode": "acceptEdits"`, `"mcp__dryfire"`,
			"== ./dryfire-mcp.json\n", `"type": "http"`, `/mcp"`,
		}},
		{"codex", "codex", []string{
			"args: exec --skip-git-repo-check --color never --verbose -\n",
			"CODEX_HOME=HOME/.codex\n",
			"== ./.codex/config.toml\n", `model_provider = "dryfire"`, `wire_api = "responses"`, `approval_policy = "never"`,
			`[mcp_servers.dryfire]`, `trust_level = "trusted"`, "plugins = false\n",
		}},
		{"gemini-cli", "gemini", []string{
			"args: --approval-mode yolo --verbose\n",
			"GOOGLE_API_KEY=unset\n",
			"== ./.gemini/settings.json\n", `"selectedType": "gemini-api-key"`, `"name": "gemini-2.5-pro"`, `"httpUrl": "http://127.0.0.1:`,
			`"usageStatisticsEnabled": false`,
		}},
	} {
		t.Run(tc.cli, func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("TMPDIR", t.TempDir())
			bin := filepath.Join(dir, "suite", "node_modules", ".bin")
			os.MkdirAll(bin, 0o755)
			os.WriteFile(filepath.Join(bin, tc.exe), []byte(fakeCLI), 0o755)
			os.MkdirAll(filepath.Join(dir, "suite", "repo"), 0o755)
			os.WriteFile(filepath.Join(dir, "suite", "repo", "a.txt"), []byte("a\n"), 0o644)
			suite := `version: 1
agent:
  cli: ` + tc.cli + `
  provider: script
  command: [` + tc.exe + `, --verbose]
  network: open
  env: {ENABLE_TOOL_SEARCH: "true", FAKE_OUT: "` + filepath.Join(dir, "home.txt") + `"}
script: [{text: done, optional: true}]
workspace: repo
cases:
  - name: fix
    input: Fix the failing test.
    expect:
      - output: {contains: "input: Fix the failing test."}
      - output: {contains: "home: private"}
      - output: {contains: "XDG_CONFIG_HOME=unset"}
`
			// command's first word, the CLI's own name, is looked for in
			// node_modules/.bin as without command (not on PATH).
			file := filepath.Join(dir, "suite", "cli.dryfire.yaml")
			os.WriteFile(file, []byte(suite), 0o644)
			rep, err := runner.Run(context.Background(), load(t, file), runner.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c := rep.Cases[0]
			if c.Status != report.Passed {
				t.Fatalf("%s: %s\n%s\n%s", c.Status, c.Reason, c.Output, c.Stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(c.Output, w) {
					t.Errorf("the CLI was not given %q:\n%s", w, c.Output)
				}
			}
			home, _ := os.ReadFile(filepath.Join(dir, "home.txt"))
			if _, err := os.Stat(strings.TrimSpace(string(home))); len(home) == 0 || !os.IsNotExist(err) {
				t.Errorf("the private home %q is left after the case (%v)", home, err)
			}
		})
	}
}

// A CLI of another version than the adapter's that fails has its
// version named in the reason; it is found in node_modules/.bin of a
// directory above the suite's.
func TestCodingCLIUntestedVersion(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "node_modules", ".bin")
	os.MkdirAll(bin, 0o755)
	os.WriteFile(filepath.Join(bin, "claude"), []byte(fakeCLI), 0o755)
	os.MkdirAll(filepath.Join(dir, "tests"), 0o755)
	file := filepath.Join(dir, "tests", "cli.dryfire.yaml")
	os.WriteFile(file, []byte("version: 1\nagent:\n  cli: claude-code\n  provider: script\n  network: open\n  env: {FAKE_EXIT: \"3\", FAKE_OUT: /dev/null}\nscript: [{text: done, optional: true}]\ncases:\n  - name: fails\n    input: hi\n"), 0o644)
	suites := load(t, file)
	suites[0].Root = dir // the project root
	rep, err := runner.Run(context.Background(), suites, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	want := "claude-code 9.9.9 is not the version dryfire's adapter was tested with (claude-code 2.1.328): its configuration may have changed"
	if c.Status != report.Errored || !strings.Contains(c.Reason, want) || !strings.Contains(c.Reason, "npm install @anthropic-ai/claude-code@2.1.328") {
		t.Errorf("%s: %s\nwant the reason to say %q", c.Status, c.Reason, want)
	}

	// Nowhere to be found: the error says what to install.
	os.RemoveAll(bin)
	t.Setenv("PATH", t.TempDir())
	rep, err = runner.Run(context.Background(), suites, runner.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c = rep.Cases[0]
	want = "agent.cli claude-code: claude is neither in node_modules/.bin (from " + filepath.Join(dir, "tests") + " up to the project root) nor on PATH: install @anthropic-ai/claude-code (npm install @anthropic-ai/claude-code@2.1.328"
	if c.Status != report.Errored || !strings.Contains(c.Reason, want) {
		t.Errorf("%s: %s\nwant %q", c.Status, c.Reason, want)
	}
}
