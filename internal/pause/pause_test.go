package pause

import (
	"context"
	"testing"
	"time"
)

func TestFor(t *testing.T) {
	if !For(context.Background(), time.Millisecond) {
		t.Error("a wait that ran its length says it did not")
	}
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if For(ctx, time.Hour) || time.Since(start) > 10*time.Second {
		t.Errorf("a wait whose context ended: true, or it took %s", time.Since(start))
	}
}
