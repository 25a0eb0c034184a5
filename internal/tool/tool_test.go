package tool_test

import (
	"encoding/json"
	"testing"

	"github.com/dryfire-dev/dryfire/internal/tool"
)

// The outcomes are the report's `outcome` values, as docs/running.md lists them.
func TestOutcomeNames(t *testing.T) {
	got := []tool.Outcome{tool.Return, tool.Content, tool.Error, tool.Impl, tool.Unmatched}
	want := []string{"return", "content", "error", "impl", "unmatched"}
	for i := range got {
		if string(got[i]) != want[i] {
			t.Errorf("outcome %d = %q, want %q", i, got[i], want[i])
		}
	}
}

// A near miss goes into the JSON report as is: lower-case keys, and only
// the fields that say something.
func TestNearMissJSON(t *testing.T) {
	tests := []struct {
		nm   tool.NearMiss
		want string
	}{
		{tool.NearMiss{Tool: "lookup_order", Rule: "s.dryfire.yaml:6", Path: "$.order_id", Expected: `"A-991"`, Got: `"B-1"`},
			`{"tool":"lookup_order","rule":"s.dryfire.yaml:6","path":"$.order_id","expected":"\"A-991\"","got":"\"B-1\""}`},
		{tool.NearMiss{Tool: "tag", Rule: "s.dryfire.yaml:9", Path: "$.tags", Expected: `["a"]`, Got: `[]`, Reason: "length 0, want 1"},
			`{"tool":"tag","rule":"s.dryfire.yaml:9","path":"$.tags","expected":"[\"a\"]","got":"[]","reason":"length 0, want 1"}`},
		{tool.NearMiss{Tool: "x", Note: "no mock rules for this tool"},
			`{"tool":"x","note":"no mock rules for this tool"}`},
	}
	for _, tt := range tests {
		data, err := json.Marshal(tt.nm)
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != tt.want {
			t.Errorf("got  %s\nwant %s", data, tt.want)
		}
	}
}
