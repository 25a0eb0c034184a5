//go:build !race

package dryfire_test

const raceEnabled = false
