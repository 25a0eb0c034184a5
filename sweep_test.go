package dryfire

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
)

// The public bounds of a sweep and an injection drill are the runner's.
func TestDrillBounds(t *testing.T) {
	if DefaultMaxPoints != runner.DefaultMaxPoints || DefaultMaxInjections != runner.DefaultMaxInjections {
		t.Errorf("DefaultMaxPoints %d, DefaultMaxInjections %d; the runner's %d, %d", DefaultMaxPoints, DefaultMaxInjections, runner.DefaultMaxPoints, runner.DefaultMaxInjections)
	}
}
