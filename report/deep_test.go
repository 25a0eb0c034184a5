package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Hole 4 of issue 36: one call whose arguments nest 9,000 arrays deep
// (18 KB) made a 162 MB JSON report: each line was indented by its depth,
// so the report grew with the square of it. Past maxIndent levels a value
// is written on one line: the report (whole, and streamed a case at a
// time) stays within a few times its compact size, and is the same JSON.
func TestReportJSONOfDeepNesting(t *testing.T) {
	deep := []byte(strings.Repeat("[", 9000) + strings.Repeat("]", 9000))
	c := Case{Suite: "s", Name: "deep", Status: Failed,
		ToolCalls: []ToolCall{{Tool: "t", Args: deep, Asked: &Asked{Method: "elicitation/create", Request: json.RawMessage(`{}`), Answer: deep}}}}
	r := &Report{Cases: []Case{c}}
	r.Tally()
	whole, err := r.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	j := newReportJSON(&b)
	if err := j.Case(&r.Cases[0]); err != nil {
		t.Fatal(err)
	}
	if err := j.End(r); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"whole": whole, "streamed": b.Bytes()} {
		if len(out) > 100_000 {
			t.Errorf("%s: %d bytes for 36 KB of nesting", name, len(out))
		}
		var back Report
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("%s: not JSON: %v", name, err)
		}
		var got bytes.Buffer
		json.Compact(&got, back.Cases[0].ToolCalls[0].Args)
		if !bytes.Equal(got.Bytes(), deep) {
			t.Errorf("%s: the arguments read back differ", name)
		}
	}
	if !bytes.Equal(whole, b.Bytes()) {
		t.Error("the streamed report differs from the whole one")
	}
}
