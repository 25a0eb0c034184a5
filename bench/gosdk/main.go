// Command gosdk is the MCP go-sdk's own streamable HTTP server with the
// benchmark's one tool (lookup_order answering {"tier":"gold"}), answering
// JSON as dryfire serve does: the benchmark table (bench/table) measures it
// beside dryfire's MCP endpoint, to tell dryfire's cost from the SDK's.
package main

import (
	"context"
	"flag"
	"log"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	flag.Parse()
	server := mcp.NewServer(&mcp.Implementation{Name: "gosdk-bench", Version: "1"}, nil)
	server.AddTool(&mcp.Tool{
		Name:        "lookup_order",
		Description: "Look up an order.",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{"order_id": map[string]any{"type": "string"}}, "required": []any{"order_id"}},
	}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"tier":"gold"}`}}}, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true})
	l, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	os.Stdout.WriteString("http://" + l.Addr().String() + "\n")
	log.Fatal(http.Serve(l, h))
}
