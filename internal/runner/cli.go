package runner

// Coding-agent CLIs (agent.cli): Claude Code, Codex CLI and Gemini CLI run
// as an agent.command program is, with what each needs to run offline,
// non-interactively, in the case's workspace: a private home holding a
// configuration written for the case (its model calls to the case's
// endpoint, the case's tools as the MCP server "dryfire", every call home
// off, permission to act without a prompt, as root too), the input on
// standard input, the answer on standard output. docs/coding-agents.md
// says what each setting is for and which versions were tried.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/plan"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/reqmatch"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// codingCLI is what dryfire knows of one CLI.
type codingCLI struct {
	name   string // agent.cli
	pkg    string // its npm package
	tested string // the version the adapter was tested with
	args   []string
	env    [][2]string
	unset  []string                         // variables of dryfire's it does without
	write  func(home, url, ws string) error // its configuration, in home
	// homeEnv names the directory of its own under home (homeDir),
	// beside HOME: what leads it to its configuration.
	homeEnv, homeDir string
	// adds are the properties it adds to the input schema of every
	// tool it offers the model, the suite's too (not differences from
	// the declaration: agent.offered_tools).
	adds []string
}

// clis are the adapters, by agent.cli.
var clis = map[string]*codingCLI{
	spec.CLIClaudeCode: {
		name: spec.CLIClaudeCode, pkg: "@anthropic-ai/claude-code", tested: "2.1.328",
		// -p: one prompt (standard input), the answer on standard output.
		args: []string{"-p", "--output-format", "text"},
		env: [][2]string{
			{"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"}, // telemetry, error reports, update checks, feature flags
			{"DISABLE_TELEMETRY", "1"},
			{"DISABLE_ERROR_REPORTING", "1"},
			{"DISABLE_AUTOUPDATER", "1"},
			{"CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY", "1"},
			// MCP tools offered to the model at once, not behind its
			// ToolSearch tool: a script calls mcp__dryfire__NAME directly.
			{"ENABLE_TOOL_SEARCH", "false"},
		},
		write: writeClaudeCode, homeEnv: "CLAUDE_CONFIG_DIR", homeDir: ".claude",
	},
	spec.CLICodex: {
		name: spec.CLICodex, pkg: "@openai/codex", tested: "0.169.0",
		// exec: non-interactive; "-": the prompt from standard input.
		args:  []string{"exec", "--skip-git-repo-check", "--color", "never"},
		write: writeCodex, homeEnv: "CODEX_HOME", homeDir: ".codex",
	},
	spec.CLIGemini: {
		name: spec.CLIGemini, pkg: "@google/gemini-cli", tested: "0.61.0",
		// Standard input not a terminal: one prompt, the answer on
		// standard output. yolo: every tool call approved.
		args:  []string{"--approval-mode", "yolo"},
		unset: []string{"GOOGLE_API_KEY"}, // it would be read before GEMINI_API_KEY, and said so on every call
		// A boolean that tells it to run the call after the turn's
		// earlier ones rather than beside them.
		adds:  []string{"wait_for_previous"},
		write: writeGemini, homeEnv: "GEMINI_CLI_HOME",
	},
}

// cliMatch are the match rules of a case of agent a: its CLI's preset
// first (agent.cli: the case's paths, dates, ids, the machine's facts),
// then the suite's, agent's and case's, rules.
func cliMatch(a *spec.Agent, rules []reqmatch.Rule) []reqmatch.Rule {
	if a.CLI == "" {
		return rules
	}
	return append([]reqmatch.Rule{{Preset: a.CLI}}, rules...)
}

