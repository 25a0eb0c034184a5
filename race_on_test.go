//go:build race

package dryfire_test

// raceEnabled: the race detector slows a run about tenfold.
const raceEnabled = true
