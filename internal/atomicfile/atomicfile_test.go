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

// A symlink at the path is replaced by the file, not written through:
// one whose target does not exist does not make that target (outside
// the directory, it would be a write outside the project), and one whose
// target exists leaves it as it was. A missing directory that is a
// symlink to nothing is an error, nothing made.
func TestWriteReplacesASymlinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	os.Mkdir(project, 0o755)
	os.Mkdir(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "kept.json"), []byte("theirs"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "kept.json"), filepath.Join(project, "probe")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if data, err := os.ReadFile(filepath.Join(project, "probe")); err != nil || string(data) != "theirs" {
		t.Skipf("symlinks do not resolve here: %q, %v", data, err)
	}
	for _, link := range []struct{ name, target string }{
		{"dangling.json", filepath.Join(outside, "made.json")},
		{"dangling-rel.json", filepath.Join("..", "outside", "made.json")},
		{"existing.json", filepath.Join(outside, "kept.json")},
	} {
		path := filepath.Join(project, link.name)
		if err := os.Symlink(link.target, path); err != nil {
			t.Fatal(err)
		}
		if err := Write(path, []byte("ours"), 0o644); err != nil {
			t.Fatalf("%s: %v", link.name, err)
		}
		if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
			t.Errorf("%s: %v, %v; want a regular file in the link's place", link.name, fi, err)
		}
		if data, _ := os.ReadFile(path); string(data) != "ours" {
			t.Errorf("%s holds %q", link.name, data)
		}
	}
	if _, err := os.Lstat(filepath.Join(outside, "made.json")); err == nil {
		t.Error("a write through a symlink to nothing made its target")
	}
	if data, _ := os.ReadFile(filepath.Join(outside, "kept.json")); string(data) != "theirs" {
		t.Errorf("a write through a symlink changed its target: %q", data)
	}
	if err := os.Symlink(filepath.Join(outside, "dir"), filepath.Join(project, "cassettes")); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(project, "cassettes", "c.json"), []byte("ours"), 0o644); err == nil {
		t.Error("a write into a directory that is a symlink to nothing succeeded")
	}
	if _, err := os.Lstat(filepath.Join(outside, "dir")); err == nil {
		t.Error("a write into a symlink to nothing made its target")
	}
}
