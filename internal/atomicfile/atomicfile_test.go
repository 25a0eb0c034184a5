package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A file another program holds open for a moment (an editor, a virus
// scanner, a reader of the report) is replaced once it lets go: on
// Windows the rename is refused while the file is open, and is tried
// again (scripts/ci.d/70-wine.sh runs this on Windows semantics).
func TestWriteReplacesAFileHeldOpenForAMoment(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		reader.Close()
	}()
	if err := Write(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(path); err != nil || string(data) != "new" {
		t.Errorf("read back %q, %v; want \"new\"", data, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".report.json.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// An aborted file leaves the target as it was and no temporary file.
func TestAbortLeavesTheTargetAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.json")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := Create(path, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	if data, _ := os.ReadFile(path); string(data) != "old" {
		t.Errorf("target %q after abort", data)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), ".c.json.tmp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
