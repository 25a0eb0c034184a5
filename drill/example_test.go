package drill_test

import (
	"context"
	"fmt"
	"log"

	"github.com/dryfire-dev/dryfire/drill"
)

// A drill runs your own Go code against a world: here the "agent" looks
// an order up and refunds it through functions bound to the world's
// operations, and the checks judge the world's state afterwards.
func Example() {
	w, err := drill.Load("../examples/world/support.world.yaml")
	if err != nil {
		log.Fatal(err)
	}
	res, err := w.Run(context.Background(), &drill.Options{
		Checks: []drill.Check{drill.StateCount("refunds.refunds", 1), drill.Called("refunds/refunds.create", 1)},
	}, func(ctx context.Context, d *drill.Drill) error {
		lookup := drill.Bind(d, drill.Binding[map[string]any, map[string]any]{Operation: "orders/orders.get"})
		refund := drill.Bind(d, drill.Binding[map[string]any, map[string]any]{Operation: "refunds/refunds.create"})
		order, err := lookup(map[string]any{"order_id": "A-991"})
		if err != nil {
			return err
		}
		r, err := refund(map[string]any{"order_id": "A-991", "amount": order["total"], "request_id": "req-1"})
		if err != nil {
			return err
		}
		fmt.Println("refund", r["refund_id"], r["status"])
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Verdict, len(res.Evidence), "operations")
	for _, e := range res.Evidence {
		fmt.Println(e.Seq, e.Operation, e.Outcome)
	}
	// Output:
	// refund R-1 pending
	// passed 2 operations
	// 1 orders/orders.get behavior
	// 2 refunds/refunds.create behavior
}

// Reset restores the whole world between two attempts in one drill;
// ResetPackage only one package.
func ExampleDrill_Reset() {
	w, err := drill.Load("../examples/world/support.world.yaml")
	if err != nil {
		log.Fatal(err)
	}
	d, err := w.Start(nil)
	if err != nil {
		log.Fatal(err)
	}
	refund := func() {
		if _, err := d.Call("refunds/refunds.create", map[string]any{"order_id": "A-991", "amount": 42, "request_id": "req-1"}, ""); err != nil {
			log.Fatal(err)
		}
	}
	refunds := func() int { return len(d.State()["refunds"].(map[string]any)["refunds"].(map[string]any)) }
	refund()
	fmt.Println("refunds", refunds())
	if err := d.ResetPackage("refunds"); err != nil {
		log.Fatal(err)
	}
	fmt.Println("after ResetPackage", refunds())
	refund()
	d.Reset()
	fmt.Println("after Reset", refunds())
	fmt.Println(d.End(nil).Verdict)
	// Output:
	// refunds 1
	// after ResetPackage 0
	// after Reset 0
	// passed
}
