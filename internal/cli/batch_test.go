package cli_test

import (
	"bytes"
	"os"
	"regexp"

	"github.com/rogpeppe/go-internal/testscript"
)

// durationMS is a case's or trial's duration in a JSON report: what two
// runs of the same cases may differ in (docs/running.md, "Reports").
var durationMS = regexp.MustCompile(`"duration_ms": ?-?[0-9][0-9.eE+-]*`)

// cmpreport A B compares two JSON reports byte for byte, each
// duration_ms's value taken out first.
func cmdCmpReport(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 {
		ts.Fatalf("usage: cmpreport A.json B.json")
	}
	read := func(name string) []byte {
		data, err := os.ReadFile(ts.MkAbs(name))
		ts.Check(err)
		if !bytes.Contains(data, []byte(`"duration_ms"`)) {
			ts.Fatalf("%s has no duration_ms: not a report of cases", name)
		}
		return durationMS.ReplaceAll(data, []byte(`"duration_ms": 0`))
	}
	a, b := read(args[0]), read(args[1])
	same := bytes.Equal(a, b)
	switch {
	case same && neg:
		ts.Fatalf("%s and %s are the same report (durations aside)", args[0], args[1])
	case !same && !neg:
		i := 0
		for i < len(a) && i < len(b) && a[i] == b[i] {
			i++
		}
		ts.Fatalf("%s and %s differ (durations aside) at byte %d:\n%s\n%s", args[0], args[1], i, around(a, i), around(b, i))
	}
}

func around(data []byte, i int) string {
	lo, hi := max(0, i-80), min(len(data), i+80)
	return string(data[lo:hi])
}
