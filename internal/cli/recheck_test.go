package cli_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// checks FILE prints the cases of a JSON report with their status and
// reason, and each check's verdict, where, what and message: what a
// re-check may change, one line each, to compare with cmp.
func cmdChecks(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: checks FILE")
	}
	var r struct {
		Cases []struct {
			Suite, Name, Status, Reason string
			Checks                      []struct {
				Check, At, Message string
				Passed             bool
			}
		}
	}
	if err := json.Unmarshal([]byte(ts.ReadFile(args[0])), &r); err != nil {
		ts.Fatalf("%s is not JSON: %v", args[0], err)
	}
	var b strings.Builder
	for _, c := range r.Cases {
		fmt.Fprintf(&b, "%s %s: %s (%s)\n", c.Status, c.Suite, c.Name, c.Reason)
		for _, ch := range c.Checks {
			v := "ok"
			if !ch.Passed {
				v = "FAIL"
			}
			fmt.Fprintf(&b, "  %s %s %s: %s\n", v, ch.At, ch.Check, ch.Message)
		}
	}
	ts.Stdout().Write([]byte(b.String()))
}
