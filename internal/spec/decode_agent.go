package spec

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// Decoding a suite's agent (built-in loop or agent.command) and a case's simulated user.

func (x *decoder) agent(agent yamlpos.KV) Agent {
	m, _ := agent.Val.(map[string]any)
	a := Agent{Pos: x.d.Pos(agent.K), Provider: str(m["provider"]), Model: str(m["model"]), BaseURL: str(m["base_url"]),
		APIVersion: str(m["api_version"]), System: str(m["system"]), TimeoutS: number(m["timeout_s"]), Network: str(m["network"]),
		CLI: str(m["cli"]), OfferedTools: str(m["offered_tools"]), SideCalls: str(m["side_calls"])}
	for _, p := range yamlpos.Pairs(agent.V, agent.Val) {
		switch p.Key() {
		case "provider":
			a.ProviderPos = x.d.Pos(p.V)
		case "max_turns":
			a.MaxTurns, _ = x.integer(p.V, p.Val)
		case "retries":
			if n, ok := x.integer(p.V, p.Val); ok {
				a.Retries = &n
			}
		case "params":
			a.Params, _ = p.Val.(map[string]any)
			if k, v := yamlpos.Lookup(p.V, "stream"); k != nil {
				if _, ok := a.Params["stream"].(bool); !ok {
					x.errorf(v, "agent.params.stream must be true or false")
				}
			}
		case "match":
			a.Match = x.match(p.V, p.Val)
		case "clock":
			a.Clock = x.clock(p.V, p.Val)
		case "network":
			a.NetworkPos = x.d.Pos(p.V)
		case "env":
			a.Env = x.agentEnv(p.V, p.Val)
		case "port":
			a.Port, _ = x.integer(p.V, p.Val)
			a.PortPos = x.d.Pos(p.V)
		case "cli":
			a.CLIPos = x.d.Pos(p.V)
		case "command":
			a.CommandPos = x.d.Pos(p.K)
			for _, e := range yamlpos.Items(p.V, p.Val) {
				a.Command = append(a.Command, str(e.Val))
			}
		}
	}
	if a.Provider == provider.OpenAICompatible && a.BaseURL == "" {
		_, pv := yamlpos.Lookup(agent.V, "provider")
		x.errorf(pv, "provider openai-compatible needs agent.base_url (the server's URL, e.g. http://localhost:11434/v1)")
	}
	if a.CLI != "" && len(a.Command) == 0 {
		// Found at run time (internal/runner/cli.go).
		a.Command, a.CLIFound, a.CommandPos = []string{CLIExecutable(a.CLI)}, true, a.CLIPos
	}
	ck, _ := yamlpos.Lookup(agent.V, "command")
	if cl, _ := yamlpos.Lookup(agent.V, "cli"); ck != nil || cl != nil {
		x.commandAgent(agent.V, &a)
	} else {
		x.azureAgent(agent.V, &a)
		if k, _ := yamlpos.Lookup(agent.V, "clock"); k != nil {
			x.errorf(k, "agent.clock sets the time an agent program (agent.command) reads; the built-in loop's requests carry no clock")
		}
		if k, _ := yamlpos.Lookup(agent.V, "network"); k != nil {
			x.errorf(k, "agent.network is the network of an agent program (agent.command); the built-in loop runs inside dryfire, whose model calls go to the cassette")
		}
		for _, key := range []string{"env", "port", "offered_tools", "side_calls"} {
			if k, _ := yamlpos.Lookup(agent.V, key); k != nil {
				x.errorf(k, "agent.%s is for an agent program (agent.command); the built-in loop runs inside dryfire", key)
			}
		}
	}
	if _, ev := yamlpos.Lookup(agent.V, "env"); a.Clock != nil && ev != nil && ev.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(ev.Content); i += 2 {
			if k := ev.Content[i].Value; k == "TZ" || k == "LD_PRELOAD" || strings.HasPrefix(k, "FAKETIME") {
				x.errorf(ev.Content[i], "agent.env sets %s, which agent.clock sets: remove one", k)
			}
		}
	}
	return a
}

// agentEnv reads agent.env: a mapping of variable names to scalar values
// (written as text), for the program only.
func (x *decoder) agentEnv(n *yaml.Node, val any) []EnvVar {
	var out []EnvVar
	for _, p := range yamlpos.Pairs(n, val) {
		name := p.Key()
		switch {
		case !validEnvName(name):
			x.errorf(p.K, "agent.env: %q is not a variable name (letters, digits and _, not starting with a digit)", name)
			continue
		case strings.HasPrefix(name, "DRYFIRE_") || slices.Contains(BindingEnv, name):
			x.errorf(p.K, "agent.env cannot set %s: dryfire sets it to lead the program to its case", name)
			continue
		}
		var v string
		switch t := p.Val.(type) {
		case string:
			v = t
		case json.Number:
			v = string(t)
		case bool:
			v = strconv.FormatBool(t)
		default:
			continue // the schema says what it must be
		}
		if strings.IndexByte(v, 0) >= 0 {
			x.errorf(p.V, "agent.env.%s holds a NUL byte, which no environment can carry", name)
			continue
		}
		out = append(out, EnvVar{Name: name, Value: v, Pos: x.d.Pos(p.K)})
	}
	return out
}

func validEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// commandAgent checks the agent of a suite whose cases run an existing
// agent (agent.command): the program makes its own model calls, so the
// keys of the built-in loop have no use there; provider, optional, names
// the API it calls (which key a recording needs; with base_url, where
// live calls go).
func (x *decoder) commandAgent(n *yaml.Node, a *Agent) {
	for _, key := range []string{"model", "system", "params", "retries", "api_version"} {
		if k, _ := yamlpos.Lookup(n, key); k != nil {
			x.errorf(k, "agent.%s is for the built-in loop; with agent.command your program makes its own model calls (remove %s)", key, key)
		}
	}
	switch a.Provider {
	case "":
		if k, _ := yamlpos.Lookup(n, "base_url"); k != nil {
			x.errorf(k, "agent.base_url with agent.command needs provider: the API it is the base URL of (anthropic, openai, openai-responses, openai-compatible, gemini, azure-openai, azure-openai-responses, ollama, bedrock, vertex-gemini or vertex-anthropic)")
		}
	case provider.Script:
		// The script answers the program's model calls, over any API.
		if k, _ := yamlpos.Lookup(n, "base_url"); k != nil {
			x.errorf(k, "agent.base_url with provider script: the script answers every model call of the program, none goes to a real API (remove base_url)")
		}
	}
}

// azureAgent checks what Azure OpenAI needs of the built-in loop's agent:
// a deployment (agent.model, a path segment) and an api_version of the
// right form, which no other provider takes.
func (x *decoder) azureAgent(n *yaml.Node, a *Agent) {
	vk, vv := yamlpos.Lookup(n, "api_version")
	if !provider.IsAzure(a.Provider) {
		if vk != nil && slices.Contains(providers, a.Provider) {
			x.errorf(vk, "agent.api_version is Azure OpenAI's api-version: provider %s takes none (remove it, or use provider azure-openai or azure-openai-responses)", a.Provider)
		}
		return
	}
	if vv != nil && (vv.ShortTag() == "!!str" || vv.ShortTag() == "!!timestamp") { // else the schema says what it must be
		if p := provider.APIVersionProblem(a.APIVersion); p != "" {
			x.errorf(vv, "agent.api_version %q: %s", a.APIVersion, p)
		}
	}
	mk, mv := yamlpos.Lookup(n, "model")
	if mk == nil {
		_, pv := yamlpos.Lookup(n, "provider")
		x.errorf(pv, "provider %s needs agent.model: the name of the deployment (the model's name in Azure AI Foundry, or the one you gave it)", a.Provider)
		return
	}
	if p := provider.DeploymentProblem(a.Model); p != "" && mv.ShortTag() == "!!str" { // else the schema says what it must be
		x.errorf(mv, "agent.model %q is not a deployment's name: %s", a.Model, p)
	}
}

// user reads a case's user: a list of scripted turns or a model-driven
// user (its model resolved in crossCheck).
func (x *decoder) user(p yamlpos.KV) *User {
	u := &User{Pos: x.d.Pos(p.K), key: p.K, node: p.V}
	switch val := p.Val.(type) {
	case []any:
		u.Script = []*UserTurn{}
		for _, it := range yamlpos.Items(p.V, val) {
			t := &UserTurn{Pos: x.d.Pos(it.N)}
			switch v := it.Val.(type) {
			case string:
				t.Say = v
			case map[string]any:
				for _, q := range yamlpos.Pairs(it.N, v) {
					switch q.Key() {
					case "say":
						t.Say = str(q.Val)
					case "when":
						if s, ok := q.Val.(string); ok {
							t.When = x.regex(q.V, s)
						}
					case "actor":
						t.Actor, t.actorNode, t.ActorPos = str(q.Val), q.V, x.d.Pos(q.V)
					case "do":
						t.doNode = q.K
						for _, a := range yamlpos.Items(q.V, q.Val) {
							if act := x.userAct(a.N, a.Val); act != nil {
								t.Do = append(t.Do, act)
							}
						}
					}
				}
			default:
				continue // reported by the schema
			}
			u.Script = append(u.Script, t)
		}
	case map[string]any:
		m := &UserModel{MaxTurns: DefaultUserMaxTurns, Provider: str(val["provider"]), Model: str(val["model"]), Instructions: str(val["instructions"])}
		for _, q := range yamlpos.Pairs(p.V, val) {
			switch q.Key() {
			case "stop_when":
				if s, ok := q.Val.(string); ok {
					m.StopWhen = x.regex(q.V, s)
				}
			case "max_turns":
				if i, ok := x.integer(q.V, q.Val); ok {
					m.MaxTurns = i
				}
			}
		}
		u.Model = m
	default:
		return nil // reported by the schema
	}
	return u
}

// userAct reads one world call of a user turn's do: {tool | operation,
// args}.
func (x *decoder) userAct(n *yaml.Node, val any) *UserAct {
	m, ok := val.(map[string]any)
	if !ok {
		return nil // reported by the schema
	}
	a := &UserAct{Pos: x.d.Pos(n), Args: "{}", Tool: str(m["tool"]), Operation: str(m["operation"])}
	if args, ok := m["args"].(map[string]any); ok {
		a.Args = value.Canonical(args)
	}
	switch {
	case a.Tool == "" && a.Operation == "":
		x.errorf(n, "a user's world call needs tool (or operation: package/operation)")
		return nil
	case a.Tool != "" && a.Operation != "":
		x.errorf(n, "a user's world call: give tool or operation, not both")
		return nil
	}
	return a
}
