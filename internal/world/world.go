// Package world is dryfire's stateful, deterministic simulation of the
// services around an agent: packages of operations with state,
// Starlark behaviors, declared errors, idempotency, actors, budgets,
// faults, scheduled events and tool overrides with scopes.
//
// A World is a loaded, validated *.world.yaml: immutable, shared by every
// drill. An Instance is one drill's world: its state, clock, counters,
// receipts and evidence, behind one lock, so every call's pipeline runs
// in one critical section. Servers, the runner and the Go binding all
// call Instance.Call.
package world

import (
	"encoding/json"
	"errors"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"go.starlark.net/starlark"

	"github.com/dryfire-dev/dryfire/internal/jschema"
	_ "github.com/dryfire-dev/dryfire/internal/quietlog" // before starlark: its log line under a memory cap
	"github.com/dryfire-dev/dryfire/internal/safeio"
	"github.com/dryfire-dev/dryfire/internal/value"
	"github.com/dryfire-dev/dryfire/internal/yamlpos"
)

// World is a loaded world file.
type World struct {
	File        string
	Name        string
	Seed        int64
	Start       time.Time
	Tick        time.Duration
	StepBudget  uint64
	Limits      Limits
	Packages    map[string]*Package
	PackageList []string // sorted
	// Operations by "package/operation", and their keys sorted.
	Operations map[string]*Operation
	OpList     []string
	Tools      map[string]*Operation // by tool name
	Actors     map[string]*Actor
	ActorList  []string // file order; the first is the default actor
	Baseline   *Setup
	Scenarios  map[string]*Setup

	// Doc is the world file as JSON values and Sources the behavior
	// modules' text, by the name written: what a build carries.
	Doc     map[string]any
	Sources map[string]string
	funcs   map[string]*starlark.Function
}

// Package is a named group of operations with its own state.
type Package struct {
	Name    string
	Ordered map[string]bool // list collections whose order matters
	// HTTP is the package's HTTP API; nil when no operation has a route.
	HTTP *PackageHTTP
}

// Operation is one callable operation of a package.
type Operation struct {
	Package, Name string
	Key           string // package/operation
	Tool          string
	Description   string
	Input, Output any // JSON Schemas as written (nil: none)
	InputSchema   *jschema.Schema
	OutputSchema  *jschema.Schema
	Errors        map[string]ErrorDecl
	Idempotent    bool
	KeyArg        string // idempotency_key: the argument carrying the key
	Behavior      string
	Route         *Route // http: the real service's route; nil for none
	// Latency is how long each call of the operation takes in the
	// world's virtual time: the clock moves on by it (besides the tick),
	// so that what is scheduled meanwhile comes due before the next call.
	Latency time.Duration
	fn      *starlark.Function
	Pos     yamlpos.Pos
}

// ErrorDecl is a declared error of an operation.
type ErrorDecl struct {
	Retryable bool
	Message   string
}

// Actor is who may call what.
type Actor struct {
	Name  string
	Allow []string
}

// Allowed reports whether the actor may call operation key (package/op).
func (a *Actor) Allowed(key string) bool {
	return slices.ContainsFunc(a.Allow, func(p string) bool { return matchOp(p, key) })
}

// matchOp matches an operation pattern: *, package/*, package/operation.
func matchOp(pattern, key string) bool {
	if pattern == "*" || pattern == key {
		return true
	}
	if pkg, ok := strings.CutSuffix(pattern, "/*"); ok {
		return strings.HasPrefix(key, pkg+"/")
	}
	return false
}

// Setup is a starting setup: the world's baseline or a scenario.
type Setup struct {
	Name      string
	State     map[string]map[string]any // package → collection → value
	Budgets   []Budget
	Faults    []Fault
	Events    []Event
	Overrides []*Override
	Source    any // an inline setup as written, for the build
}

// Budget bounds the calls to the operations a pattern matches.
type Budget struct {
	Operation string
	Calls     int
}

