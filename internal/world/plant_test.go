package world_test

import (
	"testing"

	"github.com/dryfire-dev/dryfire/internal/world"
)

// Plant puts a value at a state path before the drill's calls, the
// record's other fields kept; a path that leads nowhere says where.
func TestPlant(t *testing.T) {
	w, ds := world.Load("../../examples/world/support.world.yaml", nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	in, err := w.New(world.Drill{})
	if err != nil {
		t.Fatal(err)
	}
	if err := in.Plant("orders.orders.A-991.note", "hello"); err != nil {
		t.Fatal(err)
	}
	resp := in.Call(world.Request{Tool: "lookup_order", Arguments: `{"order_id":"A-991"}`})
	if resp.Status != "ok" {
		t.Fatalf("%+v", resp)
	}
	st := in.State()["orders"].(map[string]any)["orders"].(map[string]any)["A-991"].(map[string]any)
	if st["note"] != "hello" || st["customer"] != "ada" {
		t.Errorf("the record: %v", st)
	}
	if err := in.Plant("/orders/orders/A-991/customer", "eve"); err != nil || in.State()["orders"].(map[string]any)["orders"].(map[string]any)["A-991"].(map[string]any)["customer"] != "eve" {
		t.Errorf("a JSON Pointer: %v", err)
	}
	for path, want := range map[string]string{
		"orders.orders":               `state path "orders.orders": name a field of a record (package.collection.key...)`,
		"orders.nothing.A-1.x":        `state path "orders.nothing.A-1.x": the world has no collection orders.nothing`,
		"orders.orders.Z-1.note":      `state path "orders.orders.Z-1.note": orders.orders has no "Z-1"`,
		"orders.orders.A-991.total.x": `state path "orders.orders.A-991.total.x": orders.orders.A-991.total is not a mapping`,
	} {
		if err := in.Plant(path, 1); err == nil || err.Error() != want {
			t.Errorf("%s: %v\nwant %s", path, err, want)
		}
	}
}
