package dryfire

import (
	"slices"
	"testing"

	ireport "github.com/dryfire-dev/dryfire/internal/report"
)

// The public change kinds are written out; they must be the internal
// ones, in their order.
func TestChangeKindsAreTheInternalOnes(t *testing.T) {
	public := []ChangeKind{ChangeRegressed, ChangeFixed, ChangeNew, ChangeGone, ChangeSkipped, ChangeStatus, ChangeFlaky, ChangeSteady, ChangePassDown, ChangePassUp, ChangeSlower, ChangeFaster}
	if !slices.Equal(public, ChangeKinds()) {
		t.Errorf("public kinds %q, internally %q", public, ireport.ChangeKinds)
	}
}
