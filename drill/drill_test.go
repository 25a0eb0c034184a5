package drill_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire/drill"
)

type refundReq struct {
	OrderID   string  `json:"order_id"`
	Amount    float64 `json:"amount"`
	RequestID string  `json:"request_id"`
}

type refund struct {
	RefundID string `json:"refund_id"`
	Status   string `json:"status"`
}

func load(t *testing.T) *drill.World {
	t.Helper()
	w, err := drill.Load("../examples/world/support.world.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestBindInputOutputKeyAndTypedError(t *testing.T) {
	w := load(t)
	yes := true
	var kept func(string) (refund, error)
	res, err := w.Run(context.Background(), &drill.Options{
		ToolOverrides: []drill.Override{{ID: "busy-once", Operation: "refunds/refunds.create", Times: 1,
			Arguments: map[string]any{"order_id": "A-991"},
			Outcome:   drill.Outcome{Kind: "error", Code: "UNAVAILABLE", Message: "Try again", Retryable: &yes}}},
		Checks: []drill.Check{drill.StateCount("refunds.refunds", 1), drill.Emitted("refund.created", 1), drill.Called("refunds/refunds.create", 3)},
	}, func(ctx context.Context, d *drill.Drill) error {
		// A native signature: (orderID) → refund; input mapping, key per logical request.
		issue := drill.Bind(d, drill.Binding[string, refund]{
			Operation:      "refunds/refunds.create",
			Input:          func(id string) any { return refundReq{OrderID: id, Amount: 120, RequestID: "req-" + id} },
			IdempotencyKey: func(id string) string { return "req-" + id },
		})
		kept = issue
		_, err := issue("A-991")
		var te *drill.ToolError
		if !errors.As(err, &te) || te.Code != "UNAVAILABLE" || !te.Retryable || te.Status != 503 || te.Envelope()["message"] != "Try again" {
			return fmt.Errorf("first call: %v (%+v)", err, te)
		}
		r1, err := issue("A-991")
		if err != nil || r1.RefundID != "R-1" {
			return fmt.Errorf("retry: %v %+v", err, r1)
		}
		r2, err := issue("A-991") // the same logical request: its receipt
		if err != nil || r2 != r1 {
			return fmt.Errorf("receipt: %v %+v", err, r2)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != drill.Passed {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Failures)
	}
	if res.Evidence[2].Outcome != "receipt" || res.Evidence[0].Override.Scope != "test" {
		t.Errorf("evidence %+v", res.Evidence)
	}
	// A retained bound function fails once its drill has ended.
	_, err = kept("A-991")
	var te *drill.ToolError
	if !errors.As(err, &te) || te.Code != "DRILL_ENDED" {
		t.Errorf("after the drill: %v", err)
	}
}

func TestVerdictFailsOnCheckOrAgentError(t *testing.T) {
	w := load(t)
	res, err := w.Run(context.Background(), &drill.Options{Checks: []drill.Check{drill.StateEquals("orders.orders.A-991.status", "refunded")}},
		func(ctx context.Context, d *drill.Drill) error { return errors.New("gave up") })
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != drill.Failed || len(res.Failures) != 2 {
		t.Errorf("%s %v", res.Verdict, res.Failures)
	}
}

func TestClockAdvanceFiresScheduledEvents(t *testing.T) {
	w := load(t)
	d, err := w.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Call("tickets/tickets.open", map[string]any{"subject": "help"}, ""); err != nil {
		t.Fatal(err)
	}
	if err := d.Advance(30 * time.Minute); err != nil {
		t.Fatal(err)
	}
	q := d.State()["tickets"].(map[string]any)["queue"].([]any)
	if q[0].(map[string]any)["priority"] != "high" {
		t.Errorf("the scheduled escalation did not run: %v", q)
	}
	res := d.End(nil)
	if res.Evidence[len(res.Evidence)-1].Operation != "tickets/tickets.escalate" {
		t.Errorf("%+v", res.Evidence)
	}
}

// TestParallelDrillsNeverShareState runs 16 drills at once in one process.
func TestParallelDrillsNeverShareState(t *testing.T) {
	w := load(t)
	var wg sync.WaitGroup
	results := make([]*drill.Result, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := w.Run(context.Background(), &drill.Options{Checks: []drill.Check{drill.StateCount("tickets.queue", i+1)}},
				func(ctx context.Context, d *drill.Drill) error {
					open := drill.Bind(d, drill.Binding[map[string]any, map[string]any]{Operation: "tickets/tickets.open"})
					for j := 0; j <= i; j++ {
						if _, err := open(map[string]any{"subject": fmt.Sprintf("drill %d ticket %d", i, j)}); err != nil {
							return err
						}
					}
					return nil
				})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r == nil || r.Verdict != drill.Passed {
			t.Errorf("drill %d: %+v", i, r)
		}
	}
}
