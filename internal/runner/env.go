package runner

// What an agent.command program is told: the variables that lead it to
// its case (the base URLs of the case's model endpoint with dummy keys,
// its tool URLs, its name and input), and which key a live run lacks.

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/model"
	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
)

// maxInputEnv is the largest input also given in DRYFIRE_INPUT: Linux
// refuses an environment string of 128 KiB or more.
const maxInputEnv = 128<<10 - len("DRYFIRE_INPUT=") - 1

// Variables dryfire sets for an agent.command program.
const (
	EnvMCPURL   = "DRYFIRE_MCP_URL"
	EnvToolsURL = "DRYFIRE_TOOLS_URL"
	EnvOpsURL   = "DRYFIRE_OPS_URL"   // world suites
	EnvWorldURL = "DRYFIRE_WORLD_URL" // world suites
	EnvCase     = "DRYFIRE_CASE"
	EnvInput    = "DRYFIRE_INPUT"
	// The case's tools over MCP on stdio: a command line (shell-quoted)
	// and the same as a JSON array, for a client that starts its MCP
	// server itself.
	EnvMCPCommand = "DRYFIRE_MCP_COMMAND"
	EnvMCPArgv    = "DRYFIRE_MCP_ARGV"
)

// dryfireEnv are the variables dryfire sets for a program; the run's own
// values of them never reach it.
var dryfireEnv = []string{
	"OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	EnvMCPURL, EnvToolsURL, EnvOpsURL, EnvWorldURL, EnvCase, EnvInput, EnvWorkspace, EnvNow,
	EnvMCPCommand, EnvMCPArgv, EnvConversation,
}

// bridgeEnv are DRYFIRE_MCP_COMMAND and DRYFIRE_MCP_ARGV: the bridge
// command with the case's MCP URL after it.
func bridgeEnv(bridge []string, url string) []string {
	argv := append(slices.Clip(bridge), url)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = program.ShellQuote(a)
	}
	js, _ := json.Marshal(argv)
	return []string{EnvMCPCommand + "=" + strings.Join(words, " "), EnvMCPArgv + "=" + string(js)}
}

// bindingEnv are the variables that lead an agent to one case served at
// prefix, in a fixed order: the base URLs pointing at the case's
// endpoint, dummy keys (the endpoint adds the real ones to the calls it
// records), the case's tool URLs (in a world suite, /ops and /world too),
// its name and input (unless too long for an environment).
func bindingEnv(prefix string, c *spec.Case, world bool) [][2]string {
	out := [][2]string{
		{"OPENAI_BASE_URL", prefix + "/v1"},
		{"ANTHROPIC_BASE_URL", prefix},
		{"OPENAI_API_KEY", modelserver.DummyKey},
		{"ANTHROPIC_API_KEY", modelserver.DummyKey},
		{EnvMCPURL, prefix + "/mcp"},
		{EnvToolsURL, prefix + "/tools"},
	}
	if world {
		out = append(out, [2]string{EnvOpsURL, prefix + "/ops"}, [2]string{EnvWorldURL, prefix + "/world"})
	}
	out = append(out, [2]string{EnvCase, c.Name})
	if len(c.Input) <= maxInputEnv {
		out = append(out, [2]string{EnvInput, c.Input})
	}
	return out
}

// agentEnv is the environment of a program in one case: the run's, with
// dryfire's variables (bindingEnv) replaced, and loopback kept away from
// any proxy.
// extra are more variables of dryfire's (a world's package APIs), which
// replace the run's own values too.
func agentEnv(env []string, prefix string, c *spec.Case, world bool, extra ...[2]string) []string {
	drop := func(k string) bool {
		return isDryfireEnv(k) || strings.HasPrefix(k, EnvHTTPURLPrefix) || isExtra(k, extra)
	}
	return program.Environ(env, drop, append(bindingEnv(prefix, c, world), extra...))
}

func isExtra(k string, extra [][2]string) bool {
	for _, kv := range extra {
		if kv[0] == k {
			return true
		}
	}
	return false
}

func isDryfireEnv(k string) bool {
	for _, d := range dryfireEnv {
		if k == d {
			return true
		}
	}
	return false
}

// commandKeyMissing says which key a case of an agent.command suite that
// will call the live model lacks, "" when none: the key of the provider's
// API when it names one whose calls go to the public API; with no
// provider, a key of either API, unless a base URL says calls go
// elsewhere (a local server takes none).
func commandKeyMissing(a *spec.Agent, getenv func(string) string) string {
	usable := func(p, base string) bool {
		cred := model.Resolve(p, base, getenv)
		return p == provider.OpenAICompatible || cred.Key != "" || !cred.Public
	}
	if a.Provider != "" {
		if usable(a.Provider, a.BaseURL) {
			return ""
		}
		return model.KeyEnv(a.Provider)
	}
	if usable(provider.OpenAI, "") || usable(provider.Anthropic, "") {
		return ""
	}
	return model.KeyEnv(provider.OpenAI) + " or " + model.KeyEnv(provider.Anthropic)
}
