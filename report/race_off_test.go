//go:build !race

package report

// raceDetector: timing bounds do not hold under the race detector.
const raceDetector = false
