package cassette

import (
	"fmt"
	"os"
	"strings"
)

// Mode says when a case's model calls are recorded and when replayed.
type Mode string

const (
	// None replays only and never opens a connection; a missing cassette
	// is an error. The default when the CI environment variable is set.
	None Mode = "none"
	// Once replays a case's cassette when it exists, else records one.
	// The default otherwise.
	Once Mode = "once"
	// New replays the recorded calls while they match and records the
	// rest live, updating the cassette.
	New Mode = "new"
	// All records every call live and overwrites the cassette.
	All Mode = "all"
)

// Modes are the modes, in the order help lists them.
var Modes = []Mode{None, Once, New, All}

// ParseMode reads a --record value.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown record mode %q: want none, once, new or all", s)
}

// DefaultMode is None when the environment variable CI is set to anything,
// else Once.
func DefaultMode(getenv func(string) string) Mode {
	if getenv("CI") != "" {
		return None
	}
	return Once
}

// Env is env (KEY=VALUE; nil is os.Environ()) and a lookup in it.
func Env(env []string) ([]string, func(string) string) {
	if env == nil {
		env = os.Environ()
	}
	vars := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	return env, func(k string) string { return vars[k] }
}
