// Package pause waits a while unless a context ends first: the delays a
// mock rule, a model fault and a provider's retry declare all end with
// the run that waits for them.
package pause

import (
	"context"
	"time"
)

// For waits d, or until ctx ends, and reports whether d passed.
func For(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
