package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/cassette"
	"github.com/dryfire-dev/dryfire/internal/runner"
	"github.com/dryfire-dev/dryfire/internal/spec"
	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
	"github.com/dryfire-dev/dryfire/internal/world"
	"github.com/dryfire-dev/dryfire/report"
)

// dualBrain is the model of the dual-control drills: it reads the order,
// asks, then (after the user changed the address on their side) reads it
// again and ships there; or ships to the address it read first.
var dualBrain = fakeapi.Script{
	"Please ship my order A-7.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-7"}`}}},
		{Text: "Order A-7 goes to 1 Old Road. Shall I ship it?"},
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-7"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "ship_order", Args: `{"order_id":"A-7","address":"9 New Street"}`}}},
		{Text: "Shipped to 9 New Street."},
	},
	"Ship A-7, please.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-7"}`}}},
		{Text: "Order A-7 goes to 1 Old Road. Shall I ship it?"},
		{ToolCalls: []fakeapi.ToolCall{{Name: "ship_order", Args: `{"order_id":"A-7","address":"1 Old Road"}`}}},
		{Text: "Shipped."},
	},
}

const dualSuite = `version: 1
world: shop.world.yaml
agent: {provider: openai, model: test-model}
cases:
  - name: the agent reads the order again
    input: Please ship my order A-7.
    user: &moves
      - say: I have just moved. I changed the address in my account; ship it there, please.
        when: Shall I ship
        actor: customer
        do: [{tool: change_address, args: {order_id: A-7, address: 9 New Street}}]
    expect: &both
      - state: {path: orders.orders.A-7.shipped_to, equals: 9 New Street}
      - called: {operation: orders/orders.change_address, actor: customer, times: 1}
      - not_called: change_address
  - name: the agent keeps the old plan
    input: Ship A-7, please.
    user: *moves
    expect: *both
`

// Dual control: the simulated user's call goes through the record and
// the world as the agent's do, marked with its actor; checks judge both
// sides; recorded once, the drills replay offline to the same report, at
// one case at a time and eight.
func TestDualControlRecordThenReplay(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"shop.world.yaml", "shop.star"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "examples", "dual-control", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, "dual.dryfire.yaml")
	if err := os.WriteFile(path, []byte(dualSuite), 0o644); err != nil {
		t.Fatal(err)
	}
	suites, ds := spec.LoadFiles([]string{path}, nil)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	sw, ds := world.AttachSuite(suites[0], world.Cache{}, "")
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	worlds := world.Worlds{suites[0]: sw}
	srv := fakeapi.NewOpenAIChat(dualBrain, fakeapi.RequireKey(testOpenAIKey))
	defer srv.Close()
	recorded, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.Once,
		Env: []string{"OPENAI_API_KEY=" + testOpenAIKey, "OPENAI_BASE_URL=" + srv.URL + "/v1"}})
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Requests(); n != 9 {
		t.Errorf("%d requests while recording, want 9", n)
	}
	pass, fail := recorded.Cases[0], recorded.Cases[1]
	if pass.Status != report.Passed || fail.Status != report.Failed {
		t.Fatalf("statuses %s (%s), %s (%s)", pass.Status, pass.Reason, fail.Status, fail.Reason)
	}
	var got []string
	for i, tc := range pass.ToolCalls {
		e := pass.Evidence[i]
		got = append(got, fmt.Sprintf("turn %d %q %s %s -> %s | %s %s", tc.Turn, tc.Actor, tc.Tool, tc.Args, tc.Result, e.Actor, e.Operation))
	}
	want := []string{
		`turn 1 "" lookup_order {"order_id":"A-7"} -> {"address":"1 Old Road","order_id":"A-7","status":"placed"} | agent orders/orders.get`,
		`turn 2 "customer" change_address {"address":"9 New Street","order_id":"A-7"} -> {"address":"9 New Street","order_id":"A-7"} | customer orders/orders.change_address`,
		`turn 3 "" lookup_order {"order_id":"A-7"} -> {"address":"9 New Street","order_id":"A-7","status":"placed"} | agent orders/orders.get`,
		`turn 4 "" ship_order {"address":"9 New Street","order_id":"A-7"} -> {"order_id":"A-7","status":"shipped","to":"9 New Street"} | agent orders/orders.ship`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("calls and evidence (-want +got):\n%s", diff)
	}
	// The stale plan: the user's side holds (the address moved), the
	// agent's does not (it shipped to the old one).
	if m := fail.Checks[0].Message; fail.Checks[0].Passed || !strings.Contains(m, `it is "1 Old Road"`) {
		t.Errorf("the stale plan's state check: %+v", fail.Checks[0])
	}
	if !fail.Checks[1].Passed || !fail.Checks[2].Passed {
		t.Errorf("the stale plan's user side: %+v", fail.Checks[1:])
	}

	conns := srv.Conns()
	for _, jobs := range []int{1, 8} {
		replayed, err := runner.Run(context.Background(), suites, runner.Options{Worlds: worlds, Record: cassette.None, Concurrency: jobs, Env: []string{}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(stableJSON(t, withoutRecordedNotes(recorded)), stableJSON(t, replayed)); diff != "" {
			t.Errorf("-j %d: the replay differs from the recording run (-recorded +replayed):\n%s", jobs, diff)
		}
	}
	if srv.Conns() != conns {
		t.Errorf("replaying opened connections to the upstream")
	}
}
