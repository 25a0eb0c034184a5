package runner

// What an agent.command program is told: the variables that lead it to
// its case (the base URLs of the case's model endpoint with dummy keys,
// its tool URLs, its name and input), the offline settings that keep
// common frameworks from calling home (OfflineEnv), the suite's own
// agent.env, and which key a live run lacks.

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/modelserver"
	"github.com/dryfire-dev/dryfire/internal/program"
	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/termtext"
	"github.com/dryfire-dev/dryfire/internal/wire"
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
	"OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_BASE", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
	"GOOGLE_GEMINI_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI", "AZURE_OPENAI_ENDPOINT", "AZURE_OPENAI_API_KEY",
	"OLLAMA_HOST", "AWS_ENDPOINT_URL_BEDROCK_RUNTIME", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_PROFILE", // the run's own never reach the program (no bearer token: botocore sends one only over HTTPS)
	"GOOGLE_VERTEX_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_OAUTH_ACCESS_TOKEN",
	EnvMCPURL, EnvToolsURL, EnvOpsURL, EnvWorldURL, EnvCase, EnvInput, EnvWorkspace, EnvNow,
	EnvMCPCommand, EnvMCPArgv, EnvConversation,
}

// bridgeEnv are DRYFIRE_MCP_COMMAND and DRYFIRE_MCP_ARGV: the bridge
// command with the case's MCP URL after it.
func bridgeEnv(bridge []string, url string) []string {
	argv := append(slices.Clip(bridge), url)
	words := make([]string, len(argv))
	for i, a := range argv {
		words[i] = termtext.ShellQuote(a)
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
		{"OPENAI_API_BASE", prefix + "/v1"}, // LangChain's ChatOpenAI, litellm, crewai
		{"ANTHROPIC_BASE_URL", prefix},
		{"ANTHROPIC_API_BASE", prefix},                // litellm reads it before ANTHROPIC_BASE_URL
		{"GOOGLE_GEMINI_BASE_URL", prefix},            // google-genai, @google/genai (which add /v1beta/models/…)
		{"AZURE_OPENAI_ENDPOINT", prefix},             // openai's AzureOpenAI clients (which add /openai/…)
		{"OLLAMA_HOST", prefix},                       // the ollama Python client (which adds /api/chat)
		{"AWS_ENDPOINT_URL_BEDROCK_RUNTIME", prefix},  // the AWS SDKs' Bedrock runtime clients (which add /model/…)
		{"GOOGLE_VERTEX_BASE_URL", prefix},            // google-genai on Vertex AI (which adds /v1beta1/projects/…)
		{"ANTHROPIC_VERTEX_BASE_URL", prefix + "/v1"}, // anthropic's Vertex clients (which add /projects/…)
		{"OPENAI_API_KEY", modelserver.DummyKey},
		{"ANTHROPIC_API_KEY", modelserver.DummyKey},
		{"GEMINI_API_KEY", modelserver.DummyKey},
		{"GOOGLE_API_KEY", modelserver.DummyKey},
		{"AZURE_OPENAI_API_KEY", modelserver.DummyKey}, // what langchain-google-genai reads; the Gemini SDKs read it first
		{"AWS_ACCESS_KEY_ID", modelserver.DummyKey},    // the AWS SDKs sign with these; the endpoint signs again
		{"AWS_SECRET_ACCESS_KEY", modelserver.DummyKey},
		{"AWS_REGION", "us-east-1"}, // any: the calls come to dryfire, which signs for the run's own region
		{"AWS_DEFAULT_REGION", "us-east-1"},
		{"GOOGLE_GENAI_USE_VERTEXAI", "false"}, // the Gemini API's paths, not Vertex AI's
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

// OfflineSetting is a row of the offline settings: what it keeps from
// calling home, and the variables (with their values) that do it.
type OfflineSetting struct {
	What string
	Vars [][2]string
}

// OfflineEnv are the settings dryfire gives every agent program (and an
// SDK drill's binding), so that a framework replays under agent.network:
// isolated with no setting of its own: tracing and telemetry off, and
// what a framework would otherwise fetch at start read from its package.
// docs/agents.md#offline-settings is this table (TestOfflineEnvDocumented).
// A setting any of whose variables the suite's agent.env sets is left
// out whole: LangSmith reads LANGSMITH_TRACING_V2 before
// LANGSMITH_TRACING, so one of them set by the suite must not meet
// another set by dryfire.
var OfflineEnv = []OfflineSetting{
	{"OpenAI Agents SDK (Python, JS): tracing, which uploads each run to the OpenAI platform", [][2]string{{"OPENAI_AGENTS_DISABLE_TRACING", "1"}}},
	{"LangSmith tracing (LangChain, LangGraph; Python, JS)", [][2]string{
		{"LANGSMITH_TRACING", "false"}, {"LANGSMITH_TRACING_V2", "false"}, {"LANGCHAIN_TRACING", "false"}, {"LANGCHAIN_TRACING_V2", "false"}}},
	{"crewai: its anonymous telemetry and its trace upload (and the prompt asking about it)", [][2]string{
		{"CREWAI_DISABLE_TELEMETRY", "true"}, {"CREWAI_DISABLE_TRACKING", "true"}, {"CREWAI_TRACING_ENABLED", "false"}}},
	{"OpenTelemetry SDKs (crewai's telemetry, strands-agents, google-adk, autogen, the OpenTelemetry JS SDK): exporters off", [][2]string{{"OTEL_SDK_DISABLED", "true"}}},
	{"the Console Do Not Track convention (tools that honour it)", [][2]string{{"DO_NOT_TRACK", "1"}}},
	{"Mastra: its telemetry", [][2]string{{"MASTRA_TELEMETRY_DISABLED", "1"}}},
	{"Hugging Face Hub (smolagents): its telemetry", [][2]string{{"HF_HUB_DISABLE_TELEMETRY", "1"}}},
	{"chromadb (crewai's memory): its telemetry", [][2]string{{"ANONYMIZED_TELEMETRY", "False"}}},
	{"litellm (crewai, dspy, smolagents, google-adk): the model cost map from its package, not fetched at import", [][2]string{{"LITELLM_LOCAL_MODEL_COST_MAP", "True"}}},
	{"google-auth (google-adk, the Gemini SDKs): no probe for a client certificate", [][2]string{{"GOOGLE_API_USE_CLIENT_CERTIFICATE", "false"}}},
}

// isOfflineEnv reports whether k is a variable of OfflineEnv.
func isOfflineEnv(k string) bool {
	return slices.ContainsFunc(OfflineEnv, func(s OfflineSetting) bool { return isExtra(k, s.Vars) })
}

// suiteEnv are the offline settings the suite's agent.env leaves in,
// then agent.env itself, in file order.
func suiteEnv(own []spec.EnvVar) [][2]string {
	var out [][2]string
	for _, s := range OfflineEnv {
		if slices.ContainsFunc(s.Vars, func(kv [2]string) bool { return isOwn(kv[0], own) }) {
			continue
		}
		out = append(out, s.Vars...)
	}
	for _, v := range own {
		out = append(out, [2]string{v.Name, v.Value})
	}
	return out
}

// agentEnv is the environment of a program in one case: the run's, with
// dryfire's variables (bindingEnv) replaced, the offline settings and the
// suite's agent.env (suiteEnv) after them, and loopback kept away from
// any proxy. The run's own values of the offline settings are replaced
// too: the suite, not the machine, says what its programs see.
// extra are more variables of dryfire's (a world's package APIs), which
// replace the run's own values too.
func agentEnv(env []string, prefix string, c *spec.Case, world bool, own []spec.EnvVar, extra ...[2]string) []string {
	drop := func(k string) bool {
		return slices.Contains(dryfireEnv, k) || strings.HasPrefix(k, EnvHTTPURLPrefix) || isExtra(k, extra) || isOfflineEnv(k) || isOwn(k, own)
	}
	return program.Environ(env, drop, envSet(prefix, c, world, own, extra))
}

// envSet are the variables dryfire sets for a case's program: its
// bindings, extra, then the suite's (suiteEnv) that extra does not set.
func envSet(prefix string, c *spec.Case, world bool, own []spec.EnvVar, extra [][2]string) [][2]string {
	set := append(bindingEnv(prefix, c, world), extra...)
	for _, kv := range suiteEnv(own) {
		if !isExtra(kv[0], extra) {
			set = append(set, kv)
		}
	}
	return set
}

func isOwn(k string, own []spec.EnvVar) bool {
	return slices.ContainsFunc(own, func(v spec.EnvVar) bool { return v.Name == k })
}

func isExtra(k string, extra [][2]string) bool {
	return slices.ContainsFunc(extra, func(kv [2]string) bool { return kv[0] == k })
}

// commandKeyMissing says which key a case of an agent.command suite that
// will call the live model lacks, "" when none: the key of the provider's
// API when it names one whose calls go to the public API; with no
// provider, a key of any of the APIs, unless a base URL says calls go
// elsewhere (a local server takes none).
func commandKeyMissing(a *spec.Agent, getenv func(string) string) string {
	usable := func(p, base string) bool {
		cred := wire.Resolve(p, base, getenv)
		return p == provider.OpenAICompatible || cred.Key != "" || !cred.Public
	}
	if a.Provider != "" {
		if provider.IsAzure(a.Provider) && wire.Resolve(a.Provider, a.BaseURL, getenv).BaseURL == "" {
			return wire.AzureEndpointEnv
		}
		if usable(a.Provider, a.BaseURL) {
			return ""
		}
		return wire.KeyEnv(a.Provider)
	}
	if usable(provider.OpenAI, "") || usable(provider.Anthropic, "") || usable(provider.Gemini, "") || azureUsable(getenv) {
		return ""
	}
	return wire.KeyEnv(provider.OpenAI) + ", " + wire.KeyEnv(provider.Anthropic) + " or " + wire.KeyEnv(provider.Gemini)
}

// azureUsable says whether Azure OpenAI calls could be recorded: its key
// is set, or its endpoint is a server of another kind (a local one).
func azureUsable(getenv func(string) string) bool {
	if getenv(wire.AzureKeyEnv) != "" {
		return true
	}
	u, err := url.Parse(getenv(wire.AzureEndpointEnv))
	return err == nil && u.Host != "" && !wire.IsAzureHost(u.Hostname())
}
