package cassette

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// A cassette whose path is a symlink to nothing (outside the project,
// made later) is written in the link's place, never through it; a
// cassettes directory that is such a link is an error, nothing made.
func TestSaveDoesNotWriteThroughADanglingSymlink(t *testing.T) {
	dir := t.TempDir()
	project, outside := filepath.Join(dir, "project"), filepath.Join(dir, "outside")
	os.MkdirAll(filepath.Join(project, "cassettes", "support"), 0o755)
	os.MkdirAll(outside, 0o755)
	os.WriteFile(filepath.Join(outside, "probe"), nil, 0o644)
	if err := os.Symlink(filepath.Join(outside, "probe"), filepath.Join(project, "probe")); err != nil {
		t.Skipf("no symlinks here: %v", err)
	}
	if _, err := os.Stat(filepath.Join(project, "probe")); err != nil {
		t.Skipf("symlinks do not resolve here: %v", err)
	}
	api := newEcho(t)
	cfg := config(project, Once, http.DefaultTransport)
	if err := os.Symlink(filepath.Join(outside, "refund.json"), cfg.File); err != nil {
		t.Fatal(err)
	}
	record(t, cfg, api.URL+"/v1/chat/completions", requests[:1])
	if _, err := os.Lstat(filepath.Join(outside, "refund.json")); err == nil {
		t.Error("the cassette was written through the symlink, outside the project")
	}
	if fi, err := os.Lstat(cfg.File); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("cassette %v, %v; want a regular file in the link's place", fi, err)
	}

	other := filepath.Join(dir, "other")
	os.MkdirAll(other, 0o755)
	if err := os.Symlink(filepath.Join(outside, "cassettes"), filepath.Join(other, "cassettes")); err != nil {
		t.Fatal(err)
	}
	r := mustOpen(t, config(other, Once, http.DefaultTransport))
	if _, _, err := call(t, r, api.URL+"/v1/chat/completions", requests[0]); err != nil {
		t.Fatal(err)
	}
	if wrote, err := r.Save(); wrote || err == nil {
		t.Errorf("saved into a cassettes directory that is a symlink to nothing: %v, %v", wrote, err)
	}
	if _, err := os.Lstat(filepath.Join(outside, "cassettes")); err == nil {
		t.Error("saving made the symlink's target, outside the project")
	}
}
