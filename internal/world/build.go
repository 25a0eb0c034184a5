package world

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/dryfire-dev/dryfire/internal/value"
)

// Build is a drill's derived build: the fully resolved world (its file as
// JSON values and its behavior sources), the scenario, the drill's and
// the per-test rules, as canonical JSON with a content hash. With the
// seed it determines everything the world does; it does not capture test
// closures, application code or model randomness.
type Build struct {
	JSON string // canonical JSON
	Hash string // sha256:HEX of JSON
}

// Build derives the instance's build.
func (in *Instance) Build() Build {
	doc := make(map[string]any, len(in.w.Doc))
	for k, v := range in.w.Doc {
		if k != "scenarios" && k != "seed" {
			doc[k] = v
		}
	}
	var scenario any
	if in.drill.Scenario != "" {
		if sc, ok := in.w.Doc["scenarios"].(map[string]any); ok {
			if s, ok := sc[in.drill.Scenario].(map[string]any); ok {
				scenario = map[string]any{"name": in.drill.Scenario, "setup": s}
			}
		}
	}
	rules := func(os []*Override) []any {
		out := make([]any, 0, len(os))
		for _, o := range os {
			out = append(out, o.Source)
		}
		return out
	}
	test := map[string]any{"toolOverrides": rules(in.drill.TestOverrides)}
	if in.drill.Inline != nil {
		test["scenario"] = in.drill.Inline.Source
	}
	if len(in.drill.BehaviorOverrides) > 0 {
		bo := map[string]any{}
		for k, v := range in.drill.BehaviorOverrides {
			bo[k] = v
		}
		test["behaviorOverrides"] = bo
	}
	sources := map[string]any{}
	for k, v := range in.w.Sources {
		sources[k] = v
	}
	b := map[string]any{
		"dryfire_build": 1,
		"world":         doc,
		"behaviors":     sources,
		"scenario":      scenario,
		"drill":         map[string]any{"actor": in.actor, "toolOverrides": rules(in.drill.Overrides)},
		"test":          test,
	}
	text := value.Canonical(b)
	sum := sha256.Sum256([]byte(text))
	return Build{JSON: text, Hash: "sha256:" + hex.EncodeToString(sum[:])}
}

// FromBuild loads the world and drill a build describes: reproduction
// with the exact build (and the seed given) restores the world, the
// scenario and every scope's rules.
func FromBuild(text string, seed int64) (*Instance, error) {
	v, err := value.Parse([]byte(text))
	if err != nil {
		return nil, fmt.Errorf("reading the build: %w", err)
	}
	b, ok := v.(map[string]any)
	if !ok || b["world"] == nil {
		return nil, fmt.Errorf("reading the build: not a dryfire build")
	}
	doc, _ := b["world"].(map[string]any)
	doc = copyMap(doc)
	scenarioName := ""
	if sc, ok := b["scenario"].(map[string]any); ok {
		scenarioName, _ = sc["name"].(string)
		doc["scenarios"] = map[string]any{scenarioName: sc["setup"]}
	}
	sources, _ := b["behaviors"].(map[string]any)
	w, ds := Parse("build.world.json", []byte(value.Canonical(doc)), &LoadOptions{ReadFile: func(name string) ([]byte, error) {
		s, ok := sources[name].(string)
		if !ok {
			return nil, fmt.Errorf("the build has no behavior module %q", name)
		}
		return []byte(s), nil
	}})
	if ds.HasErrors() {
		return nil, fmt.Errorf("the build's world does not load:\n%s", ds.Error())
	}
	d := Drill{Scenario: scenarioName, Seed: seed}
	drill, _ := b["drill"].(map[string]any)
	d.Actor, _ = drill["actor"].(string)
	if d.Overrides, err = w.ParseOverrides(drill["toolOverrides"], ScopeDrill); err != nil {
		return nil, err
	}
	test, _ := b["test"].(map[string]any)
	if d.TestOverrides, err = w.ParseOverrides(test["toolOverrides"], ScopeTest); err != nil {
		return nil, err
	}
	if inline, ok := test["scenario"].(map[string]any); ok {
		if d.Inline, err = w.ParseSetup(inline); err != nil {
			return nil, err
		}
	}
	if bo, ok := test["behaviorOverrides"].(map[string]any); ok {
		d.BehaviorOverrides = map[string]string{}
		for k, v := range bo {
			d.BehaviorOverrides[k], _ = v.(string)
		}
	}
	return w.New(d)
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}
