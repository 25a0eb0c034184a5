package dryfire_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

// Go callables stand in for Python under impl names: no python3 needed.
func TestGoImpls(t *testing.T) {
	dir := t.TempDir()
	suite := `version: 1
agent: {provider: script}
mocks:
  create_ticket:
    - impl: shop.tools:create_ticket
  close_ticket:
    - sequence:
        - impl: shop.tools:close_ticket
        - error: already closed
  slow:
    - impl: shop.tools:slow
      timeout_s: 0.2
cases:
  - name: tickets
    input: hi
    script:
      - tool_calls:
          - {name: create_ticket, args: {title: Refund}}
          - {name: close_ticket, args: {id: 7}}
          - {name: close_ticket, args: {id: 7}}
          - {name: slow, args: {}}
      - text: done
    expect:
      - called: {tool: create_ticket, times: 1}
`
	if err := os.WriteFile(filepath.Join(dir, "t.dryfire.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	defer close(release)
	impls := map[string]dryfire.ImplFunc{
		"shop.tools:create_ticket": func(ctx context.Context, args map[string]any) (any, error) {
			return map[string]any{"id": 42, "title": args["title"]}, nil
		},
		"shop.tools:close_ticket": func(ctx context.Context, args map[string]any) (any, error) {
			return nil, errors.New("ticket 7 does not exist")
		},
		"shop.tools:slow": func(ctx context.Context, args map[string]any) (any, error) {
			select {
			case <-ctx.Done(): // honours the bound
				return nil, ctx.Err()
			case <-release:
				return "late", nil
			}
		},
	}
	p, err := dryfire.Load(&dryfire.LoadOptions{Impls: impls, Python: "/nonexistent/python3"}, dir)
	if err != nil {
		t.Fatal(err) // a Python that does not exist is never needed
	}
	defer p.Close(context.Background(), nil)
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if c.Status != report.Passed {
		t.Fatalf("status %s: %s", c.Status, c.Reason)
	}
	var got []string
	for _, tc := range c.ToolCalls {
		got = append(got, string(tc.Outcome)+" "+tc.Result)
	}
	want := []string{
		`impl {"id":42,"title":"Refund"}`,
		`impl ticket 7 does not exist`,
		`error already closed`,
		`impl dryfire: impl shop.tools:slow: timed out after 0.2 s`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantNotes := []string{
		"this case runs passthrough code (impl), so it is never recorded into a cassette",
		"impl shop.tools:close_ticket returned an error: ticket 7 does not exist",
		`impl shop.tools:slow (case "tickets", tool slow) timed out after 0.2 s`,
	}
	if strings.Join(c.Notes, "\n") != strings.Join(wantNotes, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(c.Notes, "\n"), strings.Join(wantNotes, "\n"))
	}
}

// An unknown impl name with Python unavailable is a positioned load error.
func TestGoImplsUnknownName(t *testing.T) {
	dir := t.TempDir()
	suite := "version: 1\nagent: {provider: script}\nmocks:\n  t:\n    - impl: shop.tools:nope\ncases:\n  - {name: a, input: hi, script: [{text: ok}]}\n"
	if err := os.WriteFile(filepath.Join(dir, "t.dryfire.yaml"), []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := dryfire.Load(&dryfire.LoadOptions{Python: "/nonexistent/python3", ImportTimeout: 5 * time.Second}, dir)
	var ds dryfire.Diagnostics
	if !errors.As(err, &ds) || len(ds) != 1 {
		t.Fatalf("err = %v", err)
	}
	if got := ds[0].String(); !strings.Contains(got, "t.dryfire.yaml:5:13: impl \"shop.tools:nope\": ") || !strings.Contains(got, "/nonexistent/python3") {
		t.Errorf("diagnostic = %s", got)
	}
}
