package dryfire_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dryfire-dev/dryfire"
	"github.com/dryfire-dev/dryfire/report"
)

// heapWatch is a Progress that measures the live heap (after a
// collection) every 500 cases done, keeping the highest.
type heapWatch struct{ done, top uint64 }

func (h *heapWatch) Start(int)                       {}
func (h *heapWatch) CaseStarted(int, string, string) {}
func (h *heapWatch) CaseDone(_ int, c *report.Case) {
	if h.done++; h.done%500 == 0 {
		h.top = max(h.top, liveHeap())
	}
}

func liveHeap() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A run streamed to its reports keeps no case's result, and a project
// loaded with Lazy keeps a stub of each case: loading 10 times the cases
// takes a few hundred bytes more a case (the file's text, about 230 bytes
// a case here, and the 32-byte stub and its name: seen 295), and running
// them hardly more than that (seen 62; 21,000 cases against 2,100; 4,200
// against 2,100 under the race detector). A stub that is a whole
// spec.Case adds some 500 bytes a case, a job made for every case before
// the run some 200, a case kept decoded some 5,000, a result kept some
// 3,000.
func TestRunningCasesTakesFlatMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 22,000 cases")
	}
	dir := t.TempDir()
	suite := func(n int) string {
		var b strings.Builder
		b.WriteString("version: 1\nagent: {provider: script}\nmocks:\n  lookup: [{return: {status: shipped}}]\ncases:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - name: case-%d\n    input: Where is order O-%d?\n    script:\n      - tool_calls: [{name: lookup, args: {id: O-%d}}]\n      - text: Shipped.\n    expect:\n      - called: {tool: lookup, with: {id: O-%d}, times: 1}\n      - output: {contains: Shipped}\n", i, i, i, i)
		}
		path := filepath.Join(dir, fmt.Sprintf("s%d.dryfire.yaml", n))
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	// measure loads and runs n cases and says the heap the project takes
	// and the most the run adds to it.
	measure := func(n int) (loaded, running uint64) {
		path := suite(n)
		before := liveHeap()
		p, err := dryfire.Load(&dryfire.LoadOptions{Lazy: true}, path)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background(), nil)
		after := liveHeap()
		stream, err := report.NewStream(io.Discard, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		w := &heapWatch{top: after}
		rep, err := p.Run(context.Background(), &dryfire.RunOptions{Stream: stream, Progress: w})
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Close(rep); err != nil {
			t.Fatal(err)
		}
		if rep.Summary.Passed != n || len(rep.Cases) != 0 {
			t.Fatalf("%d cases: %+v, %d kept", n, rep.Summary, len(rep.Cases))
		}
		runtime.KeepAlive(p)
		return after - min(before, after), w.top - after
	}
	// Lists of fewer than 2,048 cases are kept decoded (faster).
	// Under the race detector the run is shorter and its heap noisier: the
	// bounds are loose there (a case kept decoded still fails them).
	n, k, loadBound, runBound := 2_100, 10, int64(600), int64(200)
	if raceEnabled {
		k, loadBound, runBound = 2, 2_000, 1_000
	}
	smallLoad, smallRun := measure(n)
	largeLoad, largeRun := measure(k * n)
	perLoad := (int64(largeLoad) - int64(smallLoad)) / int64((k-1)*n)
	perRun := (int64(largeRun) - int64(smallRun)) / int64((k-1)*n)
	t.Logf("loaded: %d KB for %d cases, %d KB for %d (%d bytes a case); running adds %d KB and %d KB (%d bytes a case)",
		smallLoad>>10, n, largeLoad>>10, k*n, perLoad, smallRun>>10, largeRun>>10, perRun)
	if perLoad > loadBound {
		t.Errorf("loading %d cases took %d KB of heap, %d took %d KB (%d bytes a case): cases are kept decoded, or stubs are large", k*n, largeLoad>>10, n, smallLoad>>10, perLoad)
	}
	if perRun > runBound {
		t.Errorf("running %d cases added %d KB of heap, %d added %d KB (%d bytes a case): results, decoded cases or jobs are kept", k*n, largeRun>>10, n, smallRun>>10, perRun)
	}
}
