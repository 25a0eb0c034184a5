package spec

import (
	"fmt"
	"maps"
	"slices"
	"sort"

	yaml "go.yaml.in/yaml/v4"

	"github.com/dryfire-dev/dryfire/internal/provider"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// What is checked across a case and its suite once both are decoded: declared tools, users, judges, keys of when/with patterns.

// cross is what the checks of each case against its suite need.
type cross struct {
	known, scripted, command, real bool
	// counted: the cases are only counted (Options.Discard, not a world
	// suite), so what only a kept case is read for (a check's source
	// text, a call's arguments as JSON) is not made.
	counted  bool
	declared map[string]*Tool
	// suiteTools are the names declared or mocked by the suite; toolSet
	// and toolList the same, once each, and sorted: a case's tools when
	// it mocks none of its own.
	suiteTools []string
	toolSet    map[string]bool
	toolList   []string
}

// crossHead reports what is wrong between the parts of the suite other
// than its cases, and readies the checks of each case (crossCase).
func (x *decoder) crossHead(s *Suite) {
	// An unknown or missing provider is reported already: judge nothing by it.
	k := &x.cross
	k.known = slices.Contains(providers, s.Agent.Provider)
	k.scripted = s.Agent.Provider == provider.Script
	k.command = len(s.Agent.Command) > 0
	k.real = k.known && !k.scripted && !k.command
	k.counted = x.opts.Discard && s.World == ""

	x.checkWorkspace(s, k.command)
	if sk, _ := yamlpos.Lookup(x.root, "script"); sk != nil && k.command && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's agent.command program has its model calls recorded into the cases' cassettes (set agent.provider: script to answer them from the script instead, or remove the script)")
	} else if sk != nil && k.known && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's provider is %q (remove the script, or set agent.provider: script)", s.Agent.Provider)
	}
	k.declared = map[string]*Tool{}
	for _, t := range s.Tools {
		k.declared[t.Name] = t
	}
	for _, rules := range s.Mocks {
		x.checkWhenKeys(rules, k.declared)
	}
	if k.real {
		for _, t := range s.Tools {
			if t.InputSchema == nil {
				x.d.AddAt(yamlpos.Warning, t.Pos, "tool %q has no input_schema: the model is shown an open object schema", t.Name)
			} else if m, ok := t.InputSchema.(map[string]any); ok && m["type"] == nil {
				x.d.AddAt(yamlpos.Warning, t.SchemaPos, "tool %q: input_schema has no \"type\": the model is sent it with \"type\": \"object\" added (tool arguments are an object, and the APIs reject a tool schema without a type)", t.Name)
			}
		}
		x.warnUndeclared(s, s.MockOrder, x.root, false)
	}
	for _, t := range s.Tools {
		k.suiteTools = append(k.suiteTools, t.Name)
	}
	k.suiteTools = append(k.suiteTools, s.MockOrder...)
	k.toolSet, k.toolList = knownTools(k.suiteTools, nil)
	x.checkAliases(s, k.toolSet)
	releaseRules(s.Mocks)
}

// checkAliases refuses an alias that is another tool's name, or another
// tool's alias too: a call of it would stand for two tools.
func (x *decoder) checkAliases(s *Suite, tools map[string]bool) {
	of := map[string]string{}
	for _, t := range s.Tools {
		for _, a := range t.Aliases {
			switch {
			case tools[a]:
				x.d.AddAt(yamlpos.Error, t.Pos, "tool %q: alias %q is the name of a tool of the suite; an alias names no other tool", t.Name, a)
			case of[a] != "" && of[a] != t.Name:
				x.d.AddAt(yamlpos.Error, t.Pos, "tool %q: alias %q is tool %q's alias too; an alias names one tool", t.Name, a, of[a])
			}
			of[a] = t.Name
		}
	}
}

