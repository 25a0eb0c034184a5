package examples_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/internal/openapi"
)

// The refunds world of examples/http-agent is what dryfire world import
// writes from its OpenAPI document, byte for byte.
func TestHTTPAgentWorldIsImported(t *testing.T) {
	data, err := os.ReadFile("http-agent/refunds.openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	res, ds := openapi.Import("http-agent/refunds.openapi.yaml", data, openapi.Options{Package: "refunds", Source: "refunds.openapi.yaml"})
	if res == nil || len(res.Warnings) > 0 {
		t.Fatalf("import: %v %v", ds, res)
	}
	for file, got := range map[string][]byte{"http-agent/refunds.world.yaml": res.World, "http-agent/refunds.star": res.Module} {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(want) != string(got) {
			t.Errorf("%s is not what the import writes; run: cd examples/http-agent && dryfire world import refunds.openapi.yaml --package refunds --force", file)
		}
	}
}

// The Python agent (requests) and the Node agent (fetch) run unchanged in
// the drills: only REFUNDS_URL, which dryfire sets, differs from their
// real-service configuration.
func TestHTTPAgents(t *testing.T) {
	t.Setenv("REFUNDS_URL", "https://refunds.example.com/v1") // the real service's: dryfire replaces it
	for _, tt := range []struct{ suite, need, check string }{
		{"http-agent/python.dryfire.yaml", "python3", "import requests"},
		{"http-agent/node.dryfire.yaml", "node", ""},
	} {
		t.Run(tt.suite, func(t *testing.T) {
			if _, err := exec.LookPath(tt.need); err != nil {
				t.Skipf("%s is not installed", tt.need)
			}
			if tt.check != "" {
				if err := exec.Command(tt.need, "-c", tt.check).Run(); err != nil {
					t.Skipf("%s cannot %s (scripts/ci.d/35-http-agents.sh installs it)", tt.need, tt.check)
				}
			}
			p, err := dryfire.Load(nil, tt.suite)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := p.Run(context.Background(), &dryfire.RunOptions{Record: dryfire.RecordNone})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Summary.Passed != 2 || len(rep.Cases) != 2 {
				for _, c := range rep.Cases {
					t.Errorf("%s: %s %s %+v %s", c.Name, c.Status, c.Reason, c.Checks, c.Stderr)
				}
			}
			ev := rep.Cases[0].Evidence
			if len(ev) == 0 || ev[0].HTTP == nil || ev[0].HTTP.Route != "/refunds" || ev[0].Override == nil {
				t.Errorf("the first call is not the overridden POST /refunds: %+v", ev)
			}
		})
	}
}
