package dryfire

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/runner"
)

// TestSweepNames: the public names of a sweep's failures and verdicts are
// the runner's.
func TestSweepNames(t *testing.T) {
	for _, p := range [][2]string{
		{FaultDeclared, runner.FaultDeclared}, {FaultToolError, runner.FaultToolError}, {FaultTimeout, runner.FaultTimeout},
		{PointSurvived, runner.Survived}, {PointFailed, runner.NotSurvive}, {PointError, runner.PointError},
		{PointNoAnswer, runner.NoAnswer}, {PointNotReached, runner.NotReached},
	} {
		if p[0] != p[1] {
			t.Errorf("public %q, runner %q", p[0], p[1])
		}
	}
	if DefaultMaxPoints != runner.DefaultMaxPoints {
		t.Errorf("DefaultMaxPoints %d, runner's %d", DefaultMaxPoints, runner.DefaultMaxPoints)
	}
}
