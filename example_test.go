package dryfire_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/dryfire-dev/dryfire"
)

// Load reads and validates suites; a suite with errors comes back as
// Diagnostics, every problem with its FILE:LINE:COL.
func ExampleLoad() {
	p, err := dryfire.Load(nil, "examples/quickstart")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(context.Background(), nil)
	fmt.Println(p.Files, p.CaseCount(), "cases")

	_, err = dryfire.Load(nil, "examples/does-not-exist")
	fmt.Println(err)
	// Output:
	// [examples/quickstart/support.dryfire.yaml] 3 cases
	// examples/does-not-exist: no such file or directory
}

// Run runs every case and returns the report `dryfire run --json` writes.
func ExampleProject_Run() {
	p, err := dryfire.Load(nil, "examples/quickstart")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(context.Background(), nil)
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Filter: "refund"})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range rep.Cases {
		fmt.Printf("%s: %s, %d tool calls\n", c.Name, c.Status, len(c.ToolCalls))
	}
	fmt.Println(rep.Summary.Passed, "passed,", rep.Summary.Failed, "failed")
	// Output:
	// gold customer gets a refund after a retry: passed, 3 tool calls
	// refund outage is reported, not hidden: passed, 2 tool calls
	// 2 passed, 0 failed
}

// A ToolServer answers an agent dryfire does not run with the suite's
// mocks, over MCP (/mcp) and plain HTTP (/tools/{name}).
func ExampleProject_ToolServer() {
	p, err := dryfire.Load(nil, "examples/quickstart")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close(context.Background(), nil)
	srv, err := p.ToolServer(nil)
	if err != nil {
		log.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.CloseSessions()

	resp, err := http.Post(hs.URL+"/tools/lookup_order", "application/json", strings.NewReader(`{"order_id": "A-991"}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(string(body))
	// Output:
	// {"content":"{\"order_id\":\"A-991\",\"tier\":\"gold\",\"total\":120.5}","is_error":false}
}
