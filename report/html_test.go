package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/dryfire-dev/dryfire/internal/atomicfile"
)

var embedded = regexp.MustCompile(`(?s)<script type="application/json" id="report">(.*?)</script>`)

// The page holds the report's JSON whole, whatever its text: a case's
// output that closes the script cannot end it early.
func TestHTMLEmbedsTheReport(t *testing.T) {
	hostile := "</script><img src=x onerror=alert(1)> & \u2028 <!--"
	r := &Report{Cases: []Case{{Suite: "s.dryfire.yaml", Name: hostile, Status: Failed, Reason: hostile, Output: hostile,
		Checks: []Check{{Check: "output: {contains: x}", At: "s.dryfire.yaml:3", Message: hostile}},
		ToolCalls: []ToolCall{{Turn: 1, ID: "c1", Tool: "t", Args: json.RawMessage(`{"a":"</script>"}`), Outcome: OutcomeUnmatched, Result: hostile,
			NearMiss: &NearMiss{Tool: "t", Rule: "s.dryfire.yaml:9", Path: "$.a", Expected: `"b"`, Got: `"</script>"`}}}}}}
	r.Tally()
	page, err := r.HTML()
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(page, []byte("</script>")); n != 2 {
		t.Errorf("the page closes %d scripts, want 2 (the data and the code)", n)
	}
	m := embedded.FindSubmatch(page)
	if m == nil {
		t.Fatal("no embedded report")
	}
	var back Report
	if err := json.Unmarshal(m[1], &back); err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(r)
	got, _ := json.Marshal(&back)
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("embedded report (-want +got):\n%s", diff)
	}
	if back.Cases[0].Output != hostile {
		t.Errorf("output %q, want %q", back.Cases[0].Output, hostile)
	}
}

// Nothing of the page itself reaches for the network: no URL, and a
// policy that allows none.
func TestHTMLIsSelfContained(t *testing.T) {
	page, err := (&Report{Cases: []Case{}}).HTML()
	if err != nil {
		t.Fatal(err)
	}
	if u := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}|\bsrc=|\bhref=|@import|url\(`).Find(page); u != nil {
		t.Errorf("the page refers to %q", u)
	}
	if !bytes.Contains(page, []byte(`content="default-src 'none';`)) {
		t.Error("no content security policy that forbids loading")
	}
}

// A 10,000-case report is rendered and written (atomically, as run
// --html writes it) in well under a second: about 0.2 s on a quiet 2-core
// machine. The bound here is three times the target, so that a loaded
// machine does not fail it while a slowdown of the kind that matters (an
// encoding per case, a quadratic join) still does; the browser test
// holds the shipped binary to 1 s end to end.
func TestHTMLTenThousandCases(t *testing.T) {
	r := &Report{Cases: make([]Case, 10000)}
	for i := range r.Cases {
		r.Cases[i] = Case{Suite: "big.dryfire.yaml", Name: fmt.Sprintf("case %d", i), Input: "look it up", Status: Passed, Output: "done " + strings.Repeat("x", 40), Turns: 2,
			Checks:    []Check{{Check: "called: lookup", At: "big.dryfire.yaml:7", Passed: true, Message: "lookup was called 1 time (expected at least once)"}},
			ToolCalls: []ToolCall{{Turn: 1, ID: "call_1_1", Tool: "lookup", Args: json.RawMessage(`{"n":0}`), Outcome: OutcomeReturn, Rule: "big.dryfire.yaml:4", Result: `{"ok":true}`}},
			Notes:     []string{}}
	}
	r.Tally()
	start := time.Now()
	page, err := r.HTML()
	if err == nil {
		err = atomicfile.Write(filepath.Join(t.TempDir(), "report.html"), page, 0o644)
	}
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("10,000 cases: %.1f MB of HTML in %v", float64(len(page))/1e6, took)
	// Under the race detector (go test -race, as CI runs it) encoding
	// is several times slower: no bound there.
	if took > 3*time.Second && !raceDetector {
		t.Errorf("rendering took %v, want well under 1 s (3 s at most on a loaded machine)", took)
	}
}