// knownTools is the set of the names in suite and own, and the same
// names sorted.
func knownTools(suite, own []string) (map[string]bool, []string) {
	set := make(map[string]bool, len(suite)+len(own))
	var list []string
	for _, names := range [][]string{suite, own} {
		for _, n := range names {
			if !set[n] {
				set[n] = true
				list = append(list, n)
			}
		}
	}
	sort.Strings(list)
	return set, list
}

func (x *decoder) warnUndeclared(s *Suite, order []string, parent *yaml.Node, suiteToo bool) {
	_, mocks := yamlpos.Lookup(parent, "mocks")
	for _, name := range order {
		if _, warned := s.Mocks[name]; x.cross.declared[name] == nil && !(suiteToo && warned) {
			k, _ := yamlpos.Lookup(mocks, name)
			x.warnf(k, "tool %q is mocked but not declared under tools: the model is shown an open object schema", name)
		}
	}
}

// crossCase reports what is wrong between case c and its suite:
// references between scripts, mocks, tools and checks.
func (x *decoder) crossCase(s *Suite, c *Case) {
	k := &x.cross
	if k.scripted && !k.command && len(c.ModelFaults) > 0 {
		x.d.AddAt(yamlpos.Error, c.ModelFaultsPos, "model_faults need model requests to fault: a real provider or agent.command (provider script sends none)")
	}
	x.checkCaseWorkspace(s, c, k.command)
	if k.real {
		x.warnUndeclared(s, c.MockOrder, c.node, true)
	}
	declared := k.declared
	if s.World == "" {
		for _, key := range []string{"scenario", "actor", "toolOverrides", "setup", "seed"} {
			if kn, _ := yamlpos.Lookup(c.node, key); kn != nil {
				x.errorf(kn, "%s is for drills: the suite needs world: (a *.world.yaml file)", key)
			}
		}
	}
	for _, rules := range c.Mocks {
		x.checkWhenKeys(rules, declared)
	}
	tools, knownList := k.toolSet, k.toolList
	if len(c.MockOrder) > 0 {
		tools, knownList = knownTools(k.suiteTools, c.MockOrder)
	}
	rulesFor := func(tool string) []*Rule {
		if r, ok := c.Mocks[tool]; ok {
			return r
		}
		return s.Mocks[tool]
	}

	// A world suite without agent (its drills' agent is a test's own
	// function) takes a script too: it answers the drill's model calls.
	if sk, _ := yamlpos.Lookup(c.node, "script"); sk != nil && k.command && !k.scripted {
		x.errorf(sk, "script is only for provider: script; this suite's agent.command program has its model calls recorded into the case's cassette (set agent.provider: script to answer them from the script instead, or remove the script)")
	} else if sk != nil && k.known && !k.scripted && !k.command {
		x.errorf(sk, "script is only for provider: script; this suite's provider is %q (remove the script, or set agent.provider: script)", s.Agent.Provider)
	}
	if k.scripted && len(c.Script) == 0 && len(s.Script) == 0 && !c.Skip {
		if _, sn := yamlpos.Lookup(c.node, "script"); sn == nil {
			x.errorf(c.node, "%s has no script: provider script needs the model's turns (a script in the case, or one for every case at the suite's top level; or skip: true)", caseLabel(c))
		}
	}
	// A program (agent.command) has tools of its own besides the suite's:
	// a name the suite neither declares nor mocks is one of them, unless
	// it is near a suite tool's (a typo) and its script calls no such tool.
	own := func(n string) bool {
		if !k.command || tools[n] {
			return false
		}
		return suggest.DidYouMean(n, knownList) == "" || slices.ContainsFunc(c.Script, func(t *Turn) bool {
			return slices.ContainsFunc(t.ToolCalls, func(call *ScriptCall) bool { return call.Name == n })
		})
	}
	for ti, t := range c.Script {
		// A program may make model calls a script does not foresee,
		// and a guarded turn waits for its request: reachability is
		// the built-in loop's.
		if len(t.ToolCalls) == 0 && !t.broken && ti+1 < len(c.Script) && c.User == nil && !k.command && !s.NoAgent && t.When == nil && c.Script[ti+1].When == nil {
			next := c.Script[ti+1]
			x.d.AddAt(yamlpos.Warning, next.Pos, "script turn %d is never reached: turn %d has no tool calls, so the case ends there", ti+2, ti+1)
		}
		if g := t.When; g != nil && s.World == "" {
			for _, n := range append(slices.Clip(g.Tools), g.ResultOf) {
				if n != "" && !tools[n] && !own(n) {
					x.d.AddAt(yamlpos.Warning, g.Pos, "script turn %d: when names tool %q, which is neither declared nor mocked, so the guard never holds%s", ti+1, n, suggest.DidYouMean(n, knownList))
				}
			}
		}
		for _, call := range t.ToolCalls {
			// (A program's own tool has no rule: it runs the call.)
			if call.Name != "" && len(rulesFor(call.Name)) == 0 && k.scripted && s.World == "" && (!k.command || tools[call.Name]) {
				x.d.AddAt(yamlpos.Warning, call.Pos, "no mock rule for tool %q in this case: the call will be unmatched and the case will fail%s", call.Name, suggest.DidYouMean(call.Name, knownList))
			}
		}
	}
	x.resolveJudges(s, c)
	x.resolveUser(s, c)
	for _, ch := range c.Expect {
		var names []string
		switch ch.Kind {
		case CheckCalled, CheckNotCalled:
			names = []string{ch.Tool}
		case CheckOrder:
			names = ch.Order
		case CheckTrajectory:
			for _, tc := range ch.Trajectory {
				names = append(names, tc.Tool)
			}
		case CheckPolicy:
			for _, n := range ch.toolNodes {
				names = append(names, yamlpos.Deref(n).Value)
			}
		}
		for i, n := range names {
			if n != "" && !tools[n] && s.World == "" && !own(n) {
				at := ch.Pos
				if i < len(ch.toolNodes) {
					at = x.d.Pos(ch.toolNodes[i])
				}
				x.d.AddAt(yamlpos.Warning, at, "check names tool %q, which is neither declared nor mocked%s", n, suggest.DidYouMean(n, knownList))
			}
		}
		if ch.With != nil && declared[ch.Tool] != nil {
			x.checkPatternKeys(ch.With, declared[ch.Tool], ch.withNode, "with")
		}
	}
}

