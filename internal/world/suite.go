package world

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/suggest"
	"github.com/dryfire-dev/dryfire/internal/tool"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// SuiteWorld is what a world suite runs on: the world and each case's
// drill (its seed is the run's to set).
type SuiteWorld struct {
	World  *World
	Drills map[*spec.Case]*Drill
}

// Drill is the drill case c of the suite starts from (c nil: the suite's
// own, its default scenario), with its seed: seed when given (a run's or
// a request's), else the case's, else the world's.
func (sw *SuiteWorld) Drill(c *spec.Case, scenario string, seed *int64) Drill {
	d := Drill{Scenario: scenario}
	if c != nil {
		d = *sw.Drills[c]
	}
	d.Seed = sw.World.Seed
	if c != nil && c.Seed != nil {
		d.Seed = *c.Seed
	}
	if seed != nil {
		d.Seed = *seed
	}
	return d
}

// Cache shares the worlds of one load between the suites naming them.
type Cache map[string]*Cached

// Cached is a world loaded once (nil W when it has errors).
type Cached struct {
	W  *World
	Ds yamlpos.Diagnostics
}

// Worlds are the worlds of a load's world suites, by suite: what each
// world suite runs on.
type Worlds map[*spec.Suite]*SuiteWorld

// AttachSuite loads the world a suite names, checks every case against it
// (scenarios, actors, overrides, setups, scripted tool names, checks) and
// returns what the suite runs on (nil when the world could not be
// loaded). Problems come back positioned in the suite file, and the world
// file's own in the world file (once per load, whatever the number of
// suites naming it). root is the project root that the world file and its
// behavior modules must stay inside; "" is the current directory when the
// suite is inside it, else the suite's directory.
func AttachSuite(s *spec.Suite, cache Cache, root string) (*SuiteWorld, yamlpos.Diagnostics) {
	r := &yamlpos.Collector{File: s.File}
	if root == "" {
		root = safeio.DefaultRoot(s.File)
	}
	path, err := safeio.Confine(root, filepath.Dir(s.File), s.World)
	if err != nil {
		r.AddAt(yamlpos.Error, s.WorldPos, "world %s%s", safeio.Describe(s.World, err), rootHint(err))
		return nil, r.List
	}
	// With '/' on every OS, as the suite's own path: the world's
	// positions read the same on Windows.
	path = filepath.ToSlash(path)
	var w *World
	if c, ok := cache[filepath.Clean(path)]; ok {
		w = c.W
		if w == nil && len(c.Ds) == 0 {
			r.AddAt(yamlpos.Error, s.WorldPos, "world %s could not be loaded", s.World)
		}
	} else {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			r.AddAt(yamlpos.Error, s.WorldPos, "world file %s not found (the path is relative to the suite)", path)
			cache[filepath.Clean(path)] = &Cached{}
			return nil, r.List
		}
		var ds yamlpos.Diagnostics
		w, ds = Load(path, &LoadOptions{Root: root})
		cache[filepath.Clean(path)] = &Cached{W: w, Ds: ds}
		r.Merge(ds)
	}
	if w == nil {
		return nil, r.List
	}
	sw := &SuiteWorld{World: w, Drills: map[*spec.Case]*Drill{}}
	scenarioOK := func(name string, at yamlpos.Pos) bool {
		if name == "" || w.Scenarios[name] != nil {
			return true
		}
		r.AddAt(yamlpos.Error, at, "world %s has no scenario %q%s", w.Name, name, suggest.DidYouMean(name, sortedKeys(w.Scenarios)))
		return false
	}
	scenarioOK(s.Scenario, s.ScenarioPos)
	for _, c := range s.Cases {
		d := &Drill{Scenario: s.Scenario, Actor: c.Actor}
		if c.Scenario != "" {
			d.Scenario = c.Scenario
			scenarioOK(c.Scenario, c.ScenarioPos)
		}
		if c.Actor != "" && w.Actors[c.Actor] == nil {
			r.AddAt(yamlpos.Error, c.ActorPos, "world %s has no actor %q%s", w.Name, c.Actor, suggest.DidYouMean(c.Actor, w.ActorList))
		}
		for _, it := range yamlpos.Items(c.ToolOverridesNode, c.ToolOverrides) {
			if o := parseOverride(r, w, it.N, it.Val, ScopeDrill); o != nil {
				d.Overrides = append(d.Overrides, o)
			} else {
				r.Errorf(it.N, "a tool override needs operation and outcome")
			}
		}
		attachSetup(r, w, c, d)
		checkScript(r, w, c)
		checkChecks(r, w, c)
		checkUser(r, w, c)
		sw.Drills[c] = d
	}
	return sw, r.List
}

