package report

// Recheck says that a report's checks are the suites' current checks
// applied again to a stored run (dryfire recheck), not a run's own: no
// agent, model or tool ran for it.
type Recheck struct {
	// Report names the report whose run was re-checked, as given.
	Report string `json:"report"`
	// Cases counts the cases whose checks were applied again; the others
	// (skipped, or whose run ended before its checks) are as stored.
	Cases int `json:"cases"`
	// Changed counts the checks whose verdict is not the stored one: a
	// check that passes now and failed then, or the reverse, and a check
	// added or removed.
	Changed int `json:"changed"`
	// Kept counts the checks whose stored result was kept because they
	// are unchanged and the report does not hold what they read (a
	// judge's verdict, a workspace's files).
	Kept int `json:"kept"`
}
