package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestCheckSuite: a suite's command reads back as its words; a file that
// does not parse is not ok, and says where.
func TestCheckSuite(t *testing.T) {
	good := []byte("version: 1\nname: s\nagent:\n  command: [python3, \"my agent.py\", --flag]\ncases:\n  - name: c\n    input: hi\n    expect:\n      - output: {contains: x}\n")
	cmd, ok, ds := CheckSuite("s.dryfire.yaml", good)
	if !ok || ds.HasErrors() {
		t.Fatalf("CheckSuite of a good suite: ok=%v, %v", ok, ds)
	}
	if want := []string{"python3", "my agent.py", "--flag"}; !slices.Equal(cmd, want) {
		t.Errorf("command = %q, want %q", cmd, want)
	}
	_, ok, ds = CheckSuite("bad.dryfire.yaml", []byte("version: 1\nname: s\nagent:\n  command: [python3\n"))
	if ok || !ds.HasErrors() {
		t.Fatalf("CheckSuite of a broken suite: ok=%v, %v", ok, ds)
	}
	if !strings.Contains(ds.Error(), "bad.dryfire.yaml:") {
		t.Errorf("diagnostics name no position: %v", ds)
	}
}
