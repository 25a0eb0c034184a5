package dryfire

import (
	"time"

	"github.com/dryfire-dev/dryfire/internal/openapi"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/world"
)

// ParseClock reads a start time for RunOptions.Clock as a suite's
// agent.clock.now takes it: RFC 3339, with or without a time zone.
func ParseClock(s string) (time.Time, error) { return spec.ParseClock(s) }

// ImportOptions say what world package ImportOpenAPI writes.
type ImportOptions struct {
	Package string // the world package's name
	Env     string // the variable the agent reads the service's base URL from; "" is PACKAGE_URL
	Source  string // the document's name, for the header comment
}

// ImportedWorld is a world package made from an OpenAPI document: the
// world file (PACKAGE.world.yaml) and its behavior module (PACKAGE.star).
type ImportedWorld struct {
	World, Module []byte
	Operations    int
	Warnings      Diagnostics // positioned in the document
}

// ImportOpenAPI makes a world package from an OpenAPI 3.0 or 3.1
// document (YAML or JSON) read from file: `dryfire world import`. It
// returns nil, with the diagnostics, when the document cannot be
// imported.
func ImportOpenAPI(file string, data []byte, opts ImportOptions) (*ImportedWorld, Diagnostics) {
	res, ds := openapi.Import(file, data, openapi.Options{Package: opts.Package, Env: opts.Env, Source: opts.Source})
	if res == nil {
		return nil, diagnosticsOf(ds)
	}
	return &ImportedWorld{World: res.World, Module: res.Module, Operations: res.Operations, Warnings: diagnosticsOf(res.Warnings)}, nil
}

// CheckWorld loads a world file as a suite naming it would, with paths
// inside root, and returns its diagnostics and how many HTTP routes its
// package pkg declares; ok is false when it does not load.
func CheckWorld(file, root, pkg string) (routes int, ok bool, ds Diagnostics) {
	w, wds := world.Load(file, &world.LoadOptions{Root: root})
	if w == nil {
		return 0, false, diagnosticsOf(wds)
	}
	if ph := w.Packages[pkg].HTTP; ph != nil {
		routes = len(ph.Routes)
	}
	return routes, true, diagnosticsOf(wds)
}

// CheckSuite reads data as the suite file file (without loading what it
// names) and returns its diagnostics and its agent's command, as the
// words the agent is started with; ok is false when it does not parse.
// `dryfire init --agent-command` reads back what it writes with it.
func CheckSuite(file string, data []byte) (command []string, ok bool, ds Diagnostics) {
	s, sds := spec.Parse(file, data, nil)
	if s == nil || sds.HasErrors() {
		return nil, false, diagnosticsOf(sds)
	}
	return s.Agent.Command, true, diagnosticsOf(sds)
}