// Fault makes an operation's normal behavior fail: every Nth call, or at
// a seeded rate.
type Fault struct {
	ID        string
	Operation string
	Code      string
	Message   string
	Every     int
	Rate      float64
	Pos       yamlpos.Pos
}

// Event is a scheduled operation call.
type Event struct {
	ID        string
	At        string // as written: +DURATION or RFC 3339
	Operation string
	Arguments map[string]any
	Pos       yamlpos.Pos
}

// Scope of an override rule, lowest first.
type Scope int

const (
	ScopeWorld Scope = iota
	ScopeScenario
	ScopeDrill
	ScopeTest
)

var scopeNames = []string{"world", "scenario", "drill", "test"}

func (s Scope) String() string { return scopeNames[s] }

// OutcomeKind is what an override delivers.
type OutcomeKind string

const (
	OutReturn   OutcomeKind = "return"
	OutError    OutcomeKind = "error"
	OutOriginal OutcomeKind = "original"
)

// Override is one toolOverrides rule.
type Override struct {
	ID        string
	Operation string // package/operation
	Actor     string // when.actorId; "" matches any
	Arguments map[string]any
	Times     int // 0: unlimited
	Kind      OutcomeKind
	Value     any
	Code      string
	Message   string
	Retryable *bool
	Scope     Scope
	Pos       yamlpos.Pos
	Source    any // the rule as written, for the build
}

// Matches reports whether the rule applies to a call: its operation, its
// actor when given, and each supplied argument exactly (nested objects
// and arrays too); other top-level arguments may differ.
func (o *Override) Matches(op, actor string, args map[string]any) bool {
	if o.Operation != op || (o.Actor != "" && o.Actor != actor) {
		return false
	}
	for k, want := range o.Arguments {
		got, ok := args[k]
		if !ok || !value.Equal(want, got) {
			return false
		}
	}
	return true
}

// LoadOptions tune loading.
type LoadOptions struct {
	// ReadFile reads a behavior module by the name written in the world
	// (relative to the world file); nil reads from disk.
	ReadFile func(name string) ([]byte, error)
	// Root is the directory that behavior modules read from disk must
	// stay inside, symlinks resolved; "" is the current directory when
	// the world file is inside it, else the world file's directory.
	Root string
}

// rootHint tells how to widen the project root after a confinement error.
func rootHint(err error) string {
	if errors.Is(err, safeio.ErrOutside) {
		return "; paths in files stay inside the project root (give --root DIR to widen it)"
	}
	return ""
}

// DefaultStepBudget bounds the Starlark steps of one behavior call.
const DefaultStepBudget = 100_000

// MaxStepBudget is the largest step_budget a world may ask for: about a
// minute of Starlark on one core.
const MaxStepBudget = 1_000_000_000

// Limits bound what a behavior can make a world do; each is raised in the
// world file under limits: (docs/limits.md lists them all).
type Limits struct {
	// ScheduledPerCall bounds the ctx.schedule calls of one behavior call.
	ScheduledPerCall int
	// EventsPerTick bounds the scheduled events that fire at one moment
	// (before one call, or in one clock advance): a behavior that
	// reschedules itself at +0s trips it instead of looping forever.
	EventsPerTick int
	// MemoryMB bounds what one behavior call, or one module's top level,
	// may allocate, in MiB (see memory.go for how it is counted).
	MemoryMB int
}

// Default limits.
const (
	DefaultScheduledPerCall = 1000
	DefaultEventsPerTick    = 10_000
	// MaxLatency bounds an operation's latency.
	MaxLatency = 24 * time.Hour
)

var (
	defaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	toolName     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`) })
	badToolChar  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_-]`) })
)

// IsWorldFile reports whether a file name is a world by its name.
func IsWorldFile(name string) bool {
	return strings.HasSuffix(name, ".world.yaml") || strings.HasSuffix(name, ".world.yml")
}

// sortedKeys returns the keys of m in order (for loading and messages:
// it allocates as it collects).
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func num(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := n.Float64()
	return f, err == nil
}
