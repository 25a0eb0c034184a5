// A drill as a Go test: a tiny Go "agent" whose refund dependency is a
// function value bound to the support-desk world's refunds.create
// operation, with a per-test override that makes the first refund fail.
package world_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dryfire-dev/dryfire/drill"
)

type RefundRequest struct {
	OrderID   string  `json:"order_id"`
	Amount    float64 `json:"amount"`
	RequestID string  `json:"request_id"`
}

type Refund struct {
	RefundID string `json:"refund_id"`
	Status   string `json:"status"`
}

// agent is the code under test: it refunds an order, retrying a retryable
// failure with the same request id (one logical request).
func agent(ctx context.Context, refund func(RefundRequest) (Refund, error), order string, amount float64) (string, error) {
	req := RefundRequest{OrderID: order, Amount: amount, RequestID: "refund-" + order}
	for attempt := 0; attempt < 3; attempt++ {
		r, err := refund(req)
		var te *drill.ToolError
		if errors.As(err, &te) && te.Retryable {
			continue
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("refund %s is %s", r.RefundID, r.Status), nil
	}
	return "", errors.New("gave up")
}

func TestRefundRetriesThroughABusyService(t *testing.T) {
	w, err := drill.Load("support.world.yaml")
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	res, err := w.Run(context.Background(), &drill.Options{
		ToolOverrides: []drill.Override{{
			ID: "busy-once", Operation: "refunds/refunds.create", Times: 1,
			Arguments: map[string]any{"order_id": "A-991"},
			Outcome:   drill.Outcome{Kind: "error", Code: "UNAVAILABLE", Message: "Try again", Retryable: &yes},
		}},
		Checks: []drill.Check{
			drill.StateCount("refunds.refunds", 1),
			drill.StateEquals("refunds.refunds.R-1.amount", 120),
			drill.Emitted("refund.created", 1),
		},
	}, func(ctx context.Context, d *drill.Drill) error {
		refund := drill.Bind(d, drill.Binding[RefundRequest, Refund]{
			Operation:      "refunds/refunds.create",
			IdempotencyKey: func(r RefundRequest) string { return r.RequestID },
		})
		out, err := agent(ctx, refund, "A-991", 120)
		if err == nil && out != "refund R-1 is pending" {
			err = fmt.Errorf("agent said %q", out)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != drill.Passed {
		t.Fatalf("verdict %s: %v", res.Verdict, res.Failures)
	}
	if o := res.Evidence[0].Override; o == nil || o.ID != "busy-once" || o.Scope != "test" {
		t.Errorf("the first call was not shaped by busy-once: %+v", res.Evidence[0])
	}
	t.Logf("build %s, seed %d, %d operations", res.BuildHash, res.Seed, len(res.Evidence))
}