// SortDiagnostics orders diagnostics by file (in the order files first
// appear) and then by position: a suite's own problems and those found
// against its world read as one list.
func SortDiagnostics(ds yamlpos.Diagnostics) yamlpos.Diagnostics {
	order := map[string]int{}
	for _, d := range ds {
		if _, ok := order[d.Pos.File]; !ok {
			order[d.Pos.File] = len(order)
		}
	}
	out := append(yamlpos.Diagnostics(nil), ds...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Pos.File != b.Pos.File {
			return order[a.Pos.File] < order[b.Pos.File]
		}
		if a.Pos.Line != b.Pos.Line {
			return a.Pos.Line < b.Pos.Line
		}
		return a.Pos.Col < b.Pos.Col
	})
	return out
}

func attachSetup(r *yamlpos.Collector, w *World, c *spec.Case, d *Drill) {
	if c.Setup == nil {
		return
	}
	if sc, ok := c.Setup["scenario"].(map[string]any); ok {
		_, sn := yamlpos.Lookup(c.SetupNode, "scenario")
		// The rules with their positions; the rest of the setup as values.
		rest := make(map[string]any, len(sc))
		for k, v := range sc {
			if k != "toolOverrides" {
				rest[k] = v
			}
		}
		_, on := yamlpos.Lookup(sn, "toolOverrides")
		var rules []*Override
		for _, it := range yamlpos.Items(on, sc["toolOverrides"]) {
			if o := parseOverride(r, w, it.N, it.Val, ScopeTest); o != nil {
				rules = append(rules, o)
			} else {
				r.Errorf(it.N, "a tool override needs operation and outcome")
			}
		}
		inline, err := w.ParseSetup(rest)
		if err != nil {
			reportSetup(r, sn, rest, err)
		} else {
			inline.Overrides = rules
			inline.Source = sc
			d.Inline = inline
		}
	}
	if tools, ok := c.Setup["tools"].(map[string]any); ok {
		_, tn := yamlpos.Lookup(c.SetupNode, "tools")
		_, bn := yamlpos.Lookup(tn, "behaviorOverrides")
		bo, _ := tools["behaviorOverrides"].(map[string]any)
		for _, op := range sortedKeys(bo) {
			fn, _ := bo[op].(string)
			kn, vn := yamlpos.Lookup(bn, op)
			if w.Operations[op] == nil {
				r.Errorf(kn, "behaviorOverrides: unknown operation %q%s", op, suggest.DidYouMean(op, w.OpList))
				continue
			}
			if w.funcs[fn] == nil {
				r.Errorf(vn, "behaviorOverrides: %q is not a function of the behavior modules%s", fn, suggest.DidYouMean(fn, sortedKeys(w.funcs)))
				continue
			}
			if d.BehaviorOverrides == nil {
				d.BehaviorOverrides = map[string]string{}
			}
			d.BehaviorOverrides[op] = fn
		}
	}
}

func checkScript(r *yamlpos.Collector, w *World, c *spec.Case) {
	tools := sortedKeys(w.Tools)
	for _, t := range c.Script {
		for _, call := range t.ToolCalls {
			if call.Name != "" && w.Tools[call.Name] == nil && !slices.ContainsFunc(tool.Undecorated(call.Name), func(n string) bool { return w.Tools[n] != nil }) {
				r.AddAt(yamlpos.Warning, call.Pos, "world %s has no tool %q: the call will fail with %s%s", w.Name, call.Name, CodeUnknownOperation, suggest.DidYouMean(call.Name, tools))
			}
		}
	}
}

func checkChecks(r *yamlpos.Collector, w *World, c *spec.Case) {
	tools := sortedKeys(w.Tools)
	for _, ch := range c.Expect {
		switch ch.Kind {
		case spec.CheckCalled, spec.CheckNotCalled:
			if ch.Operation != "" && w.Operations[ch.Operation] == nil {
				r.AddAt(yamlpos.Error, ch.Pos, "check names operation %q, which world %s does not have%s", ch.Operation, w.Name, suggest.DidYouMean(ch.Operation, w.OpList))
			}
			if ch.Tool != "" && w.Tools[ch.Tool] == nil {
				r.AddAt(yamlpos.Warning, ch.Pos, "check names tool %q, which world %s does not have%s", ch.Tool, w.Name, suggest.DidYouMean(ch.Tool, tools))
			}
			if ch.Actor != "" && w.Actors[ch.Actor] == nil {
				r.AddAt(yamlpos.Error, ch.Pos, "check names actor %q, which world %s does not have%s", ch.Actor, w.Name, suggest.DidYouMean(ch.Actor, w.ActorList))
			} else if ch.Tool != "" && ch.Actor != "" && !userActs(c, ch.Actor) {
				r.AddAt(yamlpos.Warning, ch.Pos, "a check of tool calls by actor %q reads the simulated user's calls made as %s (do:), and this case's user makes none: the agent's calls have no actor (leave actor out, or name the operation to count the world's evidence by actor)", ch.Actor, ch.Actor)
			}
		case spec.CheckOrder:
			for _, n := range ch.Order {
				if w.Tools[n] == nil {
					r.AddAt(yamlpos.Warning, ch.Pos, "check names tool %q, which world %s does not have%s", n, w.Name, suggest.DidYouMean(n, tools))
				}
			}
		case spec.CheckState:
			steps, err := SplitPath(ch.Path)
			if err != nil {
				r.AddAt(yamlpos.Error, ch.Pos, "state path %q: %v", ch.Path, err)
			} else if len(steps) > 0 && w.Packages[steps[0]] == nil {
				r.AddAt(yamlpos.Error, ch.Pos, "state path %q: world %s has no package %q%s", ch.Path, w.Name, steps[0], suggest.DidYouMean(steps[0], w.PackageList))
			}
		}
	}
}

