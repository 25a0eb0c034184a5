package toolserver

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// TestMCPResourcesAndPromptsBothEras: go-sdk's client lists and reads the
// suite's resources (fixed, a blob, templated with answers and with a
// default), gets a prompt with its arguments filled, completes an
// argument and a template variable, over HTTP in both protocol eras and
// in memory; every read, get and completion is recorded, the failed ones
// with their error.
func TestMCPResourcesAndPromptsBothEras(t *testing.T) {
	for _, transport := range []string{"http", "memory"} {
		for _, version := range []string{"", legacyVersion} {
			t.Run(transport+"/version="+version, func(t *testing.T) {
				sc := NewScope(ScopeOptions{Suite: loadSuite(t, "resources.dryfire.yaml")})
				var cs *mcp.ClientSession
				if transport == "http" {
					cs = connectHTTP(t, startServer(t, New(sc, Options{})).URL+"/mcp", version)
				} else {
					cs = connectInMemory(t, sc, version)
				}
				ctx := testContext(t)
				caps := cs.InitializeResult().Capabilities
				if caps.Resources == nil || caps.Prompts == nil || caps.Completions == nil {
					t.Errorf("capabilities %+v: want resources, prompts and completions", caps)
				}
				list, err := cs.ListResources(ctx, nil)
				if err != nil {
					t.Fatal(err)
				}
				var uris []string
				for _, r := range list.Resources {
					uris = append(uris, r.URI+" "+r.Name+" "+r.MIMEType)
				}
				if diff := cmp.Diff([]string{"docs://logo docs://logo image/png", "docs://refund-policy refund-policy text/markdown"}, uris); diff != "" {
					t.Errorf("resources/list (-want +got):\n%s", diff)
				}
				templates, err := cs.ListResourceTemplates(ctx, nil)
				if err != nil || len(templates.ResourceTemplates) != 2 {
					t.Fatalf("resources/templates/list: %v %+v", err, templates)
				}
				read := func(uri string) string {
					t.Helper()
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
					if err != nil {
						return "error: " + err.Error()
					}
					c := res.Contents[0]
					if c.Blob != nil {
						return c.URI + " " + c.MIMEType + " blob " + string(mustJSON(t, c.Blob))
					}
					return c.URI + " " + c.MIMEType + " " + c.Text
				}
				got := []string{read("docs://refund-policy"), read("docs://logo"), read("orders://A-991"), read("orders://B-1"), read("notes://7"), read("orders://Z-9"), read("docs://nope")}
				want := []string{
					"docs://refund-policy text/markdown Refunds within 30 days.",
					`docs://logo image/png blob "iVBORw0K"`,
					`orders://A-991 application/json {"order_id":"A-991","tier":"gold"}`,
					"orders://B-1 text/plain Order B-1 is standard.",
					"notes://7 text/plain Note 7.",
					"Resource not found",
					"Resource not found",
				}
				for i := range want {
					if !strings.HasPrefix(got[i], want[i]) && !(strings.HasPrefix(got[i], "error: ") && strings.Contains(got[i], want[i])) {
						t.Errorf("read %d: %q, want %q", i, got[i], want[i])
					}
				}
				prompts, err := cs.ListPrompts(ctx, nil)
				if err != nil || len(prompts.Prompts) != 1 || len(prompts.Prompts[0].Arguments) != 2 || !prompts.Prompts[0].Arguments[0].Required {
					t.Fatalf("prompts/list: %v %+v", err, prompts)
				}
				pr, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "refund_request", Arguments: map[string]string{"order_id": "A-991", "reason": "late"}})
				if err != nil {
					t.Fatal(err)
				}
				if len(pr.Messages) != 2 || pr.Messages[0].Role != "user" || pr.Messages[0].Content.(*mcp.TextContent).Text != "Please refund order A-991 (late)." || pr.Messages[1].Role != "assistant" {
					t.Errorf("prompts/get: %s", mustJSON(t, pr))
				}
				if _, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "refund_request"}); err == nil || !strings.Contains(err.Error(), `needs its argument "order_id"`) {
					t.Errorf("prompts/get without a required argument: %v", err)
				}
				complete := func(ref *mcp.CompleteReference, arg, value string) []string {
					t.Helper()
					res, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: arg, Value: value}})
					if err != nil {
						t.Fatal(err)
					}
					return res.Completion.Values
				}
				if got := complete(&mcp.CompleteReference{Type: "ref/prompt", Name: "refund_request"}, "order_id", "A-"); !cmp.Equal(got, []string{"A-991", "A-992"}) {
					t.Errorf("completing the prompt's argument: %q", got)
				}
				if got := complete(&mcp.CompleteReference{Type: "ref/resource", URI: "orders://{order_id}"}, "order_id", "B"); !cmp.Equal(got, []string{"B-1"}) {
					t.Errorf("completing the template's variable: %q", got)
				}
				uses := sc.MCPUses()
				var methods []string
				for _, u := range uses {
					methods = append(methods, u.Method+" "+u.URI+u.Name)
				}
				wantMethods := []string{
					"resources/read docs://refund-policy", "resources/read docs://logo", "resources/read orders://A-991",
					"resources/read orders://B-1", "resources/read notes://7", "resources/read orders://Z-9", "resources/read docs://nope",
					"prompts/get refund_request", "prompts/get refund_request",
					"completion/complete refund_request", "completion/complete orders://{order_id}",
				}
				if diff := cmp.Diff(wantMethods, methods); diff != "" {
					t.Fatalf("recorded uses (-want +got):\n%s", diff)
				}
				if uses[5].Error == "" || uses[0].Error != "" || uses[8].Error == "" {
					t.Errorf("errors recorded: %+v", uses)
				}
				if diff := cmp.Diff(tool.MCPUse{Method: "prompts/get", Name: "refund_request", Arguments: map[string]string{"order_id": "A-991", "reason": "late"}}, uses[7]); diff != "" {
					t.Errorf("the prompt get's record (-want +got):\n%s", diff)
				}
				sc.Reset()
				if n := len(sc.MCPUses()); n != 0 {
					t.Errorf("%d uses after Reset", n)
				}
			})
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
