package runner

// The clock of agent programs (agent.clock, --clock): what a program reads
// as the current time. Three layers, each for the programs it can reach:
// TZ (the zone every libc and runtime reads), DRYFIRE_NOW (for agents that
// take their time from it), and Debian's libfaketime preloaded into
// dynamically linked programs (Python, Node, most interpreters), which
// makes their time calls start at the clock and run from there. A
// statically linked program (most Go binaries) or one that reads the time
// from elsewhere (a server, the network) is not reached by the last.

import (
	"cmp"
	"os"
	"strings"
	"time"

	"github.com/dryfire-dev/dryfire/internal/spec"
)

// Variables the clock sets.
const (
	EnvNow          = "DRYFIRE_NOW"
	EnvLibfaketime  = "DRYFIRE_LIBFAKETIME" // the run's: where libfaketime is, when not in a standard place
	libfaketimeName = "libfaketimeMT.so.1"
)

// libfaketimePaths are where Debian and Ubuntu (and a source install)
// put the library.
var libfaketimePaths = []string{
	"/usr/lib/x86_64-linux-gnu/faketime/" + libfaketimeName,
	"/usr/lib/aarch64-linux-gnu/faketime/" + libfaketimeName,
	"/usr/lib/faketime/" + libfaketimeName,
	"/usr/local/lib/faketime/" + libfaketimeName,
}

// findLibfaketime is the library to preload, "" when none is installed.
func findLibfaketime(getenv func(string) string) string {
	paths := libfaketimePaths
	if p := getenv(EnvLibfaketime); p != "" {
		paths = []string{p}
	}
	for _, p := range paths {
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// NoteNoFaketime is the case note of a clock set where libfaketime is not
// installed.
const NoteNoFaketime = "agent.clock: libfaketime is not installed (apt-get install libfaketime), so the program's own time calls read the real clock; only TZ and DRYFIRE_NOW are set"

// clockEnv are the variables that set a program's clock, and a note when
// libfaketime could not be used. env is the program's environment so far
// (for LD_PRELOAD, kept after the library).
func clockEnv(c *spec.Clock, env []string, getenv func(string) string) ([]string, string) {
	tz := cmp.Or(c.TZ, "UTC")
	loc, err := time.LoadLocation(tz)
	if err != nil {
		loc = time.UTC // checked when the suite was loaded
	}
	out := []string{"TZ=" + tz, EnvNow + "=" + c.Now.UTC().Format(time.RFC3339Nano)}
	lib := findLibfaketime(getenv)
	if lib == "" {
		return out, NoteNoFaketime
	}
	preload := lib
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "LD_PRELOAD="); ok && v != "" {
			preload += ":" + v
		}
	}
	// "@TIME" starts the clock there and lets it run; TIME is read in the
	// program's zone. The monotonic clock stays real, so that timers,
	// timeouts and event loops behave.
	out = append(out,
		"LD_PRELOAD="+preload,
		"FAKETIME=@"+c.Now.In(loc).Format("2006-01-02 15:04:05"),
		"FAKETIME_DONT_FAKE_MONOTONIC=1",
	)
	return out, ""
}

// clockOf is the clock of a run's programs: --clock (Options.Clock, over
// the suite's time, keeping its zone), else agent.clock; nil: the real
// clock.
func clockOf(a *spec.Agent, opts Options) *spec.Clock {
	if opts.Clock == nil {
		return a.Clock
	}
	c := &spec.Clock{Now: *opts.Clock}
	if a.Clock != nil {
		c.TZ = a.Clock.TZ
	}
	return c
}