// checkUser checks a simulated user's world calls (do:): its actor and
// each call's operation or tool are the world's.
func checkUser(r *yamlpos.Collector, w *World, c *spec.Case) {
	if c.User == nil {
		return
	}
	for _, t := range c.User.Script {
		if len(t.Do) == 0 {
			continue
		}
		if t.Actor != "" && w.Actors[t.Actor] == nil { // none: the suite says so
			r.AddAt(yamlpos.Error, t.ActorPos, "the user's actor %q is not an actor of world %s%s", t.Actor, w.Name, suggest.DidYouMean(t.Actor, w.ActorList))
		}
		for _, a := range t.Do {
			switch {
			case a.Operation != "" && w.Operations[a.Operation] == nil:
				r.AddAt(yamlpos.Error, a.Pos, "the user's call names operation %q, which world %s does not have%s", a.Operation, w.Name, suggest.DidYouMean(a.Operation, w.OpList))
			case a.Tool != "" && w.Tools[a.Tool] == nil:
				r.AddAt(yamlpos.Error, a.Pos, "the user's call names tool %q, which world %s does not have%s", a.Tool, w.Name, suggest.DidYouMean(a.Tool, sortedKeys(w.Tools)))
			}
		}
	}
}

// userActs says whether the case's simulated user makes world calls as
// actor.
func userActs(c *spec.Case, actor string) bool {
	if c.User == nil {
		return false
	}
	return slices.ContainsFunc(c.User.Script, func(t *spec.UserTurn) bool { return len(t.Do) > 0 && t.Actor == actor })
}

// SplitPath splits a state path: package.collection.key.field, or a JSON
// Pointer when it starts with /.
func SplitPath(path string) ([]string, error) {
	if strings.HasPrefix(path, "/") {
		steps := strings.Split(path[1:], "/")
		for i, s := range steps {
			steps[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
		}
		return steps, nil
	}
	if path == "" {
		return nil, errors.New("empty")
	}
	steps := strings.Split(path, ".")
	for _, s := range steps {
		if s == "" {
			return nil, errors.New("an empty step (use a JSON Pointer, /package/collection/key, for keys with dots)")
		}
	}
	return steps, nil
}

// Lookup finds a path in a state (package → collection → value).
func Lookup(state map[string]any, steps []string) (any, bool) {
	var cur any = state
	for _, s := range steps {
		switch x := cur.(type) {
		case map[string]any:
			v, ok := x[s]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			i := -1
			if _, err := fmt.Sscan(s, &i); err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			cur = x[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

// LoadFiles loads suite files as spec.LoadFiles does, and each world
// suite's world (each world file loaded once, behavior modules read
// inside root: empty, the suite's directory); a world file among files is
// validated as a world. Diagnostics are sorted by file and position when
// a world was involved.
func LoadFiles(files []string, opts *spec.Options, root string) ([]*spec.Suite, Worlds, yamlpos.Diagnostics) {
	var suiteFiles []string
	var ds yamlpos.Diagnostics
	worlds := Cache{}
	for _, f := range files {
		if !IsWorldFile(f) {
			suiteFiles = append(suiteFiles, f)
			continue
		}
		w, wds := Load(f, &LoadOptions{Root: root})
		worlds[f] = &Cached{W: w, Ds: wds}
		ds = append(ds, wds...)
	}
	suites, sds := spec.LoadFiles(suiteFiles, opts)
	ds = append(ds, sds...)
	var ws Worlds
	for _, s := range suites {
		if s.World == "" {
			continue
		}
		sw, wds := AttachSuite(s, worlds, root)
		ds = append(ds, wds...)
		if sw != nil {
			if ws == nil {
				ws = Worlds{}
			}
			ws[s] = sw
		}
	}
	if len(worlds) > 0 {
		ds = SortDiagnostics(ds)
	}
	return suites, ws, ds
}
