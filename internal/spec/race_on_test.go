//go:build race

package spec

// raceEnabled: the race detector slows the loader about tenfold.
const raceEnabled = true