// offeredAsDeclared is d, tool t as the CLI of agent.cli cli offered it,
// without the properties the CLI adds to every tool's input schema that
// t does not declare.
func offeredAsDeclared(cli string, t plan.Tool, d model.ToolDef) model.ToolDef {
	c := clis[cli]
	if c == nil || len(c.adds) == 0 {
		return d
	}
	schema, _ := d.InputSchema.(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	declared, _ := t.Input.(map[string]any)
	own, _ := declared["properties"].(map[string]any)
	var keep map[string]any
	for _, k := range c.adds {
		if _, ok := props[k]; !ok {
			continue
		}
		if _, ok := own[k]; ok {
			continue
		}
		if keep == nil {
			keep = maps.Clone(props)
		}
		delete(keep, k)
	}
	if keep != nil {
		schema = maps.Clone(schema)
		schema["properties"] = keep
		d.InputSchema = schema
	}
	return d
}

// claudeCodeAllow are the built-in tools Claude Code may use without a
// prompt (as root too, where --dangerously-skip-permissions is refused),
// and the tools of the MCP server dryfire.
var claudeCodeAllow = []string{"Bash", "Edit", "MultiEdit", "Write", "Read", "Glob", "Grep", "NotebookEdit", "TodoWrite", "Task", "Agent", "Skill", "mcp__dryfire"}

func writeClaudeCode(home, url, ws string) error {
	settings := map[string]any{
		"permissions":                map[string]any{"allow": claudeCodeAllow, "defaultMode": "acceptEdits"},
		"enableAllProjectMcpServers": true, // a team's own .mcp.json in the workspace
		"includeCoAuthoredBy":        false,
	}
	mcp := map[string]any{"mcpServers": map[string]any{"dryfire": map[string]any{"type": "http", "url": url + "/mcp"}}}
	return writeFiles(home, map[string]any{".claude/settings.json": settings, "dryfire-mcp.json": mcp})
}

func writeCodex(home, url, ws string) error {
	q := strconv.Quote
	toml := strings.Join([]string{
		// A model outside Codex's catalog: its tools are then the shell
		// (exec_command) and the MCP servers' (a namespace each, offered
		// at once), each a call on the wire that a script can make and a
		// check can read; the catalog's models offer a JavaScript "code
		// mode" or defer MCP tools behind a tool_search of Codex's own.
		// A recording names a real one in agent.command (-m MODEL).
		`model = "dryfire-script"`,
		`model_provider = "dryfire"`,
		`approval_policy = "never"`,
		// Codex's own sandbox is off: dryfire's (agent.network) confines it.
		`sandbox_mode = "danger-full-access"`,
		`check_for_update_on_startup = false`,
		`web_search = "disabled"`,
		``,
		`[analytics]`,
		`enabled = false`,
		``,
		`[feedback]`,
		`enabled = false`,
		``,
		// Plugins: no fetch of OpenAI's curated list (github.com).
		`[features]`,
		`plugins = false`,
		`remote_plugin = false`,
		`plugin_discovery_prefetch = false`,
		`recommended_plugins = false`,
		``,
		// A provider of its own: plain HTTP, no WebSocket (the built-in
		// openai provider's default).
		`[model_providers.dryfire]`,
		`name = "dryfire"`,
		`base_url = ` + q(url+"/v1"),
		`env_key = "OPENAI_API_KEY"`,
		`wire_api = "responses"`,
		`request_max_retries = 0`,
		`stream_max_retries = 0`,
		``,
		`[mcp_servers.dryfire]`,
		`url = ` + q(url+"/mcp"),
		``,
		`[projects.` + q(ws) + `]`,
		`trust_level = "trusted"`,
		``,
	}, "\n")
	dir := filepath.Join(home, ".codex")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config.toml"), []byte(toml), 0o600)
}

func writeGemini(home, url, ws string) error {
	settings := map[string]any{
		// An API key (the dummy one dryfire sets): without an auth type
		// it exits 41, "Invalid auth method selected".
		"security": map[string]any{
			"auth":        map[string]any{"selectedType": "gemini-api-key"},
			"folderTrust": map[string]any{"enabled": false}, // an untrusted folder overrides the approval mode
		},
		// A fixed model: no routing call to choose one first.
		"model":     map[string]any{"name": "gemini-2.5-pro"},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"telemetry": map[string]any{"enabled": false},
		"general":   map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
		"mcpServers": map[string]any{
			"dryfire": map[string]any{"httpUrl": url + "/mcp", "trust": true},
		},
	}
	return writeFiles(home, map[string]any{".gemini/settings.json": settings})
}

// writeFiles writes each value as JSON at its path under home.
func writeFiles(home string, files map[string]any) error {
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data, err := json.MarshalIndent(files[name], "", "  ")
		if err != nil {
			return err
		}
		p := filepath.Join(home, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, append(data, '\n'), 0o600); err != nil {
			return err
		}
	}
	return nil
}

// cliRun is one case's run of a CLI: its private home (removed by
// close), its command line and its variables.
type cliRun struct {
	cli     *codingCLI
	exe     string
	version string // what exe --version said; "" when it could not say
	home    string
	argv    []string
	env     [][2]string
}

// prepareCLI finds the case's CLI, asks its version (once per run per
// executable) and writes its home for the case served at url, whose
// workspace is ws ("" for none: the suite's directory).
func prepareCLI(ctx context.Context, j job, url, ws string) (*cliRun, error) {
	a := &j.suite.Agent
	c := clis[a.CLI]
	if c == nil {
		return nil, fmt.Errorf("%s: agent.cli %q is not a CLI dryfire has an adapter for", a.CLIPos, a.CLI)
	}
	exe, err := findCLI(j.suite, c)
	if err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "dryfire-home-")
	if err != nil {
		return nil, err
	}
	r := &cliRun{cli: c, exe: exe, home: home, version: cliVersion(ctx, exe)}
	dir := cmp.Or(ws, filepath.Dir(j.suite.File))
	if err := c.write(home, url, dir); err != nil {
		r.close()
		return nil, fmt.Errorf("agent.cli %s: writing its configuration: %w", c.name, err)
	}
	r.argv = append([]string{exe}, c.args...)
	if c.name == spec.CLIClaudeCode {
		r.argv = append(r.argv, "--mcp-config", filepath.Join(home, "dryfire-mcp.json"))
	}
	r.argv = append(r.argv, program.AbsArgs(filepath.Dir(j.suite.File), a.Command[1:])...)
	if c.name == spec.CLICodex {
		r.argv = append(r.argv, "-")
	}
	r.env = append([][2]string{{"HOME", home}, {c.homeEnv, filepath.Join(home, c.homeDir)}}, c.env...)
	return r, nil
}

