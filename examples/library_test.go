// These tests show the Go library at work: they load the example suites
// through the public API, run them, and assert on the results, as a Go
// project would in its own `go test`.
package examples_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

func TestQuickstartPasses(t *testing.T) {
	p, err := dryfire.Load(nil, "quickstart")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 0 {
		t.Errorf("quickstart has warnings: %v", p.Warnings)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (report.Summary{Passed: 3}); rep.Summary != want {
		t.Fatalf("summary = %+v, want %+v", rep.Summary, want)
	}
	for _, c := range rep.Cases {
		if c.Status != report.Passed {
			t.Errorf("%s: %s", c.Name, c.Reason)
		}
	}

	// The retry case: the sequence answered timeout, then the refund.
	refund := rep.Cases[0]
	var outcomes []string
	for _, tc := range refund.ToolCalls {
		outcomes = append(outcomes, tc.Tool+":"+string(tc.Outcome)+":"+tc.Result)
	}
	want := []string{
		`lookup_order:return:{"order_id":"A-991","tier":"gold","total":120.5}`,
		`issue_refund:error:timeout`,
		`issue_refund:return:{"refund_id":"R-1","status":"done"}`,
	}
	if strings.Join(outcomes, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool calls:\n%s\nwant:\n%s", strings.Join(outcomes, "\n"), strings.Join(want, "\n"))
	}

	// return: null delivers the text null as a success.
	coupon := rep.Cases[2].ToolCalls[1]
	if coupon.Tool != "find_coupon" || coupon.Result != "null" || coupon.IsError {
		t.Errorf("find_coupon call = %+v, want a successful null", coupon)
	}
}

func TestFailingExampleReportsTheNearMiss(t *testing.T) {
	p, err := dryfire.Load(nil, "failing/refund.dryfire.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := p.Run(context.Background(), &dryfire.RunOptions{Filter: "typo"})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cases) != 1 {
		t.Fatalf("filter selected %d cases, want 1", len(rep.Cases))
	}
	c := rep.Cases[0]
	if c.Status != report.Failed {
		t.Fatalf("status = %s, want failed", c.Status)
	}
	call := c.ToolCalls[0]
	if call.Outcome != "unmatched" || !call.IsError || call.NearMiss == nil {
		t.Fatalf("call = %+v, want an unmatched error with a near miss", call)
	}
	nm := call.NearMiss
	if nm.Rule != "failing/refund.dryfire.yaml:21" || nm.Path != "$.order_id" || nm.Expected != `"A-991"` || nm.Got != `"A-992"` {
		t.Errorf("near miss = %+v", nm)
	}
}

func TestLoadReportsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.dryfire.yaml")
	suite := "version: 1\nagent: {provider: script}\ncases:\n  - name: a\n    input: hi\n    script: [{text: ok}]\n    expect: [{calld: x}]\n  - name: a\n    inpt: x\n"
	if err := os.WriteFile(bad, []byte(suite), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := dryfire.Load(nil, dir)
	var ds dryfire.Diagnostics
	if !errors.As(err, &ds) {
		t.Fatalf("err = %v, want Diagnostics", err)
	}
	var got []string
	for _, d := range ds {
		got = append(got, strings.TrimPrefix(d.String(), filepath.ToSlash(dir)+"/"))
	}
	want := []string{
		`bad.dryfire.yaml:7:15: unknown check "calld" (did you mean "called"?); checks are called, not_called, order, trajectory, policy, not_leaked, judge, output, max_turns, no_errors, state, event, file, read, not_read, prompted, elicited, sampled`,
		`bad.dryfire.yaml:8:5: case "a" has no script: provider script needs the model's turns (a script in the case, or one for every case at the suite's top level; or skip: true)`,
		`bad.dryfire.yaml:8:11: duplicate case name "a" (first at line 4); case names are unique within a suite`,
		`bad.dryfire.yaml:9:5: unknown key "inpt" in case (did you mean "input"?)`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