// resolveUser gives a model-driven user its model: its own, else the
// agent's, as a judge's; and says what does not go with a conversation.
func (x *decoder) resolveUser(s *Suite, c *Case) {
	u := c.User
	if u == nil {
		for _, ch := range c.Expect {
			if ch.Kind == CheckOutput && ch.Turn != 0 && ch.turnNode != nil {
				x.warnf(ch.turnNode, "turn is for conversations (a case with user:): this case has one reply, so turn reads it")
			}
		}
		return
	}
	if s.NoAgent {
		x.errorf(u.key, "user: needs the suite's agent (provider and model, or command): a suite without one is the drills of a test's own function (runDrills / run_drills, dryfire engine), which takes one input and gives one answer, so no simulated user can talk to it; give the suite an agent, or drive the conversation in the test")
	}
	for _, t := range u.Script {
		switch {
		case t.doNode != nil && s.World == "":
			x.errorf(t.doNode, "do: is a simulated user's calls in the world: it needs a world suite (world:)")
		case t.doNode != nil && t.Actor == "":
			x.errorf(t.doNode, "do: needs actor: the world actor the user calls as (its permissions apply)")
		case t.actorNode != nil && t.doNode == nil:
			x.warnf(t.actorNode, "actor is who the user calls as in do:, and this turn has no do:")
		}
	}
	m := u.Model
	if m == nil {
		return
	}
	x.sideModel(s, u.node, "a model-driven user", "user", ", or scripted turns (a list)", &m.Provider, &m.Model, &m.BaseURL)
}