// close removes the home.
func (r *cliRun) close() {
	if r != nil {
		os.RemoveAll(r.home)
	}
}

// environ is env with the CLI's variables set, less those the suite's
// agent.env sets itself, and the XDG directories left to follow HOME.
func (r *cliRun) environ(env []string, own []spec.EnvVar) []string {
	set := slices.DeleteFunc(slices.Clone(r.env), func(kv [2]string) bool { return isOwn(kv[0], own) })
	drop := func(k string) bool {
		return strings.HasPrefix(k, "XDG_") && strings.HasSuffix(k, "_HOME") || slices.Contains(r.cli.unset, k) || isExtra(k, set)
	}
	return program.Environ(env, drop, set)
}

// untested says, for a run that failed, that the CLI's version is not
// the one the adapter was tested with: its configuration may have
// changed. "" when it is, or its version is not known.
func (r *cliRun) untested() string {
	if r == nil || r.version == "" || r.version == r.cli.tested {
		return ""
	}
	return fmt.Sprintf("%s %s is not the version dryfire's adapter was tested with (%s %s): its configuration may have changed (docs/coding-agents.md says what the adapter writes); install the tested one (npm install %s@%s)",
		r.cli.name, r.version, r.cli.name, r.cli.tested, r.cli.pkg, r.cli.tested)
}

// findCLI is the CLI's executable: agent.command's first word when it is
// written and not the CLI's own name (codex, claude, gemini), else
// node_modules/.bin/NAME in the suite's directory or one above it within
// the project root, else NAME on PATH.
func findCLI(s *spec.Suite, c *codingCLI) (string, error) {
	a := &s.Agent
	dir := filepath.Dir(s.File)
	name := spec.CLIExecutable(c.name)
	if !a.CLIFound && a.Command[0] != name { // the CLI's own name is looked for as without command
		exe := a.Command[0]
		if strings.ContainsRune(exe, filepath.Separator) || strings.ContainsRune(exe, '/') {
			if !filepath.IsAbs(exe) {
				exe = filepath.Join(dir, exe)
			}
			return filepath.Abs(exe)
		}
		p, err := exec.LookPath(exe)
		if err != nil {
			return "", fmt.Errorf("%s: agent.command: %s (agent.cli %s) is not on PATH", a.CommandPos, exe, c.name)
		}
		return p, nil
	}
	root, _ := filepath.Abs(s.ProjectRoot())
	d, _ := filepath.Abs(dir)
	for {
		p := filepath.Join(d, "node_modules", ".bin", name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		up := filepath.Dir(d)
		if d == root || up == d || !strings.HasPrefix(d, root) {
			break
		}
		d = up
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s: agent.cli %s: %s is neither in node_modules/.bin (from %s up to the project root) nor on PATH: install %s (npm install %s@%s, the version dryfire is tested with), or give its path in agent.command",
		a.CLIPos, c.name, name, dir, c.pkg, c.pkg, c.tested)
}

// cliVersionTimeout bounds a CLI's --version.
const cliVersionTimeout = 30 * time.Second

var (
	versionsMu sync.Mutex
	versions   = map[string]func() string{} // by executable, its size and time
)

var semver = regexp.MustCompile(`\d+\.\d+\.\d+(?:-[0-9A-Za-z.]+)?`)

// cliVersion is the version exe --version prints, asked once per
// executable file; "" when it says none.
func cliVersion(ctx context.Context, exe string) string {
	key := exe
	if st, err := os.Stat(exe); err == nil {
		key += "\x00" + strconv.FormatInt(st.Size(), 10) + "\x00" + st.ModTime().String()
	}
	versionsMu.Lock()
	v := versions[key]
	if v == nil {
		v = sync.OnceValue(func() string {
			ctx, cancel := context.WithTimeout(ctx, cliVersionTimeout)
			defer cancel()
			home, err := os.MkdirTemp("", "dryfire-home-")
			if err != nil {
				return ""
			}
			defer os.RemoveAll(home)
			cmd := exec.CommandContext(ctx, exe, "--version")
			cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+home, "CLAUDE_CONFIG_DIR="+home)
			out, err := cmd.Output()
			if _, ok := errors.AsType[*exec.ExitError](err); err != nil && !ok {
				return ""
			}
			return semver.FindString(string(out))
		})
		versions[key] = v
	}
	versionsMu.Unlock()
	return v()
}
