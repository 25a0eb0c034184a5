package spec

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Checking a suite takes the memory of a few cases, not of all of them,
// whether they are written inline or come from a data file: the heap
// while 20,000 cases are checked (Discard) is not many times the heap
// while 2,000 are (5,000 and 500 under the race detector), and each
// further case adds a few bytes: its name, for the duplicate check, and
// a data file's row, which is read whole. (The file's bytes are the caller's and not counted.)
func TestCheckingCasesTakesFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("checks 44,000 cases")
	}
	const head = "version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {status: shipped}}]\ncases:\n"
	inline := func(n int) []byte {
		var b strings.Builder
		b.WriteString(head)
		for i := range n {
			fmt.Fprintf(&b, "  - name: case-%d\n    input: Where is order O-%d?\n    script:\n      - tool_calls: [{name: lookup, args: {id: O-%d}}]\n      - text: Shipped.\n    expect:\n      - called: {tool: lookup, with: {id: O-%d}, times: 1}\n      - output: {contains: Shipped}\n", i, i, i, i)
		}
		return []byte(b.String())
	}
	dir := t.TempDir()
	data := func(n int) []byte {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "{\"id\": \"O-%d\", \"name\": \"case-%d\"}\n", i, i)
		}
		os.WriteFile(filepath.Join(dir, "rows.jsonl"), []byte(b.String()), 0o644)
		return []byte(head + "  - from: rows.jsonl\n    name: \"{{name}}\"\n    input: \"Where is order {{id}}?\"\n    script:\n      - tool_calls: [{name: lookup, args: {id: \"{{id}}\"}}]\n      - text: Shipped.\n    expect:\n      - called: {tool: lookup, with: {id: \"{{id}}\"}, times: 1}\n      - output: {contains: Shipped}\n")
	}
	// peak is the most heap live, beyond what was live before, while the
	// suite is checked (measured after a collection every 100 cases).
	peak := func(suite []byte, n int) int64 {
		var m runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m)
		base, top := m.HeapAlloc, m.HeapAlloc
		seen := 0
		afterCase = func() {
			if seen++; seen%100 == 0 {
				runtime.GC()
				runtime.ReadMemStats(&m)
				top = max(top, m.HeapAlloc)
			}
		}
		defer func() { afterCase = nil }()
		s, ds := Parse(filepath.Join(dir, "s.dryfire.yaml"), suite, &Options{Root: dir, Discard: true})
		if ds.HasErrors() || s == nil || s.Discarded != n || len(s.Cases) != 0 {
			t.Fatalf("%d cases: %v", n, ds)
		}
		return int64(top - base)
	}
	n := 2_000
	if raceEnabled {
		n = 500
	}
	for _, kind := range []struct {
		name  string
		suite func(int) []byte
	}{{"inline", inline}, {"from a data file", data}} {
		small := peak(kind.suite(n), n)
		large := peak(kind.suite(10*n), 10*n)
		each := (large - small) / int64(9*n)
		t.Logf("%s: %d KB for %d cases, %d KB for %d: %d bytes a case", kind.name, small>>10, n, large>>10, 10*n, each)
		// A case kept would be some 5,000 bytes; a name, and a data
		// file's row (read whole), some 100. (A ratio of the two heaps
		// says the same, but the small one is too small to be steady.)
		if each > 500 {
			t.Errorf("%s: checking %d cases took %d KB of heap, %d took %d KB (%d bytes a case): memory grows with the cases", kind.name, 10*n, large>>10, n, small>>10, each)
		}
	}
}
