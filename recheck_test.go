package dryfire_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/dryfire-dev/dryfire"
)

// A re-check of an unchanged suite is the run's verdicts: every case's
// status and reason, every check's verdict and message, as the run gave
// them; nothing changed, nothing kept but judges and file checks.
func TestRecheckUnchangedIsTheRun(t *testing.T) {
	// Suites of the script model: their runs need nothing installed.
	for _, dir := range []string{"examples/quickstart", "examples/world/support.dryfire.yaml"} {
		t.Run(dir, func(t *testing.T) {
			p, err := dryfire.Load(nil, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close(context.Background(), nil)
			rep, err := p.Run(context.Background(), &dryfire.RunOptions{Record: dryfire.RecordNone})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := rep.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			again, err := dryfire.Recheck(context.Background(), b.Bytes(), &dryfire.RecheckOptions{Name: "report.json"})
			if err != nil {
				t.Fatal(err)
			}
			if again.Recheck == nil || again.Recheck.Changed != 0 || again.Recheck.Cases != len(rep.Cases) || len(rep.Cases) == 0 {
				t.Fatalf("recheck: %+v, want %d cases re-checked and none changed", again.Recheck, len(rep.Cases))
			}
			if again.Summary.Passed != rep.Summary.Passed || again.Summary.Failed != rep.Summary.Failed || again.Summary.Error != rep.Summary.Error {
				t.Errorf("summary %+v, the run's %+v", again.Summary, rep.Summary)
			}
			for i, c := range rep.Cases {
				r := again.Cases[i]
				if r.Name != c.Name || r.Status != c.Status || r.Reason != c.Reason || r.Verdict != c.Verdict {
					t.Errorf("case %d: re-checked %s %q (%s), the run's %s %q (%s)", i, r.Name, r.Status, r.Reason, c.Name, c.Status, c.Reason)
				}
				if len(r.Checks) != len(c.Checks) {
					t.Fatalf("%s: %d checks re-checked, the run has %d", c.Name, len(r.Checks), len(c.Checks))
				}
				for k := range c.Checks {
					if r.Checks[k] != c.Checks[k] && (r.Checks[k].Passed != c.Checks[k].Passed || r.Checks[k].Message != c.Checks[k].Message || r.Checks[k].At != c.Checks[k].At) {
						t.Errorf("%s: check %d re-checked %+v, the run's %+v", c.Name, k, r.Checks[k], c.Checks[k])
					}
				}
			}
		})
	}
}
