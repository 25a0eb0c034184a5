//go:build !linux

package runner_test

import "testing"

// The sandbox is Linux's: sandboxRun skips before these are asked.
func kernelKnobs(t *testing.T) []string { t.Skip("Linux only"); return nil }

func tmpfsAt(*testing.T, string) bool { return false }