// resolveJudges gives each judge check of a case its place among them
// and its model: its own, else the agent's. A judge needs a real model:
// one of the agent's providers (not script), and a model name.
func (x *decoder) resolveJudges(s *Suite, c *Case) {
	n := 0
	for _, ch := range c.Expect {
		j := ch.Judge
		if ch.Kind != CheckJudge || j == nil {
			continue
		}
		n++
		j.Index = n
		x.sideModel(s, ch.judgeNode, "a judge", "judge", " (e.g. {provider: anthropic, model: claude-sonnet-4-5})", &j.Provider, &j.Model, &j.BaseURL)
	}
}

// sideModel resolves the model of a judge or a simulated user, written
// at n: its own provider, else the agent's; on the agent's provider the
// agent's model (when it names none) and base_url. It says what is
// missing: a real provider (not script), a model name, a base_url for
// openai-compatible.
func (x *decoder) sideModel(s *Suite, n *yaml.Node, who, role, hint string, prov, name, baseURL *string) {
	own := *prov != ""
	if !own {
		*prov = s.Agent.Provider
	}
	if *prov == s.Agent.Provider {
		*baseURL = s.Agent.BaseURL
		if *name == "" {
			*name = s.Agent.Model
		}
	}
	switch {
	case *prov == "" || *prov == provider.Script:
		why := "the agent's provider is script, which answers from the case's script only"
		if *prov == "" {
			why = "the agent names no provider"
		}
		x.errorf(n, "%s needs a model, and %s: give the %s provider and model%s", who, why, role, hint)
	case !slices.Contains(providers, *prov):
		// An unknown agent provider is reported already.
	case *name == "":
		at := n
		if own {
			at, _ = yamlpos.Lookup(n, "provider")
		}
		why := "the agent names none"
		if *prov != s.Agent.Provider {
			why = "the agent's is for the agent's provider"
		}
		x.errorf(at, "%s needs a model name: give the %s model (%s)", who, role, why)
	case provider.IsAzure(*prov) && provider.DeploymentProblem(*name) != "":
		at := n
		if own {
			if _, mv := yamlpos.Lookup(n, "model"); mv != nil {
				at = mv
			}
		}
		x.errorf(at, "%s's model %q is not an Azure OpenAI deployment's name: %s", who, *name, provider.DeploymentProblem(*name))
	case *prov == provider.OpenAICompatible && *baseURL == "":
		at, _ := yamlpos.Lookup(n, "provider")
		x.errorf(at, "%s on openai-compatible needs the agent's base_url: use the agent's provider, or another provider", who)
	}
}

// caseLabel names a case in messages: by name, or by place when it has none.
func caseLabel(c *Case) string {
	if c.Name != "" {
		return fmt.Sprintf("case %q", c.Name)
	}
	return fmt.Sprintf("case %d", c.index+1)
}

func (x *decoder) checkWhenKeys(rules []*Rule, declared map[string]*Tool) {
	for _, r := range rules {
		if r.When != nil && declared[r.Tool] != nil {
			x.checkPatternKeys(r.When, declared[r.Tool], r.whenNode, "when")
		}
	}
}

func (x *decoder) checkPatternKeys(p *value.Pattern, t *Tool, n *yaml.Node, what string) {
	sch, ok := t.InputSchema.(map[string]any)
	if !ok {
		return
	}
	props, ok := sch["properties"].(map[string]any)
	if !ok {
		return
	}
	var names []string // for did-you-mean, when a key is not declared
	for _, k := range p.Keys() {
		if _, ok := props[k]; !ok {
			if names == nil {
				names = slices.Sorted(maps.Keys(props))
			}
			at := n
			if kn, _ := yamlpos.Lookup(n, k); kn != nil {
				at = kn
			}
			x.d.Add(yamlpos.Warning, at.Line, at.Column, "%s key %q is not declared in the input_schema of tool %q%s", what, k, t.Name, suggest.DidYouMean(k, names))
		}
	}
}

// compileSchema compiles the JSON Schema written at n and reports a broken
