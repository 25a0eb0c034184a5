// Package quietlog keeps libraries' log lines off the user's terminal.
// dryfire says what it has to say in its own messages and never uses the
// standard logger; a library that does (Starlark writes "failed to
// allocate 4GB address space … Integer performance may suffer" when a
// memory cap refuses its reservation, which only makes its small
// integers slower) is dropped.
//
// It must run before those libraries' own initialisation: Go initialises
// the packages that are ready in the order of their import paths, and
// this one imports nothing but what the standard logger does, and sorts
// before go.starlark.net. internal/world imports it for that; it is
// tested by TestStarlarkSilentUnderMemoryCap there.
package quietlog

import (
	"io"
	"log"
)

func init() { log.SetOutput(io.Discard) }
