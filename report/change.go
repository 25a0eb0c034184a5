package report

// ChangeKind is a kind of change between two runs of a case, as dryfire
// compare (and run --baseline) names it (docs/ci.md, "Compare two runs").
type ChangeKind string

// The kinds of change, in the order a comparison lists them.
const (
	ChangeRegressed ChangeKind = "regressed" // a case or check passed, and fails or errs now
	ChangeFixed     ChangeKind = "fixed"     // a case or check failed or erred, and passes now
	ChangeNew       ChangeKind = "new"       // a case, or a check of a case in both, only in NEW
	ChangeGone      ChangeKind = "gone"      // a case, or a check of a case in both, only in BASE
	ChangeSkipped   ChangeKind = "skipped"   // a case that ran is skipped now
	ChangeStatus    ChangeKind = "changed"   // another change of status (failed and error; skipped before, and runs now)
	ChangeFlaky     ChangeKind = "flaky"     // a case's trials disagree now, and did not
	ChangeSteady    ChangeKind = "steady"    // a flaky case's trials agree now
	ChangePassDown  ChangeKind = "pass-down" // fewer of a case's trials pass, status and flakiness the same
	ChangePassUp    ChangeKind = "pass-up"   // more of a case's trials pass, status and flakiness the same
	ChangeSlower    ChangeKind = "slower"    // a duration outlier (the comparison's slow factor and margin)
	ChangeFaster    ChangeKind = "faster"    // a duration outlier the other way
)

// ChangeKinds are every kind of change, in the order a comparison lists
// them.
func ChangeKinds() []ChangeKind {
	return []ChangeKind{ChangeRegressed, ChangeFixed, ChangeNew, ChangeGone, ChangeSkipped, ChangeStatus, ChangeFlaky, ChangeSteady, ChangePassDown, ChangePassUp, ChangeSlower, ChangeFaster}
}
