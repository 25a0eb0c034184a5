package dryfire

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/toolserver"
)

// The public constants are written out, so that go doc shows their
// values rather than internal names; they must stay the internal ones.
func TestConstantsAreTheInternalOnes(t *testing.T) {
	for _, c := range []struct {
		public RecordMode
		inner  cassette.Mode
	}{{RecordNone, cassette.None}, {RecordOnce, cassette.Once}, {RecordNew, cassette.New}, {RecordAll, cassette.All}} {
		if string(c.public) != string(c.inner) {
			t.Errorf("record mode %q, internally %q", c.public, c.inner)
		}
	}
	if DefaultConcurrency != runner.DefaultConcurrency || DefaultMaxSessions != toolserver.DefaultMaxSessions || DefaultSessionTimeout != toolserver.DefaultSessionTimeout {
		t.Errorf("defaults %d, %d, %s; internally %d, %d, %s", DefaultConcurrency, DefaultMaxSessions, DefaultSessionTimeout,
			runner.DefaultConcurrency, toolserver.DefaultMaxSessions, toolserver.DefaultSessionTimeout)
	}
	if MaxTrials != runner.MaxTrials {
		t.Errorf("MaxTrials %d, internally %d", MaxTrials, runner.MaxTrials)
	}
}
