//go:build ignore

// record.go records the framework example's cassettes against dryfire's
// fake OpenAI Responses server (a scripted model), not the real API:
//
//	go run examples/ts-framework/record.go -dir DIR -bin DRYFIRE
//
// DIR is a copy of this example whose packages are installed (the CI's
// temporary project does that: scripts/ci.d/20-js.sh); DRYFIRE is a
// dryfire binary. It removes DIR/cassettes, runs the example's Vitest
// file there with the fake server as the upstream (the engine records,
// CI unset), and says how many model calls it saw. Copy DIR/cassettes back
// here.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/dryfire-dev/dryfire/internal/test/fakeapi"
)

// brain is what the fake model says, by the conversation's first user
// message.
var brain = fakeapi.Script{
	"Please refund order A-991.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-991"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-991","amount":120}`}}},
		{Text: "Your refund R-1 of 120 for order A-991 is on its way."},
	},
	// The failing variant: the model refunds a shipped order.
	"Refund order A-992, it is late.": {
		{ToolCalls: []fakeapi.ToolCall{{Name: "lookup_order", Args: `{"order_id":"A-992"}`}}},
		{ToolCalls: []fakeapi.ToolCall{{Name: "issue_refund", Args: `{"order_id":"A-992","amount":35}`}}},
		{Text: "I could not refund order A-992: it has not been delivered yet."},
	},
}

func main() {
	dir := flag.String("dir", "", "an installed copy of examples/ts-framework")
	bin := flag.String("bin", "", "the dryfire binary")
	flag.Parse()
	if *dir == "" || *bin == "" {
		fmt.Fprintln(os.Stderr, "usage: go run examples/ts-framework/record.go -dir DIR -bin DRYFIRE")
		os.Exit(2)
	}
	const key = "fake-key-for-the-example"
	srv := fakeapi.NewOpenAIResponses(brain, fakeapi.RequireKey(key))
	defer srv.Close()
	if err := os.RemoveAll(filepath.Join(*dir, "cassettes")); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	vitest := filepath.Join(*dir, "..", "node_modules", ".bin", "vitest")
	if _, err := os.Stat(vitest); err != nil {
		vitest = filepath.Join(*dir, "node_modules", ".bin", "vitest")
	}
	cmd := exec.Command(vitest, "run")
	cmd.Dir = *dir
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if k == "CI" || strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ANTHROPIC_") || strings.HasPrefix(k, "DRYFIRE_") {
			continue
		}
		cmd.Env = append(cmd.Env, kv)
	}
	cmd.Env = append(cmd.Env, "OPENAI_BASE_URL="+srv.URL+"/v1", "OPENAI_API_KEY="+key, "DRYFIRE_BIN="+*bin)
	err := cmd.Run()
	fmt.Printf("record: %d requests to the fake Responses server\n", srv.Requests())
	if err != nil {
		fmt.Fprintln(os.Stderr, "record:", err)
		os.Exit(1)
	}
}
