//go:build unix

package spec

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExpandSkipsUnreadableDirectory: one directory that cannot be read
// under the one searched is skipped and named; the other suites are
// found (it failed the whole search before: every drill of the engine
// was UNKNOWN_DRILL, and dryfire run DIR stopped). Root reads any
// directory, so as root the search runs again as nobody.
func TestExpandSkipsUnreadableDirectory(t *testing.T) {
	if dir := os.Getenv("DRYFIRE_EXPAND_CHILD"); dir != "" {
		files, skipped, err := ExpandSkipping([]string{dir})
		out, _ := json.Marshal(map[string]any{"files": files, "skipped": skipped, "err": errString(err)})
		os.Stdout.Write(append(out, '\n'))
		return
	}
	dir, err := os.MkdirTemp("", "expand")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "locked"), 0o755); os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	for _, d := range []string{"a", "locked", "z"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/one.dryfire.yaml", "locked/hidden.dryfire.yaml", "z/two.dryfire.yaml"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("cases: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	bin := os.Args[0]
	if os.Getuid() == 0 {
		// nobody cannot reach the build's directory: a copy it can run.
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "spec.test")
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "-test.run=^TestExpandSkipsUnreadableDirectory$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DRYFIRE_EXPAND_CHILD="+dir)
	if os.Getuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var got struct {
		Files, Skipped []string
		Err            string
	}
	if err := json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := struct {
		Files, Skipped []string
		Err            string
	}{
		Files:   []string{filepath.Join(dir, "a/one.dryfire.yaml"), filepath.Join(dir, "z/two.dryfire.yaml")},
		Skipped: []string{filepath.Join(dir, "locked") + ": permission denied"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("ExpandSkipping (-want +got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
